#!/usr/bin/env bash
# End to end: `synchronize` pushes a compile cache to a directory repo and --pull installs
# it on a fresh root, with every fault the issue names: bad roots, incomplete, failed,
# locked and mismatched entries, symlinks leaving the root, inconsistent repo entries,
# write failures and SIGKILL at any moment.
source "$(dirname "$0")/lib.sh"

MAKE_CACHE="$SOURCE_DIR/tests/tools/make_sample_cache.sh"
VERSION_DIR="neuronxcc-2.21.33363.0+82129205"

# What the repo holds, as readers see it (its private folder left out): changes iff a push
# changed something.
repo_state() {
  (cd "$SCRATCH/repo" && find . -path ./.neuron-cache -prune -o -type f -printf '%p %s %T@\n' | sort | sha1sum)
}

# A sample cache with 5 good entries and one of each fault, and an empty repo.
setup() {
  "$MAKE_CACHE" "$SCRATCH/cache" --faults "$@" || fail "cannot make the sample cache"
  run 0 "$NC" create "$SCRATCH/repo" -q
}

no_temp_files() {
  local found
  found=$(find "$1" -name '*.tmp.nc.*' -o -name '.neuron-cache-pull*' | grep -v 'somehost' || true)
  [[ -z "$found" ]] || fail "temp files left: $found"
}

test_push_then_noop_repush() {
  setup || return
  local before; before=$(repo_state)
  # A directory repo has revisions, not commits (the Hub's word).
  run 0 "$NC" synchronize --cache-dir "$SCRATCH/cache" --dry-run || return
  run 0 "$NC" synchronize --cache-dir "$SCRATCH/cache" --max-workers 2 || return
  contains "$OUT" "entries (24 files"
  contains "$OUT" " at revision "
  lacks "$OUT" "commit"
  rm -rf "$SCRATCH/repo" && run 0 "$NC" create "$SCRATCH/repo" -q && before=$(repo_state)
  run 0 "$NC" synchronize --cache-dir "$SCRATCH/cache" --json || return
  equals "$(json_get "$OUT" ".planned | length")" "7"
  equals "$(json_get "$OUT" .files.transferred)" "24"
  equals "$(json_get "$OUT" .committed)" "true"
  equals "$(json_get "$OUT" '.skipped_by_reason | to_entries | map("\(.key)=\(.value)") | join(",")')" \
    "failed=1,flags-mismatch=1,incomplete=2,lock-file=1,locked=1,temp-file=1"
  [[ "$(repo_state)" != "$before" ]] || fail "nothing pushed"
  before=$(repo_state)
  local revision; revision=$(json_get "$OUT" .revision)
  run 0 "$NC" synchronize --cache-dir "$SCRATCH/cache" --json || return
  equals "$(json_get "$OUT" .committed)" "false"
  equals "$(json_get "$OUT" ".planned | length")" "0"
  equals "$(json_get "$OUT" ".present | length")" "7"
  equals "$(json_get "$OUT" .files_hashed)" "0"
  equals "$(json_get "$OUT" .revision)" "$revision"
  equals "$(repo_state)" "$before"
  run 0 "$NC" synchronize --cache-dir "$SCRATCH/cache"
  contains "$OUT" "Nothing to push"
  contains "$OUT" "7 already present; 7 skipped (1 failed, 1 flags-mismatch, 2 incomplete, 1 lock-file, 1 locked, 1 temp-file)"
  # Quiet success: one line of data; on stderr a count and a fix per reason, paths only with --verbose.
  equals "$(wc -l <"$OUT")" "1"
  contains "$ERR" "  1 failed: remove them with: neuron-cache cleanup (the compiler would replay the failure)"
  contains "$ERR" "  1 locked: wait for the compiler, or clear stale locks: neuron-cache synchronize --clear-stale-locks 60"
  lacks "$ERR" "lock-file:"
  lacks "$ERR" "skipped "
  cat "$OUT" "$ERR" >"$SCRATCH/repush"
  matches_golden "$SCRATCH/repush" repush-with-skips.txt
  run 0 "$NC" sync --cache-dir "$SCRATCH/cache" --verbose
  equals "$(grep -c '^skipped ' "$ERR")" "7"
  # -v is --verbose wherever the command has no -v of its own.
  run 0 "$NC" sync --cache-dir "$SCRATCH/cache" -v
  equals "$(grep -c '^skipped ' "$ERR")" "7"
  run 0 "$NC" synchronize --cache-dir "$SCRATCH/cache" -q
  [[ ! -s "$OUT" && ! -s "$ERR" ]] || fail "a quiet no-op push printed something: $(cat "$OUT" "$ERR")"
}

test_incremental_push_uploads_only_what_changed() {
  setup || return
  run 0 "$NC" synchronize --cache-dir "$SCRATCH/cache" -q || return
  "$MAKE_CACHE" "$SCRATCH/cache" --entries 1 --seed 7
  local entry; entry=$(ls -d "$SCRATCH/cache/$VERSION_DIR"/MODULE_1000000000000002+*)
  printf 'recompiled' >"$entry/model.neff"
  run 0 "$NC" synchronize --cache-dir "$SCRATCH/cache" --json || return
  equals "$(json_get "$OUT" ".planned | length")" "2"
  equals "$(json_get "$OUT" .files.transferred)" "5"
  run 0 "$NC" synchronize --pull --cache-dir "$SCRATCH/pulled" -q || return
  equals "$(cat "$SCRATCH/pulled/$VERSION_DIR/$(basename "$entry")/model.neff")" "recompiled"
}

# A no-op push skips planning while neither the repo nor the files to publish moved: a
# repo changed by another writer, or a flags file rewritten in place, is still noticed.
test_noop_shortcut_notices_changes_on_either_side() {
  setup || return
  run 0 "$NC" synchronize --cache-dir "$SCRATCH/cache" -q || return
  run 0 "$NC" synchronize --cache-dir "$SCRATCH/cache" --json || return
  equals "$(json_get "$OUT" .files.planned)" "0"
  # Someone removes an entry from the repo: the head moves, the entry goes back.
  local entry; entry=$(cd "$SCRATCH/repo/$VERSION_DIR" && ls -d MODULE_1000000000000001+* | head -1)
  rm -rf "${SCRATCH:?}/repo/$VERSION_DIR/$entry"
  run 0 "$NC" synchronize --cache-dir "$SCRATCH/cache" --json || return
  equals "$(json_get "$OUT" ".planned | join(\",\")")" "$VERSION_DIR/$entry"
  [[ -f "$SCRATCH/repo/$VERSION_DIR/$entry/model.done" ]] || fail "the removed entry was not pushed again"
  # A flags file rewritten in place (same size, other bytes) no longer gives the entry's
  # suffix: the entry is reported, not trusted from the previous scan.
  local flags="$SCRATCH/cache/$VERSION_DIR/$entry/compile_flags.json"
  local size; size=$(stat -c %s "$flags")
  head -c "$size" /dev/zero | tr '\0' ' ' >"$flags"
  run 0 "$NC" synchronize --cache-dir "$SCRATCH/cache" --json || return
  equals "$(json_get "$OUT" "[.skipped[] | select(.path == \"$VERSION_DIR/$entry\") | .reason] | join(\",\")")" \
    "flags-mismatch"
}

test_pull_into_empty_root() {
  setup || return
  run 0 "$NC" synchronize --cache-dir "$SCRATCH/cache" -q || return
  run 0 "$NC" synchronize --pull --cache-dir "$SCRATCH/fresh" --json || return
  equals "$(json_get "$OUT" ".transferred | length")" "7"
  equals "$(json_get "$OUT" .files.transferred)" "24"
  same_entries "$SCRATCH/cache" "$SCRATCH/fresh"
  local v="$SCRATCH/fresh/$VERSION_DIR"
  [[ -f "$v/MODULE_1000000000000000+39f12043/model.done" ]] || fail "model.done missing"
  for bad in 900001 900002 900003 900004 900005; do
    [[ -z "$(ls -d "$v"/MODULE_${bad}+* 2>/dev/null)" ]] || fail "skipped entry $bad was pulled"
  done
  [[ ! -e "$SCRATCH/fresh/lock" ]] || fail "root lock pulled"
  diff -r "$SCRATCH/cache/$VERSION_DIR/MODULE_0123456789abcdef0123" "$v/MODULE_0123456789abcdef0123" || fail "exported model differs"
  local alias="$v/0_REGISTRY/0.4.6/llama/meta-llama/Llama-3.2-1B/2d3e776c01807213e8e2.json"
  [[ -f "$alias" && ! -L "$alias" ]] || fail "registry alias not pulled as a file"
  no_temp_files "$SCRATCH/fresh"
  run 0 "$NC" synchronize --pull --cache-dir "$SCRATCH/fresh" --json || return
  equals "$(json_get "$OUT" ".transferred | length")" "0"
  equals "$(json_get "$OUT" ".present | length")" "7"
  # A pulled cache pushes back as a no-op.
  run 0 "$NC" synchronize --cache-dir "$SCRATCH/fresh" --json || return
  equals "$(json_get "$OUT" .committed)" "false"
}

# Shared storage that other users and hosts write to: a link planted there never turns a
# push or a pull into a write or a removal outside the repo and the cache.
test_planted_links_never_turn_into_writes_or_removals_outside() {
  setup || return
  run 0 "$NC" synchronize --cache-dir "$SCRATCH/cache" -q || return
  # What a staging sweep that followed the link would delete: an old, dead-looking writer
  # folder and a stranger's file.
  local outside="$SCRATCH/outside"
  mkdir -p "$outside/w.tmp.nc.otherhost.1.abcdefghij"
  echo precious >"$outside/precious"
  touch -d '3 days ago' "$outside/w.tmp.nc.otherhost.1.abcdefghij" "$outside/precious"
  local before; before=$(snapshot "$outside")
  rm -rf "$SCRATCH/repo/.neuron-cache/staging"
  ln -s "$outside" "$SCRATCH/repo/.neuron-cache/staging"
  "$MAKE_CACHE" "$SCRATCH/cache" --entries 1 --seed 9 >/dev/null
  run 1 "$NC" synchronize --cache-dir "$SCRATCH/cache"
  contains "$ERR" ".neuron-cache/staging is a symbolic link; it is not followed"
  equals "$(snapshot "$outside")" "$before"
  rm "$SCRATCH/repo/.neuron-cache/staging"
  # A pull into a cache whose version folder (or a registry folder) another user linked away.
  mkdir -p "$SCRATCH/fresh" "$SCRATCH/elsewhere"
  ln -s "$SCRATCH/elsewhere" "$SCRATCH/fresh/$VERSION_DIR"
  run 0 "$NC" synchronize --pull --cache-dir "$SCRATCH/fresh" --json || return
  equals "$(json_get "$OUT" '.skipped_by_reason["link-in-local-path"]')" "7"
  equals "$(json_get "$OUT" ".transferred | length")" "0"
  [[ -z "$(ls -A "$SCRATCH/elsewhere")" ]] || fail "the pull wrote through the link"
  rm "$SCRATCH/fresh/$VERSION_DIR"
  mkdir -p "$SCRATCH/fresh/$VERSION_DIR/0_REGISTRY/0.4.6"
  ln -s "$SCRATCH/elsewhere" "$SCRATCH/fresh/$VERSION_DIR/0_REGISTRY/0.4.6/llama"
  run 0 "$NC" synchronize --pull --cache-dir "$SCRATCH/fresh" --json || return
  equals "$(json_get "$OUT" '.skipped_by_reason["link-in-local-path"]')" "1"
  [[ -z "$(ls -A "$SCRATCH/elsewhere")" ]] || fail "the pull wrote through the link"
  no_temp_files "$SCRATCH/fresh"
}

test_pull_filters_compiler_version() {
  setup || return
  "$MAKE_CACHE" "$SCRATCH/cache" --entries 2 --version 2.15.128.0+56dc5a86
  run 0 "$NC" synchronize --cache-dir "$SCRATCH/cache" -q || return
  run 0 "$NC" synchronize --pull --cache-dir "$SCRATCH/fresh" --compiler_version 2.15 --json || return
  equals "$(json_get "$OUT" ".transferred | length")" "2"
  equals "$(ls "$SCRATCH/fresh")" "neuronxcc-2.15.128.0+56dc5a86"
  run 2 "$NC" synchronize --cache-dir "$SCRATCH/cache" --compiler-version 2.15
  one_line "$ERR"
  # A version the repo lacks is an error saying what it has, as a --model pull says it.
  run 1 "$NC" synchronize --pull --cache-dir "$SCRATCH/none" --compiler-version 2.22
  contains "$ERR" "neuron-cache: error: 0 entries for 2.22; the repo has 2.15.128.0+56dc5a86, 2.21.33363.0+82129205"
  contains "$ERR" "pass --compiler-version with one of them"
  one_line "$ERR"
  lacks "$OUT" "Pulled"
  run 1 "$NC" synchronize --pull --cache-dir "$SCRATCH/none" --compiler-version 2.2 --dry-run --json
  equals "$(json_get "$OUT" .error)" "0 entries for 2.2; the repo has 2.15.128.0+56dc5a86, 2.21.33363.0+82129205"
  equals "$(json_get "$OUT" .exit_code)" "1"
  valid_json "$OUT" error.schema.json
  [[ ! -e "$SCRATCH/none" ]] || fail "a pull matching no version made the root"
  # A repo with nothing in it has no version to offer.
  run 0 "$NC" create "$SCRATCH/empty-repo" -q || return
  run 1 "$NC" synchronize --pull --repo-id "$SCRATCH/empty-repo" --cache-dir "$SCRATCH/none" --compiler-version 2.21
  contains "$ERR" "0 entries for 2.21; the repo holds no compiler version's entries"
  # Without a filter an empty repo is simply nothing to pull.
  run 0 "$NC" synchronize --pull --repo-id "$SCRATCH/empty-repo" --cache-dir "$SCRATCH/none" -q || return
}

test_root_missing_or_not_a_directory() {
  run 0 "$NC" create "$SCRATCH/repo" -q || return
  local before; before=$(repo_state)
  run 1 "$NC" synchronize --cache-dir "$SCRATCH/missing"
  contains "$ERR" "the compile cache $SCRATCH/missing does not exist"
  one_line "$ERR"
  echo x >"$SCRATCH/file"
  run 1 "$NC" synchronize --cache-dir "$SCRATCH/file"
  contains "$ERR" "is not a directory"
  one_line "$ERR"
  run 1 "$NC" synchronize --cache-dir "$SCRATCH/file/below"
  one_line "$ERR"
  run 1 "$NC" synchronize --pull --cache-dir "$SCRATCH/file"
  one_line "$ERR"
  equals "$(repo_state)" "$before"
  if [[ "$(id -u)" != 0 ]]; then
    mkdir "$SCRATCH/closed" && chmod 000 "$SCRATCH/closed"
    run 1 "$NC" synchronize --cache-dir "$SCRATCH/closed"
    contains "$ERR" "cannot read the compile cache"
    chmod 755 "$SCRATCH/closed"
  fi
}

# Every odd item issue 30 names, in a repo others push to: each costs only itself, named
# (escaped) in one warning, while pull and push go on with the rest.
add_odd_items() { # REPO ENTRY
  local entry="$1/$2"
  mkfifo "$entry/model.hlo_module.pb.fifo"
  ln -s /etc/passwd "$entry/leak"
  : >"$entry/back\\slash"
  : >"$entry/$(printf 'bell\a')"
  mkdir -p "$1/.git" && echo ref >"$1/.git/HEAD"
  mkdir -p "$1/$VERSION_DIR/d/d/d/d/d/d/d/d/d/d/d/d/d/d/d/d" && : >"$1/$VERSION_DIR/d/d/d/d/d/d/d/d/d/d/d/d/d/d/d/d/f"
  mkdir -m 700 "$1/lost+found"
}

odd_item_warnings() { # FILE ENTRY
  contains "$1" "skipped '$2/model.hlo_module.pb.fifo' in file://$SCRATCH/repo: is a FIFO"
  contains "$1" "skipped '$2/leak' in file://$SCRATCH/repo: is a symbolic link leading outside the repo"
  contains "$1" "skipped '$2/back\\\\slash' in file://$SCRATCH/repo: has a name that cannot be a repo path"
  contains "$1" "skipped '$2/bell\\x07' in file://$SCRATCH/repo: has a name that cannot be a repo path"
  contains "$1" "skipped '.git' in file://$SCRATCH/repo: has a name that cannot be a repo path"
  contains "$1" "skipped '$VERSION_DIR/d/d/d/d/d/d/d/d/d/d/d/d/d/d/d' in file://$SCRATCH/repo: nests directories deeper than 16 levels"
  lacks "$1" $'\a'
}

test_odd_items_in_a_directory_repo_cost_only_themselves() {
  setup || return
  run 0 "$NC" synchronize --cache-dir "$SCRATCH/cache" -q || return
  local entry; entry=$(cd "$SCRATCH/repo" && ls -d "$VERSION_DIR"/MODULE_1000000000000000+*)
  add_odd_items "$SCRATCH/repo" "$entry"
  run 0 "$NC" synchronize --pull --cache-dir "$SCRATCH/fresh" || return
  odd_item_warnings "$ERR" "$entry"
  same_entries "$SCRATCH/cache" "$SCRATCH/fresh"
  [[ ! -e "$SCRATCH/fresh/$entry/leak" && ! -e "$SCRATCH/fresh/$entry/model.hlo_module.pb.fifo" ]] || fail "an odd item was installed"
  "$MAKE_CACHE" "$SCRATCH/cache" --entries 1 --seed 7
  # (What the repo serves did not move: the push plans from what it remembers, no warning.)
  run 0 "$NC" synchronize --cache-dir "$SCRATCH/cache" --json || return
  equals "$(json_get "$OUT" .committed)" "true"
  # A FIFO is never opened: the pull above would have hung on it.
  [[ -p "$SCRATCH/repo/$entry/model.hlo_module.pb.fifo" ]] || fail "the FIFO was touched"
}

# An adopted compile cache keeps optimum's alias links: served as the files they lead to.
test_create_adopts_a_cache_with_alias_links_and_says_what_it_will_not_serve() {
  "$MAKE_CACHE" "$SCRATCH/cache" --faults || { fail "cannot make the sample cache"; return; }
  local registry="$SCRATCH/cache/$VERSION_DIR/0_REGISTRY/0.4.6"
  local alias="$registry/llama/meta-llama/Llama-3.2-1B/2d3e776c01807213e8e2.json"
  local target="$registry/a0f6f2dd0000000000000000000000000000000000000000000000000000de49/2d3e776c01807213e8e2.json"
  [[ -L "$alias" ]] || { fail "the sample cache has no alias link"; return; }
  mkfifo "$SCRATCH/cache/$VERSION_DIR/fifo"
  mkdir -m 700 "$SCRATCH/cache/lost+found"
  run 0 "$NC" create "$SCRATCH/cache" || return
  contains "$ERR" "skipped '$VERSION_DIR/fifo' in file://$SCRATCH/cache: is a FIFO"
  one_line "$ERR"
  run 0 "$NC" synchronize --pull --cache-dir "$SCRATCH/fresh" || return
  local pulled="$SCRATCH/fresh/${alias#"$SCRATCH/cache/"}"
  [[ -f "$pulled" && ! -L "$pulled" ]] || fail "the alias was not pulled as a file"
  cmp -s "$pulled" "$target" || fail "the alias was not pulled as the file it leads to"
}

# Run as another user, a mode-000 file and a root-only lost+found are what that user cannot
# read: skipped, named, the rest pulled. (As root, a mode-000 file is readable: served.)
test_unreadable_items_are_skipped_for_a_user_who_cannot_read_them() {
  if [[ $EUID -ne 0 ]] || ! command -v setpriv >/dev/null; then
    echo "    (skipped: needs root and setpriv to run as another user)"
    return 0
  fi
  setup || return
  run 0 "$NC" synchronize --cache-dir "$SCRATCH/cache" -q || return
  local entry; entry=$(cd "$SCRATCH/repo" && ls -d "$VERSION_DIR"/MODULE_1000000000000000+*)
  echo secret >"$SCRATCH/repo/$entry/secret" && chmod 000 "$SCRATCH/repo/$entry/secret"
  mkdir -m 700 "$SCRATCH/repo/lost+found"
  chmod 755 "$SUITE_ROOT" "$SCRATCH"
  mkdir -p "$SCRATCH/nobody" && chown 65534:65534 "$SCRATCH/nobody"
  run 0 setpriv --reuid=65534 --regid=65534 --clear-groups env HOME="$SCRATCH/nobody" HF_HOME="$SCRATCH/nobody/hf" \
    "$NC" synchronize --pull --repo-id "$SCRATCH/repo" --cache-dir "$SCRATCH/nobody/cache" || return
  contains "$ERR" "skipped '$entry/secret' in file://$SCRATCH/repo: is not readable by this user"
  contains "$ERR" "skipped 'lost+found' in file://$SCRATCH/repo: cannot be read: Permission denied"
  same_entries "$SCRATCH/cache" "$SCRATCH/nobody/cache"
  # Root reads it: served.
  run 0 "$NC" synchronize --pull --cache-dir "$SCRATCH/fresh" || return
  [[ -f "$SCRATCH/fresh/$entry/secret" ]] || fail "root did not get the mode-000 file"
}

# A sparse terabyte in the repo is never read: pull and push finish at once and say why
# they leave it.
test_a_sparse_terabyte_in_a_directory_repo_stalls_nothing() {
  setup || return
  run 0 "$NC" synchronize --cache-dir "$SCRATCH/cache" -q || return
  local entry; entry=$(cd "$SCRATCH/repo" && ls -d "$VERSION_DIR"/MODULE_1000000000000000+*)
  truncate -s 1T "$SCRATCH/repo/$entry/model.neff"
  run 0 timeout 60 "$NC" synchronize --pull --cache-dir "$SCRATCH/fresh" || return
  contains "$ERR" "skipped '$entry/model.neff' in file://$SCRATCH/repo: is 1099511627776 bytes, more than the 68719476736"
  [[ ! -e "$SCRATCH/fresh/$entry" ]] || fail "the entry without its neff was installed"
  # A push puts the real neff back in its place.
  run 0 timeout 60 "$NC" synchronize --cache-dir "$SCRATCH/cache" || return
  cmp -s "$SCRATCH/repo/$entry/model.neff" "$SCRATCH/cache/$entry/model.neff" || fail "the sparse file was not replaced"
  # Under a raised bound it is still a sparse file.
  truncate -s 1T "$SCRATCH/repo/$entry/model.done"
  NEURON_CACHE_MAX_FILE_SIZE=2199023255552 run 0 timeout 60 "$NC" synchronize --pull --cache-dir "$SCRATCH/fresh" || return
  contains "$ERR" "skipped '$entry/model.done' in file://$SCRATCH/repo: is a sparse file: 1099511627776 bytes"
  NEURON_CACHE_MAX_FILE_SIZE=lots run 1 "$NC" synchronize --pull --cache-dir "$SCRATCH/fresh"
  contains "$ERR" "NEURON_CACHE_MAX_FILE_SIZE must be a positive number of bytes"
}

# The repo is the compiler's own cache: pointed at it, the compiler hits what was pushed,
# and what it compiles there itself is pulled like anything pushed.
test_compiler_hits_what_synchronize_pushed_to_a_directory_repo() {
  local cc="$BIN_DIR/fake_neuronx_cc"
  NEURON_COMPILE_CACHE_URL="$SCRATCH/cache" "$cc" --model gpt2 --graphs 3 >"$SCRATCH/first" || fail "compile failed"
  equals "$(grep -c '^Compiler status PASS' "$SCRATCH/first")" "3"
  run 0 "$NC" create "$SCRATCH/repo" -q || return
  run 0 "$NC" synchronize --cache-dir "$SCRATCH/cache" --json || return
  equals "$(json_get "$OUT" ".transferred | length")" "3"
  local url
  for url in "$SCRATCH/repo" "file://$SCRATCH/repo"; do
    NEURON_COMPILE_CACHE_URL="$url" "$cc" --model gpt2 --graphs 3 >"$SCRATCH/hits" || fail "cached run failed"
    equals "$(grep -c '^Using a cached neff at '"$SCRATCH/repo/neuronxcc-" "$SCRATCH/hits")" "3"
    lacks "$SCRATCH/hits" "Compiler status PASS"
  done
  # `ls` shows the compiler's layout and nothing else.
  equals "$(ls "$SCRATCH/repo")" "neuronxcc-2.21.33363.0+82129205"
  # A graph compiled straight into the repo is there for every host.
  NEURON_COMPILE_CACHE_URL="$SCRATCH/repo" "$cc" --model bert --graphs 1 >/dev/null || fail "compile into repo failed"
  run 0 "$NC" synchronize --pull --cache-dir "$SCRATCH/fresh" --json || return
  equals "$(json_get "$OUT" ".transferred | length")" "4"
  NEURON_COMPILE_CACHE_URL="$SCRATCH/fresh" "$cc" --model bert --graphs 1 >"$SCRATCH/hits" || fail "run failed"
  contains "$SCRATCH/hits" "Using a cached neff at $SCRATCH/fresh/"
}

test_missing_repo_is_an_error() {
  "$MAKE_CACHE" "$SCRATCH/cache"
  run 1 "$NC" synchronize --cache-dir "$SCRATCH/cache" --repo-id "$SCRATCH/nope"
  contains "$ERR" "does not exist"
  contains "$ERR" "neuron-cache create"
  one_line "$ERR"
  [[ ! -e "$SCRATCH/nope" ]] || fail "repo created"
}

test_cache_root_resolution() {
  setup || return
  NEURON_CC_FLAGS="--model-type=transformer --cache_dir $SCRATCH/cache" NEURON_COMPILE_CACHE_URL=/nowhere \
    run 0 "$NC" synchronize --dry-run --json || return
  equals "$(json_get "$OUT" .cache_dir)" "$SCRATCH/cache"
  equals "$(json_get "$OUT" .cache_dir_source)" "NEURON_CC_FLAGS"
  NEURON_COMPILE_CACHE_URL="file://$SCRATCH/cache" run 0 "$NC" synchronize --dry-run --json || return
  equals "$(json_get "$OUT" .cache_dir_source)" "NEURON_COMPILE_CACHE_URL"
  NEURON_CC_FLAGS="--cache_dir=/nowhere" run 0 "$NC" synchronize --cache_dir "$SCRATCH/cache" --dry-run --json || return
  equals "$(json_get "$OUT" .cache_dir_source)" "option"
  # An S3 compile cache is for transfers only (test_s3.sh copies from and to one).
  NEURON_COMPILE_CACHE_URL=s3://bucket/cache run 1 "$NC" status
  contains "$ERR" "s3://bucket/cache (from NEURON_COMPILE_CACHE_URL) is in S3"
  one_line "$ERR"
}

test_symlinks_leaving_the_root_are_not_pushed() {
  setup || return
  echo "secret" >"$SCRATCH/outside.neff"
  local v="$SCRATCH/cache/$VERSION_DIR"
  local entry; entry=$(ls -d "$v"/MODULE_1000000000000001+*)
  rm "$entry/model.neff" && ln -s "$SCRATCH/outside.neff" "$entry/model.neff"
  ln -s "$SCRATCH/outside.neff" "$v/0_REGISTRY/0.4.6/escape.json"
  mkdir -p "$SCRATCH/outside-dir" && cp -r "$(ls -d "$v"/MODULE_1000000000000002+*)/." "$SCRATCH/outside-dir/"
  ln -s "$SCRATCH/outside-dir" "$v/MODULE_5555+39f12043"
  run 0 "$NC" synchronize --cache-dir "$SCRATCH/cache" --json || return
  equals "$(json_get "$OUT" '.skipped_by_reason["symlink-outside-root"]')" "3"
  run 0 "$NC" synchronize --pull --cache-dir "$SCRATCH/fresh" -q || return
  [[ ! -e "$SCRATCH/fresh/$VERSION_DIR/$(basename "$entry")" ]] || fail "entry with an escaping neff pushed"
  [[ ! -e "$SCRATCH/fresh/$VERSION_DIR/MODULE_5555+39f12043" ]] || fail "escaping entry dir pushed"
  [[ ! -e "$SCRATCH/fresh/$VERSION_DIR/0_REGISTRY/0.4.6/escape.json" ]] || fail "escaping registry file pushed"
  ! grep -rq secret "$SCRATCH/fresh" || fail "outside content reached the repo"
}

test_symlinks_into_the_hugging_face_cache_are_followed() {
  setup || return
  # optimum's compile-time proxy leaves Hub downloads as links into $HF_HOME/hub.
  local blobs="$HF_HOME/hub/models--org--cache/blobs"
  mkdir -p "$blobs"
  local v="$SCRATCH/cache/$VERSION_DIR"
  local entry; entry=$(ls -d "$v"/MODULE_1000000000000001+*)
  cp "$entry/model.neff" "$blobs/0a1b2c" && rm "$entry/model.neff" && ln -s "$blobs/0a1b2c" "$entry/model.neff"
  # Anything else leaving the root is still refused: a directory in the HF cache, a file
  # elsewhere, and a link that only passes through the HF cache on its way out.
  mkdir -p "$HF_HOME/hub/dir" && cp -r "$(ls -d "$v"/MODULE_1000000000000002+*)/." "$HF_HOME/hub/dir/"
  ln -s "$HF_HOME/hub/dir" "$v/MODULE_5555+39f12043"
  echo "secret" >"$SCRATCH/outside.neff"
  ln -s "$SCRATCH/outside.neff" "$blobs/escape"
  ln -s "$blobs/escape" "$v/0_REGISTRY/0.4.6/escape.json"
  run 0 "$NC" synchronize --cache-dir "$SCRATCH/cache" --json || return
  equals "$(json_get "$OUT" '.skipped_by_reason["symlink-outside-root"]')" "2"
  run 0 "$NC" synchronize --pull --cache-dir "$SCRATCH/fresh" -q || return
  local pulled="$SCRATCH/fresh/$VERSION_DIR/$(basename "$entry")"
  [[ -f "$pulled/model.neff" && ! -L "$pulled/model.neff" ]] || fail "the linked neff was not pushed as a file"
  cmp -s "$pulled/model.neff" "$blobs/0a1b2c" || fail "the pushed neff differs from the linked file"
  [[ ! -e "$SCRATCH/fresh/$VERSION_DIR/MODULE_5555+39f12043" ]] || fail "a linked directory was pushed"
  ! grep -rq secret "$SCRATCH/fresh" || fail "outside content reached the repo"
}

test_symlinks_into_a_relocated_hub_cache_are_followed() {
  setup || return
  # huggingface_hub's HF_HUB_CACHE (then HUGGINGFACE_HUB_CACHE) moves the Hub cache out of $HF_HOME.
  local v="$SCRATCH/cache/$VERSION_DIR" hub="$SCRATCH/hub-cache" old="$SCRATCH/old-hub-cache"
  mkdir -p "$hub/blobs" "$old/blobs" "$HF_HOME/hub/blobs"
  local first second third
  first=$(ls -d "$v"/MODULE_1000000000000001+*) second=$(ls -d "$v"/MODULE_1000000000000002+*)
  third=$(ls -d "$v"/MODULE_1000000000000003+*)
  cp "$first/model.neff" "$hub/blobs/1" && ln -sf "$hub/blobs/1" "$first/model.neff"
  cp "$second/model.neff" "$old/blobs/2" && ln -sf "$old/blobs/2" "$second/model.neff"
  cp "$third/model.neff" "$HF_HOME/hub/blobs/3" && ln -sf "$HF_HOME/hub/blobs/3" "$third/model.neff"
  # HF_HUB_CACHE wins: the links into the older name's cache and $HF_HOME/hub leave the root.
  HF_HUB_CACHE="$hub" HUGGINGFACE_HUB_CACHE="$old" run 0 "$NC" synchronize --cache-dir "$SCRATCH/cache" --dry-run --json \
    || return
  equals "$(json_get "$OUT" '[.skipped[] | select(.reason == "symlink-outside-root") | .path | split("/")[1]] | sort | join(",")')" \
    "$(basename "$second"),$(basename "$third")"
  # HUGGINGFACE_HUB_CACHE alone.
  HUGGINGFACE_HUB_CACHE="$old" run 0 "$NC" synchronize --cache-dir "$SCRATCH/cache" --dry-run --json || return
  equals "$(json_get "$OUT" '[.skipped[] | select(.reason == "symlink-outside-root") | .path | split("/")[1]] | sort | join(",")')" \
    "$(basename "$first"),$(basename "$third")"
  HF_HUB_CACHE="$hub" run 0 "$NC" synchronize --cache-dir "$SCRATCH/cache" -q || return
  run 0 "$NC" synchronize --pull --cache-dir "$SCRATCH/fresh" -q || return
  local pulled="$SCRATCH/fresh/$VERSION_DIR/$(basename "$first")"
  [[ -f "$pulled/model.neff" && ! -L "$pulled/model.neff" ]] || fail "the neff linked into HF_HUB_CACHE was not pushed"
  cmp -s "$pulled/model.neff" "$hub/blobs/1" || fail "the pushed neff differs from the linked file"
  [[ ! -e "$SCRATCH/fresh/$VERSION_DIR/$(basename "$third")" ]] || fail "a link into \$HF_HOME/hub was followed"
}

test_odd_names_are_reported_not_fatal() {
  setup || return
  local v="$SCRATCH/cache/$VERSION_DIR"
  mkdir -p "$v/MODULE_not-hex+39f12043" "$v/$(printf 'MODULE_\xff')" "$v/with space"
  : >"$v/$(printf 'MODULE_1000000000000000+39f12043/new\nline')"
  run 0 "$NC" synchronize --cache-dir "$SCRATCH/cache" --json || return
  equals "$(json_get "$OUT" ".planned | length")" "7"
  equals "$(json_get "$OUT" '.skipped_by_reason.unrecognized')" "2"
  equals "$(json_get "$OUT" '.skipped_by_reason["invalid-name"]')" "2"
  run 0 "$NC" synchronize --pull --cache-dir "$SCRATCH/fresh" -q || return
  [[ -f "$SCRATCH/fresh/$VERSION_DIR/MODULE_1000000000000000+39f12043/model.done" ]] || fail "entry with an odd file not pushed"
}

test_repo_entry_missing_or_inconsistent_files_not_installed() {
  setup || return
  run 0 "$NC" synchronize --cache-dir "$SCRATCH/cache" -q || return
  local v="$VERSION_DIR"
  local e0 e1 e2 e3
  e0=$(cd "$SCRATCH/cache" && ls -d "$v"/MODULE_1000000000000000+*)
  e1=$(cd "$SCRATCH/cache" && ls -d "$v"/MODULE_1000000000000001+*)
  e2=$(cd "$SCRATCH/cache" && ls -d "$v"/MODULE_1000000000000002+*)
  e3=$(cd "$SCRATCH/cache" && ls -d "$v"/MODULE_1000000000000003+*)
  echo "Failed compilation" >"$SCRATCH/log"
  echo '["--other"]' >"$SCRATCH/flags"
  # The repo is a plain compile cache: edited as the compiler or a person would. A gen C
  # neff without done; a failed entry; flags that do not match the name; a lock.
  local r="$SCRATCH/repo"
  rm "$r/$e0/model.done" "$r/$e1/model.neff"
  cp "$SCRATCH/log" "$r/$e1/model.log"
  cp "$SCRATCH/flags" "$r/$e2/compile_flags.json"
  cp "$SCRATCH/log" "$r/$e3/model.hlo_module.pb.lock"
  run 0 "$NC" synchronize --pull --cache-dir "$SCRATCH/fresh" --json
  equals "$(json_get "$OUT" ".transferred | length")" "4"
  equals "$(json_get "$OUT" '.skipped_by_reason | to_entries | map("\(.key)=\(.value)") | join(",")')" \
    "failed-in-repo=1,flags-mismatch-in-repo=1,incomplete-in-repo=1"
  for e in "$e0" "$e1" "$e2"; do
    [[ ! -e "$SCRATCH/fresh/$e" ]] || fail "$e installed"
  done
  # The locked-in-repo entry is complete: installed, without the lock.
  [[ -f "$SCRATCH/fresh/$e3/model.done" && ! -e "$SCRATCH/fresh/$e3/model.hlo_module.pb.lock" ]] || fail "$e3 wrong"
  no_temp_files "$SCRATCH/fresh"
}

test_locked_or_different_local_entries_are_left_alone() {
  setup || return
  run 0 "$NC" synchronize --cache-dir "$SCRATCH/cache" -q || return
  local e0 e1
  e0=$(cd "$SCRATCH/cache" && ls -d "$VERSION_DIR"/MODULE_1000000000000000+*)
  e1=$(cd "$SCRATCH/cache" && ls -d "$VERSION_DIR"/MODULE_1000000000000001+*)
  mkdir -p "$SCRATCH/fresh/$e0" "$SCRATCH/fresh/$e1"
  cp "$SCRATCH/cache/$e0/model.hlo_module.pb" "$SCRATCH/fresh/$e0/"
  : >"$SCRATCH/fresh/$e0/model.hlo_module.pb.lock"
  echo "Failed compilation" >"$SCRATCH/fresh/$e1/model.log"
  local before; before=$(snapshot "$SCRATCH/fresh")
  run 0 "$NC" synchronize --pull --cache-dir "$SCRATCH/fresh" --json || return
  equals "$(json_get "$OUT" '.skipped_by_reason["locked-locally"]')" "1"
  equals "$(json_get "$OUT" '.skipped_by_reason["local-entry-differs"]')" "1"
  [[ ! -e "$SCRATCH/fresh/$e0/model.neff" ]] || fail "locked entry written"
  [[ ! -e "$SCRATCH/fresh/$e1/model.neff" ]] || fail "failed local entry overwritten"
}

test_partial_entry_is_completed_done_last() {
  setup || return
  run 0 "$NC" synchronize --cache-dir "$SCRATCH/cache" -q || return
  local e0; e0=$(cd "$SCRATCH/cache" && ls -d "$VERSION_DIR"/MODULE_1000000000000000+*)
  mkdir -p "$SCRATCH/fresh/$e0"
  cp "$SCRATCH/cache/$e0/model.neff" "$SCRATCH/cache/$e0/compile_flags.json" "$SCRATCH/fresh/$e0/"
  run 0 "$NC" synchronize --pull --cache-dir "$SCRATCH/fresh" --json || return
  equals "$(json_get "$OUT" ".transferred | length")" "7"
  diff -r -x '*.tmp.nc.*' "$SCRATCH/cache/$e0" "$SCRATCH/fresh/$e0" || fail "partial entry not completed"
  # done is the newest file of the entry: it landed last.
  equals "$(ls -t --time=ctime "$SCRATCH/fresh/$e0" | head -1)" "model.done"
}

test_write_failure_during_pull_leaves_nothing_half_written() {
  "$MAKE_CACHE" "$SCRATCH/cache" --entries 6 --big-every 3 --big-size 1500000 || return
  run 0 "$NC" create "$SCRATCH/repo" -q || return
  run 0 "$NC" synchronize --cache-dir "$SCRATCH/cache" -q || return
  # Files larger than 1 MB fail with EFBIG, a real write error.
  ( trap '' XFSZ; ulimit -f 1000; exec "$NC" synchronize --pull --cache-dir "$SCRATCH/fresh" --json ) >"$OUT" 2>"$ERR"
  equals "$?" "1"
  equals "$(json_get "$OUT" ".transferred | length")" "4"
  equals "$(json_get "$OUT" ".errors | length")" "2"
  contains "$ERR" "File too large"
  local entry
  for entry in "$SCRATCH/fresh/$VERSION_DIR"/*; do
    [[ -f "$entry/model.done" ]] || fail "$(basename "$entry") half-written"
  done
  [[ ! -e "$SCRATCH/fresh/$VERSION_DIR/MODULE_1000000000000000+39f12043" ]] || fail "failed entry present"
  no_temp_files "$SCRATCH/fresh"
  run 0 "$NC" synchronize --pull --cache-dir "$SCRATCH/fresh" --json || return
  equals "$(json_get "$OUT" ".transferred | length")" "2"
  same_entries "$SCRATCH/cache" "$SCRATCH/fresh"
}

test_push_killed_then_rerun() {
  "$MAKE_CACHE" "$SCRATCH/cache" --entries 24 --neff-size 1000000 || return
  run 0 "$NC" create "$SCRATCH/repo" -q || return
  "$NC" synchronize --cache-dir "$SCRATCH/cache" -q >/dev/null 2>&1 &
  local pid=$!
  for _ in $(seq 200); do
    [[ -n "$(find "$SCRATCH/repo/.neuron-cache/staging" -type f -print -quit 2>/dev/null)" ]] && break
    sleep 0.01
  done
  kill -9 "$pid" 2>/dev/null; wait "$pid" 2>/dev/null
  # Nothing half-written is visible: every entry present is whole.
  local entry
  for entry in "$SCRATCH/repo/$VERSION_DIR"/MODULE_*; do
    [[ -e "$entry" ]] || continue
    [[ -f "$entry/model.done" && -f "$entry/model.neff" ]] || fail "$(basename "$entry") half-written"
  done
  run 0 "$NC" synchronize --cache-dir "$SCRATCH/cache" --json || return
  # The dead writer's staging is gone with the next run (same host, pid dead).
  equals "$(ls "$SCRATCH/repo/.neuron-cache/staging" | wc -l)" "0"
  run 0 "$NC" synchronize --cache-dir "$SCRATCH/cache" --json || return
  equals "$(json_get "$OUT" ".present | length")" "24"
  equals "$(json_get "$OUT" .committed)" "false"
  run 0 "$NC" synchronize --pull --cache-dir "$SCRATCH/fresh" --json || return
  equals "$(json_get "$OUT" .files.transferred)" "96"
  same_entries "$SCRATCH/cache" "$SCRATCH/fresh"
}

test_pull_killed_then_rerun() {
  "$MAKE_CACHE" "$SCRATCH/cache" --entries 24 --neff-size 1000000 || return
  run 0 "$NC" create "$SCRATCH/repo" -q || return
  run 0 "$NC" synchronize --cache-dir "$SCRATCH/cache" -q || return
  "$NC" synchronize --pull --cache-dir "$SCRATCH/fresh" -q >/dev/null 2>&1 &
  local pid=$!
  for _ in $(seq 300); do
    [[ -n "$(find "$SCRATCH/fresh" -name model.done -print -quit 2>/dev/null)" ]] && break
    sleep 0.01
  done
  kill -9 "$pid" 2>/dev/null; wait "$pid" 2>/dev/null
  # Whatever landed is whole: every entry present has its done marker and its bytes.
  local entry
  for entry in "$SCRATCH/fresh/$VERSION_DIR"/MODULE_*; do
    [[ -e "$entry" ]] || continue
    [[ -f "$entry/model.done" ]] || fail "$(basename "$entry") visible without model.done"
    diff -r "$SCRATCH/cache/$VERSION_DIR/$(basename "$entry")" "$entry" >/dev/null || fail "$(basename "$entry") partial"
  done
  run 0 "$NC" synchronize --pull --cache-dir "$SCRATCH/fresh" --json || return
  equals "$(( $(json_get "$OUT" ".transferred | length") + $(json_get "$OUT" ".present | length") ))" "24"
  same_entries "$SCRATCH/cache" "$SCRATCH/fresh"
  no_temp_files "$SCRATCH/fresh"
}

test_dry_run_changes_nothing() {
  setup || return
  local cache_before repo_before
  cache_before=$(snapshot "$SCRATCH/cache"); repo_before=$(snapshot "$SCRATCH/repo")
  run 0 "$NC" synchronize --cache-dir "$SCRATCH/cache" --dry-run --clean-failed --clear-stale-locks 0 || return
  contains "$OUT" "Dry run: would push 7 entries (24 files"
  contains "$OUT" "Would push:"
  equals "$(snapshot "$SCRATCH/cache")" "$cache_before"
  equals "$(snapshot "$SCRATCH/repo")" "$repo_before"
  run 0 "$NC" synchronize --cache-dir "$SCRATCH/cache" -q || return
  repo_before=$(snapshot "$SCRATCH/repo")
  run 0 "$NC" synchronize --pull --cache-dir "$SCRATCH/fresh" --dry-run --json || return
  equals "$(json_get "$OUT" ".planned | length")" "7"
  equals "$(json_get "$OUT" ".transferred | length")" "0"
  [[ ! -e "$SCRATCH/fresh" ]] || fail "dry run created the root"
  equals "$(snapshot "$SCRATCH/repo")" "$repo_before"
}

# entries_add_up FILE TRANSFERRED: the report's per-entry objects are its planned entries,
# their files and bytes add up to the planned totals, each with its compiler version.
entries_add_up() {
  equals "$(json_get "$1" '[.entries[].path] | sort | join(",")')" "$(json_get "$1" '.planned | sort | join(",")')"
  [[ "$(json_get "$1" '.entries | length')" -gt 0 ]] || fail "no entries in $(cat "$1")"
  equals "$(json_get "$1" '[.entries[].files] | add')" "$(json_get "$1" .files.planned)"
  equals "$(json_get "$1" '[.entries[].bytes] | add')" "$(json_get "$1" .bytes.planned)"
  equals "$(json_get "$1" '[.entries[] | select(.compiler_version != "2.21.33363.0+82129205")] | length')" "0"
  equals "$(json_get "$1" "[.entries[] | select(.transferred != $2)] | length")" "0"
  equals "$(json_get "$1" '[.entries[] | select(.model != null)] | length')" "0" # no add records here
}

test_json_report_fields() {
  setup || return
  run 0 "$NC" synchronize --cache-dir "$SCRATCH/cache" --json || return
  # One transfer object for both directions (docs/schemas/transfer.schema.json).
  local transfer_keys="schema_version direction dry_run repo cache_dir cache_dir_source revision planned transferred
    present entries skipped skipped_by_reason errors files bytes seconds"
  for key in $transfer_keys committed files_hashed cleaned; do
    [[ "$(jq "has(\"$key\")" "$OUT")" == true ]] || fail "push report lacks $key"
  done
  equals "$(json_get "$OUT" '.skipped[] | select(.reason == "failed") | .detail')" \
    "compilation failed (model.log without model.neff)"
  equals "$(json_get "$OUT" '.skipped[] | select(.reason == "failed") | .hint')" \
    "remove them with: neuron-cache cleanup (the compiler would replay the failure)"
  [[ "$(json_get "$OUT" .bytes.transferred)" -gt 0 ]] || fail "no bytes"
  valid_json "$OUT" transfer.schema.json
  entries_add_up "$OUT" true
  run 0 "$NC" synchronize --pull --cache-dir "$SCRATCH/fresh" --json --dry-run || return
  valid_json "$OUT" transfer.schema.json
  entries_add_up "$OUT" false
  run 0 "$NC" synchronize --pull --cache-dir "$SCRATCH/fresh" --json || return
  valid_json "$OUT" transfer.schema.json
  entries_add_up "$OUT" true
  for key in $transfer_keys compiler_version other_repo_files; do
    [[ "$(jq "has(\"$key\")" "$OUT")" == true ]] || fail "pull report lacks $key"
  done
  run 0 "$NC" synchronize --pull --cache-dir "$SCRATCH/fresh2" -q || return
  equals "$(wc -l <"$OUT")" "7"
}

test_files_planned_counts_the_plan_in_both_directions() {
  setup || return
  # files.planned counts the files the plan would move, dry run or not, in both directions.
  run 0 "$NC" synchronize --cache-dir "$SCRATCH/cache" --dry-run --json || return
  local push_files; push_files=$(json_get "$OUT" .files.planned)
  [[ "$push_files" -gt 0 ]] || fail "a push dry run plans no file: $(cat "$OUT")"
  equals "$(json_get "$OUT" .files.transferred)" "0"
  run 0 "$NC" synchronize --cache-dir "$SCRATCH/cache" --json || return
  equals "$(json_get "$OUT" .files.planned)" "$push_files"
  equals "$(json_get "$OUT" .files.transferred)" "$push_files"
  run 0 "$NC" synchronize --pull --cache-dir "$SCRATCH/planned" --dry-run --json || return
  local pull_files; pull_files=$(json_get "$OUT" .files.planned)
  [[ "$(json_get "$OUT" .bytes.planned)" -gt 0 ]] || fail "a pull dry run plans no byte"
  [[ "$pull_files" -gt 0 ]] || fail "a pull dry run plans no file next to bytes: $(jq -c '{files, bytes}' "$OUT")"
  run 0 "$NC" synchronize --pull --cache-dir "$SCRATCH/planned" --json || return
  equals "$(json_get "$OUT" .files.planned)" "$pull_files"
  equals "$(json_get "$OUT" .files.transferred)" "$pull_files"
  equals "$(find "$SCRATCH/planned" -type f | wc -l)" "$pull_files"
  rm -rf "$SCRATCH/planned"
  # A push with nothing new plans nothing.
  run 0 "$NC" synchronize --cache-dir "$SCRATCH/cache" --json || return
  equals "$(json_get "$OUT" .files.planned)" "0"
}

test_clean_failed_and_stale_locks() {
  setup || return
  local v="$SCRATCH/cache/$VERSION_DIR"
  # A process named neuronx-cc: cleaning must wait for it.
  cp "$(command -v sleep)" "$SCRATCH/neuronx-cc"
  "$SCRATCH/neuronx-cc" 30 &
  local compiler=$!
  run 0 "$NC" synchronize --cache-dir "$SCRATCH/cache" --clean-failed --clear-stale-locks 0 -q
  kill "$compiler"; wait "$compiler" 2>/dev/null
  contains "$ERR" "a neuronx-cc process is running"
  [[ -d "$v/MODULE_900001+39f12043" && -f "$v/MODULE_900002+39f12043/model.hlo_module.pb.lock" ]] || fail "cleaned anyway"
  run 0 "$NC" synchronize --cache-dir "$SCRATCH/cache" --clear-stale-locks 60 --json || return
  [[ -f "$v/MODULE_900002+39f12043/model.hlo_module.pb.lock" ]] || fail "fresh lock removed"
  run 0 "$NC" synchronize --cache-dir "$SCRATCH/cache" --clean-failed --clear-stale-locks 0 --json || return
  equals "$(json_get "$OUT" '.cleaned.failed | length')" "1"
  equals "$(json_get "$OUT" '.cleaned.locks | length')" "1"
  [[ ! -e "$v/MODULE_900001+39f12043" ]] || fail "failed entry kept"
  [[ ! -e "$v/MODULE_900002+39f12043/model.hlo_module.pb.lock" ]] || fail "stale lock kept"
  [[ -f "$v/MODULE_900002+39f12043/model.hlo_module.pb" ]] || fail "locked entry's files removed"
  [[ -f "$SCRATCH/cache/lock" ]] || fail "root lock removed"
  run 2 "$NC" synchronize --pull --cache-dir "$SCRATCH/cache" --clean-failed
  one_line "$ERR"
  run 2 "$NC" synchronize --cache-dir "$SCRATCH/cache" --clear-stale-locks soon
  one_line "$ERR"
}

test_corrupt_digest_cache_is_ignored() {
  setup || return
  run 0 "$NC" synchronize --cache-dir "$SCRATCH/cache" -q || return
  run 0 "$NC" synchronize --cache-dir "$SCRATCH/cache" --json || return
  local file; file=$(ls "$HOME/.cache/neuron-cache"/digests-*.tsv)
  [[ -f "$file" ]] || fail "no digest cache"
  # Nothing moved since the last push: it needs neither the digests nor the listing.
  printf 'garbage\x00\x01' >"$file"
  run 0 "$NC" synchronize --cache-dir "$SCRATCH/cache" --json || return
  equals "$(json_get "$OUT" .committed)" "false"
  equals "$(json_get "$OUT" .files_hashed)" "0"
  # Without that record (or with a corrupt one) the push plans, and the corrupt digests
  # are not trusted: every file is hashed again.
  local in_sync; in_sync=$(ls "$HOME/.cache/neuron-cache"/remote-*.in-sync)
  [[ -f "$in_sync" ]] || fail "no in-sync record"
  printf 'neuron-cache-in-sync 1\nrevision\tx\n' >"$in_sync"
  printf 'garbage\x00\x01' >"$file"
  run 0 "$NC" synchronize --cache-dir "$SCRATCH/cache" --json || return
  equals "$(json_get "$OUT" .committed)" "false"
  [[ "$(json_get "$OUT" .files_hashed)" -gt 0 ]] || fail "corrupt cache was trusted"
  # A file changed in place (same size) is noticed despite the cache.
  local neff; neff=$(ls "$SCRATCH/cache/$VERSION_DIR"/MODULE_1000000000000003+*/model.neff)
  local size; size=$(stat -c %s "$neff")
  head -c "$size" /dev/zero | tr '\0' 'z' >"$neff"
  run 0 "$NC" synchronize --cache-dir "$SCRATCH/cache" --json || return
  equals "$(json_get "$OUT" .files.transferred)" "1"
}

# The same code through the Hub backend, against the local test Hub.
test_hub_push_noop_pull() {
  local hub="$BIN_DIR/neuron-cache-test-hub"
  if [[ ! -x "$hub" ]]; then
    echo "    (skipped: $hub not built)"
    return 0
  fi
  mkfifo "$SCRATCH/hub.out"
  "$hub" --port 0 --data "$SCRATCH/hub-data" --user alice:hf_alice_sync_token:write >"$SCRATCH/hub.out" 2>"$SCRATCH/hub.err" &
  local hub_pid=$!
  # Expanded now: the function's locals are gone when the subshell's EXIT trap runs.
  trap "kill $hub_pid 2>/dev/null" EXIT
  local url
  read -r -t 10 url <"$SCRATCH/hub.out" || { fail "test hub did not start: $(cat "$SCRATCH/hub.err")"; return; }
  cat "$SCRATCH/hub.out" >/dev/null &
  export HF_ENDPOINT="$url" HF_TOKEN=hf_alice_sync_token
  "$MAKE_CACHE" "$SCRATCH/cache" --faults
  run 0 "$NC" create alice/sync -q || return
  run 0 "$NC" synchronize --cache-dir "$SCRATCH/cache" --json || return
  equals "$(json_get "$OUT" ".planned | length")" "7"
  equals "$(json_get "$OUT" .committed)" "true"
  curl -fsS -X POST "$url/_test/stats/reset" >/dev/null
  run 0 "$NC" synchronize --cache-dir "$SCRATCH/cache" --json || return
  equals "$(json_get "$OUT" .committed)" "false"
  equals "$(json_get "$OUT" ".present | length")" "7"
  local requests; requests=$(curl -fsS "$url/_test/stats" | jq .total)
  [[ "$requests" -le 5 ]] || fail "no-op push made $requests requests"
  [[ "$(curl -fsS "$url/_test/stats" | jq '.by_route.commit // 0')" == 0 ]] || fail "no-op push committed"
  run 0 "$NC" synchronize --pull --cache-dir "$SCRATCH/fresh" --json || return
  equals "$(json_get "$OUT" ".transferred | length")" "7"
  same_entries "$SCRATCH/cache" "$SCRATCH/fresh"
  no_temp_files "$SCRATCH/fresh"
  run 0 "$NC" synchronize --pull --cache-dir "$SCRATCH/fresh" --json || return
  equals "$(json_get "$OUT" ".present | length")" "7"
  kill "$hub_pid" 2>/dev/null
  wait "$hub_pid" 2>/dev/null
}

run_tests
