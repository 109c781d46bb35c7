#!/usr/bin/env bash
# End to end: s3:// repos through the Hugging Face Storage Buckets S3 gateway
# (https://s3.hf.co/<namespace>, docs/s3-gateway.md), played by the verifying proxy in front
# of s3rver with --gateway-prefix: the endpoint URL has a path (the namespace) that must be
# signed as sent, bodies are never aws-chunked or chunked, and a GetObject is answered 302
# to a CDN on another port that must never receive the Authorization header or any other
# credential. The proxy logs every breach as GATEWAY-VIOLATION.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/s3_lib.sh"

NAMESPACE=hf-team

gateway_rules_held() {
  ! grep -q GATEWAY-VIOLATION "$SCRATCH/proxy.log" \
    || fail "the gateway's rules were broken: $(grep GATEWAY-VIOLATION "$SCRATCH/proxy.log" | head -5)"
}

test_push_and_pull_through_the_gateway_and_its_cdn() {
  start_proxy --gateway-prefix "$NAMESPACE" || return
  unset AWS_ENDPOINT_URL
  local endpoint="$PROXY_URL/$NAMESPACE"
  "$MAKE_CACHE" "$SCRATCH/cache"
  # One NEFF above the multipart threshold: its parts must not be aws-chunked either.
  export NEURON_CACHE_S3_MULTIPART_THRESHOLD=$((6 * 1024 * 1024)) NEURON_CACHE_S3_PART_SIZE=$((5 * 1024 * 1024))
  head -c $((12 * 1024 * 1024 + 5)) /dev/urandom >"$SCRATCH/cache/$VERSION_DIR/MODULE_1000000000000001+39f12043/model.neff"
  run 0 "$NC" create s3://nc-gateway/cache --endpoint-url "$endpoint" --json || { stop_servers; return; }
  run 0 "$NC" synchronize --cache-dir "$SCRATCH/cache" --endpoint-url "$endpoint" --json || { stop_servers; return; }
  equals "$(json_get "$OUT" ".transferred | length")" "5"
  contains "$SCRATCH/proxy.log" "PUT /$NAMESPACE/nc-gateway/cache/$(logged "$VERSION_DIR")/"
  grep -q "model.neff?partNumber=3&uploadId=" "$SCRATCH/proxy.log" || fail "the big NEFF was not uploaded in parts"
  # Pulled onto a fresh host: every object comes from the CDN, unsigned.
  run 0 "$NC" synchronize --pull --cache-dir "$SCRATCH/fresh" --endpoint-url "$endpoint" --json \
    || { stop_servers; return; }
  equals "$(json_get "$OUT" ".transferred | length")" "5"
  same_entries "$SCRATCH/cache" "$SCRATCH/fresh"
  grep -q "^GET /$NAMESPACE/nc-gateway/cache/.* -> 302 http://127.0.0.1:" "$SCRATCH/proxy.log" \
    || fail "no GetObject was redirected to the CDN"
  grep -q "^CDN GET /cdn/.* -> 200" "$SCRATCH/proxy.log" || fail "nothing was fetched from the CDN"
  gateway_rules_held
  no_bad_signatures
  secrets_never_printed
  stop_servers
}

test_the_proxy_catches_what_the_gateway_refuses() {
  # The checks above can fail: a chunked upload, a request without the namespace and
  # credentials sent to the CDN are each logged as a violation.
  start_proxy --gateway-prefix "$NAMESPACE" || return
  curl -s -o /dev/null -X PUT -H "Transfer-Encoding: chunked" --data-binary "x" "$PROXY_URL/$NAMESPACE/b/k" || true
  curl -s -o /dev/null "$PROXY_URL/b/k" || true
  local cdn_port
  cdn_port=$(sed -n 's/^CDN listening on \([0-9]*\)$/\1/p' "$SCRATCH/proxy.log")
  curl -s -o /dev/null -H "Authorization: AWS4-HMAC-SHA256 Credential=x" "http://127.0.0.1:$cdn_port/cdn/none" || true
  contains "$SCRATCH/proxy.log" "GATEWAY-VIOLATION PUT /$NAMESPACE/b/k: a chunked body"
  contains "$SCRATCH/proxy.log" "GATEWAY-VIOLATION GET /b/k: the path does not start with /$NAMESPACE/"
  contains "$SCRATCH/proxy.log" "GATEWAY-VIOLATION CDN GET /cdn/none: sent Authorization"
  stop_servers
}

run_tests
