#!/usr/bin/env bash
# On the GPU machine: install one profile's carried wheels (GPU_PROFILE=hf or vllm) into $GPU_SITE, over
# the preinstalled torch (never replacing it), unpack the slim Ray keeping file modes, and print what the
# run will import. The vllm profile's wheels arrive as parts (lab/gpu/parts.sh keep): they are checked and
# reassembled first (lab/gpu/parts.sh assemble). Source it: it exports PYTHONPATH with the site and lab/gpu/shim (and, for
# the HF profile, lab/gpu/flash_attn_stub) for every process Ray starts later.
GPU_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
GPU_BUNDLE=${GPU_BUNDLE:-$GPU_ROOT/.gpu}
GPU_PROFILE=${GPU_PROFILE:-hf}
GPU_WORK=${GPU_WORK:-/tmp/verl-ppo-gpu}
GPU_SITE=${GPU_SITE:-$GPU_WORK/site-$GPU_PROFILE}
GPU_WHEELS=$GPU_BUNDLE/wheels-$GPU_PROFILE
if [ ! -f "$GPU_WHEELS/ray-slim.zip" ] && [ -d "$GPU_WORK/parts-$GPU_PROFILE" ]; then
  GPU_PROFILE=$GPU_PROFILE GPU_WORK=$GPU_WORK bash "$GPU_ROOT/lab/gpu/parts.sh" assemble "$GPU_BUNDLE" \
    || { return 2 2>/dev/null || exit 2; }
fi
if ! ls "$GPU_WHEELS"/*.whl >/dev/null 2>&1 || [ ! -f "$GPU_WHEELS/ray-slim.zip" ]; then
  echo "gpu: no wheels in $GPU_WHEELS: run 'make gpu-wheels' (VLLM=1 for vLLM) where PyPI is reachable and copy .gpu/ here" >&2
  return 2 2>/dev/null || exit 2
fi
mkdir -p "$GPU_WORK"
if ! python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
    --target "$GPU_SITE" "$GPU_WHEELS"/*.whl > "$GPU_WORK/pip-$GPU_PROFILE.log" 2>&1; then
  grep -v -i "warning" "$GPU_WORK/pip-$GPU_PROFILE.log" >&2
  echo "gpu: installing the $GPU_PROFILE wheels into $GPU_SITE failed (above)" >&2
  return 2 2>/dev/null || exit 2
fi
python3 - "$GPU_WHEELS/ray-slim.zip" "$GPU_SITE" <<'PY'
import os, sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as archive:
    for info in archive.infolist():
        path = archive.extract(info, sys.argv[2])
        mode = info.external_attr >> 16 & 0o777
        if mode:
            os.chmod(path, mode)
PY
shims=$GPU_ROOT/lab/gpu/shim
[ "$GPU_PROFILE" = hf ] && shims=$shims:$GPU_ROOT/lab/gpu/flash_attn_stub
export PYTHONPATH=$GPU_SITE:$shims${PYTHONPATH:+:$PYTHONPATH}
export PATH=$GPU_SITE/bin:$PATH GPU_PROFILE
python3 -c "import torch, ray, verl, transformers, tensordict; print('gpu: torch', torch.__version__, \
'| ray', ray.__version__, '| verl', verl.__version__, '| transformers', transformers.__version__, \
'| GPUs', torch.cuda.device_count())"
[ "$GPU_PROFILE" != vllm ] || python3 -c "import vllm; print('gpu: vllm', vllm.__version__)"
