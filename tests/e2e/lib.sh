# Shared helpers for the end-to-end suites: each suite sources this file, defines
# test_* functions, and calls run_tests. Every test runs in a fresh scratch directory
# with its own HF_HOME, so the user's configuration is never read or touched.
set -uo pipefail

BIN_DIR="${NEURON_CACHE_BIN_DIR:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../../build/bin" && pwd)}"
SOURCE_DIR="${NEURON_CACHE_SOURCE_DIR:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}"
NC="$BIN_DIR/neuron-cache"
SUITE_ROOT="$(mktemp -d "${TMPDIR:-/tmp}/neuron-cache-e2e.XXXXXX")"
trap 'rm -rf "$SUITE_ROOT"' EXIT

# The sanitizer suite leak-checks the programs of some e2e suites only (tests/CMakeLists.txt
# says which and why); a later detect_leaks in ASAN_OPTIONS wins over an earlier one.
if [[ "${NEURON_CACHE_E2E_LEAK_CHECK:-1}" == 0 && -n "${ASAN_OPTIONS:-}" ]]; then
  export ASAN_OPTIONS="$ASAN_OPTIONS:detect_leaks=0"
fi

# Variables a test must not inherit from the developer's shell.
unset CUSTOM_CACHE_REPO HF_TOKEN HUGGING_FACE_HUB_TOKEN HF_TOKEN_PATH HF_ENDPOINT HF_HUB_OFFLINE \
      HF_HUB_CACHE HUGGINGFACE_HUB_CACHE NEURON_CC_FLAGS NEURON_COMPILE_CACHE_URL XDG_CACHE_HOME XDG_STATE_HOME \
      XDG_CONFIG_HOME

fail() {
  echo "    FAIL: $*" >&2
  echo "$*" >>"$SCRATCH/.failures"
  return 1
}

# run EXPECTED_EXIT CMD...: runs CMD, stdout to $OUT, stderr to $ERR, checks the exit code.
run() {
  local expected="$1"; shift
  "$@" >"$OUT" 2>"$ERR"
  local code=$?
  if [[ "$code" != "$expected" ]]; then
    fail "expected exit $expected, got $code from: $*"
    echo "    stdout: $(head -c 2000 "$OUT")" >&2
    echo "    stderr: $(head -c 2000 "$ERR")" >&2
    return 1
  fi
}

# contains FILE TEXT: FILE holds TEXT (fixed string).
contains() { grep -qF -- "$2" "$1" || fail "$(basename "$1") lacks: $2"$'\n'"$(head -c 1500 "$1")"; }
lacks() { ! grep -qF -- "$2" "$1" || fail "$(basename "$1") unexpectedly has: $2"; }
one_line() { [[ "$(wc -l <"$1")" -le 1 ]] || fail "$(basename "$1") has more than one line: $(cat "$1")"; }
equals() { [[ "$1" == "$2" ]] || fail "expected '$2', got '$1'"; }

# snapshot DIR: a listing of every file with its hash, to prove nothing changed.
snapshot() {
  if [[ -e "$1" ]]; then
    (cd "$1" && find . -printf '%p %y %m\n' | sort && find . -type f -exec sha256sum {} + | sort)
  else
    echo "absent"
  fi
}

# same_entries SRC DST: every complete module entry (MODULE_1*, as make_sample_cache.sh
# names them) of SRC's $VERSION_DIR is byte-identical in DST.
same_entries() {
  local entry count=0
  for entry in "$1/$VERSION_DIR"/MODULE_1*; do
    diff -r -x '*.tmp.nc.*' "$entry" "$2/$VERSION_DIR/$(basename "$entry")" >/dev/null || fail "$(basename "$entry") differs"
    count=$((count + 1))
  done
  [[ $count -gt 0 ]] || fail "no entries compared"
}

# json_get FILE FILTER: a value from JSON output, e.g. json_get "$OUT" .repo
json_get() { jq -r "$2" "$1"; }

# flip_byte FILE OFFSET: the byte at OFFSET inverted in place (same size, same inode). A
# fixed value written there would change nothing, now and then, where it was already that.
flip_byte() {
  local byte
  byte=$(od -An -tu1 -j "$2" -N1 "$1" | tr -d ' ')
  [[ -n "$byte" ]] || { fail "flip_byte: $1 has no byte at $2"; return 1; }
  printf "\\x$(printf %02x $((byte ^ 255)))" | dd of="$1" bs=1 seek="$2" conv=notrunc status=none
}

# The Python with python3-jsonschema (`make deps`): Debian's, when it has the module. A
# `python3` found first on PATH may be a version manager's shim that takes a second to
# start, paid on every schema check.
SCHEMA_PYTHON=python3
/usr/bin/python3 -c 'import jsonschema' 2>/dev/null && SCHEMA_PYTHON=/usr/bin/python3
# valid_json FILE SCHEMA: FILE holds a document valid against docs/schemas/SCHEMA.
valid_json() {
  "$SCHEMA_PYTHON" "$SOURCE_DIR/tests/tools/check_json_schema.py" "$SOURCE_DIR/docs/schemas/$2" "$1" 2>"$SCRATCH/schema-errors" ||
    fail "$(basename "$1") does not match $2: $(cat "$SCRATCH/schema-errors")"
}

# matches_golden FILE NAME: FILE, with this test's scratch path written <SCRATCH> and short
# durations (0.42s) written <SECONDS>, is
# tests/e2e/golden/NAME byte for byte: the wording users read is reviewed in the diff.
# NEURON_CACHE_UPDATE_GOLDEN=1 rewrites the golden file instead (then review `git diff`).
matches_golden() {
  local golden="$SOURCE_DIR/tests/e2e/golden/$2" actual="$SCRATCH/golden-$2"
  sed -E "s|$SCRATCH|<SCRATCH>|g; s/(^|[^0-9.])[0-9]+\.[0-9]{2}s([^a-z]|$)/\1<SECONDS>\2/g" "$1" >"$actual"
  if [[ "${NEURON_CACHE_UPDATE_GOLDEN:-}" == 1 ]]; then
    mkdir -p "$(dirname "$golden")" && cp "$actual" "$golden"
    return 0
  fi
  [[ -f "$golden" ]] || { fail "no golden file $2 (run with NEURON_CACHE_UPDATE_GOLDEN=1)"; return 1; }
  diff -u "$golden" "$actual" >"$SCRATCH/golden-diff" || fail "$2 differs from its golden file:"$'\n'"$(cat "$SCRATCH/golden-diff")"
}

# small_disk DIR: a 1 MB tmpfs at DIR, unmounted when the test ends; false (the test is
# skipped) where this process may not mount one.
small_disk() {
  mkdir -p "$1"
  if [[ $(id -u) -ne 0 ]] || ! mount -t tmpfs -o size=1m tmpfs "$1" 2>/dev/null; then
    echo "    skipped: cannot mount a tmpfs (needs root)" >&2
    return 1
  fi
  SMALL_DISK="$1"
  trap 'umount "$SMALL_DISK" 2>/dev/null' EXIT
}

# launch_test_hub ARGS...: the project's test Hub on a free loopback port, its data under
# $SCRATCH; sets HUB_URL and HUB_PID. The Hub stops when the test's shell exits.
launch_test_hub() {
  rm -f "$SCRATCH/hub.out"
  "$BIN_DIR/neuron-cache-test-hub" --port 0 --data "$SCRATCH/hub-data" "$@" >"$SCRATCH/hub.out" 2>"$SCRATCH/hub.err" &
  HUB_PID=$!
  trap 'stop_hub' EXIT
  for _ in $(seq 100); do
    HUB_URL=$(head -n 1 "$SCRATCH/hub.out" 2>/dev/null)
    [[ -n "$HUB_URL" ]] && return 0
    kill -0 "$HUB_PID" 2>/dev/null || break
    sleep 0.05
  done
  fail "the test hub did not start: $(cat "$SCRATCH/hub.err")"
  return 1
}

stop_hub() {
  if [[ -n "${HUB_PID:-}" ]]; then
    kill -TERM "$HUB_PID" 2>/dev/null
    wait "$HUB_PID" 2>/dev/null
    HUB_PID=""
  fi
}

# pause_ms N: waits N (1-999) milliseconds without starting a process (read times out on a
# pipe this shell holds both ends of). A poll that forks `sleep`, or spins, takes a core from
# the command it watches: CI has two.
exec {PAUSE_FD}<> <(:)
pause_ms() {
  local seconds
  printf -v seconds '0.%03d' "$1"
  read -r -t "$seconds" -u "$PAUSE_FD" || true
}

# interrupt_when SIGNAL TEST COMMAND...: runs COMMAND in the background (a simple command, so
# that the pid is neuron-cache's own), freezes it (SIGSTOP) as soon as `TEST` holds, sends
# SIGNAL, lets it go on; STATUS is its exit code. Frozen, it cannot finish between the moment
# TEST held and the signal.
interrupt_when() {
  local signal="$1" condition="$2"; shift 2
  "$@" >"$OUT" 2>"$ERR" &
  local pid=$!
  until eval "$condition"; do
    kill -0 "$pid" 2>/dev/null || break
    pause_ms 1
  done
  kill -STOP "$pid" 2>/dev/null
  kill "-$signal" "$pid" 2>/dev/null
  kill -CONT "$pid" 2>/dev/null
  wait "$pid"
  STATUS=$?
}

interrupted_line() { # interrupted_line TOTAL: the account on stderr; prints N published
  grep -qE "^Interrupted: [0-9]+ of $1 entries published; run the same command to finish\.$" "$ERR" ||
    fail "no account of the interrupt: $(cat "$ERR")"
  sed -nE 's/^Interrupted: ([0-9]+) of.*/\1/p' "$ERR"
}

# stopped_copy STATUS TOTAL: a copy between stores stopped by a signal exited STATUS, gave
# the account on stderr and a --json report that says so; prints N, the entries published.
stopped_copy() {
  equals "$STATUS" "$1"
  local published; published=$(interrupted_line "$2")
  [[ "$published" -ge 1 && "$published" -lt "$2" ]] || fail "published $published of $2"
  lacks "$ERR" "error:"
  valid_json "$OUT" transfer.schema.json
  equals "$(json_get "$OUT" .stopped.reason)" interrupted
  equals "$(json_get "$OUT" .stopped.entries_published)" "$published"
  equals "$(json_get "$OUT" '.transferred | length')" "$published"
  echo "$published"
}

run_tests() {
  local names
  # NEURON_CACHE_E2E_ONLY=REGEX runs the matching tests only (while working on one).
  names=$(declare -F | awk '{print $3}' | grep '^test_' | grep -E -- "${NEURON_CACHE_E2E_ONLY:-.}")
  local passed=0 failed=0
  for name in $names; do
    export SCRATCH="$SUITE_ROOT/$name"
    mkdir -p "$SCRATCH"
    export HF_HOME="$SCRATCH/hf-home"
    export HOME="$SCRATCH/home"
    mkdir -p "$HOME"
    OUT="$SCRATCH/stdout"
    ERR="$SCRATCH/stderr"
    local started=$EPOCHREALTIME
    ( cd "$SCRATCH" && "$name" )
    local status=$?
    local took
    took=$(awk -v a="$started" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }')
    if [[ $status -ne 0 || -s "$SCRATCH/.failures" ]]; then
      echo "  FAIL $name (${took} s)"
      failed=$((failed + 1))
    else
      echo "  ok   $name (${took} s)"
      passed=$((passed + 1))
    fi
  done
  echo "$passed passed, $failed failed"
  [[ $failed -eq 0 ]]
}
