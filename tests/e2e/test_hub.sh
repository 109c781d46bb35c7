#!/usr/bin/env bash
# End to end on the Hub: the real neuron-cache binary against the real test Hub
# (neuron-cache-test-hub on 127.0.0.1, port 0): create, set and config, token sources,
# and every bad input and fault issue 3 names — each a one-line error, a non-zero exit,
# nothing changed locally, and the token never printed.
source "$(dirname "$0")/lib.sh"

ALICE=hf_alice_e2e_write_token_0001
CAROL=hf_carol_e2e_read_only_token_02 # read role
BOB=hf_bob_e2e_write_token_0003
UNKNOWN=hf_unknown_e2e_token_000000004

HUB_LOG="$SUITE_ROOT/hub.log"
mkdir -p "$SUITE_ROOT/hub-data"
coproc HUB { exec "$BIN_DIR/neuron-cache-test-hub" --port 0 --data "$SUITE_ROOT/hub-data" \
  --user "alice:$ALICE:write" --user "carol:$CAROL:read" --user "bob:$BOB:write" --org "acme:alice" \
  --page-size 3 --lfs-threshold 64 --multipart-chunk-size 100 2>"$HUB_LOG"; }
HUB_PID=$HUB_PID
trap 'kill "$HUB_PID" 2>/dev/null; wait "$HUB_PID" 2>/dev/null; rm -rf "$SUITE_ROOT"' EXIT
if ! read -r -t 20 HUB_URL <&"${HUB[0]}" || [[ "$HUB_URL" != http://127.0.0.1:* ]]; then
  echo "the test Hub did not start: ${HUB_URL:-no output}; $(cat "$HUB_LOG")" >&2
  exit 1
fi
HUB_PORT="${HUB_URL##*:}"
export HF_ENDPOINT="$HUB_URL"
# Backoff "seconds" last 2 ms here, so retry tests stay fast.
export NEURON_CACHE_HTTP_BACKOFF_BASE_MS=2

# hub_control METHOD PATH [JSON]: the test Hub's /_test routes, over bash's /dev/tcp.
hub_control() {
  local method="$1" path="$2" body="${3:-}" response
  exec 3<>"/dev/tcp/127.0.0.1/$HUB_PORT" || { fail "cannot reach the test Hub"; return 1; }
  printf '%s %s HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s' \
    "$method" "$path" "${#body}" "$body" >&3
  response="$(cat <&3)"
  exec 3<&-
  [[ "$response" == "HTTP/1.1 2"* ]] || { fail "control $method $path: ${response%%$'\r'*}"; return 1; }
  printf '%s' "${response#*$'\r\n\r\n'}"
}
fault() { hub_control POST /_test/faults "$1" >/dev/null; }
clear_faults() { hub_control DELETE /_test/faults >/dev/null; }
reset_stats() { hub_control POST /_test/stats/reset >/dev/null; }
route_count() { hub_control GET /_test/stats | jq -r ".by_route.$1 // 0"; }
total_requests() { hub_control GET /_test/stats | jq -r '.total'; }

config_file() { echo "$HF_HOME/optimum_neuron_custom_cache"; }

# no_token_in_output TOKEN: neither stdout nor stderr shows it.
no_token_in_output() { lacks "$OUT" "$1"; lacks "$ERR" "$1"; }

# refused EXIT CMD...: a one-line error, the config dir unchanged.
refused() {
  local expected="$1"; shift
  local before
  mkdir -p "$HF_HOME" # create may make HF_HOME before it fails; only the files in it count
  before="$(snapshot "$HF_HOME")"
  run "$expected" "$@" || return 1
  one_line "$ERR"
  contains "$ERR" "neuron-cache: error: "
  equals "$(snapshot "$HF_HOME")" "$before"
}

# --- create -------------------------------------------------------------------------

test_create_bare_name_goes_under_the_token_user_and_is_private() {
  HF_TOKEN=$ALICE run 0 "$NC" create cache-private || return
  contains "$OUT" "Neuron cache created: alice/cache-private [private]."
  contains "$OUT" "Neuron cache name set locally to alice/cache-private in $(config_file)."
  equals "$(cat "$(config_file)")" "alice/cache-private"
  # Private: invisible without a token and to another user, readable by its owner.
  refused 1 "$NC" set alice/cache-private
  contains "$ERR" "does not exist or is not readable"
  HF_TOKEN=$BOB refused 1 "$NC" set alice/cache-private
  HF_TOKEN=$ALICE run 0 "$NC" set alice/cache-private
}

test_create_default_name_and_json() {
  HF_TOKEN=$BOB run 0 "$NC" create --json || return
  equals "$(json_get "$OUT" .repo)" "bob/optimum-neuron-cache"
  equals "$(json_get "$OUT" .created)" "true"
  equals "$(json_get "$OUT" .visibility)" "private"
  equals "$(cat "$(config_file)")" "bob/optimum-neuron-cache"
}

test_create_public() {
  HF_TOKEN=$ALICE run 0 "$NC" create -n alice/cache-public --public || return
  contains "$OUT" "alice/cache-public [public]."
  run 0 "$NC" set alice/cache-public # anonymous read works
}

test_create_existing_refused_without_exist_ok() {
  HF_TOKEN=$ALICE run 0 "$NC" create cache-twice -q || return
  equals "$(cat "$OUT")" "alice/cache-twice"
  HF_TOKEN=$ALICE refused 1 "$NC" create cache-twice
  contains "$ERR" "already exists"
  contains "$ERR" "--exist-ok"
  HF_TOKEN=$ALICE run 0 "$NC" create cache-twice --exist-ok --json
  equals "$(json_get "$OUT" .created)" "false"
  equals "$(json_get "$OUT" .repo)" "alice/cache-twice"
}

test_create_in_an_org() {
  HF_TOKEN=$ALICE run 0 "$NC" create acme/shared-cache || return
  contains "$OUT" "acme/shared-cache [private]"
  HF_TOKEN=$BOB refused 1 "$NC" create acme/bob-cache
  contains "$ERR" "no write access"
}

test_create_token_sources() {
  run 0 "$NC" create from-option --token "$ALICE" -q || return
  equals "$(cat "$OUT")" "alice/from-option"
  HUGGING_FACE_HUB_TOKEN=$ALICE run 0 "$NC" create from-legacy-env -q
  equals "$(cat "$OUT")" "alice/from-legacy-env"
  mkdir -p "$HF_HOME"
  printf '  %s\n' "$BOB" >"$HF_HOME/token"
  run 0 "$NC" create from-token-file -q
  equals "$(cat "$OUT")" "bob/from-token-file"
  printf '%s\r\n' "$ALICE" >"$SCRATCH/custom-token"
  HF_TOKEN_PATH="$SCRATCH/custom-token" run 0 "$NC" create from-token-path -q
  equals "$(cat "$OUT")" "alice/from-token-path"
  # Precedence: --token > HF_TOKEN > HUGGING_FACE_HUB_TOKEN > token file.
  HF_TOKEN=$ALICE run 0 "$NC" create precedence-env -q
  equals "$(cat "$OUT")" "alice/precedence-env"
  HF_TOKEN=$ALICE run 0 "$NC" create precedence-option --token "$BOB" -q
  equals "$(cat "$OUT")" "bob/precedence-option"
  # An empty HF_TOKEN means none: the file is used.
  HF_TOKEN= run 0 "$NC" create precedence-empty -q
  equals "$(cat "$OUT")" "bob/precedence-empty"
}

# --- set and config -----------------------------------------------------------------

test_set_checks_existence_and_config_shows_it() {
  HF_TOKEN=$ALICE run 0 "$NC" create cache-set --public -q || return
  rm -f "$(config_file)"
  HF_TOKEN=$ALICE run 0 "$NC" set alice/cache-set
  contains "$OUT" "Neuron cache name set locally to alice/cache-set in $(config_file)."
  run 0 "$NC" config --json
  equals "$(json_get "$OUT" .repo)" "alice/cache-set"
  equals "$(json_get "$OUT" .repo_kind)" "hub"
  # config never needs the network, even offline.
  HF_HUB_OFFLINE=1 run 0 "$NC" config -q
  equals "$(cat "$OUT")" "alice/cache-set"
}

# optimum-neuron's file holds Hub ids only; neuron-cache's own file holds the rest.
test_set_hub_and_directory_repos_keep_to_their_own_files() {
  local own="$HOME/.config/neuron-cache/repo"
  HF_TOKEN=$ALICE run 0 "$NC" create cache-files -q || return
  HF_TOKEN=$ALICE run 0 "$NC" set alice/cache-files || return
  equals "$(cat "$(config_file)")" "alice/cache-files"
  [[ ! -e "$own" ]] || fail "own file written for a Hub repo"
  local before; before=$(od -An -tx1 "$(config_file)")
  run 0 "$NC" create "$SCRATCH/dir-repo" -q || return
  # optimum's file is untouched, byte for byte; the directory goes to neuron-cache's file.
  equals "$(od -An -tx1 "$(config_file)")" "$before"
  equals "$(cat "$own")" "file://$SCRATCH/dir-repo"
  run 0 "$NC" config --json
  equals "$(json_get "$OUT" .repo)" "file://$SCRATCH/dir-repo"
  equals "$(json_get "$OUT" .repo_source)" "own-config-file"
  # Setting a Hub id again writes optimum's file as optimum would and clears the own choice.
  HF_TOKEN=$ALICE run 0 "$NC" set alice/cache-files || return
  [[ ! -e "$own" ]] || fail "own choice not cleared"
  equals "$(od -An -tx1 "$(config_file)")" "$before"
  run 0 "$NC" config --json
  equals "$(json_get "$OUT" .repo)" "alice/cache-files"
  equals "$(json_get "$OUT" .repo_source)" "config-file"
}

test_set_missing_repo_hints_create() {
  HF_TOKEN=$ALICE refused 1 "$NC" set alice/does-not-exist || return
  contains "$ERR" "create it with: neuron-cache create alice/does-not-exist"
  [[ ! -e "$(config_file)" ]] || fail "config written for a missing repo"
}

# Nothing set: every command falls back to aws-neuron/optimum-neuron-cache, which this Hub
# does not hold. Each says so in the same line: where the name came from, how to pick
# another, never to create a repo in aws-neuron's namespace.
test_default_repo_missing_is_one_error_for_every_command() {
  mkdir -p "$SCRATCH/cc" "$SCRATCH/model"
  echo '{"model_type": "gpt2", "n_layer": 2, "n_embd": 64}' >"$SCRATCH/model/config.json"
  local -a commands=(
    "list"
    "lookup $SCRATCH/model"
    "synchronize --cache-dir $SCRATCH/cc"
    "synchronize --pull --cache-dir $SCRATCH/cc"
  )
  local args first=""
  for args in "${commands[@]}"; do
    # shellcheck disable=SC2086
    refused 1 "$NC" $args || continue
    contains "$ERR" "aws-neuron/optimum-neuron-cache"
    contains "$ERR" "(the built-in default)"
    contains "$ERR" "--repo-id REPO"
    contains "$ERR" "'neuron-cache set REPO'"
    lacks "$ERR" "create aws-neuron"
    if [[ -z $first ]]; then
      first=$(cat "$ERR")
      cp "$ERR" "$SCRATCH/first-error"
    else
      equals "$(cat "$ERR")" "$first"
    fi
    # shellcheck disable=SC2086
    run 1 "$NC" $args --json
    equals "neuron-cache: error: $(json_get "$OUT" '.error + "; " + .hint')" "$first"
  done
  matches_golden "$SCRATCH/first-error" default-repo-missing.txt
}

# --- credentials ----------------------------------------------------------------------

test_no_token_for_create() {
  refused 1 "$NC" create needs-token || return
  contains "$ERR" "HF_TOKEN"
  contains "$ERR" "hf auth login"
  [[ ! -e "$(config_file)" ]] || fail "config written"
}

test_bad_token() {
  HF_TOKEN=$UNKNOWN refused 1 "$NC" create bad-token || return
  contains "$ERR" "rejected your token"
  contains "$ERR" "(token from HF_TOKEN)"
  no_token_in_output "$UNKNOWN"
  refused 1 "$NC" create bad-token --token "$UNKNOWN"
  contains "$ERR" "(token from --token)"
  no_token_in_output "$UNKNOWN"
  mkdir -p "$HF_HOME" && printf '%s' "$UNKNOWN" >"$HF_HOME/token"
  refused 1 "$NC" create bad-token
  contains "$ERR" "(token from the token file $HF_HOME/token)"
  no_token_in_output "$UNKNOWN"
  # config names the token's source and its owner, never the token.
  run 0 "$NC" config --json
  equals "$(json_get "$OUT" .token_source)" "the token file $HF_HOME/token"
  equals "$(json_get "$OUT" .token_user)" "null"
  valid_json "$OUT" config.schema.json
  rm "$HF_HOME/token"
  HF_TOKEN=$ALICE run 0 "$NC" env --json
  equals "$(json_get "$OUT" .token_source)" "HF_TOKEN"
  equals "$(json_get "$OUT" .token_user)" "alice"
  no_token_in_output "$ALICE"
  HF_TOKEN=$ALICE run 0 "$NC" config
  contains "$OUT" "Token user:    alice"
  HF_TOKEN=$ALICE run 0 "$NC" create cache-for-bad-token --public -q
  rm -f "$(config_file)"
  HF_TOKEN=$UNKNOWN refused 1 "$NC" set alice/cache-for-bad-token
  contains "$ERR" "rejected your token"
  no_token_in_output "$UNKNOWN"
  refused 1 "$NC" set alice/cache-for-bad-token --token "$UNKNOWN" --json
  no_token_in_output "$UNKNOWN"
}

test_read_only_token_cannot_create() {
  HF_TOKEN=$CAROL refused 1 "$NC" create carol-cache || return
  contains "$ERR" "use a token with write access"
  no_token_in_output "$CAROL"
}

# Fail early: a token without write access is refused before the cache is hashed and
# before anything is uploaded; a dry run says the push would fail.
test_read_only_token_push_fails_before_hashing() {
  [[ -x "$MAKE_CACHE" ]] || { echo "    (skipped: no $MAKE_CACHE)"; return 0; }
  "$MAKE_CACHE" "$SCRATCH/cache" --entries 3 --neff-size 700 || { fail "cannot make the sample cache"; return; }
  HF_TOKEN=$ALICE run 0 "$NC" create early-refusal --public -q || return
  reset_stats
  HF_TOKEN=$CAROL refused 1 "$NC" synchronize --repo-id alice/early-refusal --cache-dir "$SCRATCH/cache" || return
  contains "$ERR" "write access"
  equals "$(route_count preupload)" "0"
  equals "$(route_count lfs_batch)" "0"
  equals "$(route_count commit)" "0"
  [[ -z "$(find "$HOME/.cache/neuron-cache" -name '*digest*' -size +0 2>/dev/null)" ]] || fail "the cache was hashed"
  HF_TOKEN=$CAROL run 0 "$NC" synchronize --repo-id alice/early-refusal --cache-dir "$SCRATCH/cache" --dry-run || return
  contains "$ERR" "warning: this push would fail"
  contains "$OUT" "would"
  no_token_in_output "$CAROL"
}

# cleanup --repo on the Hub: one commit of folder deletions, a read-only token refused.
test_cleanup_repo_on_the_hub_is_one_commit() {
  [[ -x "$MAKE_CACHE" ]] || { echo "    (skipped: no $MAKE_CACHE)"; return 0; }
  "$MAKE_CACHE" "$SCRATCH/cache" --entries 2 >/dev/null || { fail "cannot make the sample cache"; return; }
  "$MAKE_CACHE" "$SCRATCH/cache" --entries 2 --seed 2 --version 2.15.128.0+56dc5a86 >/dev/null
  HF_TOKEN=$ALICE run 0 "$NC" create pruned --public -q || return
  HF_TOKEN=$ALICE run 0 "$NC" synchronize --repo-id alice/pruned --cache-dir "$SCRATCH/cache" -q || return
  HF_TOKEN=$CAROL refused 1 "$NC" cleanup --repo --repo-id alice/pruned --old-versions --keep-version 2.21 --yes
  reset_stats
  HF_TOKEN=$ALICE run 0 "$NC" cleanup --repo --repo-id alice/pruned --old-versions --keep-version 2.21 --yes --json \
    || return
  valid_json "$OUT" cleanup-repo.schema.json
  equals "$(json_get "$OUT" '.removed | length')" "1"
  equals "$(route_count commit)" "1"
  HF_TOKEN=$ALICE run 0 "$NC" synchronize --pull --repo-id alice/pruned --cache-dir "$SCRATCH/fresh" -q || return
  [[ -z "$(ls -d "$SCRATCH/fresh"/neuronxcc-2.15* 2>/dev/null)" ]] || fail "the pruned version was pulled"
  [[ -n "$(ls -d "$SCRATCH/fresh"/neuronxcc-2.21* 2>/dev/null)" ]] || fail "the kept version was not pulled"
  no_token_in_output "$ALICE"
}

# cleanup --repo --older-than on the Hub: the commit dates decide (a cache pushed "100 days
# ago" through the test Hub's clock goes, one pushed now stays), in one commit.
test_cleanup_repo_older_than_reads_commit_dates() {
  [[ -x "$MAKE_CACHE" ]] || { echo "    (skipped: no $MAKE_CACHE)"; return 0; }
  "$MAKE_CACHE" "$SCRATCH/old" --entries 2 >/dev/null || { fail "cannot make the sample cache"; return; }
  "$MAKE_CACHE" "$SCRATCH/new" --entries 2 --seed 2 >/dev/null
  HF_TOKEN=$ALICE run 0 "$NC" create aged --public -q || return
  hub_control POST /_test/clock '{"offset_seconds": -8640000}' >/dev/null
  HF_TOKEN=$ALICE run 0 "$NC" synchronize --repo-id alice/aged --cache-dir "$SCRATCH/old" -q
  hub_control POST /_test/clock '{"offset_seconds": 0}' >/dev/null
  HF_TOKEN=$ALICE run 0 "$NC" synchronize --repo-id alice/aged --cache-dir "$SCRATCH/new" -q || return
  local old new
  old=$(cd "$SCRATCH/old" && ls -d neuronxcc-*/MODULE_* | sort | tr '\n' ' ')
  new=$(cd "$SCRATCH/new" && ls -d neuronxcc-*/MODULE_* | sort | tr '\n' ' ')
  reset_stats
  HF_TOKEN=$ALICE run 0 "$NC" cleanup --repo --repo-id alice/aged --older-than 30d --dry-run --json || return
  valid_json "$OUT" cleanup-repo.schema.json
  equals "$(jq -r '[.removed[] | select(.reason == "older-than") | .path] | sort | join(" ")' "$OUT") " "$old"
  equals "$(route_count commit)" "0"
  HF_TOKEN=$ALICE run 0 "$NC" cleanup --repo --repo-id alice/aged --older-than 30d --yes --json || return
  equals "$(route_count commit)" "1"
  HF_TOKEN=$ALICE run 0 "$NC" list alice/aged --graphs -q || return
  equals "$(sort "$OUT" | tr '\n' ' ')" "$new"
}

test_token_never_printed() {
  local token
  for token in "$ALICE" "$BOB" "$CAROL" "$UNKNOWN"; do
    HF_TOKEN=$token run 1 "$NC" set acme/nothing-here
    no_token_in_output "$token"
    run 1 "$NC" create -n nobodys-org/nope --token "$token" --json
    no_token_in_output "$token"
    HF_HUB_OFFLINE=1 HF_TOKEN=$token run 1 "$NC" create x
    no_token_in_output "$token"
  done
  fault '{"match":"whoami","method":"GET","count":1,"action":"malformed_json"}'
  HF_TOKEN=$ALICE run 1 "$NC" create leak-check
  no_token_in_output "$ALICE"
  clear_faults
}

# --- faults -----------------------------------------------------------------------------

test_error_bursts_then_recovery() {
  clear_faults; reset_stats
  fault '{"match":"whoami","method":"GET","count":2,"action":"status","status":503}'
  fault '{"match":"/api/repos/create","method":"POST","count":2,"action":"status","status":429,"retry_after":1}'
  HF_TOKEN=$ALICE run 0 "$NC" create burst-cache -q || return
  equals "$(cat "$OUT")" "alice/burst-cache"
  equals "$(route_count whoami)" "3"
  equals "$(route_count repo_create)" "3"
  reset_stats
  fault '{"match":"/api/models/alice/burst-cache","method":"GET","count":3,"action":"status","status":500}'
  HF_TOKEN=$ALICE run 0 "$NC" set alice/burst-cache
  equals "$(route_count model_info)" "4"
  clear_faults
}

test_persistent_server_errors_are_reported() {
  HF_TOKEN=$ALICE run 0 "$NC" create flaky-cache -q || return
  rm -f "$(config_file)"
  fault '{"match":"/api/models/alice/flaky-cache","method":"*","count":100,"action":"status","status":502}'
  HF_TOKEN=$ALICE refused 1 "$NC" set alice/flaky-cache
  contains "$ERR" "HTTP 502"
  contains "$ERR" "retry later"
  clear_faults
  [[ ! -e "$(config_file)" ]] || fail "config written"
}

test_malformed_json_answers() {
  clear_faults
  fault '{"match":"whoami","method":"GET","count":1,"action":"malformed_json"}'
  HF_TOKEN=$ALICE refused 1 "$NC" create malformed-cache || return
  contains "$ERR" "invalid JSON"
  HF_TOKEN=$ALICE run 0 "$NC" create malformed-cache -q
  rm -f "$(config_file)"
  fault '{"match":"/api/models/alice/malformed-cache","method":"GET","count":1,"action":"malformed_json"}'
  HF_TOKEN=$ALICE refused 1 "$NC" set alice/malformed-cache
  contains "$ERR" "invalid JSON"
  fault '{"match":"/api/repos/create","method":"POST","count":1,"action":"malformed_json"}'
  HF_TOKEN=$ALICE refused 1 "$NC" create malformed-create
  clear_faults
}

test_offline_mode_touches_no_network() {
  reset_stats
  HF_TOKEN=$ALICE HF_HUB_OFFLINE=1 refused 1 "$NC" create offline-cache || return
  contains "$ERR" "HF_HUB_OFFLINE"
  HF_TOKEN=$ALICE HF_HUB_OFFLINE=yes refused 1 "$NC" set alice/anything
  contains "$ERR" "unset HF_HUB_OFFLINE"
  equals "$(total_requests)" "0"
}

test_endpoint_variants() {
  HF_ENDPOINT="$HUB_URL/" HF_TOKEN=$ALICE run 0 "$NC" create slash-endpoint -q || return
  equals "$(cat "$OUT")" "alice/slash-endpoint"
  rm -f "$(config_file)"
  HF_ENDPOINT="http://127.0.0.1:1" HF_TOKEN=$ALICE refused 1 "$NC" set alice/slash-endpoint
  contains "$ERR" "network error"
  no_token_in_output "$ALICE"
}

# --- data paths through `synchronize` (uploads and downloads over the Hub) ---------------

MAKE_CACHE="$SOURCE_DIR/tests/tools/make_sample_cache.sh"

# same_tree A B: the same files with the same bytes (temp files aside).
same_tree() {
  diff -r -x '*.tmp.nc.*' "$1" "$2" >/dev/null || fail "$1 and $2 differ"
}

test_synchronize_push_survives_faults_in_one_commit() {
  [[ -x "$MAKE_CACHE" ]] || { echo "    (skipped: no $MAKE_CACHE)"; return 0; }
  "$MAKE_CACHE" "$SCRATCH/cache" --entries 4 --neff-size 700 || { fail "cannot make the sample cache"; return; }
  HF_TOKEN=$ALICE run 0 "$NC" create sync-faults -q || return
  clear_faults; reset_stats
  # 700-byte NEFFs are LFS multipart objects (threshold 64, parts of 100 bytes) here.
  fault '{"match":"preupload","method":"POST","count":2,"action":"status","status":503}'
  fault '{"match":"/_lfs/multipart/","method":"PUT","count":2,"action":"drop_after_bytes","bytes":40}'
  fault '{"match":"/commit/","method":"POST","count":1,"action":"status","status":412}'
  HF_TOKEN=$ALICE run 0 "$NC" synchronize --cache-dir "$SCRATCH/cache" --json || return
  equals "$(json_get "$OUT" .committed)" "true"
  equals "$(route_count commit)" "2" # the 412, then the re-planned commit
  clear_faults
  # A dropped connection mid-commit: re-planned, never duplicated.
  "$MAKE_CACHE" "$SCRATCH/cache2" --entries 2 --neff-size 300 --seed 7 || return
  fault '{"match":"/commit/","method":"POST","count":1,"action":"drop_after_bytes","bytes":100}'
  HF_TOKEN=$ALICE run 0 "$NC" synchronize --cache-dir "$SCRATCH/cache2" --json || return
  clear_faults
  HF_TOKEN=$ALICE run 0 "$NC" synchronize --cache-dir "$SCRATCH/cache2" --json
  equals "$(json_get "$OUT" .committed)" "false"
  no_token_in_output "$ALICE"
}

test_a_push_asks_for_the_repo_info_once_before_its_commits() {
  [[ -x "$MAKE_CACHE" ]] || { echo "    (skipped: no $MAKE_CACHE)"; return 0; }
  "$MAKE_CACHE" "$SCRATCH/cache" --entries 2 --neff-size 300 --seed 11 || { fail "cannot make the sample cache"; return; }
  HF_TOKEN=$ALICE run 0 "$NC" create info-once -q || return
  # exists, revision and the write check share one answer (each was an API call of the
  # user's quota); the commit reads the head once more, as it must.
  reset_stats
  HF_TOKEN=$ALICE run 0 "$NC" synchronize --repo-id alice/info-once --cache-dir "$SCRATCH/cache" --json || return
  equals "$(json_get "$OUT" .committed)" "true"
  equals "$(route_count model_info)" "2"
  reset_stats
  HF_TOKEN=$ALICE run 0 "$NC" synchronize --repo-id alice/info-once --cache-dir "$SCRATCH/cache" --json || return
  equals "$(route_count model_info)" "1"
}

test_synchronize_push_explains_a_refused_binary_file() {
  [[ -x "$MAKE_CACHE" ]] || { echo "    (skipped: no $MAKE_CACHE)"; return 0; }
  "$MAKE_CACHE" "$SCRATCH/cache" --entries 2 --neff-size 700 || { fail "cannot make the sample cache"; return; }
  HF_TOKEN=$ALICE run 0 "$NC" create sync-binary -q || return
  head_of() { curl -fsS -H "Authorization: Bearer $ALICE" "$HUB_URL/api/models/alice/sync-binary/revision/main" | jq -r .sha; }
  local before; before=$(head_of)
  clear_faults
  # The real Hub's answer when a commit carries binary content as a regular file.
  fault '{"match":"/commit/","method":"POST","count":1,"action":"status","status":400,"message":"Your push was rejected because it contains binary files. Please use https://huggingface.co/docs/hub/xet to store binary files. Offending file: - neuronxcc-2.21.33363.0+82129205/MODULE_1+d41d8cd9/model.neff"}'
  HF_TOKEN=$ALICE run 1 "$NC" synchronize --cache-dir "$SCRATCH/cache"
  clear_faults
  # Without a terminal the log may open with one progress line; the error is one line.
  grep -v '^Uploading ' "$ERR" >"$SCRATCH/error-lines"
  one_line "$SCRATCH/error-lines"
  contains "$ERR" "the Hub refused binary content as a regular file"
  contains "$ERR" "Offending file"
  contains "$ERR" ".gitattributes"
  lacks "$ERR" "retry later"
  equals "$(head_of)" "$before" # nothing committed
  no_token_in_output "$ALICE"
}

test_synchronize_pull_resumes_and_rejects_bad_bytes() {
  [[ -x "$MAKE_CACHE" ]] || { echo "    (skipped: no $MAKE_CACHE)"; return 0; }
  "$MAKE_CACHE" "$SCRATCH/cache" --entries 3 --neff-size 900 || { fail "cannot make the sample cache"; return; }
  HF_TOKEN=$ALICE run 0 "$NC" create sync-pull --public -q || return
  HF_TOKEN=$ALICE run 0 "$NC" synchronize --cache-dir "$SCRATCH/cache" -q || return
  clear_faults
  # Corrupt bytes: that entry is not installed, the command fails, nothing half-written.
  fault '{"match":"/_lfs/cdn/","method":"GET","count":1,"action":"corrupt_body"}'
  run 1 "$NC" synchronize --pull --cache-dir "$SCRATCH/fresh" --repo-id alice/sync-pull
  cat "$OUT" "$ERR" | grep -q "does not match the hash the Hub announced" || fail "no hash mismatch reported: $(cat "$OUT" "$ERR")"
  [[ -z "$(find "$SCRATCH/fresh" -name '*.tmp.nc.*' 2>/dev/null)" ]] || fail "temp files left"
  # Dropped connections resume with Range; then every entry is there, byte for byte.
  fault '{"match":"/_lfs/cdn/","method":"GET","count":2,"action":"drop_after_bytes","bytes":300}'
  run 0 "$NC" synchronize --pull --cache-dir "$SCRATCH/fresh" --repo-id alice/sync-pull || return
  clear_faults
  same_tree "$SCRATCH/cache/neuronxcc-2.21.33363.0+82129205" "$SCRATCH/fresh/neuronxcc-2.21.33363.0+82129205"
}

test_synchronize_pull_skips_unsafe_and_odd_paths() {
  # One bad name in a shared repo must not lock everyone out: unsafe paths are skipped with
  # a warning naming them (escaped), odd names too, and the rest installs.
  mkdir -p "$SCRATCH/cache/neuronxcc-2.21.33363.0+82129205/MODULE_1+d41d8cd9"
  for f in model.neff model.hlo_module.pb model.done; do
    echo "$f" >"$SCRATCH/cache/neuronxcc-2.21.33363.0+82129205/MODULE_1+d41d8cd9/$f"
  done
  : >"$SCRATCH/cache/neuronxcc-2.21.33363.0+82129205/MODULE_1+d41d8cd9/compile_flags.json" # md5 d41d8cd9...
  HF_TOKEN=$ALICE run 0 "$NC" create sync-evil --public -q || return
  HF_TOKEN=$ALICE run 0 "$NC" synchronize --cache-dir "$SCRATCH/cache" --repo-id alice/sync-evil -q || return
  hub_control POST /_test/inject-tree-entry \
    '{"repo":"alice/sync-evil","path":"neuronxcc-2.21.33363.0+82129205/MODULE_3+d41d8cd9/../../../evil","content":"pwned"}' >/dev/null
  hub_control POST /_test/inject-tree-entry \
    '{"repo":"alice/sync-evil","path":"neuronxcc-2.21.33363.0+82129205/MODULE_2+d41d8cd9/a\\b\tc\u001b[31m","content":"x"}' >/dev/null
  run 0 "$NC" synchronize --pull --cache-dir "$SCRATCH/fresh" --repo-id alice/sync-evil || return
  contains "$ERR" "skipped 'neuronxcc-2.21.33363.0+82129205/MODULE_3+d41d8cd9/../../../evil'"
  contains "$ERR" 'a\\b\x09c\x1b[31m'
  lacks "$ERR" $'\e'
  [[ ! -e "$SCRATCH/evil" ]] || fail "a file was written outside the cache"
  [[ -f "$SCRATCH/fresh/neuronxcc-2.21.33363.0+82129205/MODULE_1+d41d8cd9/model.done" ]] || fail "the good entry was not pulled"
  run 0 "$NC" list --repo-id alice/sync-evil || return
  contains "$ERR" "/../../../evil' in alice/sync-evil: not a path that can be installed safely"
}

run_tests
