# What setup.sh and the build scripts share (sourced): the repository root, the pinned versions,
# the tool cache and its bin/, the build parallelism (VERL_PPO_BUILD_JOBS: the machines have 2 cores
# shared with other work), the step runner and the Go module helpers.
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
# shellcheck source=../versions.env
source "$root/lab/versions.env"
cache=${VERL_PPO_CACHE:-$HOME/.cache/verl-ppo}
bin="$cache/bin"
mkdir -p "$bin" "$cache/build"
jobs=${VERL_PPO_BUILD_JOBS:-2}
# shellcheck source=steps.sh
source "$root/lab/scripts/steps.sh"
# shellcheck source=go-modules.sh
source "$root/lab/scripts/go-modules.sh"
