#!/usr/bin/env bash
# End to end: a push stops short cleanly. SIGINT and SIGTERM end it at the store's next safe
# point (a directory repo: while staging, or between two entries; S3: the entry files in
# flight land, the markers of whole entries follow, nothing after), with an account of
# what was published, exit 128 + the signal, only whole entries in the repo, no staging
# left, and a re-run that finishes it as an uninterrupted push would have. (The Hub's
# multi-commit pushes: test_hublimits.sh.) Copies between stores (an s3:// compile cache)
# check the room of their scratch space and of a directory repo they copy into first, and
# stop the same way, their scratch folder in $TMPDIR removed.
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

# s3_objects PREFIX [BUCKET]: "key-below-PREFIX etag" of every object, sorted.
s3_objects() {
  aws_cli s3api list-objects-v2 --bucket "${2:-nc-bucket-int}" --prefix "$1/" --output json |
    jq -r --arg p "$1/" '.Contents // [] | .[] | "\(.Key | ltrimstr($p)) \(.ETag)"' | grep -v '^\.neuron-cache/' | sort
}

# whole_in_objects SOURCE: how many entries of SOURCE (a cache or directory repo) have all
# their files in $SCRATCH/objects (s3_objects); fails on a model.done without all its files.
whole_in_objects() {
  (cd "$1/$VERSION_DIR" && find . -mindepth 2 -type f -path './MODULE_*' ! -name '*.tmp.nc.*' | sed 's|^\./||') |
    awk -v objects="$SCRATCH/objects" -v vdir="$VERSION_DIR/" '
      BEGIN { while ((getline line < objects) > 0) { split(line, field, " "); have[field[1]] = 1 } }
      { entry = $0; sub(/\/.*/, "", entry); entries[entry] = 1; if (!((vdir $0) in have)) missing[entry]++ }
      END {
        for (entry in entries) {
          if (!(entry in missing)) whole++
          else if ((vdir entry "/model.done") in have) { print entry > "/dev/stderr"; bad = 1 }
        }
        print whole + 0
        exit bad
      }' 2>"$SCRATCH/unwhole" || fail "model.done without all the files of: $(cat "$SCRATCH/unwhole")"
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
  equals "$(whole_in_objects "$SCRATCH/cache")" "$published"
  run 0 "$NC" push --repo-id s3://nc-bucket-int/stopped --cache-dir "$SCRATCH/cache" || { stop_servers; return; }
  run 0 "$NC" push --repo-id s3://nc-bucket-int/whole --cache-dir "$SCRATCH/cache" || { stop_servers; return; }
  diff <(s3_objects stopped) <(s3_objects whole) >"$SCRATCH/diff" ||
    fail "the finished push differs from an uninterrupted one: $(head -5 "$SCRATCH/diff")"
  no_bad_signatures
  stop_servers
}

# --- copies between stores stop the same way --------------------------------------------------

# no_scratch_in DIR: the copy left nothing in its scratch parent ($TMPDIR).
no_scratch_in() {
  local found; found=$(find "$1" -mindepth 1 -print 2>/dev/null | head -5)
  [[ -z "$found" ]] || fail "scratch left in TMPDIR: $found"
}


test_sigint_stops_a_copy_into_s3_with_whole_entries_and_no_scratch() {
  # Each object PUT takes 60 ms: the copy of ~28 entries, one batch each, lasts seconds.
  start_proxy --object-delay-ms 60 || return
  "$MAKE_CACHE" "$SCRATCH/cache" --entries 24 --neff-size 100000 --faults || return
  run 0 "$NC" create "$SCRATCH/repo" -q || { stop_servers; return; }
  run 0 "$NC" push --repo-id "$SCRATCH/repo" --cache-dir "$SCRATCH/cache" -q || { stop_servers; return; }
  aws_cli s3 mb s3://nc-bucket-cpint >/dev/null 2>&1 || fail "aws s3 mb"
  mkdir -p "$SCRATCH/tmp"
  # One entry per batch (many safe points) and its own TMPDIR; `env` execs neuron-cache, so
  # that the background job's pid is neuron-cache's (a shell function's is a subshell's).
  local -a copy_env=(env NEURON_CACHE_COPY_BATCH_FILES=1 TMPDIR="$SCRATCH/tmp")
  local target=s3://nc-bucket-cpint/copied
  "$NC" pull --repo-id "$SCRATCH/repo" --cache-dir "$target" --dry-run --json >"$SCRATCH/plan.json" </dev/null
  local total; total=$(jq -r '.planned | length' "$SCRATCH/plan.json")
  [[ "$total" -ge 20 ]] || fail "too few entries planned: $total"
  # Stopped once the first entry's marker is in (its batch published).
  interrupt_when INT 'grep -qE "^PUT /nc-bucket-cpint/copied/[^ ]*/model\.done -> 200" "$SCRATCH/proxy.log"' \
    "${copy_env[@]}" "$NC" pull --repo-id "$SCRATCH/repo" --cache-dir "$target" --json
  local published; published=$(stopped_copy 130 "$total")
  equals "$(json_get "$OUT" .stopped.entries_total)" "$total"
  no_scratch_in "$SCRATCH/tmp"
  # Only whole entries, each model.done with its files; the registry goes last.
  s3_objects copied nc-bucket-cpint >"$SCRATCH/objects"
  lacks "$SCRATCH/objects" 0_REGISTRY
  equals "$(whole_in_objects "$SCRATCH/repo")" "$published"
  # The same command finishes it: every entry whole, the registry in, nothing left to copy.
  env TMPDIR="$SCRATCH/tmp" "$NC" pull --repo-id "$SCRATCH/repo" --cache-dir "$target" --json >"$OUT" 2>"$ERR" </dev/null ||
    fail "the re-run failed: $(cat "$ERR")"
  equals "$(json_get "$OUT" '.transferred | length')" "$((total - published))"
  no_scratch_in "$SCRATCH/tmp"
  s3_objects copied nc-bucket-cpint >"$SCRATCH/objects"
  contains "$SCRATCH/objects" 0_REGISTRY
  equals "$(whole_in_objects "$SCRATCH/repo")" "$(cd "$SCRATCH/repo/$VERSION_DIR" && ls -d MODULE_* | wc -l)"
  run 0 "$NC" pull --repo-id "$SCRATCH/repo" --cache-dir "$target" --dry-run --json </dev/null || { stop_servers; return; }
  equals "$(json_get "$OUT" '.planned | length')" 0
  no_bad_signatures
  stop_servers
}

test_sigterm_stops_a_copy_into_a_directory_repo_between_entries() {
  # Each object GET and PUT takes 60 ms: the copy out of S3, one batch per entry, lasts seconds.
  start_proxy --object-delay-ms 60 || return
  "$MAKE_CACHE" "$SCRATCH/cache" --entries 24 --neff-size 100000 --faults || return
  aws_cli s3 mb s3://nc-bucket-cpdir >/dev/null 2>&1 || fail "aws s3 mb"
  aws_cli s3 sync --quiet "$SCRATCH/cache" s3://nc-bucket-cpdir/sagemaker 2>"$SCRATCH/sync.err" ||
    fail "aws s3 sync: $(cat "$SCRATCH/sync.err")"
  run 0 "$NC" create "$SCRATCH/repo" -q || { stop_servers; return; }
  run 0 "$NC" create "$SCRATCH/whole" -q || { stop_servers; return; }
  mkdir -p "$SCRATCH/tmp"
  # One entry per batch (many safe points) and its own TMPDIR; `env` execs neuron-cache, so
  # that the background job's pid is neuron-cache's (a shell function's is a subshell's).
  local -a copy_env=(env NEURON_CACHE_COPY_BATCH_FILES=1 TMPDIR="$SCRATCH/tmp")
  local source=s3://nc-bucket-cpdir/sagemaker
  local total
  total=$("$NC" push --repo-id "$SCRATCH/repo" --cache-dir "$source" --dry-run --json | jq -r '.planned | length')
  [[ "$total" -ge 20 ]] || fail "too few entries planned: $total"
  # Stopped once the first entry is in the repo.
  interrupt_when TERM 'compgen -G "$SCRATCH/repo/$VERSION_DIR/MODULE_*" >/dev/null' \
    "${copy_env[@]}" "$NC" push --repo-id "$SCRATCH/repo" --cache-dir "$source" --json
  local published; published=$(stopped_copy 143 "$total")
  [[ ! -e "$SCRATCH/repo/$VERSION_DIR/0_REGISTRY" ]] || fail "the registry went before its entries"
  whole_entries "$SCRATCH/repo"
  no_leftovers "$SCRATCH/repo"
  no_scratch_in "$SCRATCH/tmp"
  # The same command finishes it, to what an uninterrupted copy makes.
  env TMPDIR="$SCRATCH/tmp" "$NC" push --repo-id "$SCRATCH/repo" --cache-dir "$source" --json >"$OUT" 2>"$ERR" ||
    fail "the re-run failed: $(cat "$ERR")"
  equals "$(json_get "$OUT" '.transferred | length')" "$((total - published))"
  run 0 "$NC" push --repo-id "$SCRATCH/whole" --cache-dir "$source" -q || { stop_servers; return; }
  diff -r -x .neuron-cache "$SCRATCH/repo" "$SCRATCH/whole" >"$SCRATCH/diff" ||
    fail "the finished copy differs from an uninterrupted one: $(head -5 "$SCRATCH/diff")"
  no_leftovers "$SCRATCH/repo"
  no_scratch_in "$SCRATCH/tmp"
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
