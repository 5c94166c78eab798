#!/usr/bin/env bash
# Installs everything the generator and the tests need, from the package registries only:
# the project's virtual environment with requirements.txt and requirements-test.txt (lab/venv.py), Helm 3 and Helm 4 built
# from their Go modules and the helm-unittest plugin from its Go module, the Kubernetes OpenAPI document and the KubeRay / prometheus-operator CRDs
# from their Go modules, veRL's config from its wheels, Prometheus and promtool from their Go module,
# the parts of the local cluster (lab/scripts/build-localcluster.sh) and the chart's release tools
# (lab/scripts/build-release-tools.sh). Everything is cached under $VERL_PPO_CACHE (default
# ~/.cache/verl-ppo) and reused; each step says whether it is cached or what it builds
# (lab/scripts/steps.sh), the builds' own output goes to build/setup.log. Step names as arguments run those
# steps alone (`lab/scripts/setup.sh helm3 helm4`: only Helm).
set -euo pipefail
# shellcheck source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
cd "$root"
mkdir -p "$cache/schemas" "$cache/crds"

venv_ready() { python3 -m lab.venv ready; }
venv_build() { python3 -m lab.venv ensure; }
venv_python=$(python3 -m lab.venv python)

# Helm from its Go module. Helm 3 learns its default Kubernetes version (for .Capabilities and
# lint) from ldflags, as its Makefile sets them from the client-go it is built with.
helm_ldflags() {  # helm_ldflags MAJOR VERSION
  local major=$1 version=$2 ldflags client_go_minor
  ldflags="-s -w -X helm.sh/helm/v$major/internal/version.version=$version"
  if [ "$major" = 3 ]; then
    client_go_minor=$(grep -E '^\s*k8s.io/client-go v0\.' "$(module_gomod "helm.sh/helm/v3" "$version")" | sed -E 's/.* v0\.([0-9]+)\..*/\1/')
    for pkg in pkg/chartutil pkg/lint/rules; do
      ldflags="$ldflags -X helm.sh/helm/v3/$pkg.k8sVersionMajor=1 -X helm.sh/helm/v3/$pkg.k8sVersionMinor=$client_go_minor"
    done
  fi
  echo "$ldflags"
}

# The binary's name carries a hash of its recipe, so a changed recipe is rebuilt, not reused.
helm_binary() {  # helm_binary MAJOR VERSION
  echo "$cache/bin/helm$1-$2-$(helm_ldflags "$1" "$2" | tr -d '\n' | sha256sum | cut -c1-8)"
}

helm_ready() {  # helm_ready MAJOR VERSION: built, and bin/helmMAJOR points to it
  local out
  out=$(helm_binary "$1" "$2")
  [ -x "$out" ] && [ "$(readlink "$cache/bin/helm$1")" = "$(basename "$out")" ]
}

build_helm() {  # build_helm MAJOR VERSION
  local major=$1 version=$2 out tmp
  out=$(helm_binary "$major" "$version")
  if [ ! -x "$out" ]; then
    tmp=$(mktemp -d)
    GOBIN="$tmp" GOFLAGS=-mod=mod nice go install -ldflags "$(helm_ldflags "$major" "$version")" \
      "helm.sh/helm/v$major/cmd/helm@$version"
    mv "$tmp/helm" "$out"
    rmdir "$tmp"
  fi
  ln -sfn "$(basename "$out")" "$cache/bin/helm$major"
}

helm3_ready() { helm_ready 3 "$HELM3_VERSION"; }
helm3_build() { build_helm 3 "$HELM3_VERSION"; }
helm4_ready() { helm_ready 4 "$HELM4_VERSION"; }
helm4_build() { build_helm 4 "$HELM4_VERSION"; }

# helm-unittest from its Go module, as a Helm plugin (`helm unittest CHART`) in a folder of its own that the tests
# name in HELM_PLUGINS. A wrapper module requires the pinned Helm 3 too, so the plugin renders the suites with
# the Helm library of the pinned Helm 3 (the plugin renders in its own process, not through the helm that runs it).
unittest_plugin="$cache/helm-plugins/unittest-$HELM_UNITTEST_VERSION-helm-$HELM3_VERSION/unittest"
helm_unittest_ready() { [ -x "$unittest_plugin/untt" ] && [ -f "$unittest_plugin/plugin.yaml" ]; }
helm_unittest_build() {
  local dir="$cache/build/helm-unittest-$HELM_UNITTEST_VERSION" module=github.com/helm-unittest/helm-unittest
  wrapper_module "$dir" "$module" "$HELM_UNITTEST_VERSION"
  printf 'require helm.sh/helm/v3 %s\n' "$HELM3_VERSION" >> "$dir/go.mod"
  # Its go.mod replaces a dependency by the project's fork; a requiring module must say so itself.
  grep '^replace ' "$(module_gomod "$module" "$HELM_UNITTEST_VERSION")" >> "$dir/go.mod"
  printf '//go:build tools\n\npackage tools\n\nimport _ "%s/cmd/helm-unittest"\n' "$module" > "$dir/tools.go"
  mkdir -p "$unittest_plugin"
  (cd "$dir" && GOFLAGS=-mod=mod go mod tidy && CGO_ENABLED=0 nice go build -p "$jobs" -trimpath \
    -ldflags "-s -w -X $module/internal/build.version=${HELM_UNITTEST_VERSION#v}" -o "$unittest_plugin/untt" \
    "$module/cmd/helm-unittest")
  # The plugin's manifest as Helm 3 and Helm 4 read a plugin without an apiVersion (their legacy form).
  printf 'name: unittest\nversion: "%s"\nusage: "unit tests of a chart in YAML suites"\n%s\ncommand: "%s"\n' \
    "${HELM_UNITTEST_VERSION#v}" "description: helm-unittest built from its Go module by lab/scripts/setup.sh" \
    '$HELM_PLUGIN_DIR/untt' > "$unittest_plugin/plugin.yaml"
}

copy_files() {  # copy_files SRC_DIR DEST_DIR FILE...
  local src=$1 dest=$2
  shift 2
  mkdir -p "$dest"
  for f in "$@"; do install -m 0644 "$src/$f" "$dest/$(basename "$f")"; done
}

openapi_dir="$cache/schemas/kubernetes-$KUBERNETES_VERSION"
kuberay_crds="$cache/crds/kuberay-$KUBERAY_VERSION"
promop_crds="$cache/crds/prometheus-operator-$PROMETHEUS_OPERATOR_VERSION"
schemas_ready() {
  [ -f "$openapi_dir/swagger.json" ] && [ -f "$kuberay_crds/ray.io_rayjobs.yaml" ] &&
    [ -f "$promop_crds/monitoring.coreos.com_servicemonitors.yaml" ]
}
schemas_build() {
  copy_files "$(module_dir k8s.io/kubernetes "$KUBERNETES_VERSION")/api/openapi-spec" "$openapi_dir" swagger.json
  copy_files "$(module_dir github.com/ray-project/kuberay/ray-operator "$KUBERAY_VERSION")/config/crd/bases" \
    "$kuberay_crds" ray.io_rayclusters.yaml ray.io_rayjobs.yaml
  copy_files "$(module_dir github.com/prometheus-operator/prometheus-operator "$PROMETHEUS_OPERATOR_VERSION")/example/prometheus-operator-crd" \
    "$promop_crds" monitoring.coreos.com_podmonitors.yaml monitoring.coreos.com_servicemonitors.yaml
}

# veRL's Hydra config of every supported version, and its config dataclasses where it has them (0.6 and
# later; tier 3 and `generator check` read their declared types): files of its wheel (no dependencies).
# The stamp names what was copied, so a cache from an older recipe is refreshed.
verl_parts="verl/trainer/config verl/workers/config"
# The supported versions: ppo-job's files/verl-versions.yaml, read by the generator (the venv has its PyYAML).
verl_versions() { "$venv_python" -m generator.verlversions; }
verl_config_ready() {
  local version versions
  versions=$(verl_versions) || return 1
  for version in $versions; do
    [ "$(cat "$cache/verl-config/$version/.copied" 2>/dev/null)" = "$verl_parts" ] || return 1
  done
}
verl_config_build() {
  local version dest tmp part versions
  versions=$(verl_versions)
  for version in $versions; do
    dest="$cache/verl-config/$version"
    [ "$(cat "$dest/.copied" 2>/dev/null)" = "$verl_parts" ] && continue
    tmp=$(mktemp -d)
    "$venv_python" -m pip download -q --disable-pip-version-check --no-deps -d "$tmp" "verl==$version"
    "$venv_python" -m zipfile -e "$tmp"/verl-*.whl "$tmp/unpacked"
    for part in $verl_parts; do
      [ -d "$tmp/unpacked/$part" ] || continue
      mkdir -p "$tmp/copy/$(dirname "$part")"
      cp -r "$tmp/unpacked/$part" "$tmp/copy/$part"
    done
    printf '%s' "$verl_parts" > "$tmp/copy/.copied"
    # Replaced whole: what an interrupted run left goes first, and `mv` into an existing directory would nest.
    rm -rf "$dest"
    mkdir -p "$(dirname "$dest")"
    mv "$tmp/copy" "$dest"
    rm -rf "$tmp"
  done
}

# veRL's Python source of every supported version (its wheel's verl/**/*.py, no dependencies): tier 3 follows each
# key the sizing renders into the code that reads it (tests/support/verlreads.py). The stamp holds the wheel's sha256,
# so the source is the one PyPI serves for that version.
verl_source_ready() {
  local version versions
  versions=$(verl_versions) || return 1
  for version in $versions; do
    [ -s "$cache/verl-source/$version/.wheel-sha256" ] || return 1
  done
}
verl_source_build() {
  local version dest tmp versions
  versions=$(verl_versions)
  for version in $versions; do
    dest="$cache/verl-source/$version"
    [ -s "$dest/.wheel-sha256" ] && continue
    tmp=$(mktemp -d)
    "$venv_python" -m pip download -q --disable-pip-version-check --no-deps -d "$tmp" "verl==$version"
    "$venv_python" - "$tmp"/verl-*.whl "$tmp/copy" <<'PY'
import hashlib, sys, zipfile
from pathlib import Path
wheel, out = Path(sys.argv[1]), Path(sys.argv[2])
with zipfile.ZipFile(wheel) as archive:
    archive.extractall(out, [n for n in archive.namelist() if n.startswith("verl/") and n.endswith(".py")])
(out / ".wheel-sha256").write_text(f"{hashlib.sha256(wheel.read_bytes()).hexdigest()}  {wheel.name}\n")
PY
    rm -rf "$dest"
    mkdir -p "$(dirname "$dest")"
    mv "$tmp/copy" "$dest"
    rm -rf "$tmp"
  done
}

# Prometheus and promtool from the github.com/prometheus/prometheus module (a wrapper module: `go get` of the
# two packages; their module has no replace directives, but `go install` takes no -X of the version). The
# tests check the dashboards' PromQL with promtool, scrape a real Ray head (tier 5) and run the config
# prometheus-operator writes, its Kubernetes service discovery included (tier 7). Build tags: remove_all_sd
# leaves out every service discovery of its plugins/ but the minimum (file, http), enable_kubernetes_sd puts
# Kubernetes' back; no builtinassets, so no web UI is embedded (the HTTP API serves). Beside the binaries the
# module's VERSION file (the release it is, 3.16.0 of v0.316.0), which buildinfo reports and the operator's
# Prometheus object names.
prometheus="$cache/prometheus-$PROMETHEUS_VERSION"
prometheus_ready() { [ -x "$prometheus/prometheus" ] && [ -x "$prometheus/promtool" ] && [ -s "$prometheus/VERSION" ]; }
prometheus_build() {
  local dir="$cache/build/prometheus-$PROMETHEUS_VERSION" module=github.com/prometheus/prometheus source release date ldflags
  source=$(module_dir "$module" "$PROMETHEUS_VERSION")
  release=$(cat "$source/VERSION")
  date=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["Time"])' \
    "$(dirname "$(module_gomod "$module" "$PROMETHEUS_VERSION")")/$PROMETHEUS_VERSION.info")
  ldflags="-s -w"
  for field in "Version=$release" "Revision=module-$PROMETHEUS_VERSION" "Branch=module" "BuildUser=verl-ppo" "BuildDate=$date"; do
    ldflags="$ldflags -X github.com/prometheus/common/version.$field"
  done
  wrapper_module "$dir" "$module" "$PROMETHEUS_VERSION"
  mkdir -p "$dir/out"
  # One `go build` for both, so the packages they share compile once.
  (cd "$dir" && go get "$module/cmd/prometheus@$PROMETHEUS_VERSION" "$module/cmd/promtool@$PROMETHEUS_VERSION" &&
    nice go build -p "$jobs" -trimpath -tags remove_all_sd,enable_kubernetes_sd -ldflags "$ldflags" -o out/ \
      "$module/cmd/prometheus" "$module/cmd/promtool")
  rm -rf "$prometheus"
  mkdir -p "$prometheus"
  install -m 0755 "$dir/out/prometheus" "$dir/out/promtool" "$prometheus/"
  echo "$release" > "$prometheus/VERSION"
}

# The pinned vLLM's metric declarations (vllm/v1/metrics/loggers.py of the wheel lab/gpu/wheels-vllm.txt pins, as
# a CPython 3.12 manylinux x86_64 machine gets it): the rollout dashboard's test checks each metric name and type
# it reads against them. The wheel (about 280 MB) is read for that one file and dropped, or read where the GPU
# lab's downloads (lab/gpu/wheels.sh) already hold it.
vllm_version=$(sed -n 's/^vllm==//p' "$root/lab/gpu/wheels-vllm.txt")
vllm_metrics="$cache/vllm-$vllm_version/vllm/v1/metrics/loggers.py"
vllm_metrics_ready() { [ -s "$vllm_metrics" ]; }
vllm_metrics_build() {
  local tmp wheel
  tmp=$(mktemp -d)
  wheel=$(find "${GPU_DOWNLOADS:-$cache/gpu-downloads}" -maxdepth 1 -name "vllm-$vllm_version-*.whl" 2>/dev/null | head -1)
  if [ -z "$wheel" ]; then
    "$venv_python" -m pip download -q --disable-pip-version-check --no-deps --only-binary=:all: --python-version 3.12 \
      --implementation cp --platform manylinux_2_28_x86_64 -d "$tmp" "vllm==$vllm_version"
    wheel=$(find "$tmp" -maxdepth 1 -name "vllm-$vllm_version-*.whl" | head -1)
  fi
  "$venv_python" -c 'import pathlib, sys, zipfile
out = pathlib.Path(sys.argv[2]); out.parent.mkdir(parents=True, exist_ok=True)
out.write_bytes(zipfile.ZipFile(sys.argv[1]).read("vllm/v1/metrics/loggers.py"))' "$wheel" "$vllm_metrics"
  rm -rf "$tmp"
}

# The pinned SGLang's metric declarations (sglang/srt/observability/metrics_collector.py of the wheel lab/versions.env
# SGLANG_VERSION pins, for this machine's Python) and the labels its scheduler and tokenizer give them
# (scheduler_metrics_mixin.py, managers/tokenizer_manager.py): the rollout dashboard's test checks each SGLang name,
# type and label it reads against them, as vLLM's. The wheel (about 8 MB) is read for those files and dropped.
sglang_metrics="$cache/sglang-$SGLANG_VERSION/sglang/srt/observability/metrics_collector.py"
sglang_metrics_ready() { [ -s "$sglang_metrics" ] && [ -s "$cache/sglang-$SGLANG_VERSION/sglang/srt/managers/tokenizer_manager.py" ]; }
sglang_metrics_build() {
  local tmp wheel
  tmp=$(mktemp -d)
  "$venv_python" -m pip download -q --disable-pip-version-check --no-deps --only-binary=:all: -d "$tmp" \
    "sglang==$SGLANG_VERSION"
  wheel=$(find "$tmp" -maxdepth 1 -name "sglang-$SGLANG_VERSION-*.whl" | head -1)
  "$venv_python" -c 'import pathlib, sys, zipfile
wheel = zipfile.ZipFile(sys.argv[1])
for name in ("observability/metrics_collector.py", "observability/scheduler_metrics_mixin.py",
             "managers/tokenizer_manager.py"):
    out = pathlib.Path(sys.argv[2], "sglang/srt", name); out.parent.mkdir(parents=True, exist_ok=True)
    out.write_bytes(wheel.read(f"sglang/srt/{name}"))' "$wheel" "$cache/sglang-$SGLANG_VERSION"
  rm -rf "$tmp"
}

# Redis from Debian's packages, unpacked into the cache (PINNED says which): the external GCS store of
# KubeRay's GCS fault tolerance in test tier 7 (bin/redis-server runs with the unpacked lib/).
redis="$cache/redis"
redis_ready() { [ "$(cat "$redis/PINNED" 2>/dev/null)" = "$REDIS_DEBS" ] && [ -x "$redis/bin/redis-server" ]; }
redis_build() {
  local tmp
  tmp=$(mktemp -d)
  # shellcheck disable=SC2086  # one word per package
  debian_download "$tmp" $REDIS_DEBS
  for deb in "$tmp"/*.deb; do dpkg -x "$deb" "$tmp/root"; done
  rm -rf "$redis"
  mkdir -p "$redis/bin" "$redis/lib"
  cp -a "$tmp/root/usr/lib/x86_64-linux-gnu/." "$redis/lib/"
  install -m 0755 "$tmp/root/usr/bin/redis-check-rdb" "$redis/bin/redis-server"  # Debian's redis-server links to it
  install -m 0755 "$tmp/root/usr/bin/redis-cli" "$redis/bin/"
  LD_LIBRARY_PATH="$redis/lib" "$redis/bin/redis-server" --version
  echo "$REDIS_DEBS" > "$redis/PINNED"
  rm -rf "$tmp"
}

# checkov (the chart's security scan in the tests) in a virtual environment of its own: it pins packaging and
# networkx below what the project's packages use, so it stays out of the project's interpreter. The project
# venv's pip installs into it (`pip --python`), so it needs no pip or ensurepip of its own.
checkov_venv="$cache/venv/checkov-$CHECKOV_VERSION"
checkov_ready() { [ -x "$checkov_venv/bin/checkov" ]; }
checkov_build() {
  rm -rf "$checkov_venv"
  "$venv_python" -m venv --without-pip "$checkov_venv"
  "$venv_python" -m pip --python "$checkov_venv/bin/python" install -q --disable-pip-version-check "checkov==$CHECKOV_VERSION"
}

add_step venv "Python packages of requirements.txt and requirements-test.txt into the project venv" venv_ready venv_build
add_step helm3 "helm $HELM3_VERSION from its Go module" helm3_ready helm3_build
add_step helm4 "helm $HELM4_VERSION from its Go module" helm4_ready helm4_build
add_step helm-unittest "helm-unittest $HELM_UNITTEST_VERSION (Helm plugin) from its Go module" helm_unittest_ready helm_unittest_build
add_step schemas "Kubernetes $KUBERNETES_VERSION OpenAPI, KubeRay and prometheus-operator CRDs" schemas_ready schemas_build
add_step verl-config "veRL config of every supported version (ppo-job's files/verl-versions.yaml)" verl_config_ready verl_config_build
add_step verl-source "veRL's Python source of every supported version (ppo-job's files/verl-versions.yaml)" verl_source_ready verl_source_build
add_step vllm-metrics "vLLM $vllm_version's metric declarations (from its wheel)" vllm_metrics_ready vllm_metrics_build
add_step sglang-metrics "SGLang $SGLANG_VERSION's metric declarations (from its wheel)" sglang_metrics_ready sglang_metrics_build
add_step prometheus "prometheus and promtool $PROMETHEUS_VERSION (Kubernetes discovery only, no web UI)" prometheus_ready prometheus_build
add_step redis "redis-server ${REDIS_DEBS%% *} (Debian, unpacked)" redis_ready redis_build
add_step checkov "checkov $CHECKOV_VERSION in its own venv" checkov_ready checkov_build
# The local cluster of test tier 6 and `make demo`; the registry and chart-testing of the release tests.
# shellcheck source=build-localcluster.sh
source "$root/lab/scripts/build-localcluster.sh"
# shellcheck source=build-release-tools.sh
source "$root/lab/scripts/build-release-tools.sh"
select_steps "$@"
run_steps
echo "setup: tools ready under $cache; Python: $venv_python"
