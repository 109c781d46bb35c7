#!/usr/bin/env bash
# The release bundle on a host that has nothing but glibc (`make check-minimal-root`, root):
#   minimal_root.sh BUILD_DIR DIST_DIR
# 1. debootstrap --variant=minbase (Debian 12, from Debian's archive) into a temp dir: no -dev
#    package; then every file named like a library of the bundle is deleted from it, so
#    nothing the bundle carries can come from the host;
# 2. the bundle tarball is unpacked in it, with tests/demo.sh, its sample data, and the
#    stand-in compiler fake_neuronx_cc (whose run path is pointed at the bundle's libraries:
#    it needs libcrypto, and the root has none);
# 3. in a chroot, ldd finds every library of the program, and tests/demo.sh runs the bundled
#    program against a directory repo and the test Hub (started outside, on 127.0.0.1).
# DEBOOTSTRAP_MIRROR picks the archive; the downloaded packages are kept in
# BUILD_DIR/debootstrap-cache so a second run needs no download.
#   minimal_root.sh --download-only BUILD_DIR
# only fills that cache (network, little CPU): .ci/run starts it beside the builds, so that
# the check at its end only installs.
set -euo pipefail

SUITE=bookworm
MIRROR="${DEBOOTSTRAP_MIRROR:-http://deb.debian.org/debian}"
if [[ "${1:-}" == --download-only ]]; then
  cache="${2:?usage: minimal_root.sh --download-only BUILD_DIR}/debootstrap-cache"
  mkdir -p "$cache"
  target="$(mktemp -d "${TMPDIR:-/tmp}/neuron-cache-minimal-root-download.XXXXXX")"
  trap 'rm -rf "$target"' EXIT
  started=$SECONDS
  debootstrap --download-only --variant=minbase --cache-dir="$(cd "$cache" && pwd)" "$SUITE" "$target" "$MIRROR"
  echo "minimal root: $(find "$cache" -name '*.deb' | wc -l) packages downloaded in $((SECONDS - started)) s"
  exit 0
fi

BUILD_DIR="$(cd "${1:?usage: minimal_root.sh BUILD_DIR DIST_DIR}" && pwd)"
DIST_DIR="$(cd "${2:?usage: minimal_root.sh BUILD_DIR DIST_DIR}" && pwd)"
SOURCE_DIR="$(cd "$(dirname "$0")/../.." && pwd)"
source "$SOURCE_DIR/tests/packaging/lib.sh"

[[ "$(id -u)" == 0 ]] || { echo "minimal_root.sh needs root (debootstrap, chroot)" >&2; exit 1; }
tarballs=("$DIST_DIR"/neuron-cache-*-linux-x86_64.tar.gz)
[[ ${#tarballs[@]} == 1 && -f "${tarballs[0]}" ]] || { echo "expected one bundle in $DIST_DIR (make dist)" >&2; exit 1; }
TARBALL="${tarballs[0]}"
BUNDLE="$(basename "$TARBALL" .tar.gz)"

WORK="$(mktemp -d "${TMPDIR:-/tmp}/neuron-cache-minimal-root.XXXXXX")"
ROOT="$WORK/root"
cleanup() {
  stop_demo_hub
  mountpoint -q "$ROOT/proc" && umount "$ROOT/proc"
  mountpoint -q "$ROOT/dev" && umount "$ROOT/dev"
  rm -rf --one-file-system "$WORK"
}
trap cleanup EXIT
started=$SECONDS

echo "== debootstrap --variant=minbase $SUITE ($MIRROR)"
mkdir -p "$BUILD_DIR/debootstrap-cache"
debootstrap --variant=minbase --cache-dir="$BUILD_DIR/debootstrap-cache" "$SUITE" "$ROOT" "$MIRROR" \
  >"$WORK/debootstrap.log" 2>&1 || { tail -20 "$WORK/debootstrap.log" >&2; exit 1; }
echo "   $(dpkg-query --admindir="$ROOT/var/lib/dpkg" -W | wc -l) packages in $((SECONDS - started)) s"
dev_packages="$(dpkg-query --admindir="$ROOT/var/lib/dpkg" -W -f='${Package}\n' | grep -- '-dev$' || true)"
[[ -z "$dev_packages" ]] || { echo "the minimal root has -dev packages: $dev_packages" >&2; exit 1; }

echo "== removing from it every library the bundle carries"
mkdir -p "$ROOT/opt"
tar -xzf "$TARBALL" -C "$ROOT/opt"
LIB_DIR="/opt/$BUNDLE/lib/neuron-cache"
removed=0
for library in "$ROOT$LIB_DIR"/*; do
  soname="$(basename "$library")"
  while IFS= read -r -d '' file; do
    rm -f "$file" && removed=$((removed + 1))
  done < <(find "$ROOT" -path "$ROOT/opt" -prune -o \( -name "$soname" -o -name "$soname.*" \) -print0)
done
left="$(find "$ROOT" -path "$ROOT/opt" -prune -o -name 'lib*.so*' -print | sed "s|^$ROOT||" | while read -r file; do
  [[ -e "$ROOT$LIB_DIR/$(basename "$file")" ]] && echo "$file"; done || true)"
[[ -z "$left" ]] || { echo "bundled libraries still in the root: $left" >&2; exit 1; }
echo "   $removed files removed; the root keeps $(find "$ROOT" -path "$ROOT/opt" -prune -o -name 'lib*.so*' -type f -print | wc -l) libraries of its own"

echo "== the demo's files"
mkdir -p "$ROOT/opt/src/tests/tools" "$ROOT/opt/src/tests/data" "$ROOT/opt/tools"
cp "$SOURCE_DIR/tests/demo.sh" "$ROOT/opt/src/tests/"
cp "$SOURCE_DIR/tests/tools/make_sample_cache.sh" "$ROOT/opt/src/tests/tools/"
cp -r "$SOURCE_DIR/tests/data/add" "$ROOT/opt/src/tests/data/"
cp "$BUILD_DIR/bin/fake_neuronx_cc" "$ROOT/opt/tools/"
patchelf --set-rpath "$LIB_DIR" "$ROOT/opt/tools/fake_neuronx_cc"
mount -t proc proc "$ROOT/proc" 2>/dev/null || echo "   (no /proc in the chroot: mounting it is not allowed here)"
[[ -c "$ROOT/dev/null" ]] || mount --bind /dev "$ROOT/dev"

in_root() {
  chroot "$ROOT" /usr/bin/env -i PATH=/usr/bin:/bin HOME=/root TMPDIR=/tmp LANG=C.UTF-8 "$@"
}
echo "== ldd in the root"
in_root ldd "/opt/$BUNDLE/bin/neuron-cache" | tee "$WORK/ldd"
! grep -q "not found" "$WORK/ldd" || { echo "libraries not found in the minimal root" >&2; exit 1; }
grep -q "libcurl.so.4 => /opt/$BUNDLE/bin/../lib/neuron-cache/libcurl.so.4" "$WORK/ldd" || {
  echo "libcurl does not come from the bundle" >&2
  exit 1
}

echo "== tests/demo.sh in the root: directory repo, then the test Hub"
start_demo_hub "$BUILD_DIR/bin" "$WORK"
in_root NEURON_CACHE_DEMO_BINARY="/opt/$BUNDLE/bin/neuron-cache" NEURON_CACHE_DEMO_HUB_URL="$NEURON_CACHE_DEMO_HUB_URL" \
  NEURON_CACHE_DEMO_HUB_TOKEN="$NEURON_CACHE_DEMO_HUB_TOKEN" NEURON_CACHE_DEMO_HUB_USER="$NEURON_CACHE_DEMO_HUB_USER" \
  bash /opt/src/tests/demo.sh /opt/tools | tee "$WORK/demo.log"
grep -q "== Hub: the same compile cache" "$WORK/demo.log" && grep -q "== demo finished" "$WORK/demo.log" || {
  echo "the demo did not run to its end" >&2
  exit 1
}
echo "== the bundle ran in a minimal root with glibc $(in_root ldd --version | head -1 | awk '{print $NF}') and none of the bundled libraries: passed in $((SECONDS - started)) s"
