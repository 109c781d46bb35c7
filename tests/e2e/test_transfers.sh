#!/usr/bin/env bash
# End to end: parallel transfers against the local test Hub. The test Hub as an instrument
# (latency, bandwidth); parallel push and pull give the same repo and tree as serial ones;
# a kill -9 during a parallel pull leaves no partial entry; a fault in one worker's
# request is retried without disturbing the others; a failure that persists stops the
# run with nothing half-installed and nothing committed. No timing is asserted beyond
# the lower bounds the instrument guarantees.
source "$(dirname "$0")/lib.sh"

MAKE_CACHE="$SOURCE_DIR/tests/tools/make_sample_cache.sh"
HUB_BIN="$BIN_DIR/neuron-cache-test-hub"
VERSION_DIR="neuronxcc-2.21.33363.0+82129205"
TOKEN=hf_alice_transfers_token
export NEURON_CACHE_HTTP_BACKOFF_BASE_MS=5

start_hub() {
  launch_test_hub --user "alice:$TOKEN:write" "$@" || return 1
  export HF_ENDPOINT="$HUB_URL" HF_TOKEN="$TOKEN"
}

stat_of() { curl -fsS "$HUB_URL/_test/stats" | jq "$1"; }
fault() { curl -fsS -X POST "$HUB_URL/_test/faults" -d "$1" >/dev/null || fail "cannot inject $1"; }
# The repo as the Hub serves it: every path with its oid and LFS oid.
repo_tree() {
  curl -fsS -H "Authorization: Bearer $TOKEN" "$HUB_URL/api/models/$1/tree/main?recursive=true&expand=false" |
    jq -r '.[] | select(.type == "file") | "\(.path) \(.size) \(.oid) \(.lfs.oid // "-")"' | sort
}
# tree DIR: every file below DIR with its hash (temp files would show up too).
tree() { (cd "$1" && find . -type f -print0 | sort -z | xargs -0 sha256sum); }
# Every module entry below ROOT is whole: model.done present and the same files as SOURCE.
entries_whole() {
  local root="$1" source="$2" entry
  for entry in "$root/$VERSION_DIR"/MODULE_*; do
    [[ -e "$entry" ]] || continue
    [[ -f "$entry/model.done" ]] || fail "$(basename "$entry") has no model.done"
    diff -r "$source/$VERSION_DIR/$(basename "$entry")" "$entry" >/dev/null || fail "$(basename "$entry") differs"
  done
}
no_staging() {
  local found; found=$(find "$1" -name '.neuron-cache-pull*' -o -name '*.tmp.nc.*' 2>/dev/null)
  [[ -z "$found" ]] || fail "staging or temp files left: $found"
}
# A cache of 24 entries, NEFFs from 4 KB to 3 MB, so uploads and downloads take turns.
make_cache() {
  "$MAKE_CACHE" "$1" --entries 24 --neff-size 4096 --big-every 4 --big-size 3000000 --seed "${2:-1}" ||
    fail "cannot make the cache"
}

test_hub_latency_and_bandwidth_are_applied() {
  start_hub --latency-ms 150 --bandwidth-mbps 8 --lfs-threshold 1024 || return
  local t0 t1
  t0=$(date +%s%N)
  curl -fsS "$HUB_URL/api/whoami-v2" -H "Authorization: Bearer $TOKEN" >/dev/null || fail "whoami"
  t1=$(date +%s%N)
  (( (t1 - t0) / 1000000 >= 150 )) || fail "an API call took $(( (t1 - t0) / 1000000 )) ms, less than the latency"
  run 0 "$NC" create alice/bw -q || return
  "$MAKE_CACHE" "$SCRATCH/cache" --entries 1 --neff-size 1000000 || return
  # 1 MB at 8 Mbit/s: at least one second each way, whatever the loopback could do.
  t0=$(date +%s%N)
  run 0 "$NC" synchronize --cache-dir "$SCRATCH/cache" --max-workers 1 --json || return
  t1=$(date +%s%N)
  (( (t1 - t0) / 1000000 >= 1000 )) || fail "1 MB uploaded in $(( (t1 - t0) / 1000000 )) ms at 8 Mbit/s"
  t0=$(date +%s%N)
  run 0 "$NC" synchronize --pull --cache-dir "$SCRATCH/fresh" --max-workers 1 --json || return
  t1=$(date +%s%N)
  (( (t1 - t0) / 1000000 >= 1000 )) || fail "1 MB downloaded in $(( (t1 - t0) / 1000000 )) ms at 8 Mbit/s"
  entries_whole "$SCRATCH/fresh" "$SCRATCH/cache"
  # The counters still count.
  [[ "$(stat_of '.by_route.lfs_cdn // 0')" -ge 1 ]] || fail "no CDN request counted"
}

test_hub_rejects_bad_wan_options() {
  run 2 "$HUB_BIN" --port 0 --data "$SCRATCH/d" --bandwidth-mbps -1 || return
  contains "$ERR" "--bandwidth-mbps"
  run 2 "$HUB_BIN" --port 0 --data "$SCRATCH/d" --latency-ms abc || return
}

test_max_workers_is_validated() {
  run 2 "$NC" synchronize --repo-id "$SCRATCH/repo" --cache-dir "$SCRATCH/c" --max-workers 0 || return
  contains "$ERR" "--max-workers"
  run 2 "$NC" synchronize --repo-id "$SCRATCH/repo" --cache-dir "$SCRATCH/c" --max-workers 65 || return
  contains "$ERR" "at most 64"
  run 2 "$NC" synchronize --repo-id "$SCRATCH/repo" --cache-dir "$SCRATCH/c" --max-workers many || return
  [[ ! -e "$SCRATCH/repo" && ! -e "$SCRATCH/c" ]] || fail "a usage error created something"
}

test_parallel_push_and_pull_match_serial_ones() {
  start_hub --lfs-threshold 1024 --multipart-chunk-size 1000000 || return
  make_cache "$SCRATCH/cache"
  run 0 "$NC" create alice/serial -q || return
  run 0 "$NC" create alice/parallel -q || return
  run 0 "$NC" synchronize --repo-id alice/serial --cache-dir "$SCRATCH/cache" --max-workers 1 --json || return
  equals "$(json_get "$OUT" ".transferred | length")" "24"
  run 0 "$NC" synchronize --repo-id alice/parallel --cache-dir "$SCRATCH/cache" --max-workers 8 --json || return
  equals "$(json_get "$OUT" ".transferred | length")" "24"
  [[ "$(stat_of '.by_route.commit')" == 2 ]] || fail "expected one commit per push"
  [[ "$(stat_of '.by_route.lfs_part // 0')" -gt 0 ]] || fail "no multipart upload was exercised"
  equals "$(repo_tree alice/parallel)" "$(repo_tree alice/serial)"
  [[ -n "$(repo_tree alice/serial)" ]] || fail "empty repo"

  run 0 "$NC" synchronize --pull --repo-id alice/parallel --cache-dir "$SCRATCH/p1" --max-workers 1 --json || return
  local serial_report; serial_report=$(jq -c '{transferred, present, skipped, errors, files, bytes}' "$OUT")
  run 0 "$NC" synchronize --pull --repo-id alice/parallel --cache-dir "$SCRATCH/p8" --max-workers 8 --json || return
  equals "$(jq -c '{transferred, present, skipped, errors, files, bytes}' "$OUT")" "$serial_report"
  equals "$(json_get "$OUT" ".transferred | length")" "24"
  equals "$(tree "$SCRATCH/p8")" "$(tree "$SCRATCH/p1")"
  equals "$(tree "$SCRATCH/p8/$VERSION_DIR")" "$(tree "$SCRATCH/cache/$VERSION_DIR")"
  no_staging "$SCRATCH/p8"
}

test_kill_during_parallel_pull_leaves_no_partial_entry() {
  start_hub --lfs-threshold 1024 || return
  make_cache "$SCRATCH/cache"
  run 0 "$NC" create alice/kill -q || return
  run 0 "$NC" synchronize --repo-id alice/kill --cache-dir "$SCRATCH/cache" -q || return
  stop_hub
  # Slow downloads now, so the kill lands mid-transfer.
  start_hub --lfs-threshold 1024 --bandwidth-mbps 40 || return
  "$NC" synchronize --pull --repo-id alice/kill --cache-dir "$SCRATCH/fresh" --max-workers 8 -q >/dev/null 2>&1 &
  local pid=$!
  for _ in $(seq 400); do
    [[ -n "$(find "$SCRATCH/fresh/$VERSION_DIR" -maxdepth 1 -name 'MODULE_*' -print -quit 2>/dev/null)" ]] && break
    sleep 0.01
  done
  kill -9 "$pid" 2>/dev/null
  wait "$pid" 2>/dev/null
  local installed; installed=$(find "$SCRATCH/fresh/$VERSION_DIR" -maxdepth 1 -name 'MODULE_*' 2>/dev/null | wc -l)
  [[ "$installed" -lt 24 ]] || fail "the pull finished before the kill ($installed entries): nothing tested"
  entries_whole "$SCRATCH/fresh" "$SCRATCH/cache"
  run 0 "$NC" synchronize --pull --repo-id alice/kill --cache-dir "$SCRATCH/fresh" --json || return
  equals "$(( $(json_get "$OUT" ".transferred | length") + $(json_get "$OUT" ".present | length") ))" "24"
  equals "$(tree "$SCRATCH/fresh/$VERSION_DIR")" "$(tree "$SCRATCH/cache/$VERSION_DIR")"
  no_staging "$SCRATCH/fresh"
}

test_fault_in_one_worker_is_retried_without_disturbing_the_others() {
  start_hub --lfs-threshold 1024 || return
  make_cache "$SCRATCH/cache"
  run 0 "$NC" create alice/faults -q || return
  # Push: one upload answers 503, another loses its connection mid-body.
  fault '{"match":"/_lfs/upload/","method":"PUT","count":1,"action":"status","status":503}'
  fault '{"match":"/_lfs/upload/","method":"PUT","count":1,"action":"drop_after_bytes","bytes":100}'
  run 0 "$NC" synchronize --repo-id alice/faults --cache-dir "$SCRATCH/cache" --max-workers 8 --json || return
  equals "$(json_get "$OUT" ".transferred | length")" "24"
  equals "$(curl -fsS "$HUB_URL/_test/faults" | jq -c .faults)" "[]"
  [[ "$(stat_of '.by_route.commit')" == 1 ]] || fail "expected one commit"
  # Pull: one file's transfer gets a 500, another is cut short, a third drops its connection.
  curl -fsS -X POST "$HUB_URL/_test/stats/reset" >/dev/null
  local neff0 neff1 neff2
  neff0=$(cd "$SCRATCH/cache/$VERSION_DIR" && ls -d MODULE_* | sed -n 1p)
  neff1=$(cd "$SCRATCH/cache/$VERSION_DIR" && ls -d MODULE_* | sed -n 5p)
  neff2=$(cd "$SCRATCH/cache/$VERSION_DIR" && ls -d MODULE_* | sed -n 9p)
  fault "{\"match\":\"$neff0/model.neff\",\"method\":\"GET\",\"count\":1,\"action\":\"status\",\"status\":500}"
  fault '{"match":"/_lfs/cdn/","method":"GET","count":1,"action":"truncate_body"}'
  fault "{\"match\":\"$neff2/compile_flags.json\",\"method\":\"GET\",\"count\":1,\"action\":\"drop_after_bytes\",\"bytes\":10}"
  run 0 "$NC" synchronize --pull --repo-id alice/faults --cache-dir "$SCRATCH/fresh" --max-workers 8 --json || return
  equals "$(json_get "$OUT" ".transferred | length")" "24"
  equals "$(json_get "$OUT" ".errors | length")" "0"
  equals "$(curl -fsS "$HUB_URL/_test/faults" | jq -c .faults)" "[]"
  equals "$(tree "$SCRATCH/fresh/$VERSION_DIR")" "$(tree "$SCRATCH/cache/$VERSION_DIR")"
  no_staging "$SCRATCH/fresh"
  [[ -n "$neff1" ]] || fail "cache too small"
}

test_persistent_failure_stops_cleanly() {
  start_hub --lfs-threshold 1024 || return
  make_cache "$SCRATCH/cache"
  run 0 "$NC" create alice/broken -q || return
  local before; before=$(curl -fsS -H "Authorization: Bearer $TOKEN" "$HUB_URL/api/models/alice/broken" | jq -r .sha)
  # Push: every upload of one object fails: nothing is committed.
  local victim; victim=$(cd "$SCRATCH/cache/$VERSION_DIR" && ls -d MODULE_* | sed -n 3p)
  local oid; oid=$(sha256sum "$SCRATCH/cache/$VERSION_DIR/$victim/model.neff" | cut -c1-64)
  fault "{\"match\":\"$oid\",\"method\":\"PUT\",\"count\":1000,\"action\":\"status\",\"status\":500}"
  run 1 "$NC" synchronize --repo-id alice/broken --cache-dir "$SCRATCH/cache" --max-workers 8 || return
  contains "$ERR" "500"
  [[ "$(stat_of '.by_route.commit // 0')" == 0 ]] || fail "a failed push committed"
  equals "$(curl -fsS -H "Authorization: Bearer $TOKEN" "$HUB_URL/api/models/alice/broken" | jq -r .sha)" "$before"
  curl -fsS -X DELETE "$HUB_URL/_test/faults" >/dev/null
  run 0 "$NC" synchronize --repo-id alice/broken --cache-dir "$SCRATCH/cache" -q || return
  # Pull: one file keeps failing: its entry is not installed, the run stops, nothing partial.
  fault "{\"match\":\"$victim/model.neff\",\"method\":\"GET\",\"count\":1000,\"action\":\"status\",\"status\":500}"
  run 1 "$NC" synchronize --pull --repo-id alice/broken --cache-dir "$SCRATCH/fresh" --max-workers 8 --json || return
  [[ ! -e "$SCRATCH/fresh/$VERSION_DIR/$victim" ]] || fail "the failing entry was installed"
  jq -e --arg p "$VERSION_DIR/$victim" '.errors | map(.path) | index($p) != null' "$OUT" >/dev/null ||
    fail "the failing entry is not reported"
  equals "$(( $(json_get "$OUT" ".transferred | length") + $(json_get "$OUT" ".errors | length") ))" "24"
  entries_whole "$SCRATCH/fresh" "$SCRATCH/cache"
  no_staging "$SCRATCH/fresh"
  curl -fsS -X DELETE "$HUB_URL/_test/faults" >/dev/null
  run 0 "$NC" synchronize --pull --repo-id alice/broken --cache-dir "$SCRATCH/fresh" --json || return
  equals "$(tree "$SCRATCH/fresh/$VERSION_DIR")" "$(tree "$SCRATCH/cache/$VERSION_DIR")"
}

test_noop_repush_does_not_list_an_unmoved_repo() {
  start_hub --lfs-threshold 1024 || return
  make_cache "$SCRATCH/cache"
  run 0 "$NC" create alice/noop -q || return
  run 0 "$NC" synchronize --repo-id alice/noop --cache-dir "$SCRATCH/cache" -q || return
  curl -fsS -X POST "$HUB_URL/_test/stats/reset" >/dev/null
  run 0 "$NC" synchronize --repo-id alice/noop --cache-dir "$SCRATCH/cache" --json || return
  equals "$(json_get "$OUT" .committed)" "false"
  equals "$(json_get "$OUT" ".present | length")" "24"
  equals "$(stat_of '.by_route.tree // 0')" "0"
  [[ "$(stat_of .total)" -le 3 ]] || fail "a no-op re-push made $(stat_of .total) requests"
  # Someone else commits (removing one of our files): the head moved, so the repo is listed
  # again and the missing file is pushed back.
  local victim; victim=$(cd "$SCRATCH/cache" && ls -d "$VERSION_DIR"/MODULE_* | sed -n 2p)
  printf '{"key":"header","value":{"summary":"rm"}}\n{"key":"deletedFile","value":{"path":"%s/model.hlo_module.pb"}}\n' "$victim" |
    curl -fsS -X POST -H "Authorization: Bearer $TOKEN" -H "Content-Type: application/x-ndjson" --data-binary @- \
      "$HUB_URL/api/models/alice/noop/commit/main" >/dev/null || fail "cannot delete a file"
  curl -fsS -X POST "$HUB_URL/_test/stats/reset" >/dev/null
  run 0 "$NC" synchronize --repo-id alice/noop --cache-dir "$SCRATCH/cache" --json || return
  equals "$(json_get "$OUT" ".files.transferred")" "1"
  [[ "$(stat_of '.by_route.tree // 0')" -ge 1 ]] || fail "a moved head was not listed"
}

test_progress_is_a_bar_only_on_a_terminal() {
  start_hub --lfs-threshold 1024 || return
  make_cache "$SCRATCH/cache"
  run 0 "$NC" create alice/progress -q || return
  run 0 "$NC" synchronize --repo-id alice/progress --cache-dir "$SCRATCH/cache" || return
  lacks "$ERR" "Uploading ["
  if command -v script >/dev/null 2>&1; then
    # On a terminal the bar is drawn (with files and rate), unless HF_HUB_DISABLE_PROGRESS_BARS=1.
    TERM=xterm script -qec "$NC synchronize --pull --repo-id alice/progress --cache-dir $SCRATCH/tty --max-workers 2" /dev/null \
      >"$SCRATCH/tty.out" 2>&1
    contains "$SCRATCH/tty.out" "Downloading ["
    contains "$SCRATCH/tty.out" "/96 files"
    TERM=xterm HF_HUB_DISABLE_PROGRESS_BARS=1 script -qec \
      "$NC synchronize --pull --repo-id alice/progress --cache-dir $SCRATCH/tty2" /dev/null >"$SCRATCH/tty2.out" 2>&1
    lacks "$SCRATCH/tty2.out" "Downloading ["
  fi
}

if [[ ! -x "$HUB_BIN" ]]; then
  echo "  (skipped: $HUB_BIN not built)"
  exit 0
fi
run_tests
