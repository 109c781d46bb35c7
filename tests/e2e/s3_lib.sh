# Shared by the S3 suites (test_s3.sh, test_s3_gateway.sh): one s3rver for the suite, the
# verifying proxy (tests/s3/sigv4_proxy.py) each test starts in front of it, the test keys.
# Sourced after lib.sh.
S3_DIR="$SOURCE_DIR/tests/s3"
MAKE_CACHE="$SOURCE_DIR/tests/tools/make_sample_cache.sh"
VERSION_DIR="neuronxcc-2.21.33363.0+82129205"
KEY_ID=AKIANEURONCACHETEST1
SECRET=neuron-cache-test-secret-never-printed-0001
# The AWS CLI v2 (Debian's awscli); an `aws` earlier on PATH may be v1.
AWS_CLI=/usr/bin/aws
[[ -x "$AWS_CLI" ]] || AWS_CLI=$(command -v aws || true)

# botocore as the CLI's own Python has it (the Debian package ships it inside awscli).
PYTHON=/usr/bin/python3
"$PYTHON" -c 'import awscli, botocore.auth' 2>/dev/null || PYTHON=python3
if [[ ! -x "$S3_DIR/node_modules/.bin/s3rver" ]] || [[ -z "$AWS_CLI" ]] \
   || ! "$PYTHON" -c 'import botocore.auth' 2>/dev/null && ! "$PYTHON" -c 'import awscli, botocore.auth' 2>/dev/null; then
  echo "$(basename "$0") needs s3rver (tests/s3), the AWS CLI v2 and botocore: run make deps" >&2
  exit 1
fi
"$AWS_CLI" --version 2>&1 | grep -q '^aws-cli/2' || { echo "$AWS_CLI is not the AWS CLI v2" >&2; exit 1; }

# One s3rver for the suite; each test gets its own proxy (and its own buckets).
S3_DATA="$SUITE_ROOT/s3rver"
mkdir -p "$S3_DATA"
NODE_OPTIONS=--openssl-legacy-provider "$S3_DIR/node_modules/.bin/s3rver" -d "$S3_DATA" -a 127.0.0.1 -p 0 \
  >"$SUITE_ROOT/s3rver.log" 2>&1 &
S3RVER_PID=$!
trap 'kill $S3RVER_PID 2>/dev/null; wait $S3RVER_PID 2>/dev/null; [[ -n "${KEEP_E2E:-}" ]] || rm -rf "$SUITE_ROOT"' EXIT
for _ in $(seq 100); do
  S3RVER_PORT=$(grep -o 'listening on 127.0.0.1:[0-9]*' "$SUITE_ROOT/s3rver.log" | cut -d: -f2)
  [[ -n "$S3RVER_PORT" ]] && break
  sleep 0.1
done
[[ -n "$S3RVER_PORT" ]] || { echo "s3rver did not start: $(cat "$SUITE_ROOT/s3rver.log")" >&2; exit 1; }

unset AWS_ACCESS_KEY_ID AWS_SECRET_ACCESS_KEY AWS_SESSION_TOKEN AWS_PROFILE AWS_DEFAULT_PROFILE AWS_REGION \
      AWS_DEFAULT_REGION AWS_ENDPOINT_URL AWS_ENDPOINT_URL_S3 AWS_CONFIG_FILE AWS_SHARED_CREDENTIALS_FILE \
      AWS_CONTAINER_CREDENTIALS_RELATIVE_URI AWS_CONTAINER_CREDENTIALS_FULL_URI AWS_CONTAINER_AUTHORIZATION_TOKEN \
      AWS_EC2_METADATA_SERVICE_ENDPOINT AWS_ENDPOINT_URL_STS AWS_ENDPOINT_URL_SSO AWS_WEB_IDENTITY_TOKEN_FILE AWS_ROLE_ARN \
      AWS_ROLE_SESSION_NAME AWS_IGNORE_CONFIGURED_ENDPOINT_URLS
export NEURON_CACHE_HTTP_BACKOFF_BASE_MS=5

PIDS=()
stop_servers() { local pid; for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; done; return 0; }
# A key as the proxy logs it (percent-encoded by the client).
logged() { printf '%s' "$1" | sed 's/+/%2B/g'; }

# start_proxy [proxy options...]: a verifying proxy in front of s3rver; sets PROXY_URL and
# exports the endpoint, region and the test keys.
start_proxy() {
  cat >"$SCRATCH/keys.json" <<JSON
{"$KEY_ID": {"secret": "$SECRET", "token": null},
 "ASIAEXPIREDTOKEN0001": {"secret": "$SECRET", "token": "expired-session-token"},
 "ASIAMETADATAKEY00001": {"secret": "metadata-secret-never-printed", "token": "metadata-session-token"}}
JSON
  mkfifo "$SCRATCH/proxy.port"
  "$PYTHON" "$S3_DIR/sigv4_proxy.py" --upstream "http://127.0.0.1:$S3RVER_PORT" --keys "$SCRATCH/keys.json" \
    --log "$SCRATCH/proxy.log" "$@" >"$SCRATCH/proxy.port" 2>"$SCRATCH/proxy.err" &
  PIDS+=($!)
  local port
  read -r -t 20 port <"$SCRATCH/proxy.port" || { fail "proxy did not start: $(cat "$SCRATCH/proxy.err")"; return 1; }
  PROXY_URL="http://127.0.0.1:$port"
  export AWS_ENDPOINT_URL="$PROXY_URL" AWS_REGION=us-east-1 AWS_EC2_METADATA_DISABLED=true
  export AWS_ACCESS_KEY_ID="$KEY_ID" AWS_SECRET_ACCESS_KEY="$SECRET"
}

# aws_cli ARGS...: the official CLI, through the same verifying proxy.
aws_cli() { "$AWS_CLI" --endpoint-url "$PROXY_URL" --region "${AWS_REGION:-us-east-1}" "$@"; }

no_bad_signatures() {
  ! grep -q SignatureDoesNotMatch "$SCRATCH/proxy.log" || fail "bad signatures: $(grep -A8 SignatureDoesNotMatch "$SCRATCH/proxy.log" | head -20)"
}

secrets_never_printed() {
  local file
  for file in "$OUT" "$ERR"; do
    ! grep -qF -e "$SECRET" -e metadata-secret-never-printed -e metadata-session-token "$file" || fail "a secret was printed"
  done
}

