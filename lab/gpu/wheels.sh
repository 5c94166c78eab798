#!/usr/bin/env bash
# Download, on a machine with PyPI, every wheel the GPU proof installs on a GPU machine without it, for
# one profile: GPU_PROFILE=hf (lab/gpu/wheels.txt: veRL 0.3.0.post1, HF rollout) or vllm (lab/gpu/wheels-vllm.txt:
# veRL 0.9.1, vLLM 0.24.0), each with lab/gpu/wheels-ray.txt, for CPython 3.12 manylinux x86_64; antlr4's
# runtime built from its sdist (no wheel is published); Ray slimmed to fit the carry limit.
# Output: $GPU_BUNDLE/wheels-<profile>/. The vllm profile is far over the 64 MiB one command carries:
# it is also packed by lab/gpu/parts.sh into checksummed parts in $GPU_BUNDLE/parts-vllm/. Idempotent.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
PROFILE=${GPU_PROFILE:-hf}
BUNDLE=${GPU_BUNDLE:-$ROOT/.gpu}
WHEELS=$BUNDLE/wheels-$PROFILE
DOWNLOADS=${GPU_DOWNLOADS:-${VERL_PPO_CACHE:-$HOME/.cache/verl-ppo}/gpu-downloads}
PYTHON=${PYTHON:-python3}
case $PROFILE in
  hf) LIST=$ROOT/lab/gpu/wheels.txt ;;
  vllm) LIST=$ROOT/lab/gpu/wheels-vllm.txt ;;
  *) echo "lab/gpu/wheels.sh: GPU_PROFILE=$PROFILE is not a profile: use hf or vllm" >&2; exit 2 ;;
esac
mkdir -p "$WHEELS" "$DOWNLOADS"
start=$(date +%s)
specs() { grep -h -v -e '^#' -e '^$' "$LIST" "$ROOT/lab/gpu/wheels-ray.txt"; }

platforms=()
for p in manylinux_2_31_x86_64 manylinux_2_28_x86_64 manylinux_2_27_x86_64 manylinux_2_26_x86_64 manylinux_2_17_x86_64 manylinux2014_x86_64 \
    manylinux_2_5_x86_64 manylinux1_x86_64; do
  platforms+=(--platform "$p")
done
specs | xargs "$PYTHON" -m pip download -q --no-deps \
  --only-binary=:all: --python-version 3.12 --implementation cp "${platforms[@]}" -d "$DOWNLOADS"
# hydra-core needs antlr4-python3-runtime 4.9.3, published as an sdist only: build a pure-Python wheel.
ls "$DOWNLOADS"/antlr4_python3_runtime-4.9.3-*.whl >/dev/null 2>&1 \
  || "$PYTHON" -m pip wheel -q --no-deps -w "$DOWNLOADS" antlr4-python3-runtime==4.9.3

# Exactly the pinned files (a stale second version of a package would stop the install there).
rm -f "$WHEELS"/*.whl "$WHEELS"/*.zip
while read -r spec; do
  name=$(echo "${spec%%==*}" | tr 'A-Z-' 'a-z_'); version=${spec##*==}
  if [ "$name" = ray ]; then
    "$PYTHON" "$ROOT/lab/gpu/slim_ray.py" "$DOWNLOADS/ray-$version-"*.whl "$WHEELS/ray-slim.zip"
  else
    # Wheel file names keep the project's own case (TransferQueue's is lower case, PyYAML's not).
    found=$(find "$DOWNLOADS" -maxdepth 1 -iname "$name-$version-*.whl" | head -1)
    [ -n "$found" ] || { echo "lab/gpu/wheels.sh: no wheel for $spec in $DOWNLOADS" >&2; exit 1; }
    cp "$found" "$WHEELS/"
  fi
done < <(specs; echo antlr4-python3-runtime==4.9.3)
echo "GPU wheels ($PROFILE): $(ls "$WHEELS" | wc -l) files, $(du -sm "$WHEELS" | cut -f1) MiB in $WHEELS ($(( $(date +%s) - start )) s)"

# Over the 64 MiB one command carries: in checksummed parts (lab/gpu/parts.sh).
[ "$PROFILE" != vllm ] || bash "$ROOT/lab/gpu/parts.sh" pack "$BUNDLE" "$PROFILE"
