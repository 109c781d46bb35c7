#!/usr/bin/env bash
# End to end: S3 repos against s3rver (tests/s3, installed by `make deps`), behind a proxy
# that recomputes every SigV4 signature with botocore and plays the parts of S3 the tests
# need (other regions, other accounts, expired tokens, SlowDown, failing parts). What
# neuron-cache writes is read back with the official AWS CLI v2 and the other way round.
source "$(dirname "$0")/lib.sh"

source "$(dirname "$0")/s3_lib.sh"

test_push_pull_and_the_aws_cli_sees_it_byte_for_byte() {
  start_proxy || return
  "$MAKE_CACHE" "$SCRATCH/cache" --faults
  # One NEFF above the multipart threshold: uploaded in parallel parts.
  export NEURON_CACHE_S3_MULTIPART_THRESHOLD=$((6 * 1024 * 1024)) NEURON_CACHE_S3_PART_SIZE=$((5 * 1024 * 1024))
  head -c $((12 * 1024 * 1024 + 17)) /dev/urandom >"$SCRATCH/cache/$VERSION_DIR/MODULE_1000000000000003+39f12043/model.neff"
  run 0 "$NC" create s3://nc-bucket-a/team/cache --json || { stop_servers; return; }
  equals "$(json_get "$OUT" .repo)" "s3://nc-bucket-a/team/cache"
  run 0 "$NC" synchronize --cache-dir "$SCRATCH/cache" --json || { stop_servers; return; }
  equals "$(json_get "$OUT" ".transferred | length")" "7"
  equals "$(json_get "$OUT" ".files.transferred")" "24"
  grep -q 'PUT /nc-bucket-a/team/cache/.*MODULE_1000000000000003.*/model.neff?partNumber=3&uploadId=' "$SCRATCH/proxy.log" \
    || fail "the big NEFF was not uploaded in parts"
  # model.done of an entry goes after its other files.
  local done_line neff_line
  neff_line=$(grep -n 'PUT /nc-bucket-a/team/cache/.*MODULE_1000000000000000%2B39f12043/model.neff ' "$SCRATCH/proxy.log" | cut -d: -f1)
  done_line=$(grep -n 'PUT /nc-bucket-a/team/cache/.*MODULE_1000000000000000%2B39f12043/model.done ' "$SCRATCH/proxy.log" | cut -d: -f1)
  [[ -n "$neff_line" && -n "$done_line" && "$done_line" -gt "$neff_line" ]] || fail "model.done not last ($neff_line, $done_line)"
  # The official CLI sees the Neuron SDK's layout, byte for byte.
  aws_cli s3 ls --recursive s3://nc-bucket-a/team/cache/ >"$SCRATCH/ls" 2>"$SCRATCH/ls.err" || fail "aws s3 ls: $(cat "$SCRATCH/ls.err")"
  contains "$SCRATCH/ls" "team/cache/$VERSION_DIR/MODULE_1000000000000000+39f12043/model.neff"
  aws_cli s3 cp --recursive --quiet s3://nc-bucket-a/team/cache "$SCRATCH/via-cli" 2>"$SCRATCH/cp.err" || fail "aws s3 cp: $(cat "$SCRATCH/cp.err")"
  same_entries "$SCRATCH/cache" "$SCRATCH/via-cli"
  # Nothing new: nothing uploaded.
  run 0 "$NC" synchronize --cache-dir "$SCRATCH/cache" --json || { stop_servers; return; }
  equals "$(json_get "$OUT" ".transferred | length")" "0"
  equals "$(json_get "$OUT" ".present | length")" "7"
  # And back onto a fresh host.
  run 0 "$NC" synchronize --pull --cache-dir "$SCRATCH/fresh" --json || { stop_servers; return; }
  equals "$(json_get "$OUT" ".transferred | length")" "7"
  same_entries "$SCRATCH/cache" "$SCRATCH/fresh"
  run 0 "$NC" list --json
  no_bad_signatures
  secrets_never_printed
  stop_servers
}

test_what_the_aws_cli_uploads_is_pulled() {
  start_proxy || return
  "$MAKE_CACHE" "$SCRATCH/cache" --entries 4
  aws_cli s3 mb s3://nc-bucket-b >/dev/null 2>&1 || fail "aws s3 mb"
  # A SageMaker job's cache as the SDK leaves it: no marker, just the compiler's layout.
  aws_cli s3 sync --quiet "$SCRATCH/cache" s3://nc-bucket-b/sagemaker/neuron-cache 2>"$SCRATCH/sync.err" \
    || fail "aws s3 sync: $(cat "$SCRATCH/sync.err")"
  run 0 "$NC" synchronize --pull --repo-id s3://nc-bucket-b/sagemaker/neuron-cache --cache-dir "$SCRATCH/fresh" --json \
    || { stop_servers; return; }
  equals "$(json_get "$OUT" ".transferred | length")" "4"
  same_entries "$SCRATCH/cache" "$SCRATCH/fresh"
  run 0 "$NC" set s3://nc-bucket-b/sagemaker/neuron-cache
  no_bad_signatures
  stop_servers
}

test_bad_input_is_one_clear_line_and_changes_nothing() {
  start_proxy --deny nc-foreign-bucket --region-of nc-bucket-eu=eu-west-1 --expired-token expired-session-token || return
  "$MAKE_CACHE" "$SCRATCH/cache" --entries 2
  aws_cli s3 mb s3://nc-bucket-c >/dev/null 2>&1 || fail "aws s3 mb"
  local before; before=$(aws_cli s3 ls --recursive s3://nc-bucket-c/ 2>&1)
  # A bucket that does not exist.
  run 1 "$NC" synchronize --repo-id s3://nc-no-such-bucket/cache --cache-dir "$SCRATCH/cache"
  contains "$ERR" "S3 bucket nc-no-such-bucket does not exist"
  one_line "$ERR"
  # A bucket of another account.
  run 1 "$NC" synchronize --repo-id s3://nc-foreign-bucket/cache --cache-dir "$SCRATCH/cache"
  contains "$ERR" "denied for the AWS credentials from environment variables"
  one_line "$ERR"
  run 1 "$NC" create s3://nc-foreign-bucket/cache
  one_line "$ERR"
  # A prefix that holds something else is not taken over.
  echo "precious" >"$SCRATCH/precious.txt"
  aws_cli s3 cp --quiet "$SCRATCH/precious.txt" s3://nc-bucket-c/data/precious.txt || fail "aws s3 cp"
  before=$(aws_cli s3 ls --recursive s3://nc-bucket-c/ 2>&1)
  run 1 "$NC" create s3://nc-bucket-c/data
  contains "$ERR" "holds something else than a Neuron compile cache"
  one_line "$ERR"
  run 1 "$NC" synchronize --repo-id s3://nc-bucket-c/data --cache-dir "$SCRATCH/cache"
  one_line "$ERR"
  equals "$(aws_cli s3 ls --recursive s3://nc-bucket-c/ 2>&1)" "$before"
  # Expired credentials: said so, with where they came from.
  AWS_ACCESS_KEY_ID=ASIAEXPIREDTOKEN0001 AWS_SESSION_TOKEN=expired-session-token \
    run 1 "$NC" synchronize --repo-id s3://nc-bucket-c/cache --cache-dir "$SCRATCH/cache"
  contains "$ERR" "the AWS credentials from environment variables have expired (ExpiredToken"
  one_line "$ERR"
  # Missing credentials: every source tried is named.
  env -u AWS_ACCESS_KEY_ID -u AWS_SECRET_ACCESS_KEY \
    "$NC" synchronize --repo-id s3://nc-bucket-c/cache --cache-dir "$SCRATCH/cache" >"$OUT" 2>"$ERR"
  equals "$?" "1"
  contains "$ERR" "no AWS credentials found; tried environment variables (AWS_ACCESS_KEY_ID not set); web identity (AWS_WEB_IDENTITY_TOKEN_FILE and AWS_ROLE_ARN not both set); profile 'default'"
  contains "$ERR" "container credentials (AWS_CONTAINER_CREDENTIALS_RELATIVE_URI/_FULL_URI not set); EC2 instance metadata (AWS_EC2_METADATA_DISABLED)"
  one_line "$ERR"
  # Not an S3 URL S3 could hold.
  run 1 "$NC" set "s3://Bad_Bucket/x"
  one_line "$ERR"
  # A bucket in another region: the redirect is followed, signing for the bucket's region.
  AWS_REGION=eu-west-1 aws_cli s3 mb s3://nc-bucket-eu >/dev/null 2>&1 || fail "aws s3 mb eu"
  run 0 "$NC" create s3://nc-bucket-eu/cache -q || { stop_servers; return; }
  run 0 "$NC" synchronize --repo-id s3://nc-bucket-eu/cache --cache-dir "$SCRATCH/cache" --json
  equals "$(json_get "$OUT" ".transferred | length")" "2"
  contains "$SCRATCH/proxy.log" "301 PermanentRedirect (eu-west-1)"
  equals "$(aws_cli s3 ls --recursive s3://nc-bucket-c/ 2>&1)" "$before"
  no_bad_signatures
  secrets_never_printed
  stop_servers
}

test_slowdown_is_retried_and_a_failed_part_aborts_the_upload() {
  start_proxy --slowdown 3 --fail-part 2 || return
  export NEURON_CACHE_S3_MULTIPART_THRESHOLD=$((6 * 1024 * 1024)) NEURON_CACHE_S3_PART_SIZE=$((5 * 1024 * 1024))
  "$MAKE_CACHE" "$SCRATCH/cache" --entries 2
  run 0 "$NC" create s3://nc-bucket-d/cache -q || { stop_servers; return; }
  run 0 "$NC" synchronize --cache-dir "$SCRATCH/cache" --json || { stop_servers; return; }
  equals "$(grep -c '503 SlowDown' "$SCRATCH/proxy.log")" "3"
  equals "$(json_get "$OUT" ".transferred | length")" "2"
  # A big NEFF whose second part always fails: the upload is aborted, its entry not done.
  local entry="$VERSION_DIR/MODULE_1000000000000001+39f12043"
  head -c $((11 * 1024 * 1024)) /dev/urandom >"$SCRATCH/cache/$entry/model.neff"
  run 1 "$NC" synchronize --cache-dir "$SCRATCH/cache"
  one_line "$ERR"
  grep -q "^DELETE /nc-bucket-d/cache/$(logged "$entry")/model.neff?uploadId=" "$SCRATCH/proxy.log" || fail "upload not aborted"
  no_bad_signatures
  stop_servers
}

# rewrite FILE: new bytes, same size (and a new mtime).
rewrite() { local size; size=$(stat -c %s "$1"); head -c "$size" /dev/urandom >"$1.new" && mv "$1.new" "$1"; }

test_a_rewritten_file_of_the_same_size_is_pushed_again() {
  start_proxy || return
  export NEURON_CACHE_S3_MULTIPART_THRESHOLD=$((6 * 1024 * 1024)) NEURON_CACHE_S3_PART_SIZE=$((5 * 1024 * 1024))
  "$MAKE_CACHE" "$SCRATCH/cache" --entries 3
  local small="$VERSION_DIR/MODULE_1000000000000000+39f12043/model.neff"
  local big="$VERSION_DIR/MODULE_1000000000000001+39f12043/model.neff"
  head -c $((12 * 1024 * 1024 + 17)) /dev/urandom >"$SCRATCH/cache/$big"
  run 0 "$NC" create s3://nc-bucket-f/cache -q || { stop_servers; return; }
  run 0 "$NC" synchronize --cache-dir "$SCRATCH/cache" --json || { stop_servers; return; }
  equals "$(json_get "$OUT" ".transferred | length")" "3"
  # Rewritten with other bytes of the same size: both go up again (the big one in parts).
  rewrite "$SCRATCH/cache/$small"
  rewrite "$SCRATCH/cache/$big"
  : >"$SCRATCH/proxy.log"
  run 0 "$NC" synchronize --cache-dir "$SCRATCH/cache" --json || { stop_servers; return; }
  equals "$(json_get "$OUT" ".transferred | length")" "2"
  equals "$(json_get "$OUT" ".files.transferred")" "2"
  grep -q "PUT /nc-bucket-f/cache/$(logged "$big")?partNumber=3&uploadId=" "$SCRATCH/proxy.log" \
    || fail "the rewritten big NEFF was not uploaded again"
  local file
  for file in "$small" "$big"; do
    aws_cli s3 cp --quiet "s3://nc-bucket-f/cache/$file" "$SCRATCH/via-cli.neff" 2>"$SCRATCH/cp.err" \
      || fail "aws s3 cp: $(cat "$SCRATCH/cp.err")"
    cmp -s "$SCRATCH/via-cli.neff" "$SCRATCH/cache/$file" || fail "S3 does not hold the new bytes of $file"
  done
  # The ETags S3 gave the uploads are remembered: the next push hashes nothing.
  run 0 "$NC" synchronize --cache-dir "$SCRATCH/cache" --json || { stop_servers; return; }
  equals "$(json_get "$OUT" ".transferred | length")" "0"
  equals "$(json_get "$OUT" ".files_hashed")" "0"
  # A host that remembers nothing recognises the same content from the ETags alone: the
  # MD5 of a single PUT, the multipart ETag of neuron-cache's 5 MiB parts.
  rm -rf "$HOME/.cache/neuron-cache"
  : >"$SCRATCH/proxy.log"
  run 0 "$NC" synchronize --cache-dir "$SCRATCH/cache" --json || { stop_servers; return; }
  equals "$(json_get "$OUT" ".transferred | length")" "0"
  equals "$(json_get "$OUT" ".present | length")" "3"
  [[ "$(json_get "$OUT" ".files_hashed")" -gt 0 ]] || fail "nothing hashed on a fresh host"
  ! grep -q '^PUT .*model' "$SCRATCH/proxy.log" || fail "an unchanged file was uploaded: $(grep '^PUT' "$SCRATCH/proxy.log")"
  no_bad_signatures
  stop_servers
}

test_what_the_aws_cli_uploaded_in_parts_is_recognised_both_ways() {
  start_proxy || return
  "$MAKE_CACHE" "$SCRATCH/cache" --entries 3
  local small="$VERSION_DIR/MODULE_1000000000000000+39f12043/model.neff"
  local big="$VERSION_DIR/MODULE_1000000000000001+39f12043/model.neff"
  head -c $((12 * 1024 * 1024 + 17)) /dev/urandom >"$SCRATCH/cache/$big"
  # The CLI uploads in 5 MB parts from 5 MB on: the big NEFF goes in 3 parts.
  export AWS_CONFIG_FILE="$SCRATCH/aws-config"
  "$AWS_CLI" configure set default.s3.multipart_threshold 5MB
  "$AWS_CLI" configure set default.s3.multipart_chunksize 5MB
  aws_cli s3 mb s3://nc-bucket-g >/dev/null 2>&1 || fail "aws s3 mb"
  aws_cli s3 sync --quiet "$SCRATCH/cache" s3://nc-bucket-g/team 2>"$SCRATCH/sync.err" \
    || fail "aws s3 sync: $(cat "$SCRATCH/sync.err")"
  aws_cli s3api head-object --bucket nc-bucket-g --key "team/$big" >"$SCRATCH/head.json" || fail "aws s3api head-object"
  [[ "$(jq -r .ETag "$SCRATCH/head.json")" == *-3\" ]] || fail "not a 3-part ETag: $(cat "$SCRATCH/head.json")"
  cp -a "$SCRATCH/cache" "$SCRATCH/copy"

  # Pushed from the same cache: every file is recognised, nothing uploaded.
  : >"$SCRATCH/proxy.log"
  run 0 "$NC" synchronize --repo-id s3://nc-bucket-g/team --cache-dir "$SCRATCH/cache" --json || { stop_servers; return; }
  equals "$(json_get "$OUT" ".transferred | length")" "0"
  equals "$(json_get "$OUT" ".present | length")" "3"
  # (The write probe a push makes before hashing is not a file of the cache.)
  ! grep '^PUT ' "$SCRATCH/proxy.log" | grep -qv '/.neuron-cache/write-probe' \
    || fail "an unchanged file was uploaded: $(grep '^PUT' "$SCRATCH/proxy.log")"
  # Pulled into a copy: nothing downloaded.
  run 0 "$NC" synchronize --pull --repo-id s3://nc-bucket-g/team --cache-dir "$SCRATCH/copy" --json \
    || { stop_servers; return; }
  equals "$(json_get "$OUT" ".transferred | length")" "0"
  equals "$(json_get "$OUT" ".present | length")" "3"
  ! grep -q '^GET /nc-bucket-g/team/.*model' "$SCRATCH/proxy.log" || fail "an unchanged file was downloaded"

  # A copy whose NEFFs differ from the repo's with the same size: as for any repo, an entry
  # that differs locally is left alone and said so (the compiler may be using it).
  flip_byte "$SCRATCH/copy/$small" 100
  flip_byte "$SCRATCH/copy/$big" 100
  local before; before=$(snapshot "$SCRATCH/copy")
  run 0 "$NC" synchronize --pull --repo-id s3://nc-bucket-g/team --cache-dir "$SCRATCH/copy" --json \
    || { stop_servers; return; }
  equals "$(json_get "$OUT" ".transferred | length")" "0"
  equals "$(json_get "$OUT" '.skipped_by_reason."local-entry-differs"')" "2"
  contains "$OUT" "model.neff differs from the repo's"
  equals "$(snapshot "$SCRATCH/copy")" "$before"

  # Changed in the cache the repo came from: pushed again, and S3 holds the new bytes.
  flip_byte "$SCRATCH/cache/$big" 100
  : >"$SCRATCH/proxy.log"
  run 0 "$NC" synchronize --repo-id s3://nc-bucket-g/team --cache-dir "$SCRATCH/cache" --json || { stop_servers; return; }
  equals "$(json_get "$OUT" ".transferred | length")" "1"
  equals "$(json_get "$OUT" ".files.transferred")" "1"
  grep -q "^PUT /nc-bucket-g/team/$(logged "$big") " "$SCRATCH/proxy.log" || fail "the changed NEFF was not uploaded"
  aws_cli s3 cp --quiet "s3://nc-bucket-g/team/$big" "$SCRATCH/via-cli.neff" || fail "aws s3 cp"
  cmp -s "$SCRATCH/via-cli.neff" "$SCRATCH/cache/$big" || fail "S3 does not hold the changed bytes"
  no_bad_signatures
  stop_servers
}

# start_credentials LIFETIME: the fake metadata/container credentials server.
start_credentials() {
  mkfifo "$SCRATCH/creds.port"
  "$PYTHON" "$S3_DIR/fake_credentials.py" --key ASIAMETADATAKEY00001 --secret metadata-secret-never-printed \
    --token metadata-session-token --lifetime "$1" --auth container-auth-token --log "$SCRATCH/creds.log" \
    >"$SCRATCH/creds.port" 2>"$SCRATCH/creds.err" &
  PIDS+=($!)
  read -r -t 20 CREDS_PORT <"$SCRATCH/creds.port" || { fail "credentials server did not start"; return 1; }
  : >"$SCRATCH/creds.log"
}

# cleanup --repo on S3: --older-than reads each object's LastModified (s3rver's is its
# file's mtime, set back here), --unregistered the registry; one pass of deletions.
test_cleanup_repo_older_than_reads_last_modified() {
  start_proxy || return
  "$MAKE_CACHE" "$SCRATCH/old" --entries 2 >/dev/null
  "$MAKE_CACHE" "$SCRATCH/new" --entries 2 --seed 2 >/dev/null
  run 0 "$NC" create s3://nc-bucket-prune/cache -q || { stop_servers; return; }
  run 0 "$NC" synchronize --repo-id s3://nc-bucket-prune/cache --cache-dir "$SCRATCH/old" -q || { stop_servers; return; }
  find "$S3_DATA/nc-bucket-prune" -name '*._S3rver_object' -exec touch -d '100 days ago' {} +
  run 0 "$NC" synchronize --repo-id s3://nc-bucket-prune/cache --cache-dir "$SCRATCH/new" -q || { stop_servers; return; }
  local old new
  old=$(cd "$SCRATCH/old" && ls -d neuronxcc-*/MODULE_* | sort | tr '\n' ' ')
  new=$(cd "$SCRATCH/new" && ls -d neuronxcc-*/MODULE_* | sort | tr '\n' ' ')
  run 0 "$NC" cleanup --repo --repo-id s3://nc-bucket-prune/cache --older-than 30d --dry-run --json \
    || { stop_servers; return; }
  valid_json "$OUT" cleanup-repo.schema.json
  equals "$(jq -r '[.removed[].path] | sort | join(" ")' "$OUT") " "$old"
  run 0 "$NC" cleanup --repo --repo-id s3://nc-bucket-prune/cache --older-than 30d --yes -q || { stop_servers; return; }
  run 0 "$NC" list s3://nc-bucket-prune/cache --graphs -q || { stop_servers; return; }
  equals "$(sort "$OUT" | tr '\n' ' ')" "$new"
  run 0 "$NC" cleanup --repo --repo-id s3://nc-bucket-prune/cache --unregistered --yes --json || { stop_servers; return; }
  equals "$(jq -r '[.removed[].path] | sort | join(" ")' "$OUT") " "$new"
  run 0 "$NC" list s3://nc-bucket-prune/cache --json || { stop_servers; return; }
  equals "$(json_get "$OUT" .unregistered_graphs.count)" "0"
  no_bad_signatures
  stop_servers
}

test_credentials_from_profile_container_and_instance_metadata() {
  start_proxy || return
  start_credentials 60 || { stop_servers; return; }
  "$MAKE_CACHE" "$SCRATCH/cache" --entries 3
  run 0 "$NC" create s3://nc-bucket-e/cache -q || { stop_servers; return; }
  unset AWS_ACCESS_KEY_ID AWS_SECRET_ACCESS_KEY
  # A named profile in the shared credentials file.
  mkdir -p "$HOME/.aws"
  printf '[default]\nregion = us-east-1\n[team]\naws_access_key_id = %s\naws_secret_access_key = %s\n' "$KEY_ID" "$SECRET" \
    >"$HOME/.aws/credentials"
  AWS_PROFILE=team run 0 "$NC" synchronize --cache-dir "$SCRATCH/cache" --dry-run
  AWS_PROFILE=missing run 1 "$NC" synchronize --cache-dir "$SCRATCH/cache"
  contains "$ERR" "AWS profile 'missing' is not in"
  rm "$HOME/.aws/credentials"
  # EC2 instance metadata, IMDSv2; the credentials last 60 s, under the 5 min margin:
  # fetched again before each use rather than used until they expire.
  AWS_EC2_METADATA_DISABLED=false AWS_EC2_METADATA_SERVICE_ENDPOINT="http://127.0.0.1:$CREDS_PORT" \
    run 0 "$NC" synchronize --cache-dir "$SCRATCH/cache" --json || { stop_servers; return; }
  equals "$(json_get "$OUT" ".transferred | length")" "3"
  [[ "$(grep -c 'issued imds' "$SCRATCH/creds.log")" -gt 1 ]] || fail "instance credentials not refreshed before expiry"
  # Container credentials (ECS, SageMaker), with their authorization token.
  : >"$SCRATCH/creds.log"
  AWS_CONTAINER_CREDENTIALS_FULL_URI="http://127.0.0.1:$CREDS_PORT/container/creds" \
    AWS_CONTAINER_AUTHORIZATION_TOKEN=container-auth-token \
    run 0 "$NC" synchronize --pull --cache-dir "$SCRATCH/fresh" --json || { stop_servers; return; }
  equals "$(json_get "$OUT" ".transferred | length")" "3"
  grep -q 'issued container' "$SCRATCH/creds.log" || fail "container credentials not used"
  AWS_CONTAINER_CREDENTIALS_FULL_URI="http://127.0.0.1:$CREDS_PORT/container/creds" \
    AWS_CONTAINER_AUTHORIZATION_TOKEN=wrong run 1 "$NC" synchronize --cache-dir "$SCRATCH/cache"
  contains "$ERR" "container credentials at http://127.0.0.1:$CREDS_PORT answered HTTP 401"
  one_line "$ERR"
  # Environment keys come first: the metadata service is not asked.
  : >"$SCRATCH/creds.log"
  AWS_ACCESS_KEY_ID="$KEY_ID" AWS_SECRET_ACCESS_KEY="$SECRET" AWS_EC2_METADATA_DISABLED=false \
    AWS_EC2_METADATA_SERVICE_ENDPOINT="http://127.0.0.1:$CREDS_PORT" run 0 "$NC" synchronize --cache-dir "$SCRATCH/cache"
  [[ ! -s "$SCRATCH/creds.log" ]] || fail "metadata asked although keys were in the environment"
  no_bad_signatures
  secrets_never_printed
  stop_servers
}

# start_sts: the fake credentials server with its STS and SSO portal, both endpoints pointed at it.
start_sts() {
  mkfifo "$SCRATCH/creds.port"
  "$PYTHON" "$S3_DIR/fake_credentials.py" --key ASIAMETADATAKEY00001 --secret metadata-secret-never-printed \
    --token metadata-session-token --keys "$SCRATCH/keys.json" --web-token web-identity-token-never-printed \
    --sso-token sso-access-token-never-printed --log "$SCRATCH/creds.log" >"$SCRATCH/creds.port" 2>"$SCRATCH/creds.err" &
  PIDS+=($!)
  read -r -t 20 CREDS_PORT <"$SCRATCH/creds.port" || { fail "credentials server did not start"; return 1; }
  export AWS_ENDPOINT_URL_STS="http://127.0.0.1:$CREDS_PORT" AWS_ENDPOINT_URL_SSO="http://127.0.0.1:$CREDS_PORT"
  : >"$SCRATCH/creds.log"
}

# aws_profiles: config and credentials files with every kind of profile, and the SSO token cache.
aws_profiles() {
  export AWS_CONFIG_FILE="$SCRATCH/aws/config" AWS_SHARED_CREDENTIALS_FILE="$SCRATCH/aws/credentials"
  mkdir -p "$SCRATCH/aws" "$HOME/.aws/sso/cache"
  printf '[base]\naws_access_key_id = %s\naws_secret_access_key = %s\n' "$KEY_ID" "$SECRET" >"$AWS_SHARED_CREDENTIALS_FILE"
  cat >"$SCRATCH/aws/helper.sh" <<SH
#!/usr/bin/env bash
case "\$1" in
  good) printf '{"Version": 1, "AccessKeyId": "%s", "SecretAccessKey": "%s"}\n' "$KEY_ID" "$SECRET" ;;
  temporary) printf '{"Version": 1, "AccessKeyId": "ASIAMETADATAKEY00001", "SecretAccessKey": "metadata-secret-never-printed", "SessionToken": "metadata-session-token", "Expiration": "2099-01-01T00:00:00Z"}\n'
             echo run >>"$SCRATCH/aws/helper.log" ;;
  badjson) echo 'AccessKeyId=AKIA secret=s' ;;
  version) printf '{"Version": 2, "AccessKeyId": "A", "SecretAccessKey": "S"}\n' ;;
  fail) echo "helper says no" >&2; exit 3 ;;
  slow) sleep 30 ;;
esac
SH
  chmod +x "$SCRATCH/aws/helper.sh"
  printf 'web-identity-token-never-printed\n' >"$SCRATCH/aws/web-token"
  cat >"$AWS_CONFIG_FILE" <<INI
[default]
region = us-east-1
[profile role]
role_arn = arn:aws:iam::123456789012:role/nc-test
source_profile = base
role_session_name = nc-e2e
external_id = ext-1
[profile chained]
role_arn = arn:aws:iam::123456789012:role/second
source_profile = role
[profile denied]
role_arn = arn:aws:iam::123456789012:role/denied
source_profile = base
[profile loop-a]
role_arn = arn:aws:iam::123456789012:role/a
source_profile = loop-b
[profile loop-b]
role_arn = arn:aws:iam::123456789012:role/b
source_profile = loop-a
[profile env-role]
role_arn = arn:aws:iam::123456789012:role/from-env
credential_source = Environment
[profile web]
role_arn = arn:aws:iam::123456789012:role/web
web_identity_token_file = $SCRATCH/aws/web-token
[profile proc]
credential_process = "$SCRATCH/aws/helper.sh" good
[profile proc-temporary]
credential_process = "$SCRATCH/aws/helper.sh" temporary
[profile proc-badjson]
credential_process = "$SCRATCH/aws/helper.sh" badjson
[profile proc-version]
credential_process = "$SCRATCH/aws/helper.sh" version
[profile proc-fail]
credential_process = "$SCRATCH/aws/helper.sh" fail
[profile proc-slow]
credential_process = "$SCRATCH/aws/helper.sh" slow
[profile sso-legacy]
sso_start_url = https://nc-legacy.awsapps.com/start
sso_region = us-east-1
sso_account_id = 123456789012
sso_role_name = NeuronCache
[profile sso]
sso_session = corp
sso_account_id = 123456789012
sso_role_name = NeuronCache
[profile sso-expired]
sso_session = stale
sso_account_id = 123456789012
sso_role_name = NeuronCache
[sso-session corp]
sso_start_url = https://nc-corp.awsapps.com/start
sso_region = us-east-1
sso_registration_scopes = sso:account:access
[sso-session stale]
sso_start_url = https://nc-stale.awsapps.com/start
sso_region = us-east-1
INI
  # The token cache as \`aws sso login\` leaves it: named by the SHA-1 of the session name
  # (of the start URL for a legacy profile).
  local key url expires
  for key in nc-corp:corp nc-legacy:https://nc-legacy.awsapps.com/start nc-stale:stale; do
    url="https://${key%%:*}.awsapps.com/start"
    expires=$([[ "$key" == nc-stale:* ]] && echo 2020-01-01T00:00:00Z || echo 2099-01-01T00:00:00UTC)
    printf '{"startUrl": "%s", "region": "us-east-1", "accessToken": "sso-access-token-never-printed", "expiresAt": "%s"}\n' \
      "$url" "$expires" >"$HOME/.aws/sso/cache/$(printf '%s' "${key#*:}" | sha1sum | cut -d' ' -f1).json"
  done
}

sts_secrets_never_printed() {
  local file
  for file in "$OUT" "$ERR"; do
    ! grep -qF -e web-identity-token-never-printed -e sso-access-token-never-printed -e "$SECRET" \
      -e metadata-secret-never-printed -e metadata-session-token "$file" || fail "a secret was printed"
  done
}

test_roles_sso_credential_process_and_web_identity() {
  start_proxy || return
  start_sts || { stop_servers; return; }
  "$MAKE_CACHE" "$SCRATCH/cache" --entries 2
  run 0 "$NC" create s3://nc-bucket-h/cache -q || { stop_servers; return; }
  unset AWS_ACCESS_KEY_ID AWS_SECRET_ACCESS_KEY
  aws_profiles
  local repo=(--repo-id s3://nc-bucket-h/cache --cache-dir "$SCRATCH/cache")
  # A role assumed with a source profile's keys, the AssumeRole signed for STS (the fake
  # recomputes the signature with botocore); --profile wins over AWS_PROFILE.
  AWS_PROFILE=denied run 0 "$NC" synchronize "${repo[@]}" --profile role --json || { stop_servers; return; }
  equals "$(json_get "$OUT" ".transferred | length")" "2"
  contains "$SCRATCH/creds.log" "issued assume-role arn:aws:iam::123456789012:role/nc-test nc-e2e by $KEY_ID ExternalId=ext-1"
  ! grep -q "bad signature" "$SCRATCH/creds.log" || fail "STS saw a bad signature"
  # A role whose source is a role: the second AssumeRole is signed with the first's session.
  : >"$SCRATCH/creds.log"
  run 0 "$NC" synchronize "${repo[@]}" --profile chained -q || { stop_servers; return; }
  contains "$SCRATCH/creds.log" "issued assume-role arn:aws:iam::123456789012:role/second"
  contains "$SCRATCH/creds.log" "by ASIAMETADATAKEY00001"
  # credential_source = Environment; keys in the environment do not override --profile
  # (they do AWS_PROFILE, as in the AWS CLI).
  : >"$SCRATCH/creds.log"
  AWS_ACCESS_KEY_ID="$KEY_ID" AWS_SECRET_ACCESS_KEY="$SECRET" run 0 "$NC" list --repo-id s3://nc-bucket-h/cache \
    --profile env-role
  contains "$SCRATCH/creds.log" "issued assume-role arn:aws:iam::123456789012:role/from-env"
  : >"$SCRATCH/creds.log"
  AWS_ACCESS_KEY_ID="$KEY_ID" AWS_SECRET_ACCESS_KEY="$SECRET" AWS_PROFILE=role run 0 "$NC" list --repo-id s3://nc-bucket-h/cache
  [[ ! -s "$SCRATCH/creds.log" ]] || fail "STS asked although keys were in the environment"
  # What STS refuses, and loops, are one clear line.
  run 1 "$NC" synchronize "${repo[@]}" --profile denied
  contains "$ERR" "refused AssumeRole (AccessDenied: User is not authorized"
  one_line "$ERR"
  run 1 "$NC" synchronize "${repo[@]}" --profile loop-a
  contains "$ERR" "loops through"
  one_line "$ERR"
  run 1 "$NC" synchronize "${repo[@]}" --profile nowhere
  contains "$ERR" "AWS profile 'nowhere' is not in"

  # SSO, with an [sso-session] and in the legacy form, from the cached token.
  : >"$SCRATCH/creds.log"
  run 0 "$NC" synchronize --pull --repo-id s3://nc-bucket-h/cache --cache-dir "$SCRATCH/fresh" --profile sso --json \
    || { stop_servers; return; }
  equals "$(json_get "$OUT" ".transferred | length")" "2"
  contains "$SCRATCH/creds.log" "issued sso 123456789012 NeuronCache"
  run 0 "$NC" list --repo-id s3://nc-bucket-h/cache --profile sso-legacy
  run 1 "$NC" list --repo-id s3://nc-bucket-h/cache --profile sso-expired
  contains "$ERR" "the SSO session of AWS profile 'sso-expired' has expired"
  contains "$ERR" "aws sso login --profile sso-expired"
  one_line "$ERR"

  # credential_process: static keys, temporary ones (run once, then reused), and failures.
  run 0 "$NC" list --repo-id s3://nc-bucket-h/cache --profile proc
  run 0 "$NC" synchronize --pull --repo-id s3://nc-bucket-h/cache --cache-dir "$SCRATCH/fresh2" --profile proc-temporary -q
  equals "$(wc -l <"$SCRATCH/aws/helper.log")" "1"
  run 1 "$NC" list --repo-id s3://nc-bucket-h/cache --profile proc-badjson
  contains "$ERR" "the credential_process of AWS profile 'proc-badjson' printed no JSON object"
  one_line "$ERR"
  run 1 "$NC" list --repo-id s3://nc-bucket-h/cache --profile proc-version
  contains "$ERR" 'printed no "Version": 1'
  run 1 "$NC" list --repo-id s3://nc-bucket-h/cache --profile proc-fail
  contains "$ERR" "the credential_process of AWS profile 'proc-fail' exited with status 3: helper says no"
  one_line "$ERR"

  # Web identity: EKS's variables, and a profile's web_identity_token_file (unsigned calls).
  : >"$SCRATCH/creds.log"
  AWS_WEB_IDENTITY_TOKEN_FILE="$SCRATCH/aws/web-token" AWS_ROLE_ARN=arn:aws:iam::123456789012:role/irsa \
    AWS_ROLE_SESSION_NAME=pod-1 run 0 "$NC" list --repo-id s3://nc-bucket-h/cache
  contains "$SCRATCH/creds.log" "issued web-identity arn:aws:iam::123456789012:role/irsa pod-1"
  run 0 "$NC" list --repo-id s3://nc-bucket-h/cache --profile web
  contains "$SCRATCH/creds.log" "issued web-identity arn:aws:iam::123456789012:role/web"
  echo "wrong-token" >"$SCRATCH/aws/bad-token"
  AWS_WEB_IDENTITY_TOKEN_FILE="$SCRATCH/aws/bad-token" AWS_ROLE_ARN=arn:aws:iam::123456789012:role/irsa \
    run 1 "$NC" list --repo-id s3://nc-bucket-h/cache
  contains "$ERR" "refused AssumeRoleWithWebIdentity (InvalidIdentityToken"
  one_line "$ERR"

  # config: each value with its source, the key id masked, the account from STS.
  run 0 "$NC" config --repo-id s3://nc-bucket-h/cache --profile role --region us-east-1 --json || { stop_servers; return; }
  valid_json "$OUT" config.schema.json
  equals "$(json_get "$OUT" .aws.profile)" "role"
  equals "$(json_get "$OUT" .aws.profile_source)" "--profile"
  equals "$(json_get "$OUT" .aws.region_source)" "--region"
  equals "$(json_get "$OUT" .aws.s3_endpoint)" "$PROXY_URL"
  equals "$(json_get "$OUT" .aws.s3_endpoint_source)" "AWS_ENDPOINT_URL"
  equals "$(json_get "$OUT" .aws.access_key_id)" "****************0001"
  equals "$(json_get "$OUT" .aws.credentials_kind)" "temporary"
  equals "$(json_get "$OUT" .aws.account)" "123456789012"
  contains "$SCRATCH/creds.log" "identity ASIAMETADATAKEY00001"
  AWS_PROFILE=sso run 0 "$NC" config --repo-id s3://nc-bucket-h/cache
  contains "$OUT" "AWS profile:   sso (from AWS_PROFILE)"
  contains "$OUT" "AWS keys:      ****************0001, temporary until"
  contains "$OUT" "AWS account:   123456789012"
  sts_secrets_never_printed
  no_bad_signatures
  stop_servers
}

test_public_buckets_endpoint_and_region_options() {
  start_proxy --public nc-bucket-pub || return
  "$MAKE_CACHE" "$SCRATCH/cache" --entries 2
  run 0 "$NC" create s3://nc-bucket-pub/cache -q || { stop_servers; return; }
  run 0 "$NC" synchronize --repo-id s3://nc-bucket-pub/cache --cache-dir "$SCRATCH/cache" -q || { stop_servers; return; }
  run 0 "$NC" create s3://nc-bucket-priv/cache -q || { stop_servers; return; }
  # No credentials anywhere: a public bucket is read unsigned, nothing asked of any source.
  unset AWS_ACCESS_KEY_ID AWS_SECRET_ACCESS_KEY AWS_ENDPOINT_URL
  export AWS_CONFIG_FILE="$SCRATCH/none" AWS_SHARED_CREDENTIALS_FILE="$SCRATCH/none"
  : >"$SCRATCH/proxy.log"
  run 0 "$NC" synchronize --pull --repo-id s3://nc-bucket-pub/cache --cache-dir "$SCRATCH/fresh" \
    --endpoint-url "$PROXY_URL" --no-sign-request --json || { stop_servers; return; }
  equals "$(json_get "$OUT" ".transferred | length")" "2"
  same_entries "$SCRATCH/cache" "$SCRATCH/fresh"
  grep -q "anonymous" "$SCRATCH/proxy.log" || fail "the requests were not anonymous"
  ! grep -q "AccessDenied" "$SCRATCH/proxy.log" || fail "denied: $(grep AccessDenied "$SCRATCH/proxy.log")"
  # A private bucket is not, and writes are not: one clear line each.
  run 1 "$NC" list --repo-id s3://nc-bucket-priv/cache --endpoint-url "$PROXY_URL" --no-sign-request
  one_line "$ERR"
  "$MAKE_CACHE" "$SCRATCH/more" --entries 3
  run 1 "$NC" synchronize --repo-id s3://nc-bucket-pub/cache --cache-dir "$SCRATCH/more" --endpoint-url "$PROXY_URL" \
    --no-sign-request
  contains "$ERR" "denied"
  one_line "$ERR"
  # Without credentials and without --no-sign-request: the error says how to read public buckets.
  AWS_EC2_METADATA_DISABLED=true run 1 "$NC" list --repo-id s3://nc-bucket-pub/cache --endpoint-url "$PROXY_URL"
  contains "$ERR" "no AWS credentials found"
  # config under --no-sign-request: no credentials looked up.
  run 0 "$NC" config --repo-id s3://nc-bucket-pub/cache --endpoint-url "$PROXY_URL" --no-sign-request --json
  valid_json "$OUT" config.schema.json
  equals "$(json_get "$OUT" .aws.signed)" "false"
  equals "$(json_get "$OUT" .aws.s3_endpoint_source)" "--endpoint-url"
  equals "$(json_get "$OUT" .aws.access_key_id)" "null"
  # Bad values are usage errors or one clear line.
  run 2 "$NC" list --repo-id s3://nc-bucket-pub/cache --profile ""
  run 1 "$NC" list --repo-id s3://nc-bucket-pub/cache --endpoint-url ftp://x --no-sign-request
  contains "$ERR" "--endpoint-url must be an http:// or https:// URL"
  run 1 "$NC" list --repo-id s3://nc-bucket-pub/cache --region 'bad region' --no-sign-request
  contains "$ERR" "from --region is not a region name"
  no_bad_signatures
  stop_servers
}

# start_hub: the project's test Hub on 127.0.0.1 (user alice), for copies between S3 and
# the Hub; sets HF_ENDPOINT and HF_TOKEN.
ALICE=hf_alice_s3_e2e_write_token_0001
start_hub() {
  mkfifo "$SCRATCH/hub.url"
  "$BIN_DIR/neuron-cache-test-hub" --port 0 --data "$SCRATCH/hub-data" --user "alice:$ALICE:write" \
    --lfs-threshold 64 >"$SCRATCH/hub.url" 2>"$SCRATCH/hub.log" &
  PIDS+=($!)
  local url
  read -r -t 20 url <"$SCRATCH/hub.url" || { fail "the test Hub did not start: $(cat "$SCRATCH/hub.log")"; return 1; }
  export HF_ENDPOINT="$url" HF_TOKEN="$ALICE"
}

# model.done of ENTRY was PUT after its model.neff under PREFIX (the proxy's log order).
done_after_neff() {
  local prefix="$1" entry neff_line done_line
  entry=$(logged "$2")
  neff_line=$(grep -n "PUT /$prefix/$entry/model.neff " "$SCRATCH/proxy.log" | head -1 | cut -d: -f1)
  done_line=$(grep -n "PUT /$prefix/$entry/model.done " "$SCRATCH/proxy.log" | head -1 | cut -d: -f1)
  [[ -n "$neff_line" && -n "$done_line" && "$done_line" -gt "$neff_line" ]] \
    || fail "model.done of $2 not after its model.neff ($neff_line, $done_line)"
}

test_an_s3_compile_cache_is_published_to_the_hub_and_pulled_into_another() {
  export TMPDIR="$SCRATCH/tmp"
  mkdir -p "$TMPDIR"
  start_proxy || return
  start_hub || { stop_servers; return; }
  "$MAKE_CACHE" "$SCRATCH/cache" --faults
  aws_cli s3 mb s3://nc-bucket-sm >/dev/null 2>&1 || fail "aws s3 mb"
  # What a SageMaker job leaves with NEURON_COMPILE_CACHE_URL=s3://…: the SDK's layout, no
  # marker, the failed, locked and unfinished entries included.
  aws_cli s3 sync --quiet "$SCRATCH/cache" s3://nc-bucket-sm/job-1/neuron-cache 2>"$SCRATCH/sync.err" \
    || fail "aws s3 sync: $(cat "$SCRATCH/sync.err")"
  local listing_before; listing_before=$(aws_cli s3 ls --recursive s3://nc-bucket-sm/ 2>&1)
  run 0 "$NC" create alice/from-sagemaker --no-set -q || { stop_servers; return; }

  NEURON_COMPILE_CACHE_URL=s3://nc-bucket-sm/job-1/neuron-cache \
    run 0 "$NC" synchronize --repo-id alice/from-sagemaker --json || { stop_servers; return; }
  valid_json "$OUT" transfer.schema.json
  equals "$(json_get "$OUT" .direction)" "push"
  equals "$(json_get "$OUT" .cache_dir)" "s3://nc-bucket-sm/job-1/neuron-cache"
  equals "$(json_get "$OUT" .cache_dir_source)" "NEURON_COMPILE_CACHE_URL"
  # The same entries a push from the local copy carries: 5 graphs, the exported model, the registry.
  equals "$(json_get "$OUT" ".transferred | length")" "7"
  equals "$(json_get "$OUT" '.skipped_by_reason."failed-in-source"')" "1"
  equals "$(json_get "$OUT" '.skipped_by_reason."flags-mismatch-in-source"')" "1"
  equals "$(json_get "$OUT" '[.skipped[] | select(.reason == "incomplete-in-source")] | length')" "3"
  equals "$(json_get "$OUT" .commits)" "1"
  # The S3 cache is only read.
  equals "$(aws_cli s3 ls --recursive s3://nc-bucket-sm/ 2>&1)" "$listing_before"

  # Again: nothing moves.
  NEURON_COMPILE_CACHE_URL=s3://nc-bucket-sm/job-1/neuron-cache \
    run 0 "$NC" synchronize --repo-id alice/from-sagemaker || { stop_servers; return; }
  contains "$OUT" "Nothing to copy: alice/from-sagemaker already has every complete entry of s3://nc-bucket-sm/job-1/neuron-cache"
  contains "$OUT" "7 already present"

  # A host pulls what the job compiled, byte for byte.
  run 0 "$NC" synchronize --pull --repo-id alice/from-sagemaker --cache-dir "$SCRATCH/fresh" --json \
    || { stop_servers; return; }
  equals "$(json_get "$OUT" ".transferred | length")" "7"
  same_entries "$SCRATCH/cache" "$SCRATCH/fresh"

  # The Hub repo into the S3 cache of the next job, in a bucket that does not exist yet;
  # batches of 3 files show that model.done still goes after each entry's other files.
  NEURON_CACHE_COPY_BATCH_FILES=3 run 0 "$NC" synchronize --pull --repo-id alice/from-sagemaker \
    --cache-dir s3://nc-bucket-next/job-2/cache --json || { stop_servers; return; }
  valid_json "$OUT" transfer.schema.json
  equals "$(json_get "$OUT" .direction)" "pull"
  equals "$(json_get "$OUT" ".transferred | length")" "7"
  [[ "$(json_get "$OUT" .commits)" -gt 1 ]] || fail "expected several batches: $(cat "$OUT")"
  aws_cli s3 cp --recursive --quiet s3://nc-bucket-next/job-2/cache "$SCRATCH/via-cli" 2>"$SCRATCH/cp.err" \
    || fail "aws s3 cp: $(cat "$SCRATCH/cp.err")"
  # The bucket was made, and the prefix marked as a cache repo.
  [[ -f "$SCRATCH/via-cli/.neuron-cache/repo.json" ]] || fail "no marker in the new S3 cache"
  same_entries "$SCRATCH/cache" "$SCRATCH/via-cli"
  done_after_neff nc-bucket-next/job-2/cache "$VERSION_DIR/MODULE_1000000000000000+39f12043"
  [[ ! -e "$SCRATCH/via-cli/$VERSION_DIR/MODULE_900001+39f12043" ]] || fail "a failed entry was copied"
  # S3 cache to S3 cache, and nothing left in the scratch space.
  run 0 "$NC" synchronize --repo-id s3://nc-bucket-next/job-2/cache --cache-dir s3://nc-bucket-sm/job-1/neuron-cache \
    --json || { stop_servers; return; }
  equals "$(json_get "$OUT" ".present | length")" "7"
  [[ -z "$(ls -A "$TMPDIR")" ]] || fail "scratch left behind: $(ls -A "$TMPDIR")"
  # The job's S3 cache gets a NEFF rewritten with the same size. The Hub lists sha256s, S3
  # ETags: what the last copy recorded tells the change; another S3 cache's MD5 ETag tells
  # it by itself. A complete entry at the target is left alone, and said so.
  local neff="$VERSION_DIR/MODULE_1000000000000000+39f12043/model.neff"
  head -c "$(stat -c %s "$SCRATCH/cache/$neff")" /dev/urandom >"$SCRATCH/rewritten.neff"
  aws_cli s3 cp --quiet "$SCRATCH/rewritten.neff" "s3://nc-bucket-sm/job-1/neuron-cache/$neff" || fail "aws s3 cp"
  NEURON_COMPILE_CACHE_URL=s3://nc-bucket-sm/job-1/neuron-cache \
    run 0 "$NC" synchronize --repo-id alice/from-sagemaker --json || { stop_servers; return; }
  equals "$(json_get "$OUT" ".present | length")" "6"
  equals "$(json_get "$OUT" '.skipped_by_reason."target-entry-differs"')" "1"
  run 0 "$NC" synchronize --repo-id s3://nc-bucket-next/job-2/cache --cache-dir s3://nc-bucket-sm/job-1/neuron-cache \
    --json || { stop_servers; return; }
  equals "$(json_get "$OUT" ".present | length")" "6"
  equals "$(json_get "$OUT" '.skipped_by_reason."target-entry-differs"')" "1"
  no_bad_signatures
  secrets_never_printed
  stop_servers
}

test_copies_between_stores_refuse_bad_input_and_change_nothing() {
  start_proxy || return
  "$MAKE_CACHE" "$SCRATCH/cache" --entries 2
  run 0 "$NC" create "$SCRATCH/repo" --no-set -q || { stop_servers; return; }
  aws_cli s3 mb s3://nc-bucket-bad >/dev/null 2>&1 || fail "aws s3 mb"
  echo "precious" >"$SCRATCH/precious.txt"
  aws_cli s3 cp --quiet "$SCRATCH/precious.txt" s3://nc-bucket-bad/data/precious.txt || fail "aws s3 cp"
  local repo_before s3_before
  repo_before=$(snapshot "$SCRATCH/repo")
  s3_before=$(aws_cli s3 ls --recursive s3://nc-bucket-bad/ 2>&1)
  # A prefix that holds something else is neither read as a cache nor written to.
  run 1 "$NC" synchronize --repo-id "$SCRATCH/repo" --cache-dir s3://nc-bucket-bad/data
  contains "$ERR" "the compile cache s3://nc-bucket-bad/data (from --cache-dir) holds no Neuron compile cache entries"
  one_line "$ERR"
  run 0 "$NC" synchronize --repo-id "$SCRATCH/repo" --cache-dir "$SCRATCH/cache" -q || { stop_servers; return; }
  repo_before=$(snapshot "$SCRATCH/repo")
  run 1 "$NC" synchronize --pull --repo-id "$SCRATCH/repo" --cache-dir s3://nc-bucket-bad/data
  contains "$ERR" "holds something else than a Neuron compile cache"
  one_line "$ERR"
  # A bucket that does not exist is no source.
  run 1 "$NC" synchronize --repo-id "$SCRATCH/repo" --cache-dir s3://nc-no-such-bucket/cache
  contains "$ERR" "S3 bucket nc-no-such-bucket does not exist"
  one_line "$ERR"
  # Local-cache options, and one store named twice, are usage errors.
  run 2 "$NC" synchronize --repo-id "$SCRATCH/repo" --cache-dir s3://nc-bucket-bad/cache --clean-failed
  contains "$ERR" "--clean-failed works on a local compile cache, not on s3://nc-bucket-bad/cache"
  run 2 "$NC" synchronize --pull --repo-id "$SCRATCH/repo" --cache-dir s3://nc-bucket-bad/cache --replace-failed
  run 2 "$NC" synchronize --repo-id s3://nc-bucket-bad/cache --cache-dir s3://nc-bucket-bad/cache/
  contains "$ERR" "are the same store"
  # config shows an S3 compile cache as it is.
  NEURON_COMPILE_CACHE_URL=s3://nc-bucket-bad/cache run 0 "$NC" config --json
  equals "$(json_get "$OUT" .cache_dir)" "s3://nc-bucket-bad/cache"
  equals "$(json_get "$OUT" .cache_dir_source)" "NEURON_COMPILE_CACHE_URL"
  # Where only a local cache works, an S3 one is one clear line.
  NEURON_COMPILE_CACHE_URL=s3://nc-bucket-bad/cache run 1 "$NC" cleanup --dry-run
  contains "$ERR" "is in S3"
  one_line "$ERR"
  equals "$(snapshot "$SCRATCH/repo")" "$repo_before"
  equals "$(aws_cli s3 ls --recursive s3://nc-bucket-bad/ 2>&1)" "$s3_before"
  no_bad_signatures
  secrets_never_printed
  stop_servers
}

test_flipped_bytes_are_never_installed_and_exist_ok_creates_a_missing_bucket() {
  start_proxy --corrupt-get model.neff || return
  export NEURON_CACHE_S3_MULTIPART_THRESHOLD=$((6 * 1024 * 1024)) NEURON_CACHE_S3_PART_SIZE=$((5 * 1024 * 1024))
  "$MAKE_CACHE" "$SCRATCH/cache" --entries 2
  local big="$VERSION_DIR/MODULE_1000000000000001+39f12043"
  head -c $((12 * 1024 * 1024 + 5)) /dev/urandom >"$SCRATCH/cache/$big/model.neff"
  # A bucket that does not exist yet: --exist-ok creates it, as create does without it.
  run 0 "$NC" create s3://nc-bucket-flip/cache --exist-ok --json || { stop_servers; return; }
  equals "$(json_get "$OUT" .created)" "true"
  run 0 "$NC" create s3://nc-bucket-flip/cache --exist-ok --json
  equals "$(json_get "$OUT" .created)" "false"
  run 0 "$NC" synchronize --cache-dir "$SCRATCH/cache" --json || { stop_servers; return; }
  grep -q "PUT /nc-bucket-flip/cache/.*MODULE_1000000000000001.*/model.neff?partNumber=2&uploadId=" "$SCRATCH/proxy.log" \
    || fail "the big NEFF was not uploaded in parts"
  # Every NEFF arrives with one byte flipped: the single-PUT one fails its ETag (its MD5), the
  # multipart one its multipart ETag, recomputed over our part size; no entry is installed.
  run 1 "$NC" synchronize --pull --cache-dir "$SCRATCH/fresh" --json
  cat "$OUT" "$ERR" >"$SCRATCH/pull.txt"
  contains "$SCRATCH/pull.txt" "does not match its ETag (MD5)"
  contains "$SCRATCH/pull.txt" "does not match its multipart ETag"
  [[ ! -e "$SCRATCH/fresh/$big" && ! -e "$SCRATCH/fresh/$VERSION_DIR/MODULE_1000000000000000+39f12043" ]] \
    || fail "an entry with flipped bytes was installed"
  no_bad_signatures
  secrets_never_printed
  stop_servers
}

run_tests
