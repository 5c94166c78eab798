#!/usr/bin/env bash
# On the GPU machine, one command per part (make gpu-wheels VLLM=1 made them): keep the parts this
# command brought in DIR under $GPU_WORK/parts-<profile>, each checked against DIR/SHA256SUMS, and say
# which are still missing. A warm machine keeps them between commands issued back to back; once all
# are there, gpu/install.sh reassembles them. Usage: bash gpu/carry.sh DIR
set -euo pipefail
SOURCE=${1:?usage: bash gpu/carry.sh DIR (with SHA256SUMS and one or more wheels-<profile>.tar.part-NN)}
PROFILE=${GPU_PROFILE:-vllm}
DEST=${GPU_WORK:-/tmp/verl-ppo-gpu}/parts-$PROFILE
start=$(date +%s.%N)
mkdir -p "$DEST"
cp "$SOURCE/SHA256SUMS" "$DEST/SHA256SUMS"
for part in "$SOURCE"/wheels-"$PROFILE".tar.part-*; do
  [ -e "$part" ] || continue
  cp "$part" "$DEST/"
  (cd "$DEST" && grep " $(basename "$part")\$" SHA256SUMS | sha256sum -c --quiet -) \
    || { rm -f "$DEST/$(basename "$part")"; echo "gpu: $(basename "$part") does not match SHA256SUMS" >&2; exit 1; }
  echo "gpu: kept $(basename "$part") ($(du -m "$part" | cut -f1) MiB, sha256 ok)"
done
missing=$(cd "$DEST" && grep '\.part-' SHA256SUMS | awk '{print $2}' | while read -r name; do [ -f "$name" ] || echo "$name"; done)
echo "gpu: $(ls "$DEST"/*.part-* 2>/dev/null | wc -l) of $(grep -c '\.part-' "$DEST/SHA256SUMS") parts in $DEST" \
  "after $(date +%s.%N | awk -v s="$start" '{printf "%.1f", $1 - s}') s${missing:+; missing: $(echo $missing)}"
