#!/usr/bin/env bash
# A profile's wheels as parts small enough for one command's carry (64 MiB), each checked by sha256.
#   pack BUNDLE PROFILE     (where PyPI is; make gpu-wheels VLLM=1) tar BUNDLE/wheels-PROFILE, split it into
#                           parts of at most $GPU_PART_MIB MiB in BUNDLE/parts-PROFILE, with SHA256SUMS
#   keep DIR                (GPU machine, one command per part) keep the parts in DIR under
#                           $GPU_WORK/parts-$GPU_PROFILE, each checked; say which are still missing
#   assemble BUNDLE         (GPU machine) check the whole and unpack it into BUNDLE/wheels-$GPU_PROFILE
# A warm machine keeps $GPU_WORK between commands issued back to back.
set -euo pipefail
PROFILE=${GPU_PROFILE:-vllm}
WORK=${GPU_WORK:-/tmp/verl-ppo-gpu}
KEPT=$WORK/parts-$PROFILE
elapsed() { date +%s.%N | awk -v s="$1" '{printf "%.1f", $1 - s}'; }
start=$(date +%s.%N)

tar_wheels() {  # sorted names and fixed metadata: the same wheels give the same parts and checksums
  tar -C "$1" --sort=name --owner=0 --group=0 --numeric-owner --mtime=@0 -cf - "wheels-$2"
}

case ${1:-} in
  pack)
    bundle=${2:?usage: parts.sh pack BUNDLE PROFILE}; profile=${3:?usage: parts.sh pack BUNDLE PROFILE}
    parts=$bundle/parts-$profile
    rm -rf "$parts" && mkdir -p "$parts"
    tar_wheels "$bundle" "$profile" | split -b "${GPU_PART_MIB:-56}M" -d -a 2 - "$parts/wheels-$profile.tar.part-"
    (cd "$parts" && sha256sum wheels-"$profile".tar.part-* > SHA256SUMS)
    echo "$(tar_wheels "$bundle" "$profile" | sha256sum | cut -d' ' -f1)  wheels-$profile.tar" >> "$parts/SHA256SUMS"
    echo "gpu: $(ls "$parts"/*.part-* | wc -l) parts of at most ${GPU_PART_MIB:-56} MiB in $parts (SHA256SUMS)"
    ;;
  keep)
    source_dir=${2:?usage: parts.sh keep DIR}
    mkdir -p "$KEPT"
    cp "$source_dir/SHA256SUMS" "$KEPT/SHA256SUMS"
    for part in "$source_dir"/wheels-"$PROFILE".tar.part-*; do
      [ -e "$part" ] || continue
      name=$(basename "$part")
      cp "$part" "$KEPT/"
      (cd "$KEPT" && grep " $name\$" SHA256SUMS | sha256sum -c --quiet -) \
        || { rm -f "$KEPT/$name"; echo "gpu: $name does not match SHA256SUMS: carry it again" >&2; exit 1; }
      echo "gpu: kept $name ($(du -m "$part" | cut -f1) MiB, sha256 ok)"
    done
    missing=$(cd "$KEPT" && grep '\.part-' SHA256SUMS | awk '{print $2}' | while read -r name; do
      [ -f "$name" ] || echo "$name"; done)
    echo "gpu: $(ls "$KEPT"/*.part-* 2>/dev/null | wc -l) of $(grep -c '\.part-' "$KEPT/SHA256SUMS") parts in $KEPT" \
      "after $(elapsed "$start") s${missing:+; missing: $(echo $missing)}"
    ;;
  assemble)
    bundle=${2:?usage: parts.sh assemble BUNDLE}
    [ -f "$KEPT/SHA256SUMS" ] || { echo "gpu: no parts in $KEPT: carry them with 'parts.sh keep' first" >&2; exit 2; }
    expected=$(grep -c '\.part-' "$KEPT/SHA256SUMS"); present=$(ls "$KEPT"/*.part-* 2>/dev/null | wc -l)
    [ "$present" = "$expected" ] || { echo "gpu: $present of $expected parts in $KEPT: carry the rest first" >&2; exit 2; }
    whole=$(grep -v '\.part-' "$KEPT/SHA256SUMS" | cut -d' ' -f1)
    got=$(cat "$KEPT"/*.part-* | sha256sum | cut -d' ' -f1)
    [ "$got" = "$whole" ] || { echo "gpu: reassembled sha256 $got, expected $whole: carry the parts again" >&2; exit 2; }
    mkdir -p "$bundle" && cat "$KEPT"/*.part-* | tar -x -C "$bundle"
    echo "gpu: $expected parts reassembled (sha256 $got) in $(elapsed "$start") s"
    ;;
  *) echo "usage: bash lab/gpu/parts.sh {pack BUNDLE PROFILE | keep DIR | assemble BUNDLE}" >&2; exit 2 ;;
esac
