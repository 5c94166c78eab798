#!/usr/bin/env bash
# Builds the real node's images here, with no registry, as OCI archives under $VERL_PPO_CACHE/images:
# - pause: the pod sandbox image (lab/images/pause.c, linked statically), containerd's sandbox_image;
# - ray: a Debian root file system (debootstrap from the mirror apt uses) with Python, the Ray pinned in
#   requirements-test.txt (pip from PyPI), wget and bash (KubeRay's probes exec them) and the tests' stand-in
#   driver (tests/support/stand_in.py, importable as stand_in); the chart's Ray pods and submitter run it.
# umoci packs each; the archive is rebuilt only when a hash of its recipe changes. The node imports
# them (lab/localcluster/runtime.py) under their docker.io/ names, as the kubelet looks short names up.
# With --check it builds nothing and exits 1 when an image is missing or its recipe changed.
set -euo pipefail
check_only=false
[ "${1:-}" = --check ] && check_only=true
root=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=../versions.env
source "$root/lab/versions.env"
cache=${VERL_PPO_CACHE:-$HOME/.cache/verl-ppo}
images="$cache/images"
debs="$cache/realnode/debs"
export PATH="$debs/sbin:$PATH"
mkdir -p "$images"
ray_version=$(sed -nE 's/^ray\[default\]==([^ ;]+).*/\1/p' "$root/requirements-test.txt")
[ -n "$ray_version" ] || { echo "build-images: requirements-test.txt pins no ray[default]==VERSION" >&2; exit 1; }

recipe_hash() {  # recipe_hash FILE... : what an image is made of, hashed with the pinned versions
  { cat "$0" "$@"; echo "$IMAGE_DEBIAN_SUITE $ray_version $REALNODE_DEBS"; } | sha256sum | cut -c1-16
}

# pack NAME TAG ROOTFS [umoci config options...]: ROOTFS as one layer of image NAME:TAG in images/NAME.tar
pack() {
  local name=$1 tag=$2 rootfs=$3 layout
  shift 3
  layout=$(mktemp -d)
  umoci init --layout "$layout/oci"
  umoci new --image "$layout/oci:$tag"
  umoci insert --image "$layout/oci:$tag" "$rootfs" /
  umoci config --image "$layout/oci:$tag" --author verl-ppo "$@"
  umoci gc --layout "$layout/oci"
  tar -C "$layout/oci" -cf "$images/$name.tar.tmp" .
  mv "$images/$name.tar.tmp" "$images/$name.tar"
  rm -rf "$layout"
}

build() {  # build NAME TAG BUILDER RECIPE_FILE...: runs BUILDER ROOTFS TAG unless images/NAME.tar has this recipe
  local name=$1 tag=$2 builder=$3 hash started rootfs
  shift 3
  hash=$(recipe_hash "$@")
  [ -f "$images/$name.tar" ] && [ "$(cat "$images/$name.recipe" 2>/dev/null)" = "$hash" ] && return
  "$check_only" && exit 1
  started=$(date +%s)
  rootfs=$(mktemp -d)
  "$builder" "$rootfs/rootfs" "$tag"
  if grep -q " $rootfs/" /proc/self/mounts; then echo "build-images: $rootfs still has mounts: not removed" >&2; exit 1; fi
  rm -rf --one-file-system "$rootfs"
  echo "$hash" > "$images/$name.recipe"
  echo "build-images: built $name ($tag) in $(( $(date +%s) - started ))s"
}

pause_image() {
  local rootfs=$1 tag=$2
  mkdir -p "$rootfs"
  gcc -static -O2 -s -o "$rootfs/pause" "$root/lab/images/pause.c"
  pack pause "$tag" "$rootfs" --config.entrypoint /pause
}

# What the chroot needs while pip runs: /proc, /dev, the host's pip cache (wheels downloaded once) and
# the host's CA bundle (this machine may reach PyPI through a proxy with its own CA; the image keeps
# Debian's bundle). Removed again on every exit path.
chroot_mounts() {  # chroot_mounts ROOTFS up|down
  local rootfs=$1
  if [ "$2" = up ]; then
    mount -t proc proc "$rootfs/proc"
    mount --bind /dev "$rootfs/dev"
    mkdir -p "$rootfs/root/.cache/pip" "$HOME/.cache/pip"
    mount --bind "$HOME/.cache/pip" "$rootfs/root/.cache/pip"
    touch "$rootfs/tmp/host-ca.crt"
    mount --bind -o ro "${SSL_CERT_FILE:-/etc/ssl/certs/ca-certificates.crt}" "$rootfs/tmp/host-ca.crt"
  else
    for point in tmp/host-ca.crt root/.cache/pip dev proc; do umount "$rootfs/$point" 2>/dev/null || true; done
    rm -f "$rootfs/tmp/host-ca.crt"
  fi
}

ray_image() {
  local rootfs=$1 tag=$2 mirror
  mirror=$(apt-get indextargets --format '$(REPO_URI) $(RELEASE)' | awk -v s="$IMAGE_DEBIAN_SUITE" '$2 == s {print $1; exit}')
  [ -n "$mirror" ] || { echo "build-images: apt uses no mirror of Debian $IMAGE_DEBIAN_SUITE" >&2; exit 1; }
  DEBOOTSTRAP_DIR="$debs/root/usr/share/debootstrap" debootstrap --variant=minbase \
    --include=python3,python3-pip,wget,procps,ca-certificates "$IMAGE_DEBIAN_SUITE" "$rootfs" "$mirror" >/dev/null
  cp /etc/resolv.conf "$rootfs/etc/resolv.conf"
  chroot_root=$rootfs
  trap 'chroot_mounts "$chroot_root" down' EXIT
  chroot_mounts "$rootfs" up
  # A clean environment: the host's pip settings (find-links, certificates) name host paths.
  env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root PIP_CERT=/tmp/host-ca.crt \
    chroot "$rootfs" python3 -m pip install -q --disable-pip-version-check --break-system-packages \
    --root-user-action=ignore "ray[default]==$ray_version"
  chroot_mounts "$rootfs" down
  trap - EXIT
  install -m 0644 "$root/tests/support/stand_in.py" \
    "$rootfs$(chroot "$rootfs" python3 -c 'import sysconfig; print(sysconfig.get_path("purelib"))')/stand_in.py"
  : > "$rootfs/etc/resolv.conf"
  rm -rf "$rootfs/var/cache/apt/archives"/*.deb "$rootfs/var/lib/apt/lists"/* "$rootfs/root/.cache"
  pack ray "$tag" "$rootfs" --config.env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    --config.workingdir /tmp
}

build pause local pause_image "$root/lab/images/pause.c"
build ray "$ray_version" ray_image "$root/tests/support/stand_in.py"
