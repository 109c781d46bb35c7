#!/usr/bin/env bash
# End to end: create, set and config on directory repos, and every bad input the
# foundation issue names — each a one-line error, a non-zero exit, and nothing changed.
source "$(dirname "$0")/lib.sh"

config_file() { echo "$HF_HOME/optimum_neuron_custom_cache"; }
# neuron-cache's own choice (directories, S3): optimum-neuron reads Hub ids only.
own_file() { echo "$HOME/.config/neuron-cache/repo"; }

test_create_sets_and_config_shows_it() {
  run 0 "$NC" create "$SCRATCH/repo" || return
  contains "$OUT" "Neuron cache created: file://$SCRATCH/repo"
  contains "$OUT" "Neuron cache name set locally to file://$SCRATCH/repo in $(own_file)."
  equals "$(cat "$(own_file)")" "file://$SCRATCH/repo"
  # optimum-neuron's file holds Hub ids only: a directory repo never goes there.
  [[ ! -e "$(config_file)" ]] || fail "optimum's file written for a directory repo"
  run 0 "$NC" config || return
  contains "$OUT" "Repo:          file://$SCRATCH/repo (directory)"
  contains "$OUT" "Repo source:   saved in $(own_file)"
  run 0 "$NC" config -q
  equals "$(cat "$OUT")" "file://$SCRATCH/repo"
}

test_config_file_has_no_trailing_newline() {
  run 0 "$NC" create "$SCRATCH/repo" -q || return
  equals "$(od -An -c "$(own_file)" | tr -d ' \n' | tail -c 4)" "repo"
  [[ "$(tail -c 1 "$(own_file)" | od -An -tx1 | tr -d ' ')" != "0a" ]] || fail "trailing newline"
}

test_resolution_precedence() {
  run 0 "$NC" create "$SCRATCH/from-file" -q || return
  run 0 "$NC" config --json
  # One field says where the repo came from (no second "origin" field).
  equals "$(json_get "$OUT" .repo_source)" "own-config-file"
  equals "$(jq 'has("repo_origin")' "$OUT")" "false"
  valid_json "$OUT" config.schema.json
  CUSTOM_CACHE_REPO=org/from-env run 0 "$NC" config --json
  equals "$(json_get "$OUT" .repo)" "org/from-env"
  equals "$(json_get "$OUT" .repo_source)" "environment"
  CUSTOM_CACHE_REPO=org/from-env run 0 "$NC" config --json --repo-id /opt/from-option
  equals "$(json_get "$OUT" .repo)" "file:///opt/from-option"
  equals "$(json_get "$OUT" .repo_source)" "option"
  CUSTOM_CACHE_REPO=org/from-env run 0 "$NC" config --json --repo_id hf://org/underscore
  equals "$(json_get "$OUT" .repo)" "org/underscore"
  rm "$(own_file)"
  run 0 "$NC" config --json
  equals "$(json_get "$OUT" .repo)" "aws-neuron/optimum-neuron-cache"
  equals "$(json_get "$OUT" .repo_source)" "default"
}

test_hf_home_defaults_to_xdg_then_home() {
  unset HF_HOME
  XDG_CACHE_HOME="$SCRATCH/xdg" run 0 "$NC" config --json
  equals "$(json_get "$OUT" .config_file)" "$SCRATCH/xdg/huggingface/optimum_neuron_custom_cache"
  run 0 "$NC" config --json
  equals "$(json_get "$OUT" .config_file)" "$HOME/.cache/huggingface/optimum_neuron_custom_cache"
}

test_set_overwrite_warns_like_optimum() {
  run 0 "$NC" create "$SCRATCH/a" -q || return
  run 0 "$NC" create "$SCRATCH/b" -q || return
  contains "$ERR" "neuron-cache: warning: A custom cache repo was already registered: file://$SCRATCH/a. It will be overwritten to file://$SCRATCH/b."
  run 0 "$NC" set "file://$SCRATCH/a"
  contains "$ERR" "already registered: file://$SCRATCH/b. It will be overwritten to file://$SCRATCH/a."
  contains "$OUT" "Neuron cache name set locally to file://$SCRATCH/a in $(own_file)."
  run 0 "$NC" set -n "$SCRATCH/a"
  lacks "$ERR" "warning"
}

test_create_creates_the_config_directory() {
  export XDG_CONFIG_HOME="$SCRATCH/deep/new/config"
  run 0 "$NC" create "$SCRATCH/repo" || return
  [[ -f "$XDG_CONFIG_HOME/neuron-cache/repo" ]] || fail "config not written"
}

test_create_exist_ok_and_json() {
  run 0 "$NC" create "$SCRATCH/repo" --json || return
  equals "$(json_get "$OUT" .created)" "true"
  run 0 "$NC" create "$SCRATCH/repo" --exist-ok --json
  equals "$(json_get "$OUT" .created)" "false"
  run 0 "$NC" create -n "$SCRATCH/repo" --exist_ok -q
  equals "$(cat "$OUT")" "file://$SCRATCH/repo"
}

# --- bad input: one line on stderr, exit != 0, config and repo unchanged -----------

# Under --json a failure prints one error object on stdout: error, hint, exit_code.
no_data_but_the_error() { # no_data_but_the_error STDOUT EXIT
  equals "$(jq -r 'keys | join(",")' "$1")" "error,exit_code,hint,schema_version"
  equals "$(json_get "$1" .exit_code)" "$2"
}

assert_unchanged_after() { # assert_unchanged_after EXIT CMD...
  local before_config before_repo
  before_config=$(snapshot "$HF_HOME")
  before_repo=$(snapshot "$SCRATCH/repo")
  run "$@" || return
  one_line "$ERR"
  contains "$ERR" "neuron-cache: error: "
  if [[ " $* " == *" --json "* || " $* " == *" --format json "* ]]; then
    no_data_but_the_error "$OUT" "$1"
  else
    [[ ! -s "$OUT" ]] || fail "stdout not empty: $(cat "$OUT")"
  fi
  equals "$(snapshot "$HF_HOME")" "$before_config"
  equals "$(snapshot "$SCRATCH/repo")" "$before_repo"
}

test_bad_repo_specs() {
  run 0 "$NC" create "$SCRATCH/repo" -q || return
  for bad in "a/b/c" "" "with space/x" $'org/ctl\x01' "relative-dir/" "http://host/x" "file://host/x"; do
    assert_unchanged_after 1 "$NC" set "$bad"
    contains "$ERR" "neuron-cache: error:"
    assert_unchanged_after 1 "$NC" create "$bad"
    assert_unchanged_after 1 "$NC" config --repo-id "$bad"
  done
  assert_unchanged_after 1 "$NC" set "s3://Bad_Bucket/x"
  contains "$ERR" "is not a valid S3 bucket name"
}

test_relative_directories_are_made_absolute() {
  mkdir -p "$SCRATCH/work/sub" && cd "$SCRATCH/work/sub" || return
  run 0 "$NC" create ./repo -q || return
  equals "$(cat "$OUT")" "file://$SCRATCH/work/sub/repo"
  run 0 "$NC" create ../other --no-set -q || return
  equals "$(cat "$OUT")" "file://$SCRATCH/work/other"
  equals "$(cat "$(own_file)")" "file://$SCRATCH/work/sub/repo"
  run 1 "$NC" set .. --json
  contains "$OUT" "$SCRATCH/work exists but is not a neuron-cache repo"
  contains "$ERR" "neuron-cache create /path/to/new-repo"
  cd "$SCRATCH/work" || return
  run 0 "$NC" set ./other -q
  equals "$(cat "$(own_file)")" "file://$SCRATCH/work/other"
  run 0 "$NC" config --repo-id ./sub/repo -q
  equals "$(cat "$OUT")" "file://$SCRATCH/work/sub/repo"
}

test_create_no_set_keeps_the_host_repo() {
  run 0 "$NC" create "$SCRATCH/main" -q || return
  run 0 "$NC" create "$SCRATCH/ci" --no-set --json || return
  equals "$(json_get "$OUT" .set)" "false"
  equals "$(json_get "$OUT" .repo)" "file://$SCRATCH/ci"
  equals "$(cat "$(own_file)")" "file://$SCRATCH/main"
  lacks "$ERR" "overwritten"
  run 0 "$NC" create "$SCRATCH/ci2" --no-set
  contains "$OUT" "Not set as this host's cache repo (--no-set); use it with --repo-id file://$SCRATCH/ci2."
  # Without --no-set, replacing the host's repo says how to avoid it.
  run 0 "$NC" create "$SCRATCH/ci3"
  contains "$ERR" "Pass --no-set to create a repo without making it this host's default."
}

test_hub_repo_offline_is_refused() {
  run 0 "$NC" create "$SCRATCH/repo" -q || return
  HF_HUB_OFFLINE=1 assert_unchanged_after 1 "$NC" set org/name
  contains "$ERR" "HF_HUB_OFFLINE"
}

test_set_missing_repo() {
  run 0 "$NC" create "$SCRATCH/repo" -q || return
  assert_unchanged_after 1 "$NC" set "$SCRATCH/missing"
  contains "$ERR" "create it with: neuron-cache create file://$SCRATCH/missing"
  mkdir -p "$SCRATCH/not-a-repo" && echo data >"$SCRATCH/not-a-repo/file"
  assert_unchanged_after 1 "$NC" set "$SCRATCH/not-a-repo"
  equals "$(cat "$SCRATCH/not-a-repo/file")" "data"
}

test_create_over_existing_repo() {
  run 0 "$NC" create "$SCRATCH/repo" -q || return
  assert_unchanged_after 1 "$NC" create "$SCRATCH/repo"
  contains "$ERR" "already exists"
  contains "$ERR" "--exist-ok"
  mkdir -p "$SCRATCH/busy" && echo data >"$SCRATCH/busy/file"
  local before; before=$(snapshot "$SCRATCH/busy")
  assert_unchanged_after 1 "$NC" create "$SCRATCH/busy" --exist-ok
  equals "$(snapshot "$SCRATCH/busy")" "$before"
}

# `set` alone shows the choice and where it comes from; --unset forgets it; push, pull and
# ls are the short names people type; a browser URL or `org/name/` names a Hub repo.
test_set_shows_and_unsets_and_short_names() {
  run 0 "$NC" set || return
  equals "$(cat "$OUT")" "Cache repo: aws-neuron/optimum-neuron-cache (from built-in default)"
  CUSTOM_CACHE_REPO=org/from-env run 0 "$NC" set --json || return
  equals "$(json_get "$OUT" .repo)" "org/from-env"
  equals "$(json_get "$OUT" .source)" "environment"
  run 0 "$NC" create "$SCRATCH/repo" -q || return
  run 0 "$NC" set -q || return
  equals "$(cat "$OUT")" "file://$SCRATCH/repo"
  run 0 "$NC" set --unset || return
  contains "$OUT" "Cache repo choice removed. This host now uses aws-neuron/optimum-neuron-cache"
  run 0 "$NC" set --unset --json || return
  equals "$(json_get "$OUT" '.removed | length')" "0"
  # Short names: the same commands, one direction each.
  "$SOURCE_DIR/tests/tools/make_sample_cache.sh" "$SCRATCH/cache" --entries 2 >/dev/null || fail "no sample cache"
  run 0 "$NC" push --repo-id "$SCRATCH/repo" --cache-dir "$SCRATCH/cache" --json || return
  equals "$(json_get "$OUT" '.transferred | length')" "2"
  run 0 "$NC" pull --repo-id "$SCRATCH/repo" --cache-dir "$SCRATCH/fresh" --json || return
  equals "$(json_get "$OUT" '.transferred | length')" "2"
  run 0 "$NC" ls "$SCRATCH/repo" || return
  run 2 "$NC" push --pull
  contains "$ERR" "unknown option '--pull'"
  run 2 "$NC" pull --clean-failed
  # Names as people copy them.
  run 0 "$NC" config --repo-id https://huggingface.co/org/name/ --json || return
  equals "$(json_get "$OUT" .repo)" "org/name"
  run 0 "$NC" config --repo-id org/name/ --json || return
  equals "$(json_get "$OUT" .repo)" "org/name"
  run 1 "$NC" config --repo-id https://huggingface.co/datasets/org/name
  contains "$ERR" "is a dataset repo; a cache repo is a model repo"
}

test_empty_or_unreadable_config_file() {
  mkdir -p "$HF_HOME"
  printf '  \n' >"$HF_HOME/optimum_neuron_custom_cache"
  assert_unchanged_after 1 "$NC" config
  contains "$ERR" "is empty"
  contains "$ERR" "neuron-cache set NAME"
  # Explicit choices still work with a broken file.
  run 0 "$NC" config --repo-id org/x -q
  CUSTOM_CACHE_REPO=org/y run 0 "$NC" config -q
  # A config "file" that cannot be read (a directory: unreadable even for root).
  rm "$HF_HOME/optimum_neuron_custom_cache" && mkdir "$HF_HOME/optimum_neuron_custom_cache"
  assert_unchanged_after 1 "$NC" config
  contains "$ERR" "cannot read the cache repo config file"
  # A directory repo set goes to neuron-cache's own file, which comes first; optimum's
  # broken file is left as it is (it is optimum's).
  rmdir "$HF_HOME/optimum_neuron_custom_cache" && : >"$HF_HOME/optimum_neuron_custom_cache"
  run 0 "$NC" create "$SCRATCH/repo" -q
  equals "$(cat "$(own_file)")" "file://$SCRATCH/repo"
  equals "$(wc -c <"$HF_HOME/optimum_neuron_custom_cache")" "0"
  run 0 "$NC" config -q
  equals "$(cat "$OUT")" "file://$SCRATCH/repo"
}

test_token_and_config_files_that_are_not_files() {
  # A FIFO or a device where a small file is expected: one clear line, never a hang
  # (timeout guards the test) and never an endless read.
  mkdir -p "$HF_HOME"
  mkfifo "$SCRATCH/fifo"
  HF_TOKEN_PATH="$SCRATCH/fifo" run 1 timeout 20 "$NC" list --repo-id org/cache || return
  one_line "$ERR"
  contains "$ERR" "fifo: not a regular file"
  HF_TOKEN_PATH=/dev/zero run 1 timeout 20 "$NC" list --repo-id org/cache || return
  contains "$ERR" "not a regular file"
  mkfifo "$HF_HOME/optimum_neuron_custom_cache"
  run 1 timeout 20 "$NC" config || return
  one_line "$ERR"
  contains "$ERR" "not a regular file"
}

test_config_dir_not_writable() {
  : >"$SCRATCH/a-file"
  # Directory repos are recorded in neuron-cache's own file (XDG_CONFIG_HOME).
  export XDG_CONFIG_HOME="$SCRATCH/a-file/config" # below a regular file: unwritable even for root
  assert_unchanged_after 1 "$NC" create "$SCRATCH/repo"
  contains "$ERR" "make XDG_CONFIG_HOME point at a writable directory"
  [[ ! -e "$SCRATCH/repo" ]] || fail "create made a repo it could not register"
  export XDG_CONFIG_HOME="$SCRATCH/config-ok"
  run 0 "$NC" create "$SCRATCH/repo" -q || return
  export XDG_CONFIG_HOME="$SCRATCH/a-file/config"
  assert_unchanged_after 1 "$NC" set "$SCRATCH/repo"
  # HF_HOME is not needed for them.
  export XDG_CONFIG_HOME="$SCRATCH/config-ok" HF_HOME="$SCRATCH/a-file/hf"
  run 0 "$NC" set "$SCRATCH/repo"
  if [[ $(id -u) -ne 0 ]]; then
    export XDG_CONFIG_HOME="$SCRATCH/ro-config" && mkdir -p "$XDG_CONFIG_HOME" && chmod 555 "$XDG_CONFIG_HOME"
    assert_unchanged_after 1 "$NC" set "$SCRATCH/repo"
    chmod 755 "$XDG_CONFIG_HOME"
  fi
}

test_usage_errors_exit_2() {
  run 0 "$NC" create "$SCRATCH/repo" -q || return
  assert_unchanged_after 2 "$NC" set --no-such-option x
  contains "$ERR" "neuron-cache: error: unknown option '--no-such-option'; see 'neuron-cache set --help'"
  assert_unchanged_after 2 "$NC" set --nmae x
  contains "$ERR" "unknown option '--nmae' (did you mean '--name'?)"
  assert_unchanged_after 2 "$NC" set --bogus x --json
  equals "$(json_get "$OUT" .error)" "unknown option '--bogus'"
  equals "$(json_get "$OUT" .exit_code)" "2"
  assert_unchanged_after 2 "$NC" synch
  contains "$ERR" "unknown command 'synch' (did you mean 'synchronize'?); see 'neuron-cache --help'"
  assert_unchanged_after 2 "$NC" config --repo-id
  assert_unchanged_after 2 "$NC" set --unset a/b
  assert_unchanged_after 2 "$NC" set a/b extra
  assert_unchanged_after 2 "$NC" config --json -q
  assert_unchanged_after 2 "$NC" config --format yaml
  assert_unchanged_after 2 "$NC" config --format json --format human
  assert_unchanged_after 2 "$NC" no-such-command
  run 2 "$NC"
}

test_json_documents_follow_the_schemas() {
  run 0 "$NC" --version --json || return
  valid_json "$OUT" version.schema.json
  run 0 "$NC" create "$SCRATCH/repo" --json || return
  valid_json "$OUT" repo.schema.json
  run 0 "$NC" set "$SCRATCH/repo" --json || return
  valid_json "$OUT" repo.schema.json
  run 0 "$NC" config --json || return
  valid_json "$OUT" config.schema.json
  equals "$(json_get "$OUT" .schema_version)" "1"
  run 1 "$NC" set "$SCRATCH/missing" --json
  valid_json "$OUT" error.schema.json
  run 2 "$NC" --json no-such-command
  valid_json "$OUT" error.schema.json
}

test_config_diagnoses_the_setup() {
  mkdir -p "$SCRATCH/bin" && printf '#!/bin/sh\necho "NeuronX Compiler version 2.21.33363.0+82129205"\n' >"$SCRATCH/bin/neuronx-cc"
  chmod +x "$SCRATCH/bin/neuronx-cc"
  PATH="$SCRATCH/bin:$PATH" NEURON_COMPILE_CACHE_URL="$SCRATCH/cc" HF_HUB_OFFLINE=1 run 0 "$NC" env --json || return
  equals "$(json_get "$OUT" .compiler_version)" "2.21.33363.0+82129205"
  equals "$(json_get "$OUT" .cache_dir)" "$SCRATCH/cc"
  equals "$(json_get "$OUT" .cache_dir_source)" "NEURON_COMPILE_CACHE_URL"
  equals "$(json_get "$OUT" .offline)" "true"
  equals "$(json_get "$OUT" .token_source)" "null"
  equals "$(json_get "$OUT" .repo_source)" "default"
  equals "$(json_get "$OUT" .endpoint)" "https://huggingface.co"
  # --cache-dir is "option" here as in every report that names the compile cache's source.
  run 0 "$NC" config --cache-dir "$SCRATCH/cc" --json || return
  equals "$(json_get "$OUT" .cache_dir_source)" "option"
  valid_json "$OUT" config.schema.json
  mkdir -p "$SCRATCH/cc"
  run 0 "$NC" status --cache-dir "$SCRATCH/cc" --json || return
  equals "$(json_get "$OUT" .cache_dir_source)" "option"
  run 0 "$NC" config --cache-dir "$SCRATCH/cc" || return
  contains "$OUT" "Compile cache: $SCRATCH/cc (from --cache-dir)"
  PATH="/usr/bin:/bin" run 0 "$NC" config || return
  contains "$OUT" "neuronx-cc:    - (not found on PATH)"
  contains "$OUT" "Repo source:   the built-in default"
  contains "$OUT" "Token:         none"
}

# The default repo missing on a Hub: test_hub.sh (it needs the test Hub; offline, every
# command stops at HF_HUB_OFFLINE before asking for the repo).
test_missing_repo_names_where_it_came_from() {
  run 1 "$NC" sync --repo-id "$SCRATCH/nowhere" --cache-dir "$SCRATCH/cc"
  contains "$ERR" "(named by --repo-id)"
  contains "$ERR" "create it with: neuron-cache create file://$SCRATCH/nowhere"
  CUSTOM_CACHE_REPO="$SCRATCH/nowhere" run 1 "$NC" sync --cache-dir "$SCRATCH/cc"
  contains "$ERR" "(from CUSTOM_CACHE_REPO)"
}

test_config_human_output_matches_golden() {
  run 0 "$NC" create "$SCRATCH/repo" -q || return
  mkdir -p "$SCRATCH/cc"
  # The AWS rows show the defaults whatever the host's AWS settings (empty is unset).
  PATH="/usr/bin:/bin" NEURON_COMPILE_CACHE_URL="$SCRATCH/cc" HF_HUB_OFFLINE=1 AWS_PROFILE= AWS_DEFAULT_PROFILE= \
    AWS_REGION= AWS_DEFAULT_REGION= AWS_ENDPOINT_URL= AWS_ENDPOINT_URL_S3= AWS_CONFIG_FILE="$SCRATCH/no-aws-config" \
    run 0 "$NC" config || return
  # The version and the digest cache's name (a hash of the root's path) change by themselves.
  sed -E 's/^(Version: +neuron-cache ).*/\1<VERSION>/; s/digests-[0-9a-f]+\.tsv/digests-<HASH>.tsv/' \
    "$OUT" >"$SCRATCH/config.txt"
  matches_golden "$SCRATCH/config.txt" config.txt
}

test_help_and_version() {
  run 0 "$NC" --version
  contains "$OUT" "neuron-cache "
  run 0 "$NC" --help
  matches_golden "$OUT" help.txt
  for command in create set config; do contains "$OUT" "  $command"; done
  run 0 "$NC" synchronize --help
  matches_golden "$OUT" help-synchronize.txt
  # -v: --verbose where the command has no -v of its own; list's and lookup's is the compiler version.
  contains "$OUT" "  -v, --verbose"
  for command in list lookup; do
    run 0 "$NC" "$command" --help
    lacks "$OUT" "-v, --verbose"
    contains "$OUT" "  -v, --"
    tr -s ' \n' '  ' <"$OUT" >"$SCRATCH/help-joined" # the help wraps at the width
    contains "$SCRATCH/help-joined" "Also -v, after a command that has no -v of its own"
  done
  for command in create set config; do
    run 0 "$NC" "$command" --help
    contains "$OUT" "Examples:"
    contains "$OUT" "Usage: neuron-cache $command"
  done
  run 0 "$NC" help set
  contains "$OUT" "Usage: neuron-cache set"
}

test_global_options_before_command() {
  run 0 "$NC" create "$SCRATCH/repo" -q || return
  run 0 "$NC" --json config
  equals "$(json_get "$OUT" .repo_source)" "own-config-file"
  run 0 "$NC" -q config
  equals "$(cat "$OUT")" "file://$SCRATCH/repo"
}

run_tests
