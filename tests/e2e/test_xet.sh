#!/usr/bin/env bash
# End to end: Xet. The test Hub with --xet (token endpoints, a CAS that verifies what it
# stores, the batch "xet" transfer, resolve headers, tree xetHash) and without it (exactly
# as before); the real neuron-cache binary pulling Xet-stored files through the CAS, and
# refusing, with nothing installed, a CAS that lies. Xorbs and shards are made by
# xet_chunk_tool --pack (hubcache::xet::UploadPacker) and uploaded with curl.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/xet_lib.sh"

PACK="$BIN_DIR/xet_chunk_tool"
READER=hf_alice_xet_read_token

# This suite also runs the test Hub without --xet (as before Xet): the flag is each test's.
start_hub() {
  launch_test_hub --user "alice:$TOKEN:write" --user "alice:$READER:read" --lfs-threshold 1024 "$@" || return 1
  export HF_ENDPOINT="$HUB_URL" HF_TOKEN="$TOKEN"
}
# http METHOD URL [CURL ARGS...]: body to $SCRATCH/b, headers to $SCRATCH/h; prints the status.
http() {
  local method="$1" url="$2"; shift 2
  curl -sS -o "$SCRATCH/b" -D "$SCRATCH/h" -w '%{http_code}' -X "$method" "$url" "$@"
}
header() { grep -i "^$1:" "$SCRATCH/h" | head -n 1 | cut -d' ' -f2- | tr -d '\r'; }

# xet_token REPO read|write [HF_TOKEN]: sets CAS_URL and XET_TOKEN.
xet_token() {
  [[ "$(http GET "$HUB_URL/api/models/$1/xet-$2-token/main" -H "Authorization: Bearer ${3:-$TOKEN}")" == 200 ]] ||
    { fail "no $2 token: $(cat "$SCRATCH/b")"; return 1; }
  CAS_URL=$(jq -r .casUrl "$SCRATCH/b")
  XET_TOKEN=$(jq -r .accessToken "$SCRATCH/b")
}

# upload_pack DIR: every xorb of a --pack output, then its shard; fails on any refusal.
upload_pack() {
  local xorb
  for xorb in "$1"/xorbs/*; do
    [[ "$(http POST "$CAS_URL/v1/xorbs/default/$(basename "$xorb")" -H "Authorization: Bearer $XET_TOKEN" \
      --data-binary @"$xorb")" == 200 ]] || { fail "xorb refused: $(cat "$SCRATCH/b")"; return 1; }
  done
  [[ "$(http POST "$CAS_URL/v1/shards" -H "Authorization: Bearer $XET_TOKEN" --data-binary @"$1/shard")" == 200 ]] ||
    { fail "shard refused: $(cat "$SCRATCH/b")"; return 1; }
}

# commit_lfs REPO PATH SHA256 SIZE: prints the status of a one-file lfsFile commit.
commit_lfs() {
  printf '{"key":"header","value":{"summary":"add %s"}}\n{"key":"lfsFile","value":{"path":"%s","algo":"sha256","oid":"%s","size":%s}}\n' \
    "$2" "$2" "$3" "$4" >"$SCRATCH/commit.ndjson"
  http POST "$HUB_URL/api/models/$1/commit/main" -H "Authorization: Bearer $TOKEN" \
    -H "Content-Type: application/x-ndjson" --data-binary @"$SCRATCH/commit.ndjson"
}

# Three files: two with the same bytes (deduplicated in one upload), one of several chunks.
make_files() {
  mkdir -p "$SCRATCH/files"
  head -c 300000 /dev/urandom >"$SCRATCH/files/big.neff"
  head -c 5000 /dev/urandom >"$SCRATCH/files/small.neff"
  cp "$SCRATCH/files/small.neff" "$SCRATCH/files/copy.neff"
}

test_without_the_flag_the_hub_does_not_speak_xet() {
  start_hub || return
  run 0 "$NC" create alice/plain -q || return
  equals "$(http GET "$HUB_URL/api/models/alice/plain/xet-write-token/main" -H "Authorization: Bearer $TOKEN")" 404
  equals "$(http POST "$HUB_URL/cas/v1/shards" --data-binary x)" 404
  equals "$(http POST "$HUB_URL/alice/plain.git/info/lfs/objects/batch" -H "Authorization: Bearer $TOKEN" \
    -d '{"operation":"upload","transfers":["basic","multipart","xet"],"objects":[{"oid":"'"$(printf x | sha256sum | cut -c1-64)"'","size":1}]}')" 200
  equals "$(jq -r .transfer "$SCRATCH/b")" "basic"
}

test_tokens_and_batch_offer_xet() {
  start_hub --xet || return
  run 0 "$NC" create alice/tok -q || return
  xet_token alice/tok write || return
  equals "$CAS_URL" "$HUB_URL/cas"
  [[ "$(jq -r .exp "$SCRATCH/b")" -gt "$(date +%s)" ]] || fail "token already expired"
  # A read-only Hub token gets a read token, not a write token.
  equals "$(http GET "$HUB_URL/api/models/alice/tok/xet-write-token/main" -H "Authorization: Bearer $READER")" 403
  equals "$(http GET "$HUB_URL/api/models/alice/tok/xet-read-token/main" -H "Authorization: Bearer $READER")" 200
  local oid; oid=$(printf x | sha256sum | cut -c1-64)
  equals "$(http POST "$HUB_URL/alice/tok.git/info/lfs/objects/batch" -H "Authorization: Bearer $TOKEN" \
    -d '{"operation":"upload","transfers":["basic","multipart","xet"],"objects":[{"oid":"'"$oid"'","size":1}]}')" 200
  equals "$(jq -r .transfer "$SCRATCH/b")" "xet"
  equals "$(jq -r '.objects[0].actions.upload.header["X-Xet-Cas-Url"]' "$SCRATCH/b")" "$HUB_URL/cas"
  [[ "$(jq -r '.objects[0].actions.upload.header["X-Xet-Access-Token"]' "$SCRATCH/b")" == xet.* ]] ||
    fail "no access token in the batch answer"
  equals "$(jq -r '.objects[0].actions.upload.href' "$SCRATCH/b")" "$HUB_URL/api/models/alice/tok/xet-write-token/main"
  # A client that does not offer xet still gets basic.
  http POST "$HUB_URL/alice/tok.git/info/lfs/objects/batch" -H "Authorization: Bearer $TOKEN" \
    -d '{"operation":"upload","transfers":["basic"],"objects":[{"oid":"'"$oid"'","size":1}]}' >/dev/null
  equals "$(jq -r .transfer "$SCRATCH/b")" "basic"
}

test_cas_verifies_what_it_stores() {
  start_hub --xet || return
  run 0 "$NC" create alice/cas -q || return
  make_files
  "$PACK" --pack "$SCRATCH/pack" "$SCRATCH/files/big.neff" "$SCRATCH/files/small.neff" "$SCRATCH/files/copy.neff" \
    >"$SCRATCH/packed.jsonl" || { fail "pack failed"; return 1; }
  local xorb; xorb=$(ls "$SCRATCH/pack/xorbs" | head -n 1)
  [[ "$(ls "$SCRATCH/pack/xorbs" | wc -l)" == 1 ]] || fail "small files did not share one xorb"
  xet_token alice/cas read || return
  local read_token=$XET_TOKEN
  xet_token alice/cas write || return
  # Refused: no token, a read token, a forged token, a wrong hash, a corrupt body.
  equals "$(http POST "$CAS_URL/v1/xorbs/default/$xorb" --data-binary @"$SCRATCH/pack/xorbs/$xorb")" 401
  equals "$(http POST "$CAS_URL/v1/xorbs/default/$xorb" -H "Authorization: Bearer $read_token" \
    --data-binary @"$SCRATCH/pack/xorbs/$xorb")" 403
  # Forged: the last character changed (to '1' when it is '0': the same token is no forgery).
  local forged_last=0; [[ ${XET_TOKEN: -1} == 0 ]] && forged_last=1
  equals "$(http POST "$CAS_URL/v1/xorbs/default/$xorb" -H "Authorization: Bearer ${XET_TOKEN%?}$forged_last" \
    --data-binary @"$SCRATCH/pack/xorbs/$xorb")" 401
  equals "$(http POST "$CAS_URL/v1/xorbs/default/$(printf '%064d' 0)" -H "Authorization: Bearer $XET_TOKEN" \
    --data-binary @"$SCRATCH/pack/xorbs/$xorb")" 400
  contains "$SCRATCH/b" "hash mismatch"
  cp "$SCRATCH/pack/xorbs/$xorb" "$SCRATCH/bad-xorb"
  flip_byte "$SCRATCH/bad-xorb" 1000 || return
  equals "$(http POST "$CAS_URL/v1/xorbs/default/$xorb" -H "Authorization: Bearer $XET_TOKEN" \
    --data-binary @"$SCRATCH/bad-xorb")" 400
  # A shard naming a xorb not uploaded yet is refused.
  equals "$(http POST "$CAS_URL/v1/shards" -H "Authorization: Bearer $XET_TOKEN" --data-binary @"$SCRATCH/pack/shard")" 400
  contains "$SCRATCH/b" "was not uploaded"
  # Accepted once, known the second time.
  equals "$(http POST "$CAS_URL/v1/xorbs/default/$xorb" -H "Authorization: Bearer $XET_TOKEN" \
    --data-binary @"$SCRATCH/pack/xorbs/$xorb")" 200
  equals "$(jq -c . "$SCRATCH/b")" '{"was_inserted":true}'
  equals "$(http POST "$CAS_URL/v1/xorbs/default/$xorb" -H "Authorization: Bearer $XET_TOKEN" \
    --data-binary @"$SCRATCH/pack/xorbs/$xorb")" 200
  equals "$(jq -c . "$SCRATCH/b")" '{"was_inserted":false}'
  # A shard whose first file hash was altered does not reconstruct to it.
  cp "$SCRATCH/pack/shard" "$SCRATCH/bad-shard"
  flip_byte "$SCRATCH/bad-shard" 50 || return
  equals "$(http POST "$CAS_URL/v1/shards" -H "Authorization: Bearer $XET_TOKEN" --data-binary @"$SCRATCH/bad-shard")" 400
  contains "$SCRATCH/b" "does not produce the file hash"
  # A commit pointing at bytes the CAS does not hold is refused; after the shard it works.
  local sha size hash
  sha=$(jq -r 'select(.path|endswith("big.neff")).sha256' "$SCRATCH/packed.jsonl")
  size=$(jq -r 'select(.path|endswith("big.neff")).size' "$SCRATCH/packed.jsonl")
  hash=$(jq -r 'select(.path|endswith("big.neff")).xet_hash' "$SCRATCH/packed.jsonl")
  equals "$sha" "$(sha256sum "$SCRATCH/files/big.neff" | cut -c1-64)"
  equals "$(commit_lfs alice/cas big.neff "$sha" "$size")" 400
  upload_pack "$SCRATCH/pack" || return
  equals "$(commit_lfs alice/cas big.neff "$sha" "$size")" 200
  # The tree and resolve announce the Xet file; the bridge still serves its bytes.
  curl -fsS -H "Authorization: Bearer $TOKEN" "$HUB_URL/api/models/alice/cas/tree/main" >"$SCRATCH/tree.json"
  equals "$(jq -r '.[] | select(.path=="big.neff").xetHash' "$SCRATCH/tree.json")" "$hash"
  equals "$(http GET "$HUB_URL/alice/cas/resolve/main/big.neff" -H "Authorization: Bearer $TOKEN")" 302
  equals "$(header X-Xet-Hash)" "$hash"
  contains "$SCRATCH/h" "rel=\"xet-auth\""
  contains "$SCRATCH/h" "<$HUB_URL/cas/v1/reconstructions/$hash>; rel=\"xet-reconstruction-info\""
  curl -fsSL -H "Authorization: Bearer $TOKEN" "$HUB_URL/alice/cas/resolve/main/big.neff" -o "$SCRATCH/bridge"
  cmp -s "$SCRATCH/bridge" "$SCRATCH/files/big.neff" || fail "the bridge serves other bytes"
  equals "$(http GET "$HUB_URL/alice/cas/resolve/main/big.neff" -H "Authorization: Bearer $TOKEN" \
    -H "Accept: application/vnd.xet-fileinfo+json, */*")" 200
  contains "$SCRATCH/h" "application/vnd.xet-fileinfo+json"
  equals "$(jq -r .hash "$SCRATCH/b")" "$hash"
  equals "$(header X-Linked-Size)" "$size"
  # Reconstructions: v1 and v2 shapes, ranges that hold the file's bytes.
  equals "$(http GET "$CAS_URL/v1/reconstructions/$hash" -H "Authorization: Bearer $read_token")" 200
  equals "$(jq '[.terms[].unpacked_length] | add' "$SCRATCH/b")" "$size"
  local url; url=$(jq -r '.fetch_info[][0].url' "$SCRATCH/b" | head -n 1)
  equals "$(http GET "$url" -H "Range: bytes=0-7")" 206
  equals "$(http GET "$CAS_URL/v2/reconstructions/$hash" -H "Authorization: Bearer $read_token")" 200
  [[ "$(jq '.xorbs | length' "$SCRATCH/b")" -ge 1 ]] || fail "no xorbs in the v2 answer"
  equals "$(http GET "$CAS_URL/v1/reconstructions/$hash")" 401
  equals "$(http GET "$CAS_URL/v1/reconstructions/$(printf '%064d' 0)" -H "Authorization: Bearer $read_token")" 404
}

# A cache pushed through LFS whose files the CAS then also holds: resolve announces them
# as Xet files, so a pull reads them from the CAS.
xet_backed_cache() {
  start_hub --xet || return
  "$MAKE_CACHE" "$SCRATCH/cache" --entries 4 --neff-size 200000 --seed 3 >/dev/null || { fail "no cache"; return 1; }
  run 0 "$NC" create alice/pull -q || return
  run 0 "$NC" synchronize --repo-id alice/pull --cache-dir "$SCRATCH/cache" --json || return
  find "$SCRATCH/cache/$VERSION_DIR" -type f -size +1k -print0 | xargs -0 "$PACK" --pack "$SCRATCH/pack" \
    >"$SCRATCH/packed.jsonl" || { fail "pack failed"; return 1; }
  xet_token alice/pull write || return
  upload_pack "$SCRATCH/pack" || return
  reset_stats
}

test_pull_reads_xet_files_from_the_cas() {
  xet_backed_cache || return
  run 0 "$NC" synchronize --pull --repo-id alice/pull --cache-dir "$SCRATCH/fresh" --json || return
  equals "$(json_get "$OUT" ".transferred | length")" "4"
  equals "$(tree "$SCRATCH/fresh/$VERSION_DIR")" "$(tree "$SCRATCH/cache/$VERSION_DIR")"
  [[ "$(stat_of '.by_route.cas_reconstruction // 0')" -ge 4 ]] || fail "the pull did not use the CAS"
  [[ "$(stat_of '.by_route.cas_xorb_data // 0')" -ge 1 ]] || fail "no xorb range fetched"
  equals "$(stat_of '.by_route.lfs_cdn // 0')" 0
  # HF_HUB_DISABLE_XET=1: the same pull through the Hub's redirect.
  reset_stats
  HF_HUB_DISABLE_XET=1 run 0 "$NC" synchronize --pull --repo-id alice/pull --cache-dir "$SCRATCH/fresh2" --json ||
    return
  equals "$(tree "$SCRATCH/fresh2/$VERSION_DIR")" "$(tree "$SCRATCH/cache/$VERSION_DIR")"
  equals "$(stat_of '.by_route.cas_reconstruction // 0')" 0
  [[ "$(stat_of '.by_route.lfs_cdn // 0')" -ge 4 ]] || fail "the LFS path was not used"
  # --no-xet: the same, from the command line (push and pull take it too).
  reset_stats
  run 0 "$NC" pull --no-xet --repo-id alice/pull --cache-dir "$SCRATCH/fresh3" --json || return
  equals "$(tree "$SCRATCH/fresh3/$VERSION_DIR")" "$(tree "$SCRATCH/cache/$VERSION_DIR")"
  equals "$(stat_of '.by_route.cas_reconstruction // 0')" 0
  [[ "$(stat_of '.by_route.lfs_cdn // 0')" -ge 4 ]] || fail "--no-xet did not take the LFS path"
}

# lying_pull FAULT EXPECTED: the pull fails with EXPECTED in its error and installs nothing.
lying_pull() {
  clear_faults
  fault "$1"
  run 1 "$NC" synchronize --pull --repo-id alice/pull --cache-dir "$SCRATCH/lied" --max-workers 1 --json || return
  contains "$ERR" "$2"
  local done_files; done_files=$(find "$SCRATCH/lied" -name model.done 2>/dev/null | wc -l)
  equals "$done_files" 0
  local found; found=$(find "$SCRATCH/lied" -name '*.neff' 2>/dev/null)
  [[ -z "$found" ]] || fail "NEFFs installed from a lying CAS: $found"
}

test_a_lying_cas_installs_nothing() {
  xet_backed_cache || return
  lying_pull '{"match":"/cas/xorb-data/","action":"corrupt_body","count":1000}' "Xet CAS answered" || return
  lying_pull '{"match":"/cas/xorb-data/","action":"wrong_size","size":100,"count":1000}' "partial file" || return
  lying_pull '{"match":"/reconstructions/","action":"malformed_json","count":1000}' "not JSON" || return
  lying_pull '{"match":"/reconstructions/","action":"status","status":404,"count":1000}' \
    "refused the reconstruction" || return
  # Once the CAS tells the truth again, the same pull succeeds.
  clear_faults
  run 0 "$NC" synchronize --pull --repo-id alice/pull --cache-dir "$SCRATCH/lied" --json || return
  equals "$(tree "$SCRATCH/lied/$VERSION_DIR")" "$(tree "$SCRATCH/cache/$VERSION_DIR")"
}

test_push_goes_through_xet_and_pull_reads_it_back() {
  start_hub --xet || return
  # A NEFF that is another one plus a few bytes: its shared chunks are not uploaded again.
  "$MAKE_CACHE" "$SCRATCH/cache" --entries 3 --neff-size 600000 --seed 5 >/dev/null || { fail "no cache"; return 1; }
  local neffs; mapfile -t neffs < <(find "$SCRATCH/cache/$VERSION_DIR" -name '*.neff' | sort)
  { cat "${neffs[0]}"; echo "recompiled"; } >"${neffs[1]}"
  run 0 "$NC" create alice/xpush -q || return
  reset_stats
  run 0 "$NC" synchronize --repo-id alice/xpush --cache-dir "$SCRATCH/cache" --json || return
  equals "$(stat_of '.by_route.cas_shard // 0')" 1
  [[ "$(stat_of '.by_route.cas_xorb // 0')" -ge 1 ]] || fail "no xorb uploaded"
  equals "$(stat_of '.by_route.lfs_upload // 0')" 0
  # The write token asked directly, as huggingface_hub >= 1.20 does: no LFS batch at all.
  equals "$(stat_of '.by_route.xet_token // 0')" 1
  equals "$(stat_of '.by_route.lfs_batch // 0')" 0
  [[ "$(json_get "$OUT" '.xet.new_bytes')" -gt 0 ]] || fail "no new Xet bytes reported"
  [[ "$(json_get "$OUT" '.xet.deduplicated_bytes')" -ge 100000 ]] || fail "the shared chunks were uploaded twice"
  lacks "$ERR" "warning"
  # The tree lists the NEFFs as Xet files; a pull rebuilds them from the CAS.
  curl -fsS -H "Authorization: Bearer $TOKEN" "$HUB_URL/api/models/alice/xpush/tree/main?recursive=true" |
    jq -r '.[] | select(.path|endswith(".neff")) | .xetHash' >"$SCRATCH/hashes"
  [[ "$(grep -c . "$SCRATCH/hashes")" == 3 && "$(grep -vc null "$SCRATCH/hashes")" == 3 ]] ||
    fail "NEFFs without xetHash: $(cat "$SCRATCH/hashes")"
  reset_stats
  run 0 "$NC" synchronize --pull --repo-id alice/xpush --cache-dir "$SCRATCH/fresh" --json || return
  equals "$(tree "$SCRATCH/fresh/$VERSION_DIR")" "$(tree "$SCRATCH/cache/$VERSION_DIR")"
  [[ "$(stat_of '.by_route.cas_reconstruction // 0')" -ge 3 ]] || fail "the pull did not use the CAS"
  # A reader without Xet gets the same bytes through LFS: the Hub's bridge rebuilds each
  # file from the CAS when it is first asked for, and raw still serves the pointer.
  reset_stats
  run 0 "$NC" pull --no-xet --repo-id alice/xpush --cache-dir "$SCRATCH/lfs-reader" --json || return
  equals "$(tree "$SCRATCH/lfs-reader/$VERSION_DIR")" "$(tree "$SCRATCH/cache/$VERSION_DIR")"
  [[ "$(stat_of '.by_route.lfs_cdn // 0')" -ge 3 ]] || fail "--no-xet did not take the LFS path"
  local neff_path; neff_path=$(cd "$SCRATCH/cache" && find "$VERSION_DIR" -name '*.neff' | sort | head -n 1)
  curl -fsS -H "Authorization: Bearer $TOKEN" "$HUB_URL/alice/xpush/raw/main/$neff_path" >"$SCRATCH/pointer" ||
    fail "raw failed"
  contains "$SCRATCH/pointer" "version https://git-lfs.github.com/spec/v1"
  contains "$SCRATCH/pointer" "oid sha256:$(sha256sum "$SCRATCH/cache/$neff_path" | cut -d' ' -f1)"
}

# negotiated_through_the_batch: the last push asked the LFS batch for Xet, warned of nothing
# and uploaded nothing through LFS.
negotiated_through_the_batch() {
  lacks "$ERR" "warning"
  [[ "$(stat_of '.by_route.lfs_batch // 0')" -ge 1 ]] || fail "the LFS batch was not asked"
  equals "$(stat_of '.by_route.lfs_upload // 0')" 0
}

test_a_hub_refusing_the_token_route_offers_xet_in_the_batch() {
  start_hub --xet || return
  # A Hub without the route (older deployments): the LFS batch negotiates, silently.
  faulted_repo batchxet 2 200000 7 '{"match":"/xet-write-token/","action":"status","status":404,"count":1000}' ||
    return
  run 0 "$NC" synchronize --repo-id alice/batchxet --cache-dir "$SCRATCH/cache" --json || return
  negotiated_through_the_batch
  equals "$(stat_of '.by_route.cas_shard // 0')" 1
  pulls_back_whole batchxet
}

test_a_batch_whose_objects_the_repo_holds_is_no_xet_failure() {
  start_hub --xet || return
  faulted_repo batchheld 2 200000 11 '{"match":"/xet-write-token/","action":"status","status":404,"count":1000}' ||
    return
  run 0 "$NC" push --repo-id alice/batchheld --cache-dir "$SCRATCH/cache" --json || return
  # A new entry with the same bytes as one pushed: its files are new paths, their objects
  # are on the Hub already, and the batch offers Xet with nothing to upload.
  local entry; entry=$(find "$SCRATCH/cache/$VERSION_DIR" -mindepth 1 -maxdepth 1 -name 'MODULE_*' | sort | head -n 1)
  cp -a "$entry" "$SCRATCH/cache/$VERSION_DIR/MODULE_9999999999999999+39f12043"
  reset_stats
  run 0 "$NC" push --repo-id alice/batchheld --cache-dir "$SCRATCH/cache" --json || return
  negotiated_through_the_batch
  equals "$(stat_of '.by_route.cas_xorb // 0')" 0
  equals "$(json_get "$OUT" '.commits')" 1
  pulls_back_whole batchheld
}

test_push_falls_back_to_lfs_with_one_warning() {
  start_hub --xet || return
  faulted_repo fallback 3 200000 6 '{"match":"/cas/v1/shards","action":"status","status":400,"count":1000}' || return
  run 0 "$NC" synchronize --repo-id alice/fallback --cache-dir "$SCRATCH/cache" --json || return
  equals "$(grep -c "warning: Xet upload failed" "$ERR")" 1
  [[ "$(stat_of '.by_route.lfs_upload // 0')" -ge 3 ]] || fail "the fallback did not upload through LFS"
  equals "$(stat_of '.by_route.commit // 0')" 1
  pulls_back_whole fallback
  # HF_HUB_DISABLE_XET=1: the batch is not offered xet, the CAS is never called.
  run 0 "$NC" create alice/noxet -q || return
  reset_stats
  HF_HUB_DISABLE_XET=1 run 0 "$NC" synchronize --repo-id alice/noxet --cache-dir "$SCRATCH/cache" --json || return
  equals "$(stat_of '.by_route.cas_xorb // 0')" 0
  equals "$(stat_of '.by_route.xet_token // 0')" 0
  [[ "$(stat_of '.by_route.lfs_upload // 0')" -ge 3 ]] || fail "no LFS upload"
  # --no-xet does the same from the command line.
  run 0 "$NC" create alice/noxet2 -q || return
  reset_stats
  run 0 "$NC" push --no-xet --repo-id alice/noxet2 --cache-dir "$SCRATCH/cache" --json || return
  equals "$(stat_of '.by_route.cas_xorb // 0')" 0
  equals "$(stat_of '.by_route.cas_shard // 0')" 0
  [[ "$(stat_of '.by_route.lfs_upload // 0')" -ge 3 ]] || fail "--no-xet did not upload through LFS"
  equals "$(json_get "$OUT" '.xet // "none"')" none
}

# lfs_oids REPO: "path oid" of every LFS file in the repo's tree (one page: start the Hub
# with a --page-size above the repo's file count), sorted.
lfs_oids() {
  curl -fsS -H "Authorization: Bearer $TOKEN" "$HUB_URL/api/models/$1/tree/main?recursive=true" |
    jq -r '.[] | select(.lfs) | "\(.path) \(.lfs.oid)"' | sort
}
# local_oids: the same paths with the sha256 of the files in $SCRATCH/cache.
local_oids() { cut -d' ' -f1 | (cd "$SCRATCH/cache" && xargs sha256sum) | awk '{print $2, $1}' | sort; }

test_a_push_of_many_commits_seals_xet_segment_by_segment() {
  start_hub --xet --page-size 5000 || return
  # 520 entries, 2,080 files: three commits of at most 1,000 files. The first is sealed (its
  # shard sent) alone so that it can land while the next ones are packed; the next segment
  # holds the other two: two shards, not one per commit, and not one for all.
  "$MAKE_CACHE" "$SCRATCH/cache" --entries 520 --neff-size 2000 --seed 8 >/dev/null || { fail "no cache"; return 1; }
  run 0 "$NC" create alice/segments -q || return
  reset_stats
  run 0 "$NC" push --repo-id alice/segments --cache-dir "$SCRATCH/cache" --json || return
  equals "$(json_get "$OUT" '.commits')" 3
  equals "$(stat_of '.by_route.cas_shard // 0')" 2
  equals "$(stat_of '.by_route.xet_token // 0')" 1
  equals "$(stat_of '.by_route.lfs_upload // 0')" 0
  lacks "$ERR" "warning"
  # Each commit named only files whose shard the CAS had accepted (the test Hub refuses a
  # commit naming content it cannot serve): every LFS file is listed with its sha256.
  lfs_oids alice/segments >"$SCRATCH/remote"
  local_oids <"$SCRATCH/remote" >"$SCRATCH/local"
  equals "$(grep -c . "$SCRATCH/remote")" 1040 # a NEFF and an HLO graph per entry
  equals "$(cat "$SCRATCH/remote")" "$(cat "$SCRATCH/local")"
}

# pushed_with_lfs_fallback REPO COMMITS SHARDS LFS_UPLOADS: pushes $SCRATCH/cache into
# alice/REPO with a Xet fault armed; the push lands COMMITS commits, one warning, SHARDS
# shard requests and at least LFS_UPLOADS LFS uploads, and a pull gets every byte back.
pushed_with_lfs_fallback() {
  run 0 "$NC" push --repo-id "alice/$1" --cache-dir "$SCRATCH/cache" --json || return
  equals "$(grep -c "warning: Xet upload failed" "$ERR")" 1
  equals "$(json_get "$OUT" '.commits')" "$2"
  equals "$(stat_of '.by_route.cas_shard // 0')" "$3"
  [[ "$(stat_of '.by_route.lfs_upload // 0')" -ge "$4" ]] || fail "not uploaded through LFS"
  pulls_back_whole "$1"
}

test_a_xet_failure_after_a_sealed_segment_sends_the_rest_through_lfs() {
  start_hub --xet || return
  # The first segment's shard is accepted and its commit lands; every later shard is
  # refused: the batches packed for it go through LFS, with one warning, nothing lost.
  faulted_repo segfail 520 2000 9 '{"match":"/cas/v1/shards","action":"status","status":400,"count":1000,"after":1}' ||
    return
  pushed_with_lfs_fallback segfail 3 2 500
}

test_a_xorb_refused_while_packing_sends_the_batch_through_lfs() {
  start_hub --xet || return
  # Three 6 MB NEFFs fill three xorbs: the first one's refusal comes back while the next
  # one is handed over, in the middle of packing the batch. That batch goes through LFS.
  faulted_repo xorbfail 3 6000000 10 '{"match":"/cas/v1/xorbs/","action":"status","status":400,"count":1000}' ||
    return
  pushed_with_lfs_fallback xorbfail 1 0 3
}

if [[ ! -x "$HUB_BIN" || ! -x "$PACK" ]]; then
  echo "  (skipped: $HUB_BIN or $PACK not built)"
  exit 0
fi
run_tests
