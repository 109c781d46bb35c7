#!/usr/bin/env bash
# End to end: what a Xet push asks of the CAS beyond uploads. Global dedup (a re-push of
# recompiled graphs uploads only their new chunks, the rest is "already in the CAS"), and
# write tokens that expire in the middle of a push (refreshed, or one clear outcome: never
# a commit naming content the CAS does not hold).
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/xet_lib.sh"

# recompile CACHE COUNT [MARK]: COUNT new entries, each an existing one "recompiled" with a
# small change (MARK written over its NEFF near the end), under a new module name.
recompile() {
  local cache="$1" count="$2" mark="${3:-recompiled}" module new neff
  for module in $(find "$cache/$VERSION_DIR" -mindepth 1 -maxdepth 1 -type d -name 'MODULE_*' | sort | head -n "$count"); do
    new="$(dirname "$module")/MODULE_$(printf '%s' "$module$mark" | sha256sum | cut -c1-20)+$(basename "$module" | cut -d+ -f2)"
    cp -r "$module" "$new"
    neff=$(find "$new" -name '*.neff' | head -n 1)
    printf '%s' "$mark" | dd of="$neff" bs=1 seek=$(($(stat -c %s "$neff") - 5000)) conv=notrunc status=none
  done
}

test_a_repush_uploads_only_new_chunks() {
  start_hub || return
  # NEFFs of random bytes: chunk boundaries differ every run. A changed chunk is at most 128 KiB
  # (two if the mark moves a boundary), so 2 MB NEFFs keep the new bytes under 20% in every run.
  "$MAKE_CACHE" "$SCRATCH/cache" --entries 6 --neff-size 2000000 --seed 41 >/dev/null || { fail "no cache"; return 1; }
  run 0 "$NC" create alice/dedup -q || return
  run 0 "$NC" push --repo-id alice/dedup --cache-dir "$SCRATCH/cache" --json || return
  valid_json "$OUT" transfer.schema.json
  equals "$(json_get "$OUT" '.xet.stored_bytes')" 0
  recompile "$SCRATCH/cache" 2
  reset_stats
  run 0 "$NC" push --repo-id alice/dedup --cache-dir "$SCRATCH/cache" --json || return
  valid_json "$OUT" transfer.schema.json
  local planned stored new
  planned=$(json_get "$OUT" '.bytes.transferred')
  stored=$(json_get "$OUT" '.xet.stored_bytes')
  new=$(json_get "$OUT" '.xet.new_bytes')
  [[ "$stored" -gt 3000000 ]] || fail "the recompiled NEFFs' unchanged chunks were not found in the CAS ($stored bytes)"
  [[ "$((new * 5))" -le "$planned" ]] || fail "$new new bytes uploaded for $planned pushed: more than 20%"
  [[ "$(stat_of '.by_route.cas_chunks // 0')" -ge 1 ]] || fail "no global dedup query"
  lacks "$ERR" "warning"
  # The human report says it too.
  recompile "$SCRATCH/cache" 1 again
  run 0 "$NC" push --repo-id alice/dedup --cache-dir "$SCRATCH/cache" || return
  cat "$OUT" "$ERR" >"$SCRATCH/report"
  contains "$SCRATCH/report" "already in the CAS"
  # A pull rebuilds every file, those made of chunks of both pushes included.
  run 0 "$NC" pull --repo-id alice/dedup --cache-dir "$SCRATCH/fresh" --json || return
  equals "$(tree "$SCRATCH/fresh/$VERSION_DIR")" "$(tree "$SCRATCH/cache/$VERSION_DIR")"
}

test_a_dedup_answer_that_lies_never_reaches_a_commit() {
  start_hub || return
  "$MAKE_CACHE" "$SCRATCH/cache" --entries 4 --neff-size 300000 --seed 42 >/dev/null || { fail "no cache"; return 1; }
  run 0 "$NC" create alice/lied -q || return
  run 0 "$NC" push --repo-id alice/lied --cache-dir "$SCRATCH/cache" --json || return
  recompile "$SCRATCH/cache" 2
  # The dedup answer is garbage: the push uploads the chunks itself.
  fault '{"match":"/cas/v1/chunks/","action":"corrupt_body","count":1000}'
  run 0 "$NC" push --repo-id alice/lied --cache-dir "$SCRATCH/cache" --json || return
  equals "$(json_get "$OUT" '.xet.stored_bytes')" 0
  lacks "$ERR" "warning"
  clear_faults
  run 0 "$NC" pull --repo-id alice/lied --cache-dir "$SCRATCH/fresh" --json || return
  equals "$(tree "$SCRATCH/fresh/$VERSION_DIR")" "$(tree "$SCRATCH/cache/$VERSION_DIR")"
}

test_short_lived_tokens_are_refreshed_during_a_push() {
  start_hub --xet-token-lifetime 2 --latency-ms 5 || return
  "$MAKE_CACHE" "$SCRATCH/cache" --entries 6 --neff-size 300000 --seed 43 >/dev/null || { fail "no cache"; return 1; }
  run 0 "$NC" create alice/short -q || return
  reset_stats
  run 0 "$NC" push --repo-id alice/short --cache-dir "$SCRATCH/cache" --json || return
  lacks "$ERR" "warning"
  equals "$(stat_of '.by_route.lfs_upload // 0')" 0
  [[ "$(stat_of '.by_route.cas_shard // 0')" -eq 1 ]] || fail "no shard uploaded"
  [[ "$(stat_of '.by_route.xet_token // 0')" -ge 2 ]] || fail "the write token was not refreshed"
  run 0 "$NC" pull --repo-id alice/short --cache-dir "$SCRATCH/fresh" --json || return
  equals "$(tree "$SCRATCH/fresh/$VERSION_DIR")" "$(tree "$SCRATCH/cache/$VERSION_DIR")"
}

test_a_token_expired_mid_push_is_refreshed_and_the_upload_retried() {
  start_hub || return
  # The CAS refuses the token once, as when it expires between two uploads.
  faulted_repo expired 3 300000 44 '{"match":"/cas/v1/shards","action":"status","status":401,"count":1}' || return
  run 0 "$NC" push --repo-id alice/expired --cache-dir "$SCRATCH/cache" --json || return
  lacks "$ERR" "warning"
  equals "$(stat_of '.by_route.lfs_upload // 0')" 0
  [[ "$(stat_of '.by_route.xet_token // 0')" -ge 1 ]] || fail "no token refresh after the 401"
  run 0 "$NC" pull --repo-id alice/expired --cache-dir "$SCRATCH/fresh" --json || return
  equals "$(tree "$SCRATCH/fresh/$VERSION_DIR")" "$(tree "$SCRATCH/cache/$VERSION_DIR")"
}

test_a_token_that_cannot_be_refreshed_falls_back_to_lfs() {
  start_hub || return
  "$MAKE_CACHE" "$SCRATCH/cache" --entries 3 --neff-size 300000 --seed 45 >/dev/null || { fail "no cache"; return 1; }
  run 0 "$NC" create alice/norefresh -q || return
  # Every CAS call says the token expired and the Hub will not issue another: the Xet upload
  # fails before any commit; the push goes through LFS, and every committed file is whole.
  fault '{"match":"/cas/","action":"status","status":401,"count":1000}'
  fault '{"match":"/xet-write-token/","action":"status","status":401,"count":1000}'
  reset_stats
  run 0 "$NC" push --repo-id alice/norefresh --cache-dir "$SCRATCH/cache" --json || return
  equals "$(grep -c "warning: Xet upload failed" "$ERR")" 1
  equals "$(stat_of '.by_route.cas_shard // 0')" 0
  [[ "$(stat_of '.by_route.lfs_upload // 0')" -ge 3 ]] || fail "the fallback did not upload through LFS"
  clear_faults
  run 0 "$NC" pull --no-xet --repo-id alice/norefresh --cache-dir "$SCRATCH/fresh" --json || return
  equals "$(tree "$SCRATCH/fresh/$VERSION_DIR")" "$(tree "$SCRATCH/cache/$VERSION_DIR")"
}

# A recompiled NEFF is made of chunks of two xorbs, the old one in two pieces: the pull asks
# for both pieces in one multi-range request. A CAS whose answer is short is refused.
test_a_multi_range_answer_shorter_than_asked_installs_nothing() {
  start_hub || return
  "$MAKE_CACHE" "$SCRATCH/cache" --entries 2 --neff-size 400000 --seed 46 >/dev/null || { fail "no cache"; return 1; }
  run 0 "$NC" create alice/ranges -q || return
  run 0 "$NC" push --repo-id alice/ranges --cache-dir "$SCRATCH/cache" --json || return
  # The change sits in the middle: the old xorb's chunks before and after it are two ranges.
  local module; module=$(find "$SCRATCH/cache/$VERSION_DIR" -mindepth 1 -maxdepth 1 -type d -name 'MODULE_*' | sort | head -n 1)
  local copy; copy="$(dirname "$module")/MODULE_0123456789abcdef0123+$(basename "$module" | cut -d+ -f2)"
  cp -r "$module" "$copy"
  local neff; neff=$(find "$copy" -name '*.neff' | head -n 1)
  printf 'recompiled' | dd of="$neff" bs=1 seek=200000 conv=notrunc status=none
  run 0 "$NC" push --repo-id alice/ranges --cache-dir "$SCRATCH/cache" --json || return
  [[ "$(json_get "$OUT" '.xet.stored_bytes')" -gt 100000 ]] || fail "the unchanged chunks were uploaded again"
  local hash; hash=$(curl -fsS -H "Authorization: Bearer $TOKEN" "$HUB_URL/api/models/alice/ranges/tree/main/$VERSION_DIR?recursive=true" |
    jq -r '.[] | select(.path|contains("MODULE_0123456789abcdef0123")) | select(.path|endswith(".neff")) | .xetHash')
  local read_token; read_token=$(curl -fsS -H "Authorization: Bearer $TOKEN" "$HUB_URL/api/models/alice/ranges/xet-read-token/main" | jq -r .accessToken)
  curl -fsS -H "Authorization: Bearer $read_token" "$HUB_URL/cas/v2/reconstructions/$hash" >"$SCRATCH/recon.json"
  [[ "$(jq '[.xorbs[][] | .ranges | length] | max' "$SCRATCH/recon.json")" -ge 2 ]] ||
    fail "no xorb with two ranges in the reconstruction: $(cat "$SCRATCH/recon.json")"
  fault '{"match":"/cas/xorb-data/","action":"short_body","bytes":100,"count":1000}'
  run 1 "$NC" pull --repo-id alice/ranges --cache-dir "$SCRATCH/lied" --max-workers 1 --json || return
  contains "$ERR" "asked for"
  [[ -z "$(find "$SCRATCH/lied" -name '*.neff' 2>/dev/null)" ]] || fail "NEFFs installed from a lying CAS"
  clear_faults
  reset_stats
  run 0 "$NC" pull --repo-id alice/ranges --cache-dir "$SCRATCH/fresh" --json || return
  equals "$(tree "$SCRATCH/fresh/$VERSION_DIR")" "$(tree "$SCRATCH/cache/$VERSION_DIR")"
}

if [[ ! -x "$HUB_BIN" ]]; then
  echo "  (skipped: $HUB_BIN not built)"
  exit 0
fi
run_tests
