#!/usr/bin/env bash
# End to end: what a transfer draws, as a CI log and a terminal see it: progress lines by
# time without a terminal, a bar that fits its width, plain lines for TERM=dumb, and help
# and tables that fit 80 columns when piped.
source "$(dirname "$0")/lib.sh"

MAKE_CACHE="$SOURCE_DIR/tests/tools/make_sample_cache.sh"

# A sample cache with 5 good entries and one of each fault, and an empty repo.
setup() {
  "$MAKE_CACHE" "$SCRATCH/cache" --faults "$@" || fail "cannot make the sample cache"
  run 0 "$NC" create "$SCRATCH/repo" -q
}

# lines_fit FILE WIDTH: no line of FILE is wider than WIDTH.
lines_fit() {
  local widest; widest=$(awk '{ if (length > m) m = length } END { print m + 0 }' "$1")
  [[ "$widest" -le "$2" ]] || fail "$(basename "$1") has a line of $widest columns: $(awk -v w="$2" 'length > w' "$1" | head -2)"
}

test_ci_logs_get_a_progress_line_by_time_and_an_entry_line_with_verbose() {
  setup || return
  # Without a terminal: the line at the start, then one per interval (30 s; here 1 ms),
  # never a carriage return or an escape sequence, within 80 columns.
  NEURON_CACHE_PROGRESS_INTERVAL=0.001 run 0 "$NC" push --cache-dir "$SCRATCH/cache" || return
  grep -qE '^Uploading +[0-9]+% [0-9.]+ [KMG]?B/[0-9.]+ [KMG]?B' "$ERR" || fail "no progress line: $(cat "$ERR")"
  lacks "$ERR" $'\r'
  lacks "$ERR" $'\033'
  lacks "$ERR" "Uploading ["
  grep '^Uploading' "$ERR" >"$SCRATCH/progress"
  lines_fit "$SCRATCH/progress" 80
  # --verbose: one line per entry, with its size; under --json only with --verbose.
  run 0 "$NC" pull --cache-dir "$SCRATCH/fresh" --json --verbose || return
  equals "$(grep -c '^pull neuronxcc-2.21.33363.0+82129205/' "$ERR")" "$(json_get "$OUT" '.planned | length')"
  grep -qE '^pull neuronxcc-[^ ]+ \([0-9]+ files?, [0-9.]+ [KMG]?B\)$' "$ERR" || fail "no entry line: $(cat "$ERR")"
  contains "$ERR" "Downloading "
  run 0 "$NC" pull --cache-dir "$SCRATCH/fresh2" --json || return
  lacks "$ERR" "Downloading"
  lacks "$ERR" "pull neuronxcc-"
  run 0 "$NC" pull --cache-dir "$SCRATCH/fresh3" -q || return
  lacks "$ERR" "Downloading"
  HF_HUB_DISABLE_PROGRESS_BARS=1 run 0 "$NC" pull --cache-dir "$SCRATCH/fresh4" || return
  lacks "$ERR" "Downloading"
  # An interval that is not a number of seconds: said once, the default kept.
  NEURON_CACHE_PROGRESS_INTERVAL=soon run 0 "$NC" pull --cache-dir "$SCRATCH/fresh5" || return
  contains "$ERR" "neuron-cache: warning: NEURON_CACHE_PROGRESS_INTERVAL is not a number of seconds (got 'soon')"
  contains "$ERR" "Downloading "
}

# on_terminal FILE ENV... -- CMD...: runs CMD on a pseudo-terminal with ENV, its output in FILE.
on_terminal() {
  local file=$1; shift
  local env=()
  while [[ "$1" != "--" ]]; do env+=("$1"); shift; done
  shift
  env "${env[@]}" script -qec "$(printf '%q ' "$@")" /dev/null </dev/null >"$file" 2>&1
}

test_terminal_bar_fits_its_width_and_dumb_terminals_get_plain_lines() {
  command -v script >/dev/null 2>&1 || { echo "    (skipped: no script)"; return; }
  setup || return
  run 0 "$NC" push --cache-dir "$SCRATCH/cache" -q || return
  # A terminal of 60 columns: the bar is redrawn in place ("\r", erase to the end), never
  # past column 59, and erased before the summary.
  on_terminal "$SCRATCH/tty" TERM=xterm COLUMNS=60 -- "$NC" pull --cache-dir "$SCRATCH/fresh"
  contains "$SCRATCH/tty" "Downloading ["
  contains "$SCRATCH/tty" $'\033[K'
  tr '\r' '\n' <"$SCRATCH/tty" | sed 's/\x1b\[K//g' | grep '^Downloading' >"$SCRATCH/bars"
  [[ -s "$SCRATCH/bars" ]] || fail "no bar drawn"
  lines_fit "$SCRATCH/bars" 59
  # TERM=dumb: plain lines, nothing redrawn (the terminal's own \r\n aside).
  on_terminal "$SCRATCH/dumb" TERM=dumb -- "$NC" pull --cache-dir "$SCRATCH/fresh2"
  contains "$SCRATCH/dumb" "Downloading "
  lacks "$SCRATCH/dumb" $'\033'
  lacks "$SCRATCH/dumb" "Downloading ["
  equals "$(sed 's/\r$//' "$SCRATCH/dumb" | grep -c $'\r')" "0"
  # Colour on a terminal, unless NO_COLOR; never in a pipe.
  on_terminal "$SCRATCH/colour" TERM=xterm -- "$NC" pull --repo-id "$SCRATCH/none" --cache-dir "$SCRATCH/x"
  contains "$SCRATCH/colour" $'neuron-cache: \033[1;31merror:\033[0m the cache repo'
  on_terminal "$SCRATCH/plain" TERM=xterm NO_COLOR=1 -- "$NC" pull --repo-id "$SCRATCH/none" --cache-dir "$SCRATCH/x"
  contains "$SCRATCH/plain" "neuron-cache: error: the cache repo"
  lacks "$SCRATCH/plain" $'\033'
  run 1 "$NC" pull --repo-id "$SCRATCH/none" --cache-dir "$SCRATCH/x"
  lacks "$ERR" $'\033'
}

test_tables_and_help_fit_80_columns_when_piped() {
  local command
  for command in "" synchronize add lookup list status cleanup; do
    run 0 "$NC" ${command:+"$command"} --help || return
    lines_fit "$OUT" 80
  done
  COLUMNS=50 run 0 "$NC" pull --help || return
  lines_fit "$OUT" 50
}

run_tests
