#!/usr/bin/env bash
# End to end: Hugging Face Storage Buckets as cache repos (hf://buckets/<ns>/<name>[/<prefix>]).
# The test Hub serves the native bucket API (with --xet for writes); the real neuron-cache
# binary creates, pushes (Xet + batch, phase by phase), lists, pulls and cleans buckets,
# copies between a Hub repo and a bucket, and refuses lying or unsafe answers with one
# clear error and nothing half-installed.
source "$(dirname "$0")/lib.sh"

MAKE_CACHE="$SOURCE_DIR/tests/tools/make_sample_cache.sh"
VERSION_DIR="neuronxcc-2.21.33363.0+82129205"
TOKEN=hf_alice_bucket_write_token
READER=hf_alice_bucket_read_token
export NEURON_CACHE_HTTP_BACKOFF_BASE_MS=2

start_hub() {
  launch_test_hub --user "alice:$TOKEN:write" --user "alice:$READER:read" --xet "$@" || return 1
  export HF_ENDPOINT="$HUB_URL" HF_TOKEN="$TOKEN"
}

stat_of() { curl -fsS "$HUB_URL/_test/stats" | jq "$1"; }
reset_stats() { curl -fsS -X POST "$HUB_URL/_test/stats/reset" >/dev/null; }
fault() { curl -fsS -X POST "$HUB_URL/_test/faults" -d "$1" >/dev/null || fail "cannot inject $1"; }
control() { curl -fsS -X POST "$HUB_URL/_test/buckets/$1" -d "$2" >/dev/null || fail "cannot $1 $2"; }
http() {
  local method="$1" url="$2"; shift 2
  curl -sS -o "$SCRATCH/b" -D "$SCRATCH/h" -w '%{http_code}' -X "$method" "$url" -H "Authorization: Bearer $TOKEN" "$@"
}
header() { grep -i "^$1:" "$SCRATCH/h" | head -n 1 | cut -d' ' -f2- | tr -d '\r'; }
tree() { (cd "$1" && find . -type f -print0 | sort -z | xargs -0 sha256sum); }
# bucket_files ID: the bucket's file paths, sorted.
bucket_files() { curl -fsS -H "Authorization: Bearer $TOKEN" "$HUB_URL/api/buckets/$1/tree?recursive=true&limit=10000" |
  jq -r '.[] | select(.type == "file") | .path' | sort; }

sample_cache() { "$MAKE_CACHE" "$1" --entries "${2:-4}" --seed "${3:-1}" >/dev/null || fail "no sample cache"; }

test_the_test_hub_serves_the_bucket_api() {
  start_hub --page-size 2 || return
  equals "$(http POST "$HUB_URL/api/buckets/alice/b" -d '{"private":true}')" 200
  equals "$(http POST "$HUB_URL/api/buckets/alice/b" -d '{}')" 409
  contains "$SCRATCH/b" "You already created this bucket: alice/b"
  equals "$(http GET "$HUB_URL/api/buckets/alice/b")" 200
  equals "$(jq -r .private "$SCRATCH/b")" true
  # Private: anonymous callers cannot tell it from a missing bucket.
  equals "$(curl -sS -o /dev/null -w '%{http_code}' "$HUB_URL/api/buckets/alice/b")" 401
  equals "$(http GET "$HUB_URL/api/buckets/alice/none")" 404
  contains "$SCRATCH/b" "Bucket not found"
  # Separate namespaces: a model repo is no bucket, a bucket no model repo.
  run 0 "$NC" create alice/model -q || return
  equals "$(http GET "$HUB_URL/api/buckets/alice/model")" 404
  equals "$(http GET "$HUB_URL/api/models/alice/b")" 404
  # paths-info takes at most 1,000 paths; the batch is not transactional (422 + failed list).
  jq -n '{paths: [range(1001) | tostring]}' >"$SCRATCH/many.json"
  equals "$(http POST "$HUB_URL/api/buckets/alice/b/paths-info" --data-binary @"$SCRATCH/many.json")" 400
  printf '{"type":"addFile","path":"../x","xetHash":"%064d"}\n{"type":"addFile","path":"ok","xetHash":"%064d"}\n' 0 0 \
    >"$SCRATCH/batch.ndjson"
  equals "$(http POST "$HUB_URL/api/buckets/alice/b/batch" --data-binary @"$SCRATCH/batch.ndjson")" 422
  equals "$(jq -c '[.succeeded, .failed[0].path]' "$SCRATCH/b")" '[1,"../x"]'
  equals "$(http GET "$HUB_URL/buckets/alice/b/resolve/ok")" 200
  equals "$(header X-Xet-Hash)" "$(printf '%064d' 0)"
  equals "$(http DELETE "$HUB_URL/api/buckets/alice/b")" 200
  equals "$(http GET "$HUB_URL/api/buckets/alice/b")" 404
}

test_create_config_set_and_list_on_a_bucket() {
  start_hub || return
  run 0 "$NC" create hf://buckets/alice/cache --public --json || return
  equals "$(json_get "$OUT" .repo)" "hf://buckets/alice/cache"
  equals "$(json_get "$OUT" .visibility)" public
  equals "$(http GET "$HUB_URL/api/buckets/alice/cache")" 200
  equals "$(jq -r .private "$SCRATCH/b")" false
  run 1 "$NC" create hf://buckets/alice/cache -q || return
  run 0 "$NC" create hf://buckets/alice/cache --exist-ok -q || return
  run 0 "$NC" set https://huggingface.co/buckets/alice/cache -q || return
  run 0 "$NC" config --json || return
  equals "$(json_get "$OUT" .repo)" "hf://buckets/alice/cache"
  equals "$(json_get "$OUT" .repo_kind)" bucket
  run 0 "$NC" list --json || return
}

test_push_pull_and_status_through_a_bucket() {
  start_hub --page-size 3 || return
  sample_cache "$SCRATCH/cache" 4
  run 0 "$NC" create hf://buckets/alice/cache/team-a --no-set -q || return
  local repo=hf://buckets/alice/cache/team-a
  run 0 "$NC" synchronize --repo-id "$repo" --cache-dir "$SCRATCH/cache" --json || return
  bucket_files alice/cache >"$SCRATCH/files"
  [[ "$(wc -l <"$SCRATCH/files")" -ge 12 ]] || fail "too few files pushed: $(cat "$SCRATCH/files")"
  lacks "$SCRATCH/files" "team-a/team-a"
  contains "$SCRATCH/files" "team-a/$VERSION_DIR/"
  [[ "$(stat_of '.by_route.cas_shard // 0')" -ge 1 ]] || fail "no shard uploaded"
  # A no-op re-push sends nothing and lists nothing: the bucket's info is unchanged.
  reset_stats
  run 0 "$NC" synchronize --repo-id "$repo" --cache-dir "$SCRATCH/cache" --json || return
  equals "$(stat_of '.by_route.bucket_batch // 0')" 0
  equals "$(stat_of '.by_route.bucket_tree // 0')" 0
  equals "$(stat_of '.by_route.bucket_info // 0')" 1 # exists and revision share one answer
  # Another writer deletes a NEFF: the info moves, the next push lists and puts it back.
  local gone; gone=$(grep -m1 'model.neff' "$SCRATCH/files")
  printf '{"type":"deleteFile","path":"%s"}\n' "$gone" >"$SCRATCH/delete.ndjson"
  equals "$(http POST "$HUB_URL/api/buckets/alice/cache/batch" --data-binary @"$SCRATCH/delete.ndjson")" 200
  reset_stats
  run 0 "$NC" synchronize --repo-id "$repo" --cache-dir "$SCRATCH/cache" --json || return
  [[ "$(stat_of '.by_route.bucket_tree // 0')" -ge 1 ]] || fail "the changed bucket was not listed"
  [[ "$(stat_of '.by_route.bucket_batch // 0')" -ge 1 ]] || fail "the deleted NEFF was not put back"
  bucket_files alice/cache >"$SCRATCH/files-after"
  contains "$SCRATCH/files-after" "$gone"
  run 0 "$NC" synchronize --pull --repo-id "$repo" --cache-dir "$SCRATCH/fresh" --json || return
  equals "$(tree "$SCRATCH/fresh/$VERSION_DIR")" "$(tree "$SCRATCH/cache/$VERSION_DIR")"
  run 0 "$NC" status --repo --repo-id "$repo" --cache-dir "$SCRATCH/fresh" --json || return
  run 3 "$NC" lookup some-org/some-model --repo-id "$repo" --json || return
  # Downloads resume with Range: the bucket answers 206 from the byte asked.
  local neff; neff=$(grep -m1 'model.neff' "$SCRATCH/files")
  equals "$(http GET "$HUB_URL/buckets/alice/cache/resolve/$neff" -H "Range: bytes=10-")" 206
  equals "$(header Content-Range | cut -d- -f1)" "bytes 10"
}

test_publish_order_never_shows_a_marker_without_its_files() {
  start_hub || return
  sample_cache "$SCRATCH/cache" 3
  run 0 "$NC" create hf://buckets/alice/order --no-set -q || return
  # The bucket keeps claiming it added the markers: the entries' files are in, no marker
  # is, and nothing that describes the entries was published.
  control lie '{"match":"model.done","count":100}'
  run 1 "$NC" synchronize --repo-id hf://buckets/alice/order --cache-dir "$SCRATCH/cache" --json || return
  contains "$ERR" "did not take"
  contains "$ERR" "not there after the bucket reported it added"
  bucket_files alice/order >"$SCRATCH/files"
  lacks "$SCRATCH/files" "model.done"
  lacks "$SCRATCH/files" "0_REGISTRY"
  contains "$SCRATCH/files" "model.neff"
  # The bucket tells the truth again: the push resumes from what the bucket holds.
  control lie '{"match":"","count":0}'
  reset_stats
  run 0 "$NC" synchronize --repo-id hf://buckets/alice/order --cache-dir "$SCRATCH/cache" --json || return
  bucket_files alice/order >"$SCRATCH/files"
  equals "$(grep -c 'model.done' "$SCRATCH/files")" 3
}

test_a_batch_that_lies_once_is_sent_again() {
  start_hub || return
  sample_cache "$SCRATCH/cache" 2
  run 0 "$NC" create hf://buckets/alice/retry --no-set -q || return
  control lie '{"match":"model.neff","count":1}'
  run 0 "$NC" synchronize --repo-id hf://buckets/alice/retry --cache-dir "$SCRATCH/cache" --json || return
  equals "$(bucket_files alice/retry | grep -c 'model.neff')" 2
}

test_an_unsafe_listing_entry_is_skipped_with_a_warning() {
  start_hub || return
  sample_cache "$SCRATCH/cache" 2
  run 0 "$NC" create hf://buckets/alice/odd --no-set -q || return
  run 0 "$NC" synchronize --repo-id hf://buckets/alice/odd --cache-dir "$SCRATCH/cache" --json || return
  control inject-entry '{"bucket":"alice/odd","path":"'"$VERSION_DIR"'/../../escape.neff","size":0}'
  run 0 "$NC" synchronize --pull --repo-id hf://buckets/alice/odd --cache-dir "$SCRATCH/fresh" --json || return
  contains "$ERR" "escape.neff"
  [[ ! -e "$SCRATCH/escape.neff" && ! -e "$SCRATCH/fresh/../escape.neff" ]] || fail "an unsafe path was written"
  equals "$(tree "$SCRATCH/fresh/$VERSION_DIR")" "$(tree "$SCRATCH/cache/$VERSION_DIR")"
}

test_a_listed_file_that_is_404_installs_nothing_of_its_entry() {
  start_hub || return
  sample_cache "$SCRATCH/cache" 2
  run 0 "$NC" create hf://buckets/alice/gone --no-set -q || return
  run 0 "$NC" synchronize --repo-id hf://buckets/alice/gone --cache-dir "$SCRATCH/cache" --json || return
  fault '{"match":"/buckets/alice/gone/resolve/","method":"GET","action":"status","status":404,"count":1000}'
  run 1 "$NC" synchronize --pull --repo-id hf://buckets/alice/gone --cache-dir "$SCRATCH/fresh" --max-workers 1 \
    --json || return
  contains "$ERR" "cannot download"
  equals "$(find "$SCRATCH/fresh" -name model.done 2>/dev/null | wc -l)" 0
}

test_a_bucket_info_that_is_not_json_is_one_clear_error() {
  start_hub || return
  sample_cache "$SCRATCH/cache" 2
  run 0 "$NC" create hf://buckets/alice/odd-info --no-set -q || return
  run 0 "$NC" synchronize --repo-id hf://buckets/alice/odd-info --cache-dir "$SCRATCH/cache" -q || return
  bucket_files alice/odd-info >"$SCRATCH/before"
  # The info stands for the bucket's revision: an answer that is not JSON stops the push
  # before anything is sent, with one line.
  sample_cache "$SCRATCH/cache" 3
  fault '{"match":"/api/buckets/alice/odd-info","method":"GET","action":"malformed_json","count":2}'
  run 1 "$NC" synchronize --repo-id hf://buckets/alice/odd-info --cache-dir "$SCRATCH/cache" || return
  contains "$ERR" "bucket info is not JSON"
  equals "$(grep -c . "$ERR")" 1
  curl -fsS -X DELETE "$HUB_URL/_test/faults" >/dev/null
  bucket_files alice/odd-info >"$SCRATCH/after"
  equals "$(cat "$SCRATCH/after")" "$(cat "$SCRATCH/before")"
}

test_a_bucket_named_like_a_model_repo_and_the_reverse() {
  start_hub || return
  run 0 "$NC" create alice/shared --no-set -q || return
  run 1 "$NC" list --repo-id hf://buckets/alice/shared --json || return
  contains "$ERR" "there is no Storage Bucket alice/shared"
  contains "$ERR" "alice/shared is a model repo"
  run 0 "$NC" create hf://buckets/alice/only-bucket --no-set -q || return
  run 1 "$NC" list --repo-id alice/only-bucket --json || return
  contains "$ERR" "hf://buckets/alice/only-bucket"
  # Both may exist under one name, as on the Hub.
  run 0 "$NC" create hf://buckets/alice/shared --no-set -q || return
}

test_cleanup_repo_on_a_bucket() {
  start_hub || return
  sample_cache "$SCRATCH/cache" 2
  run 0 "$NC" create hf://buckets/alice/clean --no-set -q || return
  run 0 "$NC" synchronize --repo-id hf://buckets/alice/clean --cache-dir "$SCRATCH/cache" --json || return
  # A failed entry in the bucket (a log, no NEFF): cleanup --repo removes it, and only it.
  local failed="$VERSION_DIR/MODULE_1234567890+abcdef12"
  mkdir -p "$SCRATCH/failed/$failed" && echo "error" >"$SCRATCH/failed/$failed/model.log"
  run 0 "$NC" synchronize --repo-id hf://buckets/alice/clean --cache-dir "$SCRATCH/cache" --json || return
  bucket_files alice/clean >"$SCRATCH/before"
  run 0 "$NC" cleanup --repo --repo-id hf://buckets/alice/clean --all --dry-run --json || return
  run 0 "$NC" cleanup --repo --repo-id hf://buckets/alice/clean --all --yes --json || return
  equals "$(bucket_files alice/clean)" "$(cat "$SCRATCH/before")"
}

test_synchronize_moves_a_hub_repo_into_a_bucket_and_back() {
  start_hub || return
  sample_cache "$SCRATCH/cache" 4 7
  run 0 "$NC" create alice/model --no-set -q || return
  run 0 "$NC" synchronize --repo-id alice/model --cache-dir "$SCRATCH/cache" -q || return
  # Hub repo -> bucket in one command: the missing bucket is made, every entry copied.
  run 0 "$NC" synchronize --pull --repo-id alice/model --cache-dir hf://buckets/alice/moved --json || return
  equals "$(json_get "$OUT" .direction)" pull
  equals "$(json_get "$OUT" .cache_dir)" hf://buckets/alice/moved
  equals "$(json_get "$OUT" '.transferred | length')" "$(json_get "$OUT" '.planned | length')"
  [[ "$(json_get "$OUT" '.transferred | length')" -ge 4 ]] || fail "too few entries copied: $OUT"
  bucket_files alice/moved >"$SCRATCH/files"
  equals "$(grep -c 'model.done' "$SCRATCH/files")" "$(find "$SCRATCH/cache/$VERSION_DIR" -name model.done | wc -l)"
  run 0 "$NC" synchronize --pull --repo-id hf://buckets/alice/moved --cache-dir "$SCRATCH/from-bucket" -q || return
  equals "$(tree "$SCRATCH/from-bucket/$VERSION_DIR")" "$(tree "$SCRATCH/cache/$VERSION_DIR")"
  # Again: nothing to copy, nothing sent to the bucket.
  reset_stats
  run 0 "$NC" synchronize --pull --repo-id alice/model --cache-dir hf://buckets/alice/moved --json || return
  equals "$(json_get "$OUT" '.transferred | length')" 0
  equals "$(stat_of '.by_route.bucket_batch // 0')" 0
  # Bucket -> another Hub repo, the other way.
  run 0 "$NC" create alice/back --no-set -q || return
  run 0 "$NC" synchronize --repo-id alice/back --cache-dir hf://buckets/alice/moved --json || return
  equals "$(json_get "$OUT" .direction)" push
  [[ "$(json_get "$OUT" '.transferred | length')" -ge 4 ]] || fail "too few entries copied back: $OUT"
  run 0 "$NC" synchronize --pull --repo-id alice/back --cache-dir "$SCRATCH/from-back" -q || return
  equals "$(tree "$SCRATCH/from-back/$VERSION_DIR")" "$(tree "$SCRATCH/cache/$VERSION_DIR")"
  # A local directory repo <-> bucket falls out of the same copy.
  run 0 "$NC" create "$SCRATCH/dir-repo" --no-set -q || return
  run 0 "$NC" synchronize --repo-id "$SCRATCH/dir-repo" --cache-dir hf://buckets/alice/moved -q || return
  equals "$(tree "$SCRATCH/dir-repo/$VERSION_DIR")" "$(tree "$SCRATCH/cache/$VERSION_DIR")"
}

test_a_hub_repo_copied_into_a_bucket_uploads_no_chunk_the_cas_holds() {
  start_hub --lfs-threshold 1024 || return
  "$MAKE_CACHE" "$SCRATCH/cache" --entries 3 --neff-size 300000 --seed 9 >/dev/null || { fail "no cache"; return 1; }
  run 0 "$NC" create alice/xetrepo --no-set -q || return
  run 0 "$NC" synchronize --repo-id alice/xetrepo --cache-dir "$SCRATCH/cache" -q || return
  # The repo's NEFFs went through Xet: the bucket's upload asks the CAS and leaves out the
  # chunks it holds (after a miss, on a small file the repo keeps in git, it asks again
  # once 64 kB of new chunks have gone by: at least two of the three NEFFs are found).
  run 0 "$NC" synchronize --pull --repo-id alice/xetrepo --cache-dir hf://buckets/alice/fromxet --json || return
  local stored; stored=$(json_get "$OUT" '.xet.stored_bytes')
  [[ "$stored" -ge 600000 ]] ||
    fail "the copy did not find the NEFFs' chunks in the CAS: $(jq -c .xet "$OUT")"
  run 0 "$NC" synchronize --pull --repo-id hf://buckets/alice/fromxet --cache-dir "$SCRATCH/back" -q || return
  equals "$(tree "$SCRATCH/back/$VERSION_DIR")" "$(tree "$SCRATCH/cache/$VERSION_DIR")"
}

test_short_lived_xet_tokens_are_refreshed_during_a_bucket_push() {
  start_hub --xet-token-lifetime 2 --latency-ms 5 || return
  "$MAKE_CACHE" "$SCRATCH/cache" --entries 6 --neff-size 300000 --seed 45 >/dev/null || { fail "no cache"; return 1; }
  run 0 "$NC" create hf://buckets/alice/short --no-set -q || return
  reset_stats
  run 0 "$NC" synchronize --repo-id hf://buckets/alice/short --cache-dir "$SCRATCH/cache" --json || return
  [[ "$(stat_of '.by_route.xet_token // 0')" -ge 2 ]] || fail "the write token was not refreshed"
  run 0 "$NC" synchronize --pull --repo-id hf://buckets/alice/short --cache-dir "$SCRATCH/fresh" -q || return
  equals "$(tree "$SCRATCH/fresh/$VERSION_DIR")" "$(tree "$SCRATCH/cache/$VERSION_DIR")"
}

test_a_copy_into_a_bucket_never_shows_a_marker_without_its_neff() {
  start_hub || return
  sample_cache "$SCRATCH/cache" 3 8
  run 0 "$NC" create alice/model --no-set -q || return
  run 0 "$NC" synchronize --repo-id alice/model --cache-dir "$SCRATCH/cache" -q || return
  # The source serves one entry's NEFF corrupt: that entry is reported, nothing of it reaches
  # the bucket, the others are copied.
  local module; module=$(cd "$SCRATCH/cache/$VERSION_DIR" && find . -maxdepth 1 -name 'MODULE_*' | sort | head -n 1)
  module=${module#./}
  fault '{"match":"'"$module"'/model.neff","method":"GET","action":"corrupt_body","count":1000}'
  run 1 "$NC" synchronize --pull --repo-id alice/model --cache-dir hf://buckets/alice/partial --json || return
  contains "$ERR" "not copied: $VERSION_DIR/$module"
  bucket_files alice/partial >"$SCRATCH/files"
  lacks "$SCRATCH/files" "$module/"
  equals "$(grep -c 'model.done' "$SCRATCH/files")" 2
  curl -fsS -X DELETE "$HUB_URL/_test/faults" >/dev/null
  # The bucket claims the NEFFs landed but does not keep them: no marker and no registry follow.
  control lie '{"match":"model.neff","count":100}'
  run 1 "$NC" synchronize --pull --repo-id alice/model --cache-dir hf://buckets/alice/lying --json || return
  contains "$ERR" "nothing that depends on them was published"
  bucket_files alice/lying >"$SCRATCH/files"
  lacks "$SCRATCH/files" "model.done"
  lacks "$SCRATCH/files" "0_REGISTRY"
  # A missing source bucket: one clear line, nothing made at the target.
  run 1 "$NC" synchronize --repo-id alice/model --cache-dir hf://buckets/alice/none --json || return
  contains "$ERR" "there is no Storage Bucket alice/none"
  equals "$(http GET "$HUB_URL/api/buckets/alice/none")" 404
}

# --- Ctrl-C and SIGTERM: only whole entries, then a re-run finishes ---------------------------

# markers_with_neffs FILES: how many model.done the bucket listing FILES holds; fails on one
# without the NEFF of its entry.
markers_with_neffs() {
  local marker count=0
  while read -r marker; do
    grep -qxF "${marker%model.done}model.neff" "$1" || fail "$marker without its model.neff"
    count=$((count + 1))
  done < <(grep '/model\.done$' "$1")
  echo "$count"
}

# whole_in_bucket FILES ENTRY...: each ENTRY (as a report names it) has every file the sample
# cache holds for it in the bucket listing FILES.
whole_in_bucket() {
  local files="$1" entry file; shift
  for entry in "$@"; do
    while read -r file; do
      grep -qxF "$entry/$file" "$files" || fail "$entry was counted published without $file"
    done < <(cd "$SCRATCH/cache/$entry" && find . -type f ! -name '*.tmp.nc.*' | sed 's|^\./||')
  done
}

test_sigint_stops_a_push_into_a_bucket_with_nothing_half_published() {
  # 75 MB of NEFFs make more than one xorb (64 MiB): at 100 Mbit/s the first alone takes
  # seconds to go up, with files still to pack after it (the bucket's stop point).
  start_hub --bandwidth-mbps 100 || return
  "$MAKE_CACHE" "$SCRATCH/cache" --entries 10 --neff-size 7500000 --faults >/dev/null || { fail "no sample cache"; return; }
  local repo=hf://buckets/alice/stopped
  run 0 "$NC" create "$repo" --no-set -q || return
  local total
  total=$("$NC" synchronize --repo-id "$repo" --cache-dir "$SCRATCH/cache" --dry-run --json | jq -r '.planned | length')
  [[ "$total" -ge 10 ]] || fail "too few entries planned: $total"
  reset_stats
  # Stopped once the contents start going up: the Xet write token is asked for first.
  interrupt_when INT '[[ "$(stat_of ".by_route.xet_token // 0")" -ge 1 ]]' \
    "$NC" synchronize --repo-id "$repo" --cache-dir "$SCRATCH/cache" --json
  equals "$STATUS" 130
  local published; published=$(interrupted_line "$total")
  [[ "$published" -lt "$total" ]] || fail "published $published of $total"
  lacks "$ERR" "error:"
  valid_json "$OUT" transfer.schema.json
  equals "$(json_get "$OUT" .stopped.reason)" interrupted
  equals "$(json_get "$OUT" .stopped.entries_published)" "$published"
  equals "$(json_get "$OUT" .stopped.entries_total)" "$total"
  # No marker without its NEFF, no registry before the graphs it describes.
  bucket_files alice/stopped >"$SCRATCH/files"
  markers_with_neffs "$SCRATCH/files" >/dev/null
  lacks "$SCRATCH/files" 0_REGISTRY
  # The same command (on a Hub without the cap) finishes it.
  stop_hub
  start_hub || return
  run 0 "$NC" synchronize --repo-id "$repo" --cache-dir "$SCRATCH/cache" --json || return
  equals "$(json_get "$OUT" '.transferred | length')" "$((total - published))"
  run 0 "$NC" synchronize --repo-id "$repo" --cache-dir "$SCRATCH/cache" --dry-run --json || return
  equals "$(json_get "$OUT" '.planned | length')" 0
  bucket_files alice/stopped >"$SCRATCH/files"
  [[ "$(markers_with_neffs "$SCRATCH/files")" -ge 10 ]] || fail "markers missing: $(cat "$SCRATCH/files")"
  contains "$SCRATCH/files" 0_REGISTRY
}

test_sigint_stops_a_copy_into_a_bucket_with_whole_entries_and_no_scratch() {
  # Every answer waits 30 ms: a copy of ~20 entries, one batch (a bucket commit of several
  # requests) each, lasts seconds.
  start_hub --latency-ms 30 || return
  "$MAKE_CACHE" "$SCRATCH/cache" --entries 16 --neff-size 50000 --faults >/dev/null || { fail "no sample cache"; return; }
  run 0 "$NC" create alice/model --no-set -q || return
  run 0 "$NC" synchronize --repo-id alice/model --cache-dir "$SCRATCH/cache" -q || return
  mkdir -p "$SCRATCH/tmp"
  local target=hf://buckets/alice/copied total
  total=$("$NC" synchronize --pull --repo-id alice/model --cache-dir "$target" --dry-run --json </dev/null |
    jq -r '.planned | length')
  [[ "$total" -ge 16 ]] || fail "too few entries planned: $total"
  # Stopped once a first entry is published (its marker listed).
  interrupt_when INT 'bucket_files alice/copied 2>/dev/null | grep -q "/model\.done$"' \
    env NEURON_CACHE_COPY_BATCH_FILES=1 TMPDIR="$SCRATCH/tmp" \
    "$NC" synchronize --pull --repo-id alice/model --cache-dir "$target" --json
  local published; published=$(stopped_copy 130 "$total")
  [[ -z "$(ls -A "$SCRATCH/tmp")" ]] || fail "scratch left in TMPDIR: $(ls -A "$SCRATCH/tmp")"
  # What the account counts is whole; no marker without its NEFF; the registry goes last.
  bucket_files alice/copied >"$SCRATCH/files"
  local -a copied
  mapfile -t copied < <(jq -r '.transferred[]' "$OUT")
  whole_in_bucket "$SCRATCH/files" "${copied[@]}"
  markers_with_neffs "$SCRATCH/files" >/dev/null
  lacks "$SCRATCH/files" 0_REGISTRY
  # The same command finishes it.
  env TMPDIR="$SCRATCH/tmp" \
    "$NC" synchronize --pull --repo-id alice/model --cache-dir "$target" --json >"$OUT" 2>"$ERR" </dev/null ||
    fail "the re-run failed: $(cat "$ERR")"
  equals "$(json_get "$OUT" '.transferred | length')" "$((total - published))"
  [[ -z "$(ls -A "$SCRATCH/tmp")" ]] || fail "scratch left in TMPDIR: $(ls -A "$SCRATCH/tmp")"
  run 0 "$NC" synchronize --pull --repo-id alice/model --cache-dir "$target" --dry-run --json </dev/null || return
  equals "$(json_get "$OUT" '.planned | length')" 0
  bucket_files alice/copied >"$SCRATCH/files"
  contains "$SCRATCH/files" 0_REGISTRY
}

run_tests
