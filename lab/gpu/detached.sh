#!/usr/bin/env bash
# The GPU proof past one command's limit: a lent GPU machine runs each command for at most 10 minutes and ends
# what it leaves running, except a process in a session of its own, which runs on while the machine is held.
#   bash lab/gpu/detached.sh start MODE [lab/gpu/proof.py options]  starts lab/gpu/run.sh so, and returns
#   bash lab/gpu/detached.sh wait SECONDS                             waits for it at most SECONDS, then copies
#                                                                     what it wrote so far to $OUT
# The runs read a copy of the bundle (.gpu/), so that a later command's copy of the checkout cannot change it.
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
STATE=${GPU_WORK:-/tmp/verl-ppo-gpu}/detached
case ${1:-} in
  start)
    shift
    [ $# -ge 1 ] || { echo "usage: bash lab/gpu/detached.sh start MODE [options]" >&2; exit 2; }
    if [ -f "$STATE/pid" ] && [ ! -f "$STATE/rc" ]; then
      echo "detached: a run is already under way (since $(cat "$STATE/started"))" >&2; exit 2
    fi
    rm -rf "$STATE" && mkdir -p "$STATE/out" "$STATE/bundle"
    cp -a "$ROOT/.gpu/jobs" "$ROOT/.gpu/prepare.py" "$STATE/bundle/"
    date -u +%H:%M:%S > "$STATE/started"
    STATE_DIR="$STATE" GPU_BUNDLE="$STATE/bundle" OUT="$STATE/out" setsid nohup bash -c \
      'bash "$0" "$@" > "$STATE_DIR/driver.log" 2>&1; echo $? > "$STATE_DIR/rc"' \
      "$HERE/run.sh" "$@" < /dev/null > /dev/null 2>&1 &
    echo $! > "$STATE/pid"
    echo "detached: started $* (pid $(cat "$STATE/pid"))"
    ;;
  wait)
    limit=${2:-540}
    [ -f "$STATE/pid" ] || { echo "detached: nothing started here" >&2; exit 2; }
    end=$(( $(date +%s) + limit ))
    while [ ! -f "$STATE/rc" ] && [ "$(date +%s)" -lt "$end" ]; do sleep 5; done
    grep -h '^\[gpu-proof\|^gpu:' "$STATE/driver.log" | tail -40
    if [ -n "${OUT:-}" ]; then
      cp "$STATE"/out/*.json "$OUT/" 2>/dev/null
      (cd "$STATE/out" && tar -czf "$OUT/logs.tar.gz" ./*.log 2>/dev/null)
      gzip -c "$STATE/driver.log" > "$OUT/driver.log.gz"
    fi
    if [ -f "$STATE/rc" ]; then
      echo "detached: finished with exit code $(cat "$STATE/rc") (started $(cat "$STATE/started") UTC)"
      exit "$(cat "$STATE/rc")"
    fi
    echo "detached: still running (started $(cat "$STATE/started") UTC, now $(date -u +%H:%M:%S))"
    ;;
  *) echo "usage: bash lab/gpu/detached.sh {start MODE [options]|wait SECONDS}" >&2; exit 2 ;;
esac
