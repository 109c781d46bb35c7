#!/usr/bin/env bash
# End to end: a pull fails early and stops short cleanly. Free space is checked before
# anything moves; the first full disk (a real one: a 1 MB tmpfs, when this runs as root
# and may mount one; skipped otherwise) ends the run with one line; SIGINT and SIGTERM
# stop it between files with an account of what landed, exit 128 + the signal, and no
# staging left. What else installs into a local cache (add's manifest runs) takes the same
# pull lock and checks for room first.
source "$(dirname "$0")/lib.sh"

MAKE_CACHE="$SOURCE_DIR/tests/tools/make_sample_cache.sh"
HUB_BIN="$BIN_DIR/neuron-cache-test-hub"
VERSION_DIR="neuronxcc-2.21.33363.0+82129205"
TOKEN=hf_alice_guard_token
export NEURON_CACHE_HTTP_BACKOFF_BASE_MS=5

no_staging() {
  local found; found=$(find "$1" -name '.neuron-cache-pull*' -o -name '*.tmp.nc.*' 2>/dev/null)
  [[ -z "$found" ]] || fail "staging or temp files left: $found"
}
# Every module entry below ROOT is whole: model.done present and the same files as SOURCE.
entries_whole() {
  local root="$1" source="$2" entry
  for entry in "$root/$VERSION_DIR"/MODULE_*; do
    [[ -e "$entry" ]] || continue
    [[ -f "$entry/model.done" ]] || fail "$(basename "$entry") has no model.done"
    diff -r "$source/$VERSION_DIR/$(basename "$entry")" "$entry" >/dev/null || fail "$(basename "$entry") differs"
  done
}

# A directory repo of 8 entries of ~300 KB: 2.4 MB, more than the small disk holds.
make_repo() {
  "$MAKE_CACHE" "$SCRATCH/cache" --entries 8 --neff-size 300000 || fail "cannot make the cache"
  run 0 "$NC" create "$SCRATCH/repo" -q || return 1
  run 0 "$NC" push --repo-id "$SCRATCH/repo" --cache-dir "$SCRATCH/cache" -q || return 1
}

test_pull_refuses_a_disk_without_room_before_anything_moves() {
  small_disk "$SCRATCH/small" || return 0
  make_repo || return
  local before; before=$(snapshot "$SCRATCH/small")
  run 1 "$NC" pull --repo-id "$SCRATCH/repo" --cache-dir "$SCRATCH/small/cache" </dev/null || return
  contains "$ERR" "error: the pull needs 2.5 MB on $SCRATCH/small/cache (tmpfs), "
  contains "$ERR" "is free; make room (neuron-cache cleanup --max-size SIZE) or pull into a larger disk"
  contains "$ERR" "--yes pulls anyway"
  one_line "$ERR"
  equals "$(snapshot "$SCRATCH/small")" "$before"
  # The JSON error says the same.
  run 1 "$NC" pull --repo-id "$SCRATCH/repo" --cache-dir "$SCRATCH/small/cache" --json </dev/null || return
  valid_json "$OUT" error.schema.json
  contains "$OUT" "the pull needs 2.5 MB"
  # A dry run only says what it would fetch.
  run 0 "$NC" pull --repo-id "$SCRATCH/repo" --cache-dir "$SCRATCH/small/cache" --dry-run || return
}

test_a_full_disk_stops_the_pull_with_one_line() {
  small_disk "$SCRATCH/small" || return 0
  make_repo || return
  # --yes goes past the check: the disk fills for real part way.
  run 1 "$NC" pull --repo-id "$SCRATCH/repo" --cache-dir "$SCRATCH/small/cache" --yes --max-workers 1 || return
  contains "$ERR" "warning: the pull needs 2.5 MB on $SCRATCH/small/cache (tmpfs)"
  contains "$ERR" "pulling anyway (--yes)"
  contains "$ERR" "error: no space left on $SCRATCH/small/cache (tmpfs): "
  contains "$ERR" " of 8 entries installed; the rest needs "
  contains "$ERR" "then run the same command to finish"
  lacks "$ERR" "not installed:"
  equals "$(grep -c 'error:' "$ERR")" "1"
  no_staging "$SCRATCH/small/cache"
  entries_whole "$SCRATCH/small/cache" "$SCRATCH/cache"
  # The JSON report says why it stopped, and stays valid.
  run 1 "$NC" pull --repo-id "$SCRATCH/repo" --cache-dir "$SCRATCH/small/cache" --yes --json || return
  valid_json "$OUT" transfer.schema.json
  equals "$(json_get "$OUT" .stopped.reason)" "no-space"
  equals "$(json_get "$OUT" .stopped.entries_planned)" \
    "$(($(json_get "$OUT" '.stopped.entries_installed') + $(json_get "$OUT" '.errors | length')))"
  [[ "$(json_get "$OUT" .stopped.bytes_needed)" -gt "$(json_get "$OUT" .stopped.bytes_free)" ]] ||
    fail "the rest should need more than is free"
  no_staging "$SCRATCH/small/cache"
}

start_hub() {
  launch_test_hub --user "alice:$TOKEN:write" "$@" || return 1
  export HF_ENDPOINT="$HUB_URL" HF_TOKEN="$TOKEN"
}

# interrupt_pull SIGNAL: a slow pull of 12 entries, sent SIGNAL once an entry landed.
interrupt_pull() {
  start_hub --lfs-threshold 1024 || return 1
  "$MAKE_CACHE" "$SCRATCH/cache" --entries 12 --neff-size 200000 || return 1
  run 0 "$NC" create alice/guard -q || return 1
  run 0 "$NC" push --repo-id alice/guard --cache-dir "$SCRATCH/cache" -q || return 1
  stop_hub
  start_hub --lfs-threshold 1024 --bandwidth-mbps 8 || return 1
  "$NC" pull --repo-id alice/guard --cache-dir "$SCRATCH/fresh" --max-workers 2 >"$OUT" 2>"$ERR" &
  local pid=$!
  for _ in $(seq 1000); do
    [[ -n "$(find "$SCRATCH/fresh/$VERSION_DIR" -maxdepth 1 -name 'MODULE_*' -print -quit 2>/dev/null)" ]] && break
    sleep 0.01
  done
  kill "-$1" "$pid"
  wait "$pid"
  STATUS=$?
}

test_sigint_stops_a_pull_with_an_account_and_no_staging() {
  interrupt_pull INT || return
  equals "$STATUS" "130"
  grep -qE '^Interrupted: [0-9]+ of 12 entries installed; run the same command to finish\.$' "$ERR" ||
    fail "no account of the interrupt: $(cat "$ERR")"
  lacks "$ERR" "not installed:"
  local installed; installed=$(sed -nE 's/^Interrupted: ([0-9]+) of.*/\1/p' "$ERR")
  [[ "$installed" -ge 1 && "$installed" -lt 12 ]] || fail "installed $installed of 12"
  equals "$(find "$SCRATCH/fresh/$VERSION_DIR" -maxdepth 1 -name 'MODULE_*' | wc -l)" "$installed"
  no_staging "$SCRATCH/fresh"
  entries_whole "$SCRATCH/fresh" "$SCRATCH/cache"
  # The same command finishes it.
  run 0 "$NC" pull --repo-id alice/guard --cache-dir "$SCRATCH/fresh" --json || return
  equals "$(json_get "$OUT" '.transferred | length')" "$((12 - installed))"
  entries_whole "$SCRATCH/fresh" "$SCRATCH/cache"
}

test_sigterm_stops_a_pull_the_same_way() {
  interrupt_pull TERM || return
  equals "$STATUS" "143"
  grep -qE '^Interrupted: [0-9]+ of 12 entries installed; run the same command to finish\.$' "$ERR" ||
    fail "no account of the interrupt: $(cat "$ERR")"
  no_staging "$SCRATCH/fresh"
}

test_a_second_pull_waits_for_the_first_and_downloads_nothing_twice() {
  start_hub --lfs-threshold 1024 || return
  "$MAKE_CACHE" "$SCRATCH/cache" --entries 6 --neff-size 200000 || return
  run 0 "$NC" create alice/twice -q || return
  run 0 "$NC" push --repo-id alice/twice --cache-dir "$SCRATCH/cache" -q || return
  stop_hub
  start_hub --lfs-threshold 1024 --bandwidth-mbps 4 || return
  "$NC" pull --repo-id alice/twice --cache-dir "$SCRATCH/fresh" --json >"$SCRATCH/first.out" 2>"$SCRATCH/first.err" &
  local first=$!
  for _ in $(seq 3000); do
    [[ -e "$SCRATCH/fresh/.neuron-cache-pull-lock" ]] && break
    sleep 0.01
  done
  [[ -e "$SCRATCH/fresh/.neuron-cache-pull-lock" ]] || fail "the first pull took no lock"
  # The first pull is frozen while it holds the lock, whatever the machine's speed, until
  # the second says it waits for it.
  kill -STOP "$first"
  "$NC" pull --repo-id alice/twice --cache-dir "$SCRATCH/fresh" --json >"$OUT" 2>"$ERR" &
  local second=$!
  for _ in $(seq 6000); do
    grep -q "waiting for" "$ERR" 2>/dev/null && break
    sleep 0.01
  done
  kill -CONT "$first"
  wait "$second" || fail "the second pull failed: $(cat "$ERR")"
  wait "$first" || fail "the first pull failed: $(cat "$SCRATCH/first.err")"
  contains "$ERR" "waiting for the pull of pid $first on this host"
  equals "$(json_get "$SCRATCH/first.out" '.transferred | length')" "6"
  equals "$(json_get "$OUT" '.transferred | length')" "0"
  equals "$(json_get "$OUT" '.present | length')" "6"
  lacks "$ERR" "appeared-during-pull"
  [[ ! -e "$SCRATCH/fresh/.neuron-cache-pull-lock" ]] || fail "the lock was left behind"
  entries_whole "$SCRATCH/fresh" "$SCRATCH/cache"
}

# tree_listings: the repo listings the test Hub served since its stats were reset.
tree_listings() { curl -fsS "$HUB_URL/_test/stats" | jq -r '.by_route.tree // 0'; }

test_a_pull_that_asks_first_lists_the_repo_once() {
  command -v script >/dev/null 2>&1 || { echo "    (skipped: no script)"; return 0; }
  start_hub --page-size 100000 || return
  "$MAKE_CACHE" "$SCRATCH/cache" --entries 4 || return
  run 0 "$NC" create alice/asks -q || return
  run 0 "$NC" push --repo-id alice/asks --cache-dir "$SCRATCH/cache" -q || return
  # Beyond --max-size on a terminal: it plans, asks, and applies that plan (no second listing).
  curl -fsS -X POST "$HUB_URL/_test/stats/reset" >/dev/null
  printf 'y\n' | NO_COLOR=1 script -qec "'$NC' pull --repo-id alice/asks --max-size 10 --cache-dir '$SCRATCH/asked'" \
    /dev/null >"$OUT" 2>&1 || fail "the pull that asked failed: $(cat "$OUT")"
  contains "$OUT" "more than --max-size 10 B. Continue? [y/N]"
  equals "$(tree_listings)" "1"
  entries_whole "$SCRATCH/asked" "$SCRATCH/cache"
  # The same as a pull that does not ask.
  curl -fsS -X POST "$HUB_URL/_test/stats/reset" >/dev/null
  run 0 "$NC" pull --repo-id alice/asks --yes --cache-dir "$SCRATCH/told" -q || return
  equals "$(tree_listings)" "1"
}

test_the_lock_of_a_killed_pull_does_not_block_the_next() {
  start_hub --lfs-threshold 1024 || return
  "$MAKE_CACHE" "$SCRATCH/cache" --entries 6 --neff-size 200000 || return
  run 0 "$NC" create alice/dead -q || return
  run 0 "$NC" push --repo-id alice/dead --cache-dir "$SCRATCH/cache" -q || return
  stop_hub
  start_hub --lfs-threshold 1024 --bandwidth-mbps 8 || return
  "$NC" pull --repo-id alice/dead --cache-dir "$SCRATCH/fresh" -q >/dev/null 2>&1 &
  local pid=$!
  for _ in $(seq 500); do
    [[ -e "$SCRATCH/fresh/.neuron-cache-pull-lock" ]] && break
    sleep 0.01
  done
  kill -9 "$pid"; wait "$pid" 2>/dev/null
  [[ -e "$SCRATCH/fresh/.neuron-cache-pull-lock" ]] || fail "no lock left to test with"
  run 0 timeout 60 "$NC" pull --repo-id alice/dead --cache-dir "$SCRATCH/fresh" || return
  lacks "$ERR" "waiting for"
  [[ ! -e "$SCRATCH/fresh/.neuron-cache-pull-lock" ]] || fail "the lock was left behind"
  entries_whole "$SCRATCH/fresh" "$SCRATCH/cache"
}

# --- what else installs into a local cache: add's manifest runs -------------------------------

source "$(dirname "$0")/add_lib.sh"

write_one_config_manifest() { # write_one_config_manifest FILE CACHE_DIR
  manifest_head "$2" --graphs 3 --compile-ms 300 >"$1"
  cat >>"$1" <<EOF
models:
  - model: $SCRATCH/tiny
    task: text-generation
    precision: bf16
    configurations:
      - {batch_size: 1, sequence_length: 128, num_cores: 2}
EOF
}

test_add_keeps_the_local_cache_warm_only_with_room_for_it() {
  small_disk "$SCRATCH/small" || return 0
  setup_repo || return
  mkdir -p "$SCRATCH/small/cc"
  # Leave 8 KB free: less than the three graphs need.
  local free; free=$(df -B1 --output=avail "$SCRATCH/small" | tail -n 1)
  head -c $((free - 8192)) /dev/zero >"$SCRATCH/small/filler" 2>/dev/null
  write_one_config_manifest "$SCRATCH/ci.yaml" "$SCRATCH/small/cc"
  run 0 "$NC" add --manifest "$SCRATCH/ci.yaml" --json || return
  equals "$(json_get "$OUT" '.summary.added')" 1
  contains "$OUT" "not copied into the local cache $SCRATCH/small/cc: it needs "
  equals "$(find "$SCRATCH/small/cc" -name 'MODULE_*' | wc -l)" 0
  no_staging "$SCRATCH/small/cc"
  # Pushed all the same.
  equals "$(find "$SCRATCH/repo" -path '*MODULE_*' -name model.done | wc -l)" 3
  # With room, the graphs land in the shared cache.
  rm -f "$SCRATCH/small/filler"
  rm -rf "$SCRATCH/repo"
  run 0 "$NC" create "$SCRATCH/repo" -q || return
  run 0 "$NC" add --manifest "$SCRATCH/ci.yaml" --json || return
  lacks "$OUT" "not copied"
  equals "$(find "$SCRATCH/small/cc" -name model.done | wc -l)" 3
}

test_add_waits_for_a_pull_into_the_same_cache() {
  start_hub --lfs-threshold 1024 || return
  setup_repo || return
  "$MAKE_CACHE" "$SCRATCH/cache" --entries 12 --neff-size 200000 || return
  run 0 "$NC" create alice/busy -q || return
  run 0 "$NC" push --repo-id alice/busy --cache-dir "$SCRATCH/cache" -q || return
  stop_hub
  start_hub --lfs-threshold 1024 --bandwidth-mbps 4 || return
  "$NC" pull --repo-id alice/busy --cache-dir "$SCRATCH/cc" --max-workers 1 -q >"$SCRATCH/pull.out" 2>"$SCRATCH/pull.err" &
  local puller=$!
  for _ in $(seq 500); do
    [[ -e "$SCRATCH/cc/.neuron-cache-pull-lock" ]] && break
    sleep 0.01
  done
  [[ -e "$SCRATCH/cc/.neuron-cache-pull-lock" ]] || fail "the pull took no lock"
  write_one_config_manifest "$SCRATCH/ci.yaml" "$SCRATCH/cc"
  run 0 "$NC" add --manifest "$SCRATCH/ci.yaml" || return
  wait "$puller" || fail "the pull failed: $(cat "$SCRATCH/pull.err")"
  contains "$ERR" "waiting for the pull of pid $puller on this host"
  same_entries "$SCRATCH/cache" "$SCRATCH/cc"
  equals "$(find "$SCRATCH/cc" -name model.done | wc -l)" 15 # and the 3 graphs add compiled
  [[ ! -e "$SCRATCH/cc/.neuron-cache-pull-lock" ]] || fail "the lock was left behind"
}

test_status_names_the_file_system_of_the_cache() {
  "$MAKE_CACHE" "$SCRATCH/cache" --entries 1 || return
  run 0 "$NC" status --cache-dir "$SCRATCH/cache" --json || return
  valid_json "$OUT" status.schema.json
  [[ -n "$(json_get "$OUT" .file_system.name)" ]] || fail "no file system name"
  local name; name=$(json_get "$OUT" .file_system.name)
  run 0 "$NC" status --cache-dir "$SCRATCH/cache" || return
  contains "$OUT" "File system: $name"
  small_disk "$SCRATCH/small" || return 0
  "$MAKE_CACHE" "$SCRATCH/small/cache" --entries 1 || return
  run 0 "$NC" status --cache-dir "$SCRATCH/small/cache" --json || return
  equals "$(json_get "$OUT" .file_system.name)/$(json_get "$OUT" .file_system.kind)" "tmpfs/memory"
  run 0 "$NC" status --cache-dir "$SCRATCH/small/cache" || return
  contains "$OUT" "File system: tmpfs, in memory: gone at the next boot"
}

run_tests
