#!/usr/bin/env bash
# End to end: a push stops short cleanly. SIGINT and SIGTERM end it at the store's next safe
# point (a directory repo: while staging, or between two entries; S3: the entry files in
# flight land, the markers of whole entries follow, nothing after), with an account of
# what was published, exit 128 + the signal, only whole entries in the repo, no staging
# left, and a re-run that finishes it as an uninterrupted push would have. (The Hub's
# multi-commit pushes: test_hublimits.sh.) Copies between stores (an s3:// compile cache)
# check the room of their scratch space and of a directory repo they copy into first.
source "$(dirname "$0")/lib.sh"

source "$(dirname "$0")/s3_lib.sh"

# No staging folder nor temp name is left below DIR.
no_leftovers() {
  local found
  found=$(find "$1" \( -name '*.tmp.nc.*' -o -path '*/.neuron-cache/staging/?*' \) -print 2>/dev/null)
  [[ -z "$found" ]] || fail "staging or temp files left: $found"
}

# whole_entries REPO: every MODULE_ entry of REPO holds the cache's files, model.done with
# them (an exported model has none).
whole_entries() {
  local repo="$1" entry
  for entry in "$repo/$VERSION_DIR"/MODULE_*; do
    [[ -e "$entry" ]] || continue
    diff -r -x '*.tmp.nc.*' "$SCRATCH/cache/$VERSION_DIR/$(basename "$entry")" "$entry" >/dev/null || fail "$(basename "$entry") differs"
  done
}

# planned_total REPO: how many entries a push of the cache to REPO plans.
planned_total() {
  "$NC" push --repo-id "$1" --cache-dir "$SCRATCH/cache" --dry-run --json | jq -r '.planned | length'
}

# interrupt_when SIGNAL TEST PUSH...: runs PUSH in the background, freezes it (SIGSTOP) as soon
# as `TEST` holds, sends SIGNAL, lets it go on; STATUS is its exit code. Frozen, it cannot
# finish between the moment TEST held and the signal.
interrupt_when() {
  local signal="$1" condition="$2"; shift 2
  "$@" >"$OUT" 2>"$ERR" &
  local pid=$! waited=0
  until eval "$condition"; do
    kill -0 "$pid" 2>/dev/null || break
    waited=$((waited + 1))
    ((waited % 200 == 0)) && sleep 0.001
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

test_sigint_while_a_directory_push_stages_publishes_nothing_and_leaves_no_staging() {
  "$MAKE_CACHE" "$SCRATCH/cache" --entries 40 --neff-size 3000000 || return
  run 0 "$NC" create "$SCRATCH/repo" -q || return
  local staging="$SCRATCH/repo/.neuron-cache/staging"
  interrupt_when INT 'compgen -G "$staging/w.tmp.nc.*" >/dev/null' \
    "$NC" push --repo-id "$SCRATCH/repo" --cache-dir "$SCRATCH/cache"
  equals "$STATUS" 130
  equals "$(interrupted_line 40)" 0
  lacks "$ERR" "error:"
  [[ ! -e "$SCRATCH/repo/$VERSION_DIR" ]] || [[ -z "$(ls -A "$SCRATCH/repo/$VERSION_DIR")" ]] ||
    fail "something was published: $(ls "$SCRATCH/repo/$VERSION_DIR" | head -3)"
  no_leftovers "$SCRATCH/repo"
  no_leftovers "$SCRATCH/cache"
  run 0 "$NC" push --repo-id "$SCRATCH/repo" --cache-dir "$SCRATCH/cache" --json || return
  equals "$(json_get "$OUT" '.transferred | length')" 40
  whole_entries "$SCRATCH/repo"
}

test_sigterm_between_entries_of_a_directory_push_leaves_whole_entries_and_resumes() {
  "$MAKE_CACHE" "$SCRATCH/cache" --entries 2000 --faults || return
  run 0 "$NC" create "$SCRATCH/repo" -q || return
  run 0 "$NC" create "$SCRATCH/whole" -q || return
  local first; first=$(cd "$SCRATCH/cache/$VERSION_DIR" && ls -d MODULE_1* | LC_ALL=C sort | head -n 1)
  local total; total=$(planned_total "$SCRATCH/repo")
  interrupt_when TERM '[[ -d "$SCRATCH/repo/$VERSION_DIR/$first" ]]' \
    "$NC" push --repo-id "$SCRATCH/repo" --cache-dir "$SCRATCH/cache" --json
  equals "$STATUS" 143
  local published; published=$(interrupted_line "$total")
  [[ "$published" -ge 1 && "$published" -lt "$total" ]] || fail "published $published of $total"
  valid_json "$OUT" transfer.schema.json
  equals "$(json_get "$OUT" .stopped.reason)" interrupted
  equals "$(json_get "$OUT" .stopped.entries_published)" "$published"
  equals "$(json_get "$OUT" '.transferred | length')" "$published"
  [[ ! -e "$SCRATCH/repo/$VERSION_DIR/0_REGISTRY" ]] || fail "the registry went before its entries"
  whole_entries "$SCRATCH/repo"
  no_leftovers "$SCRATCH/repo"
  # The same command finishes it, to what an uninterrupted push makes.
  run 0 "$NC" push --repo-id "$SCRATCH/repo" --cache-dir "$SCRATCH/cache" --json || return
  equals "$(json_get "$OUT" '.transferred | length')" "$((total - published))"
  run 0 "$NC" push --repo-id "$SCRATCH/whole" --cache-dir "$SCRATCH/cache" -q || return
  diff -r -x .neuron-cache "$SCRATCH/repo" "$SCRATCH/whole" >"$SCRATCH/diff" ||
    fail "the finished push differs from an uninterrupted one: $(head -5 "$SCRATCH/diff")"
  no_leftovers "$SCRATCH/repo"
}

# s3_objects PREFIX: "key-below-PREFIX etag" of every object, sorted.
s3_objects() {
  aws_cli s3api list-objects-v2 --bucket nc-bucket-int --prefix "$1/" --output json |
    jq -r --arg p "$1/" '.Contents // [] | .[] | "\(.Key | ltrimstr($p)) \(.ETag)"' | grep -v '^\.neuron-cache/' | sort
}

test_sigint_stops_an_s3_push_with_whole_entries_only() {
  start_proxy || return
  "$MAKE_CACHE" "$SCRATCH/cache" --entries 30 --neff-size 200000 --faults || return
  aws_cli s3 mb s3://nc-bucket-int >/dev/null 2>&1 || fail "aws s3 mb"
  run 0 "$NC" create s3://nc-bucket-int/stopped -q || { stop_servers; return; }
  run 0 "$NC" create s3://nc-bucket-int/whole -q || { stop_servers; return; }
  local total; total=$(planned_total s3://nc-bucket-int/stopped)
  local neff; neff=$(logged "/nc-bucket-int/stopped/$VERSION_DIR/MODULE_1")
  interrupt_when INT 'grep -q "PUT $neff.*/model.neff " "$SCRATCH/proxy.log"' \
    "$NC" push --repo-id s3://nc-bucket-int/stopped --cache-dir "$SCRATCH/cache" --max-workers 1
  equals "$STATUS" 130
  local published; published=$(interrupted_line "$total")
  [[ "$published" -lt "$total" ]] || fail "published $published of $total"
  # Every model.done in the bucket comes with its entry's files; no registry.
  s3_objects stopped >"$SCRATCH/objects"
  lacks "$SCRATCH/objects" 0_REGISTRY
  # An entry is published when all its files are in; the account counts those.
  local entry file whole=0 missing
  for entry in "$SCRATCH/cache/$VERSION_DIR"/MODULE_*; do
    missing=0
    while read -r file; do
      grep -qF "$VERSION_DIR/$(basename "$entry")/$file " "$SCRATCH/objects" || missing=$((missing + 1))
    done < <(cd "$entry" && find . -type f ! -name '*.tmp.nc.*' | sed 's|^\./||')
    [[ $missing -eq 0 ]] && whole=$((whole + 1))
    [[ $missing -eq 0 ]] || ! grep -qF "$VERSION_DIR/$(basename "$entry")/model.done " "$SCRATCH/objects" ||
      fail "$(basename "$entry") has model.done without all its files"
  done
  equals "$whole" "$published"
  run 0 "$NC" push --repo-id s3://nc-bucket-int/stopped --cache-dir "$SCRATCH/cache" || { stop_servers; return; }
  run 0 "$NC" push --repo-id s3://nc-bucket-int/whole --cache-dir "$SCRATCH/cache" || { stop_servers; return; }
  diff <(s3_objects stopped) <(s3_objects whole) >"$SCRATCH/diff" ||
    fail "the finished push differs from an uninterrupted one: $(head -5 "$SCRATCH/diff")"
  no_bad_signatures
  stop_servers
}

# --- copies between stores check their room first ----------------------------------------------

test_a_copy_refuses_scratch_space_without_room_for_a_batch() {
  small_disk "$SCRATCH/small" || return 0
  start_proxy || return
  "$MAKE_CACHE" "$SCRATCH/cache" --entries 8 --neff-size 300000 || return
  run 0 "$NC" create "$SCRATCH/repo" -q || { stop_servers; return; }
  run 0 "$NC" push --repo-id "$SCRATCH/repo" --cache-dir "$SCRATCH/cache" -q || { stop_servers; return; }
  aws_cli s3 mb s3://nc-bucket-copy >/dev/null 2>&1 || fail "aws s3 mb"
  TMPDIR="$SCRATCH/small" run 1 "$NC" pull --repo-id "$SCRATCH/repo" --cache-dir s3://nc-bucket-copy/cache </dev/null ||
    { stop_servers; return; }
  contains "$ERR" "error: the copy needs 2.5 MB on $SCRATCH/small (tmpfs), "
  contains "$ERR" "point TMPDIR at a larger disk"
  contains "$ERR" "--yes copies anyway"
  one_line "$ERR"
  equals "$(aws_cli s3 ls --recursive s3://nc-bucket-copy/ | grep -c MODULE_)" 0
  # Smaller batches fit: the same copy goes through.
  TMPDIR="$SCRATCH/small" NEURON_CACHE_COPY_BATCH_BYTES=400000 run 0 "$NC" pull --repo-id "$SCRATCH/repo" \
    --cache-dir s3://nc-bucket-copy/cache --json || { stop_servers; return; }
  equals "$(json_get "$OUT" '.transferred | length')" 8
  stop_servers
}

test_a_copy_into_a_directory_repo_refuses_a_disk_without_room() {
  small_disk "$SCRATCH/small" || return 0
  start_proxy || return
  "$MAKE_CACHE" "$SCRATCH/cache" --entries 8 --neff-size 300000 || return
  aws_cli s3 mb s3://nc-bucket-into >/dev/null 2>&1 || fail "aws s3 mb"
  aws_cli s3 sync --quiet "$SCRATCH/cache" s3://nc-bucket-into/sagemaker 2>"$SCRATCH/sync.err" ||
    fail "aws s3 sync: $(cat "$SCRATCH/sync.err")"
  run 0 "$NC" create "$SCRATCH/small/repo" -q || { stop_servers; return; }
  local before; before=$(snapshot "$SCRATCH/small/repo")
  run 1 "$NC" push --repo-id "$SCRATCH/small/repo" --cache-dir s3://nc-bucket-into/sagemaker </dev/null ||
    { stop_servers; return; }
  contains "$ERR" "error: the copy needs 2.5 MB on $SCRATCH/small/repo (tmpfs), "
  contains "$ERR" "copy less (--compiler-version)"
  lacks "$ERR" "--yes"
  one_line "$ERR"
  equals "$(snapshot "$SCRATCH/small/repo")" "$before"
  stop_servers
}

run_tests
