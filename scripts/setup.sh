#!/usr/bin/env bash
# Installs everything the generator and the tests need, from the package registries only:
# Python packages (requirements.txt), Helm 3 and Helm 4 built from their Go modules, the
# Kubernetes OpenAPI document and the KubeRay / prometheus-operator CRDs from their Go modules,
# Prometheus and promtool from Debian's package, and the parts of the local cluster
# (scripts/build-localcluster.sh).
# Builds and downloads are cached under $VERL_PPO_CACHE (default ~/.cache/verl-ppo) and reused.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=../tools/versions.env
source "$root/tools/versions.env"
cache=${VERL_PPO_CACHE:-$HOME/.cache/verl-ppo}
mkdir -p "$cache/bin" "$cache/schemas" "$cache/crds"

python3 -m pip install -q --disable-pip-version-check -r "$root/requirements.txt"

# shellcheck source=go-modules.sh
source "$root/scripts/go-modules.sh"

# Builds Helm from its Go module. Helm 3 learns its default Kubernetes version (for .Capabilities
# and lint) from ldflags, as its Makefile sets them from the client-go it is built with.
build_helm() {
  local major=$1 version=$2 ldflags client_go_minor
  ldflags="-s -w -X helm.sh/helm/v$major/internal/version.version=$version"
  if [ "$major" = 3 ]; then
    client_go_minor=$(grep -E '^\s*k8s.io/client-go v0\.' "$(module_gomod "helm.sh/helm/v3" "$version")" | sed -E 's/.* v0\.([0-9]+)\..*/\1/')
    for pkg in pkg/chartutil pkg/lint/rules; do
      ldflags="$ldflags -X helm.sh/helm/v3/$pkg.k8sVersionMajor=1 -X helm.sh/helm/v3/$pkg.k8sVersionMinor=$client_go_minor"
    done
  fi
  # The binary's name carries a hash of its recipe, so a changed recipe is rebuilt, not reused.
  local out
  out="$cache/bin/helm$major-$version-$(printf '%s' "$ldflags" | sha256sum | cut -c1-8)"
  if [ ! -x "$out" ]; then
    local started tmp
    started=$(date +%s)
    tmp=$(mktemp -d)
    GOBIN="$tmp" GOFLAGS=-mod=mod go install -ldflags "$ldflags" "helm.sh/helm/v$major/cmd/helm@$version"
    mv "$tmp/helm" "$out"
    rmdir "$tmp"
    echo "setup: built helm $version in $(( $(date +%s) - started ))s"
  fi
  ln -sfn "$(basename "$out")" "$cache/bin/helm$major"
}

copy_files() {  # copy_files SRC_DIR DEST_DIR FILE...
  local src=$1 dest=$2
  shift 2
  mkdir -p "$dest"
  for f in "$@"; do install -m 0644 "$src/$f" "$dest/$(basename "$f")"; done
}


build_helm 3 "$HELM3_VERSION"
build_helm 4 "$HELM4_VERSION"

k8s=$(module_dir k8s.io/kubernetes "$KUBERNETES_VERSION")
copy_files "$k8s/api/openapi-spec" "$cache/schemas/kubernetes-$KUBERNETES_VERSION" swagger.json

kuberay=$(module_dir github.com/ray-project/kuberay/ray-operator "$KUBERAY_VERSION")
copy_files "$kuberay/config/crd/bases" "$cache/crds/kuberay-$KUBERAY_VERSION" \
  ray.io_rayclusters.yaml ray.io_rayjobs.yaml

promop=$(module_dir github.com/prometheus-operator/prometheus-operator "$PROMETHEUS_OPERATOR_VERSION")
copy_files "$promop/example/prometheus-operator-crd" "$cache/crds/prometheus-operator-$PROMETHEUS_OPERATOR_VERSION" \
  monitoring.coreos.com_podmonitors.yaml monitoring.coreos.com_servicemonitors.yaml

# veRL's Hydra config of every supported version: the config files of its wheel (no dependencies).
for version in $VERL_VERSIONS; do
  dest="$cache/verl-config/$version"
  [ -f "$dest/verl/trainer/config/ppo_trainer.yaml" ] && continue
  tmp=$(mktemp -d)
  python3 -m pip download -q --disable-pip-version-check --no-deps -d "$tmp" "verl==$version"
  python3 -m zipfile -e "$tmp"/verl-*.whl "$tmp/unpacked"
  # What an interrupted run left goes first: `cp -r` and `mv` into an existing directory would nest the copy.
  rm -rf "$dest"
  mkdir -p "$dest/verl/trainer"
  cp -r "$tmp/unpacked/verl/trainer/config" "$dest/config.tmp"
  mv "$dest/config.tmp" "$dest/verl/trainer/config"
  rm -rf "$tmp"
done

# Prometheus and promtool from Debian's package, unpacked into the cache (no system install): the tests
# check the dashboards' PromQL with promtool and scrape a real Ray head with Prometheus.
prometheus="$cache/prometheus-$PROMETHEUS_DEB_VERSION"
if [ ! -x "$prometheus/promtool" ]; then
  started=$(date +%s)
  tmp=$(mktemp -d)
  chown _apt "$tmp" 2>/dev/null || true  # apt downloads as its _apt user where that user may write
  if ! (cd "$tmp" && apt-get download -qq "prometheus=$PROMETHEUS_DEB_VERSION"); then
    apt-get update -q >/dev/null
    (cd "$tmp" && apt-get download -qq "prometheus=$PROMETHEUS_DEB_VERSION") ||
      { echo "setup: Debian no longer serves prometheus=$PROMETHEUS_DEB_VERSION: pin the version apt-cache policy prometheus lists in tools/versions.env" >&2; exit 1; }
  fi
  dpkg -x "$tmp"/prometheus_*.deb "$tmp/unpacked"
  mkdir -p "$prometheus"
  install -m 0755 "$tmp/unpacked/usr/bin/prometheus" "$tmp/unpacked/usr/bin/promtool" "$prometheus/"
  rm -rf "$tmp"
  echo "setup: fetched prometheus $PROMETHEUS_DEB_VERSION in $(( $(date +%s) - started ))s"
fi

# checkov (the chart's security scan in the tests) in a virtual environment of its own: it pins packaging and
# networkx below what the project's packages use, so it stays out of the project's interpreter.
checkov_venv="$cache/venv/checkov-$CHECKOV_VERSION"
if [ ! -x "$checkov_venv/bin/checkov" ]; then
  started=$(date +%s)
  rm -rf "$checkov_venv"
  python3 -m venv "$checkov_venv"
  "$checkov_venv/bin/python" -m pip install -q --disable-pip-version-check "checkov==$CHECKOV_VERSION"
  echo "setup: installed checkov $CHECKOV_VERSION in $(( $(date +%s) - started ))s"
fi

# The local cluster of test tier 6 and `make demo`.
bash "$root/scripts/build-localcluster.sh"

"$cache/bin/helm3" version --short
"$cache/bin/helm4" version --short
echo "setup: tools ready under $cache"
