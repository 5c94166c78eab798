#!/usr/bin/env bash
# Download, on a machine with PyPI, every wheel the GPU proof installs on a GPU machine without it:
# gpu/wheels.txt for CPython 3.12 manylinux x86_64, antlr4's runtime built from its sdist (no wheel
# is published), and Ray slimmed to fit the carry limit. Idempotent; output in $GPU_BUNDLE/wheels.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUNDLE=${GPU_BUNDLE:-$ROOT/.gpu}
WHEELS=$BUNDLE/wheels
DOWNLOADS=${GPU_DOWNLOADS:-${VERL_PPO_CACHE:-$HOME/.cache/verl-ppo}/gpu-downloads}
PYTHON=${PYTHON:-python3}
mkdir -p "$WHEELS" "$DOWNLOADS"
start=$(date +%s)

platforms=()
for p in manylinux_2_28_x86_64 manylinux_2_27_x86_64 manylinux_2_17_x86_64 manylinux2014_x86_64 manylinux1_x86_64; do
  platforms+=(--platform "$p")
done
grep -v -e '^#' -e '^$' "$ROOT/gpu/wheels.txt" | xargs "$PYTHON" -m pip download -q --no-deps \
  --only-binary=:all: --python-version 3.12 --implementation cp "${platforms[@]}" -d "$DOWNLOADS"
# hydra-core needs antlr4-python3-runtime 4.9.3, published as an sdist only: build a pure-Python wheel.
ls "$DOWNLOADS"/antlr4_python3_runtime-4.9.3-*.whl >/dev/null 2>&1 \
  || "$PYTHON" -m pip wheel -q --no-deps -w "$DOWNLOADS" antlr4-python3-runtime==4.9.3

# Exactly the pinned files (a stale second version of a package would stop the install there).
rm -f "$WHEELS"/*.whl "$WHEELS"/*.zip
while read -r spec; do
  name=$(echo "${spec%%==*}" | tr 'A-Z-' 'a-z_'); version=${spec##*==}
  if [ "$name" = ray ]; then
    "$PYTHON" "$ROOT/gpu/slim_ray.py" "$DOWNLOADS/ray-$version-"*.whl "$WHEELS/ray-slim.zip"
  else
    cp "$DOWNLOADS/$name-$version-"*.whl "$WHEELS/"
  fi
done < <(grep -v -e '^#' -e '^$' "$ROOT/gpu/wheels.txt"; echo antlr4-python3-runtime==4.9.3)
echo "GPU wheels: $(ls "$WHEELS" | wc -l) files, $(du -sm "$WHEELS" | cut -f1) MiB in $WHEELS ($(( $(date +%s) - start )) s)"
