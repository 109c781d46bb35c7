#!/usr/bin/env bash
# Checks of the release packages `make packages` writes (run by `make check-packages` and CI):
#   test_packages.sh BUILD_DIR DIST_DIR
# - the bundle: its audit passes (every ELF file needs glibc <= 2.34 and bundled libraries
#   only), fails on each kind of fault put in a copy, its checksums hold, and the program loads
#   every library but glibc's and libgcc_s from itself, wherever it is unpacked;
# - the wheel: installed with pip (offline) into a fresh venv, `neuron-cache` is on the venv's
#   PATH, names the build's version and commit, runs the demo (directory repo and test Hub), and
#   pip uninstall removes it;
# - the .deb: its Depends covers what dpkg-shlibdeps computes; installed on this machine with
#   dpkg -i (root; CI runs as root), each file is where Debian's tools look, the demo runs,
#   and dpkg -r removes every file.
set -uo pipefail

BUILD_DIR="$(cd "${1:?usage: test_packages.sh BUILD_DIR DIST_DIR}" && pwd)"
DIST_DIR="$(cd "${2:?usage: test_packages.sh BUILD_DIR DIST_DIR}" && pwd)"
export NEURON_CACHE_BIN_DIR="$BUILD_DIR/bin"
export NEURON_CACHE_SOURCE_DIR="${NEURON_CACHE_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}"
source "$NEURON_CACHE_SOURCE_DIR/tests/e2e/lib.sh"
source "$SOURCE_DIR/tests/packaging/lib.sh"

AUDIT="$SOURCE_DIR/cmake/packaging/audit.py"
# Debian's Python: its venv module is python3-venv (make deps-dist).
PYTHON=python3
/usr/bin/python3 -c 'import venv, ensurepip' 2>/dev/null && PYTHON=/usr/bin/python3
one_file() { # PATTERN: the one file of DIST_DIR matching it
  local files=("$DIST_DIR"/$1)
  [[ ${#files[@]} -eq 1 && -f "${files[0]}" ]] || { echo "expected one $1 in $DIST_DIR (make packages)" >&2; exit 1; }
  echo "${files[0]}"
}
TARBALL="$(one_file 'neuron-cache-*-linux-x86_64.tar.gz')"
WHEEL="$(one_file 'neuron_cache-*-py3-none-manylinux_2_34_x86_64.whl')"
DEB="$(one_file 'neuron-cache_*_amd64.deb')"
BUNDLE_NAME="$(basename "$TARBALL" .tar.gz)"
VERSION_LINE="$("$NC" --version)"
GLIBC_SET=" libc.so.6 libm.so.6 libdl.so.2 libpthread.so.0 librt.so.1 libresolv.so.2 libgcc_s.so.1 "

# unpack DIR: unpacks the tarball into DIR and prints the bundle's directory.
unpack() {
  mkdir -p "$1" && tar -xzf "$TARBALL" -C "$1" && echo "$1/$BUNDLE_NAME"
}

test_bundle_passes_the_audit_and_its_checksums_hold() {
  local root
  root="$(unpack "$SCRATCH")" || return
  run 0 "$PYTHON" "$AUDIT" "$root" || return
  contains "$OUT" "ok   bin/neuron-cache: GLIBC_2.3"
  contains "$OUT" "ok   lib/neuron-cache/libcurl.so.4"
  lacks "$OUT" "FAIL"
  (cd "$root" && sha256sum --quiet --strict -c SHA256SUMS) >"$SCRATCH/sums" 2>&1 ||
    fail "SHA256SUMS does not match: $(head -5 "$SCRATCH/sums")"
  diff <(cd "$root" && find . -type f ! -name SHA256SUMS | sed 's|^\./||' | sort) \
    <(awk '{print $2}' "$root/SHA256SUMS" | sort) >"$SCRATCH/listed" || fail "SHA256SUMS does not list every file: $(cat "$SCRATCH/listed")"
  (cd "$DIST_DIR" && sha256sum --quiet --strict -c "$(basename "$TARBALL").sha256") || fail "the tarball's .sha256 does not match"
  for file in bin/neuron-cache share/man/man1/neuron-cache.1 share/bash-completion/completions/neuron-cache \
              share/zsh/site-functions/_neuron-cache share/fish/vendor_completions.d/neuron-cache.fish \
              share/doc/neuron-cache/bundled-libraries.txt share/doc/neuron-cache/libcurl4.copyright; do
    [[ -s "$root/$file" ]] || fail "the bundle lacks $file"
  done
}

test_bundle_loads_every_library_but_glibc_from_itself() {
  local root line name path
  root="$(unpack "$SCRATCH/a folder with spaces")" || return
  run 0 "$root/bin/neuron-cache" --version || return
  equals "$(cat "$OUT")" "$VERSION_LINE"
  run 0 ldd "$root/bin/neuron-cache" || return
  while read -r line; do
    [[ "$line" == *" => "* ]] || continue
    name="${line%% =>*}" path="${line#*=> }" path="$(realpath "${path% (0x*}")"
    if [[ "$GLIBC_SET" != *" $name "* && "$path" != "$root/lib/neuron-cache/$name" ]]; then
      fail "$name is loaded from $path, not from the bundle"
    fi
  done <"$OUT"
  contains "$OUT" "libcurl.so.4 => $root/bin/../lib/neuron-cache/libcurl.so.4"
  # Run through a symbolic link (README: ln -s into /usr/local/bin), $ORIGIN is still the bundle's.
  ln -s "$root/bin/neuron-cache" "$SCRATCH/linked"
  LD_DEBUG=libs run 0 "$SCRATCH/linked" --version || return
  contains "$ERR" "calling init: $root/bin/../lib/neuron-cache/libcurl.so.4"
  # Not from the build tree's run path either: the binary built is not the one shipped.
  [[ "$(readelf -d "$root/bin/neuron-cache" | grep -c 'RUNPATH.*\$ORIGIN/../lib/neuron-cache')" == 1 ]] ||
    fail "bin/neuron-cache's run path is not \$ORIGIN/../lib/neuron-cache"
  ! readelf -S "$root/bin/neuron-cache" | grep -q '\.debug_info' || fail "the bundled binary is not stripped"
}

test_audit_fails_on_a_library_that_needs_a_newer_glibc() {
  local root
  root="$(unpack "$SCRATCH")" || return
  # Debian 12's libstdc++ needs arc4random@GLIBC_2.36: the reason it is linked statically.
  cp "$(realpath /usr/lib/x86_64-linux-gnu/libstdc++.so.6)" "$root/lib/neuron-cache/libstdc++.so.6"
  run 1 "$PYTHON" "$AUDIT" "$root" || return
  contains "$ERR" "lib/neuron-cache/libstdc++.so.6: needs GLIBC_2.36 from libc.so.6, above GLIBC_2.34"
  contains "$OUT" "FAIL lib/neuron-cache/libstdc++.so.6"
  contains "$OUT" "ok   bin/neuron-cache"
}

test_audit_fails_on_a_library_missing_from_the_bundle() {
  local root
  root="$(unpack "$SCRATCH")" || return
  rm "$root/lib/neuron-cache/libnghttp2.so.14"
  run 1 "$PYTHON" "$AUDIT" "$root" || return
  contains "$ERR" "lib/neuron-cache/libcurl.so.4: needs libnghttp2.so.14, which is neither part of glibc nor in the bundle"
}

test_audit_fails_on_a_run_path_outside_the_bundle() {
  local root
  root="$(unpack "$SCRATCH")" || return
  patchelf --set-rpath /usr/lib/x86_64-linux-gnu "$root/bin/neuron-cache"
  patchelf --set-rpath '$ORIGIN/../../..' "$root/lib/neuron-cache/libssl.so.3"
  run 1 "$PYTHON" "$AUDIT" "$root" || return
  contains "$ERR" "bin/neuron-cache: run path entry '/usr/lib/x86_64-linux-gnu' is not relative to \$ORIGIN"
  contains "$ERR" "bin/neuron-cache: needs libcurl.so.4, which is neither part of glibc nor in the bundle"
  contains "$ERR" "lib/neuron-cache/libssl.so.3: run path entry '\$ORIGIN/../../..' leaves the bundle"
}

test_audit_fails_on_a_version_a_bundled_library_lacks() {
  local root
  root="$(unpack "$SCRATCH")" || return
  # A libcrypto that defines no OPENSSL_3.0.0 version: libcurl's and libssl's needs go unmet.
  printf 'int crypto_stand_in(void) { return 0; }\n' >"$SCRATCH/crypto.c"
  cc -shared -fPIC -Wl,-soname,libcrypto.so.3 -o "$root/lib/neuron-cache/libcrypto.so.3" "$SCRATCH/crypto.c" || return
  run 1 "$PYTHON" "$AUDIT" "$root" || return
  contains "$ERR" "lib/neuron-cache/libssl.so.3: needs OPENSSL_3.0.0 from libcrypto.so.3, which the bundled copy does not define"
  contains "$ERR" "bin/neuron-cache: needs OPENSSL_3.0.0 from libcrypto.so.3"
}

test_wheel_installs_into_a_fresh_venv_and_runs_the_demo() {
  local venv="$SCRATCH/venv"
  equals "$(basename "$WHEEL")" "neuron_cache-$("$NC" --version -q --json | jq -r .version)-py3-none-manylinux_2_34_x86_64.whl"
  run 0 "$PYTHON" -m venv "$venv" || return
  run 0 "$venv/bin/pip" install --no-index --no-cache-dir "$WHEEL" || return
  PATH="$venv/bin:$PATH" run 0 bash -c 'command -v neuron-cache' || return
  equals "$(cat "$OUT")" "$venv/bin/neuron-cache"
  PATH="$venv/bin:$PATH" run 0 neuron-cache --version || return
  equals "$(cat "$OUT")" "$VERSION_LINE"
  PATH="$venv/bin:$PATH" run 0 neuron-cache --version --json || return
  valid_json "$OUT" version.schema.json
  [[ -s "$venv/share/man/man1/neuron-cache.1" && -s "$venv/lib/neuron-cache/libcurl.so.4" ]] ||
    fail "the venv lacks the man page or the bundled libraries"
  start_demo_hub "$BIN_DIR" "$SCRATCH" || { fail "no test Hub"; return; }
  PATH="$venv/bin:$PATH" NEURON_CACHE_DEMO_BINARY=neuron-cache run 0 bash "$SOURCE_DIR/tests/demo.sh" "$BIN_DIR"
  stop_demo_hub
  contains "$OUT" "neuron-cache $(cut -d' ' -f2 <<<"$VERSION_LINE")"
  contains "$OUT" "== Hub: the same compile cache through a Hub repo"
  contains "$OUT" "== demo finished"
  run 0 "$venv/bin/pip" uninstall -y neuron-cache || return
  [[ ! -e "$venv/bin/neuron-cache" && ! -e "$venv/lib/neuron-cache" && ! -e "$venv/share/man/man1/neuron-cache.1" ]] ||
    fail "pip uninstall left files behind: $(ls "$venv/bin" "$venv/lib" 2>&1 | tr '\n' ' ')"
}

test_wheel_records_every_file_with_its_hash() {
  run 0 "$PYTHON" - "$WHEEL" <<'PY' || return
import base64, hashlib, sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as wheel:
    names = wheel.namelist()
    info = next(n for n in names if n.endswith(".dist-info/WHEEL"))
    text = wheel.read(info).decode()
    assert "Root-Is-Purelib: false" in text and "Tag: py3-none-manylinux_2_34_x86_64" in text, text
    record = wheel.read(info.replace("/WHEEL", "/RECORD")).decode().splitlines()
    listed = {}
    for line in record:
        path, digest, size = line.rsplit(",", 2)
        listed[path] = (digest, size)
    assert set(listed) == set(names), set(listed) ^ set(names)
    for path, (digest, size) in listed.items():
        if digest:
            data = wheel.read(path)
            actual = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
            assert digest == f"sha256={actual}" and int(size) == len(data), path
    script = next(i for i in wheel.infolist() if i.filename.endswith(".data/scripts/neuron-cache"))
    assert (script.external_attr >> 16) & 0o111, "the script is not executable"
print(len(names), "files recorded")
PY
  contains "$OUT" "files recorded"
}

test_deb_depends_covers_what_dpkg_shlibdeps_computes() {
  local depends clause
  dpkg-deb -x "$DEB" "$SCRATCH/root" || return
  mkdir -p debian && printf 'Source: neuron-cache\n\nPackage: neuron-cache\nArchitecture: any\n' >debian/control
  run 0 dpkg-shlibdeps -O "$SCRATCH/root/usr/bin/neuron-cache" || return
  depends="$(dpkg-deb -f "$DEB" Depends)"
  while read -r clause; do
    [[ ", $depends," == *[,\|]" $clause"[,\ ]* ]] || fail "Depends ($depends) lacks dpkg-shlibdeps' $clause"
  done < <(sed 's/^shlibs:Depends=//' "$OUT" | tr ',' '\n' | sed 's/^ *//; s/ *$//')
  for file in usr/bin/neuron-cache usr/share/man/man1/neuron-cache.1.gz usr/share/bash-completion/completions/neuron-cache \
              usr/share/zsh/vendor-completions/_neuron-cache usr/share/fish/vendor_completions.d/neuron-cache.fish; do
    [[ -s "$SCRATCH/root/$file" ]] || fail "the .deb lacks /$file"
  done
  [[ "$(find "$SCRATCH/root" -type f | wc -l)" == 5 ]] || fail "the .deb has other files: $(find "$SCRATCH/root" -type f)"
}

test_deb_installs_runs_and_removes_cleanly() {
  if [[ "$(id -u)" != 0 ]]; then
    fail "installing the .deb on this machine needs root (CI runs as root)"
    return
  fi
  if dpkg-query -W -f='${Status}' neuron-cache 2>/dev/null | grep -q 'ok installed'; then
    fail "a neuron-cache package is installed already: this test would replace it (dpkg -r neuron-cache first)"
    return
  fi
  run 0 dpkg -i "$DEB" || return
  dpkg -L neuron-cache >"$SCRATCH/files"
  run 0 /usr/bin/neuron-cache --version
  equals "$(cat "$OUT")" "$VERSION_LINE"
  MANPATH=/usr/share/man run 0 man -w neuron-cache
  equals "$(cat "$OUT")" "/usr/share/man/man1/neuron-cache.1.gz"
  # zsh's and fish's default search paths find the completions, with no set-up.
  run 0 zsh -f -c 'autoload -Uz compinit; compinit -u -D; print -r -- $_comps[neuron-cache]'
  equals "$(cat "$OUT")" "_neuron-cache"
  run 0 fish -c 'complete -C "neuron-cache cre"'
  contains "$OUT" "create"
  start_demo_hub "$BIN_DIR" "$SCRATCH" || fail "no test Hub"
  NEURON_CACHE_DEMO_BINARY=/usr/bin/neuron-cache run 0 bash "$SOURCE_DIR/tests/demo.sh" "$BIN_DIR"
  stop_demo_hub
  contains "$OUT" "== demo finished"
  contains "$OUT" "== Hub: the same compile cache through a Hub repo"
  run 0 dpkg -r neuron-cache
  [[ "$(dpkg-query -W -f='${Status}' neuron-cache 2>/dev/null)" =~ ^(|unknown ok not-installed)$ ]] ||
    fail "after dpkg -r: $(dpkg-query -W -f='${Status}' neuron-cache)"
  local file
  while read -r file; do
    [[ -d "$file" || ! -e "$file" ]] || fail "dpkg -r left $file"
  done <"$SCRATCH/files"
}

run_tests
