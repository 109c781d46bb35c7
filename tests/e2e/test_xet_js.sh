#!/usr/bin/env bash
# End to end: the official JS client (@huggingface/hub, tests/hub-js) as a Xet witness both
# ways against the test Hub with --xet. Its Xet upload (xorbs without footer, a shard with
# footer, its dedup query) is pulled by neuron-cache byte for byte; what neuron-cache pushes
# through Xet is downloaded byte for byte by the JS client through its Xet path (XetBlob:
# v2 reconstruction, multi-range xorb fetches). tests/hub-js/xet_roundtrip.mjs drives it.
# The same both ways for a Storage Bucket: the client's commitIterBucket (Xet shards without
# the sha256 extension, then the batch API) is pulled by neuron-cache, and what neuron-cache
# publishes to a bucket is listed and downloaded by the client through Xet.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/xet_lib.sh"
JS="$SOURCE_DIR/tests/hub-js/xet_roundtrip.mjs"

# js MODE REPO DIR: runs the JS client; its JSON summary in $OUT.
js() {
  node "$JS" "$1" "$HUB_URL" "$TOKEN" "$2" "$3" >"$SCRATCH/js.out" 2>"$SCRATCH/js.err" ||
    { fail "the JS client's $1 failed: $(head -c 2000 "$SCRATCH/js.err")"; return 1; }
  OUT=$(cat "$SCRATCH/js.out")
}

test_a_js_xet_upload_is_pulled_by_neuron_cache() {
  start_hub || return
  "$MAKE_CACHE" "$SCRATCH/cache" --entries 4 --neff-size 500000 --seed 51 >/dev/null || { fail "no cache"; return 1; }
  run 0 "$NC" create alice/fromjs -q || return
  reset_stats
  js upload alice/fromjs "$SCRATCH/cache" || return
  [[ "$(stat_of '.by_route.cas_xorb // 0')" -ge 1 ]] || fail "the JS client uploaded no xorb"
  [[ "$(stat_of '.by_route.cas_shard // 0')" -ge 1 ]] || fail "the JS client uploaded no shard"
  equals "$(stat_of '.by_route.lfs_upload // 0')" 0
  reset_stats
  run 0 "$NC" pull --repo-id alice/fromjs --cache-dir "$SCRATCH/fresh" --json || return
  equals "$(tree "$SCRATCH/fresh/$VERSION_DIR")" "$(tree "$SCRATCH/cache/$VERSION_DIR")"
  [[ "$(stat_of '.by_route.cas_reconstruction // 0')" -ge 4 ]] || fail "the pull did not read the CAS"
  equals "$(stat_of '.by_route.lfs_cdn // 0')" 0
}

test_a_neuron_cache_xet_push_is_downloaded_by_js() {
  start_hub || return
  "$MAKE_CACHE" "$SCRATCH/cache" --entries 4 --neff-size 500000 --seed 52 >/dev/null || { fail "no cache"; return 1; }
  # A recompiled copy of one NEFF: its file is made of two xorbs, the first in two ranges.
  local module; module=$(find "$SCRATCH/cache/$VERSION_DIR" -mindepth 1 -maxdepth 1 -type d -name 'MODULE_*' | sort | head -n 1)
  run 0 "$NC" create alice/tojs -q || return
  run 0 "$NC" push --repo-id alice/tojs --cache-dir "$SCRATCH/cache" --json || return
  local copy; copy="$(dirname "$module")/MODULE_0123456789abcdef0123+$(basename "$module" | cut -d+ -f2)"
  cp -r "$module" "$copy"
  printf 'recompiled' | dd of="$(find "$copy" -name '*.neff')" bs=1 seek=250000 conv=notrunc status=none
  run 0 "$NC" push --repo-id alice/tojs --cache-dir "$SCRATCH/cache" --json || return
  [[ "$(json_get "$OUT" '.xet.stored_bytes')" -gt 0 ]] || fail "the recompiled NEFF did not reuse stored chunks"
  reset_stats
  js download alice/tojs "$SCRATCH/js" || return
  [[ "$(stat_of '.by_route.cas_xorb_data // 0')" -ge 1 ]] || fail "the JS client fetched no xorb range"
  equals "$(stat_of '.by_route.lfs_cdn // 0')" 0
  # Every file it rebuilt is the pushed one, byte for byte; the NEFFs are among them.
  local file count=0
  while IFS= read -r -d '' file; do
    cmp -s "$SCRATCH/js/$file" "$SCRATCH/cache/$file" || fail "the JS client rebuilt $file with other bytes"
    count=$((count + 1))
  done < <(cd "$SCRATCH/js" && find . -type f -print0)
  [[ "$count" -ge 5 ]] || fail "only $count Xet files downloaded"
  equals "$(cd "$SCRATCH/js" && find . -name '*.neff' | wc -l)" 5
}

test_a_js_bucket_upload_is_pulled_by_neuron_cache() {
  start_hub || return
  "$MAKE_CACHE" "$SCRATCH/cache" --entries 4 --neff-size 500000 --seed 53 >/dev/null || { fail "no cache"; return 1; }
  run 0 "$NC" create hf://buckets/alice/fromjs --no-set -q || return
  reset_stats
  js upload buckets/alice/fromjs "$SCRATCH/cache" || return
  [[ "$(stat_of '.by_route.cas_shard // 0')" -ge 1 ]] || fail "the JS client uploaded no shard"
  [[ "$(stat_of '.by_route.bucket_batch // 0')" -ge 1 ]] || fail "the JS client sent no batch"
  run 0 "$NC" synchronize --pull --repo-id hf://buckets/alice/fromjs --cache-dir "$SCRATCH/fresh" --json || return
  equals "$(tree "$SCRATCH/fresh/$VERSION_DIR")" "$(tree "$SCRATCH/cache/$VERSION_DIR")"
}

test_a_neuron_cache_bucket_push_is_downloaded_by_js() {
  start_hub || return
  "$MAKE_CACHE" "$SCRATCH/cache" --entries 4 --neff-size 500000 --seed 54 >/dev/null || { fail "no cache"; return 1; }
  run 0 "$NC" create hf://buckets/alice/tojs --no-set -q || return
  run 0 "$NC" synchronize --repo-id hf://buckets/alice/tojs --cache-dir "$SCRATCH/cache" --json || return
  reset_stats
  js download buckets/alice/tojs "$SCRATCH/js" || return
  [[ "$(stat_of '.by_route.cas_xorb_data // 0')" -ge 1 ]] || fail "the JS client fetched no xorb range"
  # Every file pushed is in the bucket, and the client rebuilt each byte for byte.
  local file count=0
  while IFS= read -r -d '' file; do
    cmp -s "$SCRATCH/js/$file" "$SCRATCH/cache/$file" || fail "the JS client rebuilt $file with other bytes"
    count=$((count + 1))
  done < <(cd "$SCRATCH/js" && find . -type f -print0)
  equals "$count" "$(curl -fsS -H "Authorization: Bearer $TOKEN" \
    "$HUB_URL/api/buckets/alice/tojs/tree?recursive=true&limit=10000" | jq '[.[] | select(.type == "file")] | length')"
  [[ "$count" -ge 12 ]] || fail "only $count files in the bucket"
}

if [[ ! -x "$HUB_BIN" ]]; then
  echo "  (skipped: $HUB_BIN not built)"
  exit 0
fi
if [[ ! -d "$SOURCE_DIR/tests/hub-js/node_modules/@huggingface/hub" ]] || ! command -v node >/dev/null; then
  echo "tests/hub-js/node_modules lacks @huggingface/hub or node is missing: run \`make deps\`" >&2
  exit 1
fi
run_tests
