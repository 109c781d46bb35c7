#!/usr/bin/env bash
# End to end: `cmake --install` (what `make install PREFIX=...` runs) puts the binary, the
# three completion scripts and the man page where each tool looks under a prefix, and
# each one works from there.
source "$(dirname "$0")/lib.sh"

BUILD_DIR="$(dirname "$BIN_DIR")"

install_into() { # PREFIX [DESTDIR]
  if [[ -n "${2-}" ]]; then
    DESTDIR="$2" cmake --install "$BUILD_DIR" --prefix "$1" >"$SCRATCH/install.log" 2>&1
  else
    cmake --install "$BUILD_DIR" --prefix "$1" >"$SCRATCH/install.log" 2>&1
  fi || { fail "cmake --install failed: $(tail -5 "$SCRATCH/install.log")"; return 1; }
}

test_install_puts_every_file_in_its_standard_place() {
  local prefix="$SCRATCH/prefix"
  install_into "$prefix" || return
  local file
  for file in bin/neuron-cache share/bash-completion/completions/neuron-cache share/zsh/site-functions/_neuron-cache \
              share/fish/vendor_completions.d/neuron-cache.fish share/man/man1/neuron-cache.1; do
    [[ -s "$prefix/$file" ]] || fail "missing after install: $file"
  done
  [[ -x "$prefix/bin/neuron-cache" ]] || fail "bin/neuron-cache is not executable"
  run 0 "$prefix/bin/neuron-cache" --version || return
  contains "$OUT" "neuron-cache "
  # What is installed is what this binary generates.
  "$NC" completion bash | cmp -s - "$prefix/share/bash-completion/completions/neuron-cache" \
    || fail "installed bash completion differs from 'neuron-cache completion bash' (run make completions)"
  "$NC" completion zsh | cmp -s - "$prefix/share/zsh/site-functions/_neuron-cache" \
    || fail "installed zsh completion differs from 'neuron-cache completion zsh' (run make completions)"
  "$NC" completion fish | cmp -s - "$prefix/share/fish/vendor_completions.d/neuron-cache.fish" \
    || fail "installed fish completion differs from 'neuron-cache completion fish' (run make completions)"
  "$NC" man | cmp -s - "$prefix/share/man/man1/neuron-cache.1" \
    || fail "installed man page differs from 'neuron-cache man' (run make completions)"
}

test_installed_binary_is_stripped_and_its_debug_info_installs_apart() {
  local prefix="$SCRATCH/prefix"
  install_into "$prefix" || return
  ! readelf -S "$prefix/bin/neuron-cache" | grep -q '\.debug_info' || fail "the installed binary has debug info"
  # No larger than the built binary without its debug info (how much smaller depends on the
  # build: full -g in a release build, line tables only in the sanitizer tree).
  objcopy --strip-debug "$NC" "$SCRATCH/built-without-debug" || { fail "objcopy --strip-debug failed"; return; }
  [[ $(stat -c %s "$prefix/bin/neuron-cache") -le $(stat -c %s "$SCRATCH/built-without-debug") ]] ||
    fail "the installed binary is larger than the built one without its debug info"
  [[ $(stat -c %s "$prefix/bin/neuron-cache") -lt $(stat -c %s "$NC") ]] || fail "the installed binary is not smaller"
  [[ ! -e "$prefix/bin/.debug" ]] || fail "plain install put the debug file in"
  readelf -p .gnu_debuglink "$prefix/bin/neuron-cache" >"$OUT" 2>&1
  contains "$OUT" "neuron-cache.debug"
  # make install-debug: the debug file where gdb looks, matching the binary's build id.
  cmake --install "$BUILD_DIR" --prefix "$prefix" --component debug >"$SCRATCH/install.log" 2>&1 ||
    { fail "cmake --install --component debug failed: $(tail -5 "$SCRATCH/install.log")"; return; }
  readelf -S "$prefix/bin/.debug/neuron-cache.debug" 2>/dev/null | grep -q '\.debug_info' || fail "the debug file has no debug info"
  equals "$(readelf -n "$prefix/bin/.debug/neuron-cache.debug" 2>/dev/null | grep 'Build ID')" \
    "$(readelf -n "$prefix/bin/neuron-cache" | grep 'Build ID')"
  if command -v gdb >/dev/null; then
    run 0 gdb -batch -nx -ex 'info line main' "$prefix/bin/neuron-cache" || return
    contains "$OUT" "apps/neuron-cache/main.cpp"
  fi
}

# --version names the version, the commit built and the build date (provenance).
test_version_names_commit_and_build_date() {
  local commit
  run 0 "$NC" --version --json || return
  valid_json "$OUT" version.schema.json
  commit="$(json_get "$OUT" .commit)"
  if git -C "$SOURCE_DIR" rev-parse HEAD >/dev/null 2>&1; then
    [[ "${commit%-dirty}" == "$(git -C "$SOURCE_DIR" rev-parse HEAD)" ]] ||
      fail "commit $commit is not the source tree's HEAD $(git -C "$SOURCE_DIR" rev-parse HEAD)"
  fi
  [[ "$(json_get "$OUT" .build_date)" =~ ^20[0-9]{2}-[01][0-9]-[0-3][0-9]$ ]] || fail "build_date: $(json_get "$OUT" .build_date)"
  equals "$(json_get "$OUT" .version)" "$("$NC" --version -q --json | jq -r .version)"
  run 0 "$NC" --version || return
  equals "$(cat "$OUT")" "neuron-cache $(jq -r .version <<<"$("$NC" --version --json)") (commit ${commit:0:12}$(
    [[ "$commit" == *-dirty ]] && echo -dirty), built $(jq -r .build_date <<<"$("$NC" --version --json)"))"
}

test_destdir_staging_for_packages() {
  install_into /usr "$SCRATCH/stage" || return
  [[ -x "$SCRATCH/stage/usr/bin/neuron-cache" ]] || fail "DESTDIR staging lacks usr/bin/neuron-cache"
  [[ -s "$SCRATCH/stage/usr/share/man/man1/neuron-cache.1" ]] || fail "DESTDIR staging lacks the man page"
  [[ -s "$SCRATCH/stage/usr/share/zsh/site-functions/_neuron-cache" ]] || fail "DESTDIR staging lacks the zsh completion"
}

test_man_finds_and_renders_the_page() {
  local prefix="$SCRATCH/prefix"
  install_into "$prefix" || return
  local page="$prefix/share/man/man1/neuron-cache.1"
  if command -v man >/dev/null; then
    MANPATH="$prefix/share/man" run 0 man -w neuron-cache || return
    equals "$(cat "$OUT")" "$page"
    MANPAGER=cat MANWIDTH=100 run 0 man -l "$page" || return
    contains "$OUT" "NEURON-CACHE(1)"
  elif command -v mandoc >/dev/null; then
    run 0 mandoc -T utf8 "$page" || return
  elif command -v groff >/dev/null; then
    run 0 groff -man -Tutf8 "$page" || return
  else
    cp "$page" "$OUT"
  fi
  local section
  for section in NAME SYNOPSIS DESCRIPTION COMMANDS OPTIONS ENVIRONMENT FILES "EXIT STATUS" EXAMPLES; do
    grep -q "$section" "$OUT" || fail "rendered page lacks $section"
  done
  if command -v groff >/dev/null; then
    groff -man -Tutf8 -ww -z "$page" 2>"$SCRATCH/groff.err"
    [[ ! -s "$SCRATCH/groff.err" ]] || fail "groff warns: $(head -5 "$SCRATCH/groff.err")"
  fi
}

test_each_shell_loads_the_installed_completion() {
  local prefix="$SCRATCH/prefix"
  install_into "$prefix" || return
  # bash: the file bash-completion would load on demand registers the function.
  run 0 bash --norc --noprofile -c 'source "$1" && complete -p neuron-cache' _ \
    "$prefix/share/bash-completion/completions/neuron-cache" || return
  contains "$OUT" "complete -F _neuron_cache neuron-cache"
  # zsh: compinit finds it through $fpath and binds it to the command.
  run 0 zsh -f -c 'fpath=("$1" $fpath); autoload -Uz compinit; compinit -u -D; print -r -- $_comps[neuron-cache]' _ \
    "$prefix/share/zsh/site-functions" || return
  equals "$(cat "$OUT")" "_neuron-cache"
  # fish: found through $XDG_DATA_DIRS for a command on $PATH, without being sourced by hand.
  PATH="$prefix/bin:$PATH" XDG_DATA_DIRS="$prefix/share" run 0 fish -c 'complete -C "neuron-cache cre"' || return
  contains "$OUT" "create"
}

run_tests
