#!/usr/bin/env bash
# make gpu-smoke / make gpu-bench: the GPU proof on a machine with NVIDIA GPUs, Python 3.12 and torch,
# with the bundle .gpu/ (wheels and rendered runs) made by `make gpu-wheels` where PyPI and Helm are.
# Usage: bash lab/gpu/run.sh MODE [lab/gpu/proof.py options]; a vllm-* mode uses the vllm wheel profile.
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
[ $# -ge 1 ] || { echo "usage: bash lab/gpu/run.sh MODE [lab/gpu/proof.py options] (lab/gpu/proof.py lists the modes)" >&2; exit 2; }
if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L 2>/dev/null | grep -q '^GPU '; then
  echo "gpu: no NVIDIA GPU here (nvidia-smi lists none). The GPU proof runs only on a GPU machine:" >&2
  hint="gpu-${1#vllm-}"; [[ $1 == vllm-* ]] && hint="$hint VLLM=1"
  echo "     run 'make gpu-wheels' where PyPI is reachable, copy the checkout with .gpu/ there, then 'make $hint'." >&2
  exit 2
fi
case $1 in vllm-*) export GPU_PROFILE=vllm ;; *) export GPU_PROFILE=hf ;; esac
export PYTHONUNBUFFERED=1 RAY_USAGE_STATS_ENABLED=0 RAY_DEDUP_LOGS=0
# NVLink multicast off (the multi-GPU machines require it: it can take a shared host's GPUs down), for
# every process Ray starts from here.
export NCCL_NVLS_ENABLE=${NCCL_NVLS_ENABLE:-0} TORCH_SYMM_MEM_DISABLE_MULTICAST=${TORCH_SYMM_MEM_DISABLE_MULTICAST:-1} \
  NVSHMEM_DISABLE_NVLS=${NVSHMEM_DISABLE_NVLS:-1}
# Such machines may grow their RAM as it is used: Ray's OOM killer would act on the smaller start figure.
export RAY_memory_monitor_refresh_ms=${RAY_memory_monitor_refresh_ms:-0}
start=$(date +%s)
source "$HERE/install.sh" || exit $?
echo "gpu: wheels installed in $(( $(date +%s) - start )) s"
if [ "${GPU_IMPORT_CHECK:-0}" = 1 ] && [ "$GPU_PROFILE" = vllm ]; then
  # Beside the run: every module the vLLM path always imports, each on its own, so one command lists
  # every missing requirement at once (lab/gpu/import_graph.py).
  python3 "$HERE/import_graph.py" "$GPU_SITE" @"$HERE/import-entries-vllm.txt" --import-them \
    > "${OUT:-$GPU_WORK}/imports.txt" 2>&1 &
fi
if [ "$GPU_PROFILE" = vllm ]; then
  # The shim's stand-in for flash-attn's cross entropy must give veRL's log-probs before any run uses it.
  python3 "$HERE/machine_check.py" "$GPU_WORK" || exit 3
  [ -z "${OUT:-}" ] || cp "$GPU_WORK/machine.json" "$OUT/"
fi
python3 "$HERE/proof.py" "$@"
code=$?
if [ $code -ne 0 ] && [ -n "${OUT:-}" ] && [ -d /tmp/ray/session_latest/logs ]; then
  # What Ray's own processes said, for a failed run (kept small: the error streams and the job logs).
  (cd /tmp/ray/session_latest && tar -czf "$OUT/ray-logs.tar.gz" logs/*.err logs/job-driver-*.log logs/dashboard*.log \
    logs/raylet.out logs/gcs_server.out 2>/dev/null) || true
fi
echo "gpu: $1 finished with exit code $code in $(( $(date +%s) - start )) s"
exit $code
