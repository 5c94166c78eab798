#!/usr/bin/env bash
# Builds the parts of the local cluster (test tiers 6 and 7, `make demo`) from the package registries:
# kube-apiserver, kube-controller-manager, kube-scheduler, kubelet and kube-proxy from the
# k8s.io/kubernetes module, etcd from go.etcd.io/etcd/server/v3, kwok from sigs.k8s.io/kwok and the
# KubeRay operator from its Go module; for the real node, Debian's containerd, runc, CNI plugins,
# iptables and ipset unpacked into the cache, CoreDNS, kube-router (its NetworkPolicy firewall) and
# crictl from their Go modules, and its images (scripts/build-images.sh). Binaries are cached under $VERL_PPO_CACHE/bin, named by version; a cached one is
# reused. Each cold build prints its time. Builds run under `nice` with few parallel jobs: the
# machines have 2 cores shared with other work.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=../tools/versions.env
source "$root/tools/versions.env"
cache=${VERL_PPO_CACHE:-$HOME/.cache/verl-ppo}
bin="$cache/bin"
mkdir -p "$bin" "$cache/build"
jobs=${VERL_PPO_BUILD_JOBS:-2}

timed() {  # timed LABEL COMMAND...: runs COMMAND and prints how long the cold build took
  local label=$1 started
  shift
  started=$(date +%s)
  "$@"
  echo "build-localcluster: built $label in $(( $(date +%s) - started ))s"
}

# shellcheck source=go-modules.sh
source "$root/scripts/go-modules.sh"

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

build_kubernetes() {
  local version=$KUBERNETES_VERSION dir="$cache/build/kubernetes-$KUBERNETES_VERSION" ldflags minor date
  local wanted=(kube-apiserver kube-controller-manager kube-scheduler kubelet kube-proxy) missing=0
  for b in "${wanted[@]}"; do [ -x "$bin/$b-$version" ] || missing=1; done
  [ "$missing" = 0 ] && return
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
  (cd "$dir" && timed "${wanted[*]} $version" \
    nice go build -p "$jobs" -trimpath -ldflags "$ldflags" -o "$out/" "${wanted[@]/#/k8s.io/kubernetes/cmd/}")
  for b in "${wanted[@]}"; do mv "$out/$b" "$bin/$b-$version"; done
}

build_go_binary() {  # build_go_binary NAME PACKAGE VERSION: `go install PACKAGE@VERSION` as bin/NAME-VERSION
  local name=$1 package=$2 version=$3 tmp
  [ -x "$bin/$name-$version" ] && return
  tmp=$(mktemp -d)
  timed "$name $version" env GOBIN="$tmp" GOFLAGS=-mod=mod nice go install -p "$jobs" -trimpath -ldflags "-s -w" "$package@$version"
  mv "$tmp/$(basename "${package%/cmd}")" "$bin/$name-$version" 2>/dev/null || mv "$tmp"/* "$bin/$name-$version"
  rm -rf "$tmp"
}

# The Debian packages, unpacked into realnode/debs; its PINNED file names what it holds. sbin/ holds
# the names the node's programs call (iptables, ...): Debian points them at alternatives, which an
# unpacked tree lacks.
unpack_debs() {
  local dest="$cache/realnode/debs" tmp started
  [ "$(cat "$dest/PINNED" 2>/dev/null)" = "$REALNODE_DEBS" ] && return
  started=$(date +%s)
  tmp=$(mktemp -d)
  chown _apt "$tmp" 2>/dev/null || true  # apt downloads as its _apt user where that user may write
  # shellcheck disable=SC2086  # one word per package
  if ! (cd "$tmp" && apt-get download -qq $REALNODE_DEBS); then
    apt-get update -q >/dev/null
    # shellcheck disable=SC2086
    (cd "$tmp" && apt-get download -qq $REALNODE_DEBS) ||
      { echo "build-localcluster: Debian no longer serves one of REALNODE_DEBS: pin the versions apt-cache policy lists in tools/versions.env" >&2; exit 1; }
  fi
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
  echo "build-localcluster: unpacked $(echo "$REALNODE_DEBS" | wc -w) Debian packages in $(( $(date +%s) - started ))s"
}

# CoreDNS with the plugins the node's DNS uses only (its full build links every cloud's SDK): a
# main over coremain with a directive list in CoreDNS's own order (its plugin.cfg).
build_coredns() {
  [ -x "$bin/coredns-$COREDNS_VERSION" ] && return
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
    timed "coredns $COREDNS_VERSION" nice go build -p "$jobs" -trimpath -ldflags "-s -w" -o "$bin/coredns-$COREDNS_VERSION" .)
}

# etcd's own main package lives in a module with local replace directives (no `go install @version`):
# a two-line main over go.etcd.io/etcd/server/v3's etcdmain, as etcd's main.go is.
build_etcd() {
  [ -x "$bin/etcd-$ETCD_VERSION" ] && return
  local dir="$cache/build/etcd-$ETCD_VERSION"
  mkdir -p "$dir"
  printf 'module verl-ppo.local/etcd-build\n\ngo 1.25.0\n\nrequire go.etcd.io/etcd/server/v3 %s\n' "$ETCD_VERSION" > "$dir/go.mod"
  printf 'package main\n\nimport (\n\t"os"\n\n\t"go.etcd.io/etcd/server/v3/etcdmain"\n)\n\nfunc main() { etcdmain.Main(os.Args) }\n' > "$dir/main.go"
  (cd "$dir" && GOFLAGS=-mod=mod go mod tidy >/dev/null && \
    timed "etcd $ETCD_VERSION" nice go build -p "$jobs" -trimpath -ldflags "-s -w" -o "$bin/etcd-$ETCD_VERSION" .)
}

# Files the cluster reads at start: every KubeRay CRD (the operator watches all four kinds) and
# kwok's "fast" stages (nodes Ready at once; pods Running and Ready, Job pods complete, deleted pods go).
copy_module_files() {
  local kuberay kwok
  kuberay=$(module_dir github.com/ray-project/kuberay/ray-operator "$KUBERAY_VERSION")
  mkdir -p "$cache/crds/kuberay-operator-$KUBERAY_VERSION" "$cache/kwok-stages/$KWOK_VERSION"
  install -m 0644 "$kuberay"/config/crd/bases/ray.io_*.yaml "$cache/crds/kuberay-operator-$KUBERAY_VERSION/"
  kwok=$(module_dir sigs.k8s.io/kwok "$KWOK_VERSION")
  install -m 0644 "$kwok/kustomize/stage/node/fast/node-initialize.yaml" "$kwok"/kustomize/stage/pod/fast/pod-*.yaml \
    "$cache/kwok-stages/$KWOK_VERSION/"
}

copy_module_files
build_etcd
build_kubernetes
build_go_binary kwok sigs.k8s.io/kwok/cmd/kwok "$KWOK_VERSION"
build_go_binary kuberay-operator github.com/ray-project/kuberay/ray-operator "$KUBERAY_VERSION"
# The real node (tier 7, `make demo`): its kubelet and kube-proxy come with build_kubernetes.
unpack_debs
build_coredns
build_go_binary kube-router github.com/cloudnativelabs/kube-router/v2/cmd/kube-router "$KUBE_ROUTER_VERSION"
build_go_binary crictl sigs.k8s.io/cri-tools/cmd/crictl "$CRICTL_VERSION"
bash "$root/scripts/build-images.sh"
"$bin/kube-apiserver-$KUBERNETES_VERSION" --version
echo "build-localcluster: cluster parts ready under $cache"
