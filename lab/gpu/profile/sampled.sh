#!/usr/bin/env bash
# Where the time of a GPU proof run goes (issue 27, docs/sizing.md): runs COMMAND while sampling the GPU's
# utilization and memory every 250 ms (nvidia-smi) and the Python stacks of veRL's training worker (the Ray
# actor WorkerDict, which holds the actor and the critic) 25 times a second with py-spy, without pausing it.
# Usage (GPU machine): PYSPY_WHEEL=.gpu/tools/py_spy-*.whl bash lab/gpu/profile/sampled.sh COMMAND...
# Writes into $OUT: smi.csv, worker.speedscope.json (open with speedscope).
set -uo pipefail
OUT=${OUT:-/tmp/verl-ppo-gpu/out}
mkdir -p "$OUT"
tools=/tmp/verl-ppo-gpu/tools
if [ -n "${PYSPY_WHEEL:-}" ] && [ ! -x "$tools/bin/py-spy" ]; then
  python3 -m pip install -q --no-index --no-deps --target "$tools" $PYSPY_WHEEL
fi
nvidia-smi --query-gpu=timestamp,utilization.gpu,memory.used --format=csv,noheader,nounits -lms 250 > "$OUT/smi.csv" &
smi=$!
(
  until pid=$(pgrep -f '^ray::WorkerDict' | head -1) && [ -n "$pid" ]; do sleep 2; done
  "$tools/bin/py-spy" record --nonblocking --rate 25 --format speedscope -o "$OUT/worker.speedscope.json" --pid "$pid"
) > "$OUT/py-spy.log" 2>&1 &
"$@"
code=$?
kill $smi 2>/dev/null
sleep 3  # py-spy writes its file when the worker exits
exit $code
