# Setup's steps (sourced; needs $root and $cache). A step is an id, a label, a function that says
# whether its result is already in the cache and a function that builds it. run_steps prints one
# line per step (k of n, what it builds, how long that took last time) and sends the builds' own
# output (module downloads, compiler lines) to build/setup.log, whose tail it prints on failure.
# A ready function is a quick test whose status is its answer (it runs as a condition).
# Build times are recorded under $cache/timings/<id>, so a rebuild (a new pin) can say how long; a step never
# built here is estimated from lab/scripts/cold-times.txt (each step's time on a fresh 2-core machine), so a first
# setup prints how long it will take before it starts.

declare -p STEPS >/dev/null 2>&1 || STEPS=()  # sourced twice (setup, then a build script): keep the list
SETUP_LOG="$root/build/setup.log"
COLD_TIMES="$root/lab/scripts/cold-times.txt"

add_step() {  # add_step ID LABEL READY_FUNCTION BUILD_FUNCTION
  STEPS+=("$1|$2|$3|$4")
}

format_seconds() {
  if [ "$1" -ge 60 ]; then printf '%dm%02ds' $(($1 / 60)) $(($1 % 60)); else printf '%ds' "$1"; fi
}

cold_time() {  # cold_time ID: the step's seconds on a fresh 2-core machine (cold-times.txt), or nothing
  [ ! -f "$COLD_TIMES" ] || awk -v id="$1" '$1 == id { print $2; exit }' "$COLD_TIMES"
}

last_time() {  # last_time ID: "last time 3m05s", or "first build here" with the fresh machine's time where known
  local file="$cache/timings/$1" cold
  if [ -s "$file" ]; then echo "last time $(format_seconds "$(cat "$file")")"; return; fi
  cold=$(cold_time "$1")
  if [ -n "$cold" ]; then echo "first build here; about $(format_seconds "$cold") on a fresh 2-core machine"
  else echo "first build here"; fi
}

# Runs a step's build with its output in the log and errexit on inside it; on failure prints the
# log's tail and stops setup. Never call it as a condition: bash turns errexit off in there.
build_logged() {  # build_logged "[k/n] LABEL" FUNCTION
  local status
  set +e
  ( set -e; "$2" ) >>"$SETUP_LOG" 2>&1
  status=$?
  set -e
  [ "$status" = 0 ] && return
  echo "setup $1: FAILED; the end of $SETUP_LOG:" >&2
  tail -n 25 "$SETUP_LOG" >&2
  echo "setup: the whole log is $SETUP_LOG" >&2
  exit 1
}

# Keeps only the named steps, in setup's order (`lab/scripts/setup.sh helm4`: the pinned Helm 4 alone, what
# `make helm` needs); none named keeps every step. An unknown name stops setup, listing the known ones.
select_steps() {  # select_steps [ID...]
  [ $# = 0 ] && return
  local kept=() entry known=() wanted
  for entry in "${STEPS[@]}"; do known+=("${entry%%|*}"); done
  for wanted in "$@"; do
    [[ " ${known[*]} " == *" $wanted "* ]] || { echo "setup: no step named $wanted; the steps: ${known[*]}" >&2; exit 2; }
  done
  for entry in "${STEPS[@]}"; do
    [[ " $* " == *" ${entry%%|*} "* ]] && kept+=("$entry")
  done
  STEPS=("${kept[@]}")
}

run_steps() {
  local total=${#STEPS[@]} k=0 todo=() builds=0 recorded=0 pending=0 estimated=0 unknown=0 entry id label ready build
  local started elapsed cold sources
  mkdir -p "$(dirname "$SETUP_LOG")" "$cache/timings"
  : >"$SETUP_LOG"
  for entry in "${STEPS[@]}"; do
    IFS='|' read -r id label ready build <<<"$entry"
    if "$ready" >>"$SETUP_LOG" 2>&1; then todo+=(cached); continue; fi
    todo+=(build)
    builds=$((builds + 1))
    if [ -s "$cache/timings/$id" ]; then
      recorded=$((recorded + 1))
      pending=$((pending + $(cat "$cache/timings/$id")))
    elif cold=$(cold_time "$id"); [ -n "$cold" ]; then
      estimated=$((estimated + 1))
      pending=$((pending + cold))
    else
      unknown=$((unknown + 1))
    fi
  done
  if [ "$builds" = 0 ]; then
    echo "setup: all $total steps cached under $cache"
  else
    echo "setup: $builds of $total steps to build; their output goes to $SETUP_LOG"
    if [ $((recorded + estimated)) -gt 0 ]; then
      sources=""
      [ "$recorded" = 0 ] || sources="$recorded as long as last time here"
      [ "$estimated" = 0 ] || sources="${sources:+$sources; }$estimated as on a fresh 2-core machine, lab/scripts/cold-times.txt"
      [ "$unknown" = 0 ] || sources="${sources:+$sources; }$unknown not estimated"
      echo "setup: estimated time $(format_seconds "$pending") ($sources)"
    fi
  fi
  for entry in "${STEPS[@]}"; do
    IFS='|' read -r id label ready build <<<"$entry"
    k=$((k + 1))
    if [ "${todo[$((k - 1))]}" = cached ]; then
      printf 'setup [%d/%d] %s: cached\n' "$k" "$total" "$label"
      continue
    fi
    printf 'setup [%d/%d] %s: building (%s) ...\n' "$k" "$total" "$label" "$(last_time "$id")"
    started=$(date +%s)
    build_logged "[$k/$total] $label" "$build"
    elapsed=$(($(date +%s) - started))
    echo "$elapsed" >"$cache/timings/$id"
    printf 'setup [%d/%d] %s: built in %s\n' "$k" "$total" "$label" "$(format_seconds "$elapsed")"
  done
}

# Downloads Debian packages (name=version words) into DIR, refreshing apt's lists once if a pin is not
# found; stops setup naming the pins when Debian no longer serves one.
debian_download() {  # debian_download DIR PACKAGE=VERSION...
  local dir=$1
  shift
  chown _apt "$dir" 2>/dev/null || true  # apt downloads as its _apt user where that user may write
  if ! (cd "$dir" && apt-get download -qq "$@"); then
    apt-get update -q >/dev/null
    (cd "$dir" && apt-get download -qq "$@") ||
      { echo "setup: Debian no longer serves one of $*: pin the versions apt-cache policy lists in lab/versions.env" >&2; exit 1; }
  fi
}
