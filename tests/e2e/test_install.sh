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
