#!/usr/bin/env bash
# Builds the parts of the local cluster (test tiers 6 and 7, `make demo`) from the package registries:
# kube-apiserver, kube-controller-manager, kube-scheduler, kubelet and kube-proxy from the
# k8s.io/kubernetes module, etcd from go.etcd.io/etcd/server/v3, kwok from sigs.k8s.io/kwok, the KubeRay
# operator and Kueue's controller from their Go modules; for the real node, Debian's containerd, runc,
# CNI plugins, iptables and ipset unpacked into the cache, CoreDNS, kube-router (its NetworkPolicy
# firewall) and crictl from their Go modules, and its images (lab/scripts/build-images.sh). Binaries are
# cached under $VERL_PPO_CACHE/bin, named by version; a cached one is reused. Builds run under `nice`
# with few parallel jobs: the machines have 2 cores shared with other work. setup.sh sources this file
# for its steps (lab/scripts/steps.sh); run alone, it runs them.
set -euo pipefail
# shellcheck source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

# k8s.io/kubernetes replaces its staging modules (k8s.io/api, ...) with ./staging paths that its
# module zip lacks, so a wrapper module requires it and pins every staging module to the
# published v0.<minor>.<patch> of the same release.
kubernetes_wrapper() {
  local dir=$1 staging=v0.${KUBERNETES_VERSION#v1.}
  mkdir -p "$dir"
  {
    echo "module verl-ppo.local/kubernetes-build"
    echo
    echo "go 1.25.0"
    echo
    echo "require k8s.io/kubernetes $KUBERNETES_VERSION"
    echo
    echo "replace ("
    grep -E '^\s*k8s\.io/[a-z0-9-]+ => \./staging/' "$(module_gomod k8s.io/kubernetes "$KUBERNETES_VERSION")" |
      awk -v v="$staging" '{print "\t" $1 " => " $1 " " v}'
    echo ")"
  } > "$dir/go.mod"
  # The build needs a package of the wrapper's own for `go mod tidy` to keep the requirements.
  cat > "$dir/tools.go" <<'GO'
//go:build tools

package tools

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver/app"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager/app"
	_ "k8s.io/kubernetes/cmd/kube-scheduler/app"
	_ "k8s.io/kubernetes/cmd/kubelet/app"
	_ "k8s.io/kubernetes/cmd/kube-proxy/app"
)
GO
  (cd "$dir" && GOFLAGS=-mod=mod go mod tidy >/dev/null)
}

kubernetes_binaries=(kube-apiserver kube-controller-manager kube-scheduler kubelet kube-proxy)
kubernetes_ready() {
  local b
  for b in "${kubernetes_binaries[@]}"; do [ -x "$bin/$b-$KUBERNETES_VERSION" ] || return 1; done
}

build_kubernetes() {
  local version=$KUBERNETES_VERSION dir="$cache/build/kubernetes-$KUBERNETES_VERSION" ldflags minor date
  kubernetes_wrapper "$dir"
  minor=${version#v1.}; minor=${minor%%.*}
  date=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["Time"])' \
    "$(dirname "$(module_gomod k8s.io/kubernetes "$version")")/$version.info")
  ldflags="-s -w"
  for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    ldflags="$ldflags -X $pkg.gitVersion=$version -X $pkg.gitMajor=1 -X $pkg.gitMinor=$minor"
    ldflags="$ldflags -X $pkg.gitTreeState=clean -X $pkg.buildDate=$date -X $pkg.gitCommit=module-$version"
  done
  local out="$cache/build/out-$version"
  mkdir -p "$out"
  # One `go build` for every binary, so the packages they share compile once.
  (cd "$dir" && nice go build -p "$jobs" -trimpath -ldflags "$ldflags" -o "$out/" \
    "${kubernetes_binaries[@]/#/k8s.io/kubernetes/cmd/}")
  for b in "${kubernetes_binaries[@]}"; do mv "$out/$b" "$bin/$b-$version"; done
}

build_go_binary() {  # build_go_binary NAME PACKAGE VERSION: `go install PACKAGE@VERSION` as bin/NAME-VERSION
  local name=$1 package=$2 version=$3 tmp
  tmp=$(mktemp -d)
  GOBIN="$tmp" GOFLAGS=-mod=mod nice go install -p "$jobs" -trimpath -ldflags "-s -w" "$package@$version"
  mv "$tmp/$(basename "${package%/cmd}")" "$bin/$name-$version" 2>/dev/null || mv "$tmp"/* "$bin/$name-$version"
  rm -rf "$tmp"
}

# The Debian packages, unpacked into realnode/debs; its PINNED file names what it holds. sbin/ holds
# the names the node's programs call (iptables, ...): Debian points them at alternatives, which an
# unpacked tree lacks.
debs_ready() { [ "$(cat "$cache/realnode/debs/PINNED" 2>/dev/null)" = "$REALNODE_DEBS" ]; }
unpack_debs() {
  local dest="$cache/realnode/debs" tmp
  tmp=$(mktemp -d)
  # shellcheck disable=SC2086  # one word per package
  debian_download "$tmp" $REALNODE_DEBS
  rm -rf "$dest"
  mkdir -p "$dest/sbin"
  for deb in "$tmp"/*.deb; do dpkg -x "$deb" "$dest/root"; done
  for name in iptables iptables-save iptables-restore ip6tables ip6tables-save ip6tables-restore; do
    ln -s ../root/usr/sbin/xtables-nft-multi "$dest/sbin/$name"
  done
  for name in ipset conntrack runc debootstrap; do ln -s "../root/usr/sbin/$name" "$dest/sbin/$name"; done
  for name in containerd containerd-shim-runc-v2 ctr umoci; do ln -s "../root/usr/bin/$name" "$dest/sbin/$name"; done
  rm -rf "$tmp"
  echo "$REALNODE_DEBS" > "$dest/PINNED"
}

# CoreDNS with the plugins the node's DNS uses only (its full build links every cloud's SDK): a
# main over coremain with a directive list in CoreDNS's own order (its plugin.cfg).
coredns_ready() { [ -x "$bin/coredns-$COREDNS_VERSION" ]; }
build_coredns() {
  local dir="$cache/build/coredns-$COREDNS_VERSION" plugin imports=""
  local plugins=(bind ready health errors log cache template kubernetes)
  mkdir -p "$dir"
  for plugin in "${plugins[@]}"; do imports+=$'\t_ "github.com/coredns/coredns/plugin/'"$plugin"$'"\n'; done
  printf 'module verl-ppo.local/coredns-build\n\ngo 1.25.0\n\nrequire github.com/coredns/coredns %s\n' "$COREDNS_VERSION" > "$dir/go.mod"
  cat > "$dir/main.go" <<GO
package main

import (
	"github.com/coredns/coredns/core/dnsserver"
	"github.com/coredns/coredns/coremain"

$imports)

func init() {
	dnsserver.Directives = []string{$(printf '"%s", ' "${plugins[@]}")}
}

func main() { coremain.Run() }
GO
  (cd "$dir" && gofmt -w main.go && GOFLAGS=-mod=mod go mod tidy >/dev/null && \
    nice go build -p "$jobs" -trimpath -ldflags "-s -w" -o "$bin/coredns-$COREDNS_VERSION" .)
}

# etcd's own main package lives in a module with local replace directives (no `go install @version`):
# a two-line main over go.etcd.io/etcd/server/v3's etcdmain, as etcd's main.go is.
etcd_ready() { [ -x "$bin/etcd-$ETCD_VERSION" ]; }
build_etcd() {
  local dir="$cache/build/etcd-$ETCD_VERSION"
  mkdir -p "$dir"
  printf 'module verl-ppo.local/etcd-build\n\ngo 1.25.0\n\nrequire go.etcd.io/etcd/server/v3 %s\n' "$ETCD_VERSION" > "$dir/go.mod"
  printf 'package main\n\nimport (\n\t"os"\n\n\t"go.etcd.io/etcd/server/v3/etcdmain"\n)\n\nfunc main() { etcdmain.Main(os.Args) }\n' > "$dir/main.go"
  (cd "$dir" && GOFLAGS=-mod=mod go mod tidy >/dev/null && \
    nice go build -p "$jobs" -trimpath -ldflags "-s -w" -o "$bin/etcd-$ETCD_VERSION" .)
}

kwok_ready() { [ -x "$bin/kwok-$KWOK_VERSION" ]; }
build_kwok() { build_go_binary kwok sigs.k8s.io/kwok/cmd/kwok "$KWOK_VERSION"; }
kube_router_ready() { [ -x "$bin/kube-router-$KUBE_ROUTER_VERSION" ]; }
build_kube_router() { build_go_binary kube-router github.com/cloudnativelabs/kube-router/v2/cmd/kube-router "$KUBE_ROUTER_VERSION"; }
crictl_ready() { [ -x "$bin/crictl-$CRICTL_VERSION" ]; }
build_crictl() { build_go_binary crictl sigs.k8s.io/cri-tools/cmd/crictl "$CRICTL_VERSION"; }
images_ready() { bash "$root/lab/scripts/build-images.sh" --check; }
build_images() { bash "$root/lab/scripts/build-images.sh"; }
kuberay_operator_ready() { [ -x "$bin/kuberay-operator-$KUBERAY_VERSION" ]; }
build_kuberay_operator() { build_go_binary kuberay-operator github.com/ray-project/kuberay/ray-operator "$KUBERAY_VERSION"; }
# Kueue (the queue tests): only the controller's main package, not the module's kueuectl, kueueviz or
# importer; beside it its CRDs and webhook configurations (the tests point them at the local controller).
kueue_ready() { [ -x "$bin/kueue-$KUEUE_VERSION" ] && [ -f "$cache/kueue-$KUEUE_VERSION/manifests.yaml" ]; }
build_kueue() {
  local kueue
  kueue=$(module_dir sigs.k8s.io/kueue "$KUEUE_VERSION")
  mkdir -p "$cache/kueue-$KUEUE_VERSION"
  install -m 0644 "$kueue"/config/components/crd/bases/kueue.x-k8s.io_*.yaml \
    "$kueue/config/components/webhook/manifests.yaml" "$cache/kueue-$KUEUE_VERSION/"
  build_go_binary kueue sigs.k8s.io/kueue/cmd/kueue "$KUEUE_VERSION"
}

# The prometheus-operator (tier 7: it turns the release's PodMonitors into Prometheus's scrape config):
# its module replaces its own pkg/ submodules with local paths (no `go install @version`), so a wrapper
# module requires it; beside it every CRD of the module, as the operator watches all its kinds.
promop_files="$cache/prometheus-operator-$PROMETHEUS_OPERATOR_VERSION"
prometheus_operator_ready() {
  [ -x "$bin/prometheus-operator-$PROMETHEUS_OPERATOR_VERSION" ] && [ -f "$promop_files/monitoring.coreos.com_prometheuses.yaml" ]
}
build_prometheus_operator() {
  local dir="$cache/build/prometheus-operator-$PROMETHEUS_OPERATOR_VERSION" module=github.com/prometheus-operator/prometheus-operator
  wrapper_module "$dir" "$module" "$PROMETHEUS_OPERATOR_VERSION"
  # `go get` of the one package, not `go mod tidy`: tidy also resolves the tests of Prometheus's packages,
  # whose imports are ambiguous between two cloud.google.com/go modules.
  (cd "$dir" && go get "$module/cmd/operator@$PROMETHEUS_OPERATOR_VERSION" && nice go build -p "$jobs" -trimpath \
    -ldflags "-s -w -X github.com/prometheus/common/version.Version=${PROMETHEUS_OPERATOR_VERSION#v}" \
    -o "$bin/prometheus-operator-$PROMETHEUS_OPERATOR_VERSION" "$module/cmd/operator")
  mkdir -p "$promop_files"
  install -m 0644 "$(module_dir "$module" "$PROMETHEUS_OPERATOR_VERSION")"/example/prometheus-operator-crd/*.yaml "$promop_files/"
}

# Files the cluster reads at start: every KubeRay CRD (the operator watches all four kinds) and
# kwok's "fast" stages (nodes Ready at once; pods Running and Ready, Job pods complete, deleted pods go).
cluster_files_ready() {
  compgen -G "$cache/crds/kuberay-operator-$KUBERAY_VERSION/ray.io_*.yaml" >/dev/null &&
    [ -f "$cache/kwok-stages/$KWOK_VERSION/node-initialize.yaml" ]
}
copy_module_files() {
  local kuberay kwok
  kuberay=$(module_dir github.com/ray-project/kuberay/ray-operator "$KUBERAY_VERSION")
  mkdir -p "$cache/crds/kuberay-operator-$KUBERAY_VERSION" "$cache/kwok-stages/$KWOK_VERSION"
  install -m 0644 "$kuberay"/config/crd/bases/ray.io_*.yaml "$cache/crds/kuberay-operator-$KUBERAY_VERSION/"
  kwok=$(module_dir sigs.k8s.io/kwok "$KWOK_VERSION")
  install -m 0644 "$kwok/kustomize/stage/node/fast/node-initialize.yaml" "$kwok"/kustomize/stage/pod/fast/pod-*.yaml \
    "$cache/kwok-stages/$KWOK_VERSION/"
}

add_step cluster-files "KubeRay $KUBERAY_VERSION CRDs and kwok $KWOK_VERSION stages for the local cluster" cluster_files_ready copy_module_files
add_step etcd "etcd $ETCD_VERSION from go.etcd.io/etcd/server/v3" etcd_ready build_etcd
add_step kubernetes "kube-apiserver, kube-controller-manager, kube-scheduler, kubelet, kube-proxy $KUBERNETES_VERSION (one go build, the longest step)" kubernetes_ready build_kubernetes
add_step kwok "kwok $KWOK_VERSION" kwok_ready build_kwok
add_step kuberay-operator "KubeRay operator $KUBERAY_VERSION" kuberay_operator_ready build_kuberay_operator
add_step kueue "Kueue $KUEUE_VERSION controller (cmd/kueue) and its CRDs" kueue_ready build_kueue
# The real node (tier 7, `make demo`): its kubelet and kube-proxy come with the kubernetes step.
add_step realnode-debs "Debian containerd, runc, CNI plugins, iptables, ipset, debootstrap, umoci (unpacked)" debs_ready unpack_debs
add_step coredns "CoreDNS $COREDNS_VERSION (the node's DNS plugins only)" coredns_ready build_coredns
add_step kube-router "kube-router $KUBE_ROUTER_VERSION (NetworkPolicy firewall)" kube_router_ready build_kube_router
add_step crictl "crictl $CRICTL_VERSION" crictl_ready build_crictl
add_step prometheus-operator "prometheus-operator $PROMETHEUS_OPERATOR_VERSION (cmd/operator) and its CRDs" prometheus_operator_ready build_prometheus_operator
add_step images "the real node's pause and Ray images (debootstrap, umoci)" images_ready build_images

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  run_steps
  echo "build-localcluster: cluster parts ready under $bin"
fi
