#!/usr/bin/env bash
# On the GPU machine: install the carried wheels into $GPU_SITE (over the preinstalled torch, never
# replacing it), unpack the slim Ray keeping file modes, and print what the run will import.
# Source it: it exports PYTHONPATH with the site and gpu/shim for every process Ray starts later.
GPU_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
GPU_BUNDLE=${GPU_BUNDLE:-$GPU_ROOT/.gpu}
GPU_SITE=${GPU_SITE:-/tmp/verl-ppo-gpu/site}
if ! ls "$GPU_BUNDLE"/wheels/*.whl >/dev/null 2>&1 || [ ! -f "$GPU_BUNDLE/wheels/ray-slim.zip" ]; then
  echo "gpu: no wheels in $GPU_BUNDLE/wheels: run 'make gpu-wheels' where PyPI is reachable and copy .gpu/ here" >&2
  return 2 2>/dev/null || exit 2
fi
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
  --target "$GPU_SITE" "$GPU_BUNDLE"/wheels/*.whl 2>&1 | grep -v -i "warning" || true
python3 - "$GPU_BUNDLE/wheels/ray-slim.zip" "$GPU_SITE" <<'PY'
import os, sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as archive:
    for info in archive.infolist():
        path = archive.extract(info, sys.argv[2])
        mode = info.external_attr >> 16 & 0o777
        if mode:
            os.chmod(path, mode)
PY
export PYTHONPATH=$GPU_SITE:$GPU_ROOT/gpu/shim${PYTHONPATH:+:$PYTHONPATH}
export PATH=$GPU_SITE/bin:$PATH
python3 -c "import torch, ray, verl, transformers, tensordict; print('gpu: torch', torch.__version__, \
'| ray', ray.__version__, '| verl', verl.__version__, '| transformers', transformers.__version__, \
'| GPUs', torch.cuda.device_count())"
