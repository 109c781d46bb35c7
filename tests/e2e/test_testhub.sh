#!/usr/bin/env bash
# End to end: neuron-cache-test-hub speaks the Hub protocol faithfully. The official JS
# client (@huggingface/hub, pinned in tests/hub-js) drives the main flows; curl checks what
# it does not exercise: error shapes, pagination links, ranges, redirects, commit rules,
# the /_test fault-injection and statistics routes, restarts.
source "$(dirname "$0")/lib.sh"

HUB_BIN="$BIN_DIR/neuron-cache-test-hub"
OWNER=hf_owner_write_token
READER=hf_owner_read_token
OTHER=hf_other_read_token

# start_hub [ARGS...]: a fresh server on $SCRATCH/hub-data; sets HUB_URL and HUB_PID.
start_hub() {
  launch_test_hub --user "alice:$OWNER:write" --user "alice:$READER:read" --user "bob:$OTHER:read" "$@" || return 1
  export HF_ENDPOINT="$HUB_URL"
}

# hub METHOD PATH [CURL ARGS...]: headers to $SCRATCH/h, body to $SCRATCH/b, prints the status.
hub() {
  local method="$1" path="$2"; shift 2
  curl -sS -o "$SCRATCH/b" -D "$SCRATCH/h" -w '%{http_code}' -X "$method" "$HUB_URL$path" "$@"
}
auth() { echo "Authorization: Bearer $1"; }
header() { grep -i "^$1:" "$SCRATCH/h" | head -n 1 | cut -d' ' -f2- | tr -d '\r'; }

create_repo() { # create_repo NAME PRIVATE(true|false)
  [[ "$(hub POST /api/repos/create -H "$(auth $OWNER)" \
    -d "{\"name\":\"$1\",\"organization\":\"alice\",\"type\":\"model\",\"private\":$2}")" == 200 ]] ||
    fail "create $1: $(cat "$SCRATCH/b")"
}

# commit_ndjson REPO FILE [TOKEN]: prints the status.
commit_ndjson() {
  hub POST "/api/models/$1/commit/main" -H "$(auth "${3:-$OWNER}")" -H "Content-Type: application/x-ndjson" \
    --data-binary @"$2"
}

commit_text_file() { # commit_text_file REPO PATH CONTENT
  printf '{"key":"header","value":{"summary":"add %s"}}\n{"key":"file","value":{"path":"%s","content":"%s","encoding":"base64"}}\n' \
    "$2" "$2" "$(printf '%s' "$3" | base64 -w0)" >"$SCRATCH/commit.ndjson"
  [[ "$(commit_ndjson "$1" "$SCRATCH/commit.ndjson")" == 200 ]] || fail "commit $2: $(cat "$SCRATCH/b")"
}

test_js_client_fidelity() {
  local modules="$SOURCE_DIR/tests/hub-js/node_modules/@huggingface/hub"
  [[ -d "$modules" ]] || { fail "tests/hub-js/node_modules is missing: run \`npm ci --prefix tests/hub-js\` (make deps)"; return 1; }
  command -v node >/dev/null || { fail "node is not installed (needed for the JS fidelity test)"; return 1; }
  start_hub --lfs-threshold 1024 --multipart-chunk-size 5000 --page-size 3 || return
  node "$SOURCE_DIR/tests/hub-js/fidelity.mjs" "$HUB_URL" "$OWNER" "$OTHER" >"$OUT" 2>"$ERR"
  local code=$?
  sed 's/^/      /' "$OUT"
  [[ $code -eq 0 ]] || fail "JS fidelity checks failed: $(grep FAIL "$OUT" | head -5) $(head -c 500 "$ERR")"
  contains "$OUT" "PASS all fidelity checks"
}

test_command_line_and_clean_exit() {
  run 2 "$HUB_BIN" --port 0 --data "$SCRATCH/d" --user alice:not_hf:write
  contains "$ERR" "token starting with hf_"
  run 2 "$HUB_BIN" --port 0
  contains "$ERR" "--data DIR is required"
  start_hub || return
  [[ "$HUB_URL" =~ ^http://127\.0\.0\.1:[0-9]+$ ]] || fail "first stdout line is not the base URL: $HUB_URL"
  kill -TERM "$HUB_PID"
  wait "$HUB_PID"
  equals "$?" "0"
  HUB_PID=""
}

test_auth_error_shapes() {
  start_hub || return
  create_repo priv true
  equals "$(hub GET /api/whoami-v2)" 401
  equals "$(hub GET /api/whoami-v2 -H "$(auth hf_unknown)")" 401
  equals "$(header X-Error-Message)" "Invalid credentials in Authorization header"
  equals "$(jq -r .error "$SCRATCH/b")" "Invalid credentials in Authorization header"
  # A private repo looks exactly like a missing one: 401 anonymously, 404 RepoNotFound with a token.
  for repo in alice/priv alice/missing; do
    equals "$(hub GET /api/models/$repo)" 401
    equals "$(header X-Error-Message)" "Invalid username or password."
    equals "$(jq -r .error "$SCRATCH/b")" "Invalid username or password."
    contains "$SCRATCH/h" 'WWW-Authenticate: Bearer realm="Authentication required"'
    equals "$(hub GET /api/models/$repo -H "$(auth $OTHER)")" 404
    equals "$(header X-Error-Code)" RepoNotFound
    equals "$(hub GET /$repo/resolve/main/.gitattributes)" 401
    contains "$SCRATCH/h" "Content-Type: text/plain"
  done
  equals "$(hub GET /api/models/alice/priv -H "$(auth $READER)")" 200
  equals "$(jq -r .private "$SCRATCH/b")" true
  # Writes need the write role in the namespace.
  equals "$(hub POST /api/repos/create -H "$(auth $READER)" -d '{"name":"x","organization":"alice"}')" 403
  equals "$(hub POST /api/repos/create -H "$(auth $OTHER)" -d '{"name":"x","organization":"alice"}')" 403
  printf '{"key":"header","value":{"summary":"x"}}\n' >"$SCRATCH/c"
  equals "$(commit_ndjson alice/priv "$SCRATCH/c" $READER)" 403
  # optimum's write-access probe: deleting a missing branch.
  equals "$(hub DELETE /api/models/alice/priv/branch/no-such-branch -H "$(auth $OWNER)")" 404
  equals "$(header X-Error-Code)" RevisionNotFound
  equals "$(hub DELETE /api/models/alice/priv/branch/no-such-branch -H "$(auth $READER)")" 403
}

test_repo_create_variants_and_conflict() {
  start_hub || return
  equals "$(hub POST /api/repos/create -H "$(auth $OWNER)" -d '{"name":"v","organization":"alice","type":"model","visibility":"private"}')" 200
  equals "$(jq -r .url "$SCRATCH/b")" "$HUB_URL/alice/v"
  equals "$(jq -r .name "$SCRATCH/b")" "alice/v"
  equals "$(hub POST /api/repos/create -H "$(auth $OWNER)" -d '{"name":"v","organization":"alice","type":"model"}')" 409
  equals "$(jq -r .url "$SCRATCH/b")" "$HUB_URL/alice/v"
  equals "$(header X-Error-Message)" "You already created this model repo: alice/v"
  equals "$(hub POST /api/repos/create -H "$(auth $OWNER)" -d '{"name":"w","private":true,"visibility":"public"}')" 400
  equals "$(hub POST /api/repos/create -H "$(auth $OWNER)" -d '{"name":"bad..name"}')" 400
  equals "$(hub POST /api/repos/create -H "$(auth $OWNER)" -d '{"name":"pub","organization":null}')" 200
  equals "$(hub GET /api/models/alice/pub)" 200
  equals "$(jq -r .private "$SCRATCH/b")" false
  equals "$(hub GET '/api/models/alice/v/revision/HEAD?expand=sha&expand=private' -H "$(auth $OWNER)")" 200
  equals "$(jq -c 'keys' "$SCRATCH/b")" '["_id","id","private","sha"]'
  equals "$(hub GET /api/models/alice/v/revision/nope -H "$(auth $OWNER)")" 404
  equals "$(header X-Error-Code)" RevisionNotFound
  equals "$(hub DELETE /api/repos/delete -H "$(auth $OWNER)" -d '{"name":"v","organization":"alice","type":"model"}')" 200
  equals "$(hub DELETE /api/repos/delete -H "$(auth $OWNER)" -d '{"name":"v","organization":"alice","type":"model"}')" 404
  equals "$(header X-Error-Code)" RepoNotFound
}

test_tree_pagination_links_and_paths() {
  start_hub --page-size 2 || return
  create_repo r false
  for f in a.txt "d/b c.txt" d/e/f.txt; do commit_text_file alice/r "$f" "content of $f"; done
  equals "$(hub GET '/api/models/alice/r/tree/main?recursive=true&expand=false')" 200
  local link
  link=$(header Link)
  [[ "$link" =~ ^\<(http://127\.0\.0\.1:[0-9]+/api/models/alice/r/tree/main\?recursive=true\&expand=false\&cursor=[A-Za-z0-9_-]+)\>\;\ rel=\"next\"$ ]] ||
    fail "Link header not absolute or badly formatted: $link"
  local all
  all=$(jq -r '.[].path' "$SCRATCH/b")
  local next="${BASH_REMATCH[1]}" pages=1
  while [[ -n "$next" ]]; do
    curl -sS -o "$SCRATCH/b" -D "$SCRATCH/h" "$next"
    all+=$'\n'$(jq -r '.[].path' "$SCRATCH/b")
    pages=$((pages + 1))
    next=$(header Link | sed -n 's/^<\(.*\)>; rel="next"$/\1/p')
  done
  equals "$pages" 3
  equals "$(echo "$all" | tr '\n' '|')" ".gitattributes|a.txt|d|d/b c.txt|d/e|d/e/f.txt|"
  # %2F and / are the same in the path after the revision; spaces may be encoded.
  equals "$(hub GET '/api/models/alice/r/tree/main/d%2Fe')" 200
  equals "$(jq -r '.[0].path' "$SCRATCH/b")" "d/e/f.txt"
  equals "$(hub GET '/api/models/alice/r/tree/main/d/e')" 200
  equals "$(hub GET '/api/models/alice/r/tree/main/nope')" 404
  equals "$(header X-Error-Code)" EntryNotFound
  equals "$(hub GET '/api/models/alice/r/tree/nope')" 404
  equals "$(header X-Error-Code)" RevisionNotFound
  # paths-info as Python sends it (form) and as JS does (JSON).
  equals "$(hub POST /api/models/alice/r/paths-info/main --data 'paths=a.txt&paths=d%2Fb+c.txt&paths=zz&expand=true')" 200
  equals "$(jq -r '[.[].path] | join(",")' "$SCRATCH/b")" "a.txt,d/b c.txt"
  [[ "$(jq -r '.[0].lastCommit.id' "$SCRATCH/b")" =~ ^[0-9a-f]{40}$ ]] || fail "no lastCommit with expand=true"
  equals "$(hub POST /api/models/alice/r/paths-info/main -H 'Content-Type: application/json' -d '{"paths":["d","a.txt"]}')" 200
  equals "$(jq -r '[.[].type] | join(",")' "$SCRATCH/b")" "directory,file"
}

test_resolve_ranges_and_lfs_redirect() {
  start_hub --lfs-threshold 10 || return
  create_repo r false
  commit_text_file alice/r small.txt "0123456789"
  local sha
  sha=$(jq -r .commitOid "$SCRATCH/b")
  equals "$(hub GET /alice/r/resolve/main/small.txt)" 200
  equals "$(header ETag)" "\"$(printf 'blob 10\0000123456789' | sha1sum | cut -d' ' -f1)\""
  equals "$(header X-Repo-Commit)" "$sha"
  equals "$(hub GET /alice/r/resolve/main/small.txt -H 'Range: bytes=2-4')" 206
  equals "$(cat "$SCRATCH/b")" "234"
  equals "$(header Content-Range)" "bytes 2-4/10"
  equals "$(hub GET /alice/r/resolve/main/small.txt -H 'Range: bytes=-3')" 206
  equals "$(cat "$SCRATCH/b")" "789"
  equals "$(hub GET /alice/r/resolve/main/small.txt -H 'Range: bytes=10-')" 416
  equals "$(header Content-Range)" "bytes */10"
  equals "$(hub GET /alice/r/resolve/main/missing.txt)" 404
  equals "$(header X-Error-Code)" EntryNotFound
  equals "$(header X-Repo-Commit)" "$sha"
  equals "$(hub GET /alice/r/resolve/nobranch/small.txt)" 404
  equals "$(header X-Error-Code)" RevisionNotFound

  # An LFS file, uploaded with the batch API then committed.
  head -c 100 /dev/urandom >"$SCRATCH/big.bin"
  local oid size=100
  oid=$(sha256sum "$SCRATCH/big.bin" | cut -d' ' -f1)
  equals "$(hub POST /alice/r.git/info/lfs/objects/batch -H "$(auth $OWNER)" -H 'Content-Type: application/vnd.git-lfs+json' \
    -d "{\"operation\":\"upload\",\"transfers\":[\"basic\",\"multipart\"],\"hash_algo\":\"sha256\",\"objects\":[{\"oid\":\"$oid\",\"size\":$size}]}")" 200
  contains "$SCRATCH/h" "Content-Type: application/vnd.git-lfs+json"
  local href
  href=$(jq -r '.objects[0].actions.upload.href' "$SCRATCH/b")
  equals "$(curl -sS -o /dev/null -w '%{http_code}' -X PUT --data-binary @"$SCRATCH/big.bin" "$href")" 200
  printf '{"key":"header","value":{"summary":"lfs"}}\n{"key":"lfsFile","value":{"path":"m/big.bin","algo":"sha256","oid":"%s","size":%s}}' \
    "$oid" "$size" >"$SCRATCH/c"
  equals "$(commit_ndjson alice/r "$SCRATCH/c")" 200
  sha=$(jq -r .commitOid "$SCRATCH/b")
  equals "$(hub HEAD /alice/r/resolve/main/m/big.bin -I)" 302
  equals "$(header X-Linked-Etag)" "\"$oid\""
  equals "$(header X-Linked-Size)" "$size"
  equals "$(header X-Repo-Commit)" "$sha"
  lacks "$SCRATCH/h" "X-Xet-Hash"
  local location
  location=$(header Location)
  [[ "$location" == "$HUB_URL/_lfs/cdn/"* ]] || fail "Location is not an absolute byte route: $location"
  equals "$(curl -sS -o "$SCRATCH/got" -w '%{http_code}' -L "$HUB_URL/alice/r/resolve/main/m/big.bin")" 200
  cmp -s "$SCRATCH/got" "$SCRATCH/big.bin" || fail "LFS download differs"
  equals "$(curl -sS -o "$SCRATCH/got" -D "$SCRATCH/h" -w '%{http_code}' -H 'Range: bytes=90-' "$location")" 206
  equals "$(header Content-Range)" "bytes 90-99/100"
  equals "$(header ETag)" "\"$oid\""
  equals "$(curl -sS -o /dev/null -w '%{http_code}' -H 'Range: bytes=100-' "$location")" 416
  equals "$(curl -sS -o /dev/null -w '%{http_code}' "${location%%\?*}?sig=forged")" 403
  # raw serves the pointer.
  equals "$(hub GET /alice/r/raw/main/m/big.bin)" 200
  contains "$SCRATCH/b" "oid sha256:$oid"
}

test_commit_rules() {
  start_hub || return
  create_repo r false
  commit_text_file alice/r keep.txt "keep"
  local head
  head=$(jq -r .commitOid "$SCRATCH/b")
  for bad in "../evil" "/abs" ".git/config" "a/../../b" "a//b"; do
    printf '{"key":"header","value":{"summary":"bad"}}\n{"key":"file","value":{"path":"%s","content":"eA==","encoding":"base64"}}\n' "$bad" >"$SCRATCH/c"
    equals "$(commit_ndjson alice/r "$SCRATCH/c")" 400
    contains "$SCRATCH/b" "Invalid path"
  done
  # Found by fuzz_ndjson_reader: a value of the wrong type was a 500 "Internal error".
  local zeros
  zeros=$(printf '%064d' 0)
  for line in '{"key":5,"value":{}}' '{"key":"header","value":{"summary":7}}' \
    '{"key":"lfsFile","value":{"path":"x.bin","oid":"'"$zeros"'","size":"5"}}' \
    '{"key":"lfsFile","value":{"path":"x.bin","oid":"'"$zeros"'","size":1e300}}'; do
    printf '{"key":"header","value":{"summary":"types"}}\n%s\n' "$line" >"$SCRATCH/c"
    equals "$(commit_ndjson alice/r "$SCRATCH/c")" 400
    contains "$SCRATCH/b" "Invalid NDJSON: line 2"
  done
  printf '{"key":"header","value":{"summary":"lfs","parentCommit":"%s"}}\n{"key":"lfsFile","value":{"path":"x.bin","algo":"sha256","oid":"%s","size":5}}\n' \
    "$head" "$(printf 'never' | sha256sum | cut -d' ' -f1)" >"$SCRATCH/c"
  equals "$(commit_ndjson alice/r "$SCRATCH/c")" 400
  contains "$SCRATCH/b" "Your push was rejected because an LFS pointer pointed to a file that does not exist"
  printf '{"key":"header","value":{"summary":"del"}}\n{"key":"deletedFile","value":{"path":"nope.txt"}}\n' >"$SCRATCH/c"
  equals "$(commit_ndjson alice/r "$SCRATCH/c")" 404
  equals "$(header X-Error-Code)" EntryNotFound
  contains "$SCRATCH/b" "A file with this name doesn't exist"
  commit_text_file alice/r other.txt "moves the head"
  printf '{"key":"header","value":{"summary":"stale","parentCommit":"%s"}}\n{"key":"file","value":{"path":"s.txt","content":"eA=="}}\n' "$head" >"$SCRATCH/c"
  equals "$(commit_ndjson alice/r "$SCRATCH/c")" 412
  printf '{"key":"header","value":{"summary":"bin"}}\n{"key":"file","value":{"path":"b.txt","content":"AAEC","encoding":"base64"}}\n' >"$SCRATCH/c"
  equals "$(commit_ndjson alice/r "$SCRATCH/c")" 400
  contains "$SCRATCH/b" "binary files"
  # A NUL after the 512 bytes preupload judges: preupload says regular, so commit accepts it.
  local late_nul
  late_nul=$( { head -c 600 /dev/zero | tr '\0' 'a'; printf '\0tail'; } | base64 -w0)
  equals "$(hub POST /api/models/alice/r/preupload/main -H "$(auth $OWNER)" \
    -d "{\"files\":[{\"path\":\"late.txt\",\"size\":605,\"sample\":\"$( { head -c 600 /dev/zero | tr '\0' 'a'; printf '\0tail'; } | head -c 512 | base64 -w0)\"}]}")" 200
  equals "$(jq -r '.files[0].uploadMode' "$SCRATCH/b")" "regular"
  printf '{"key":"header","value":{"summary":"late nul"}}\n{"key":"file","value":{"path":"late.txt","content":"%s","encoding":"base64"}}\n' "$late_nul" >"$SCRATCH/c"
  equals "$(commit_ndjson alice/r "$SCRATCH/c")" 200
  # Folder deletion with a trailing slash, utf-8 content, no trailing newline, chunked body.
  commit_text_file alice/r dir/one.txt "1"
  commit_text_file alice/r dir/two.txt "2"
  printf '{"key":"header","value":{"summary":"fold"}}\n{"key":"deletedFolder","value":{"path":"dir/"}}\n{"key":"file","value":{"path":"u.txt","content":"plain text","encoding":"utf-8"}}' >"$SCRATCH/c"
  equals "$(hub POST /api/models/alice/r/commit/main -H "$(auth $OWNER)" -H 'Transfer-Encoding: chunked' -H 'Content-Type: application/x-ndjson' --data-binary @"$SCRATCH/c")" 200
  equals "$(hub GET '/api/models/alice/r/tree/main?recursive=true')" 200
  equals "$(jq -r '[.[].path] | join(",")' "$SCRATCH/b")" ".gitattributes,keep.txt,late.txt,other.txt,u.txt"
  equals "$(hub GET /alice/r/resolve/main/u.txt)" 200
  equals "$(cat "$SCRATCH/b")" "plain text"
  # preupload: size threshold, .gitattributes patterns, binary samples, existing oids.
  equals "$(hub POST /api/models/alice/r/preupload/main -H "$(auth $OWNER)" -d "{\"files\":[
      {\"path\":\"keep.txt\",\"size\":4,\"sample\":\"$(printf keep | base64)\"},
      {\"path\":\"w.safetensors\",\"size\":3,\"sample\":\"YWJj\"},
      {\"path\":\"n.neff\",\"size\":3,\"sample\":\"AAEC\"},
      {\"path\":\"huge.txt\",\"size\":20000000,\"sample\":\"YWJj\"}]}")" 200
  equals "$(jq -r '[.files[].uploadMode] | join(",")' "$SCRATCH/b")" "regular,lfs,lfs,lfs"
  equals "$(jq -r '.files[0].oid' "$SCRATCH/b")" "$(printf 'blob 4\0keep' | sha1sum | cut -d' ' -f1)"
  [[ "$(jq -r .commitOid "$SCRATCH/b")" =~ ^[0-9a-f]{40}$ ]] || fail "preupload without commitOid"
}

test_multipart_upload_with_chunked_parts() {
  start_hub --multipart-chunk-size 40 || return
  create_repo r true
  head -c 100 /dev/urandom >"$SCRATCH/obj"
  local oid
  oid=$(sha256sum "$SCRATCH/obj" | cut -d' ' -f1)
  equals "$(hub POST /alice/r.git/info/lfs/objects/batch -H "$(auth $OWNER)" \
    -d "{\"operation\":\"upload\",\"transfers\":[\"basic\",\"multipart\",\"xet\"],\"hash_algo\":\"sha_256\",\"objects\":[{\"oid\":\"$oid\",\"size\":100}]}")" 200
  equals "$(jq -r .transfer "$SCRATCH/b")" basic
  cp "$SCRATCH/b" "$SCRATCH/batch"
  equals "$(jq -r '.objects[0].actions.upload.header | keys | join(",")' "$SCRATCH/batch")" "00001,00002,00003,chunk_size"
  local complete
  complete=$(jq -r '.objects[0].actions.upload.href' "$SCRATCH/batch")
  # Parts land at their offsets whatever their order. A part that runs long is refused
  # without spilling into the next part, and a part never uploaded fails the completion.
  local etags=() n
  for n in 3 2 1; do
    local url
    url=$(jq -r ".objects[0].actions.upload.header[\"0000$n\"]" "$SCRATCH/batch")
    if ((n == 1)); then
      equals "$(curl -sS -o "$SCRATCH/b" -w '%{http_code}' -X POST \
        -d "{\"oid\":\"$oid\",\"parts\":[{\"partNumber\":1,\"etag\":\"x\"},{\"partNumber\":2,\"etag\":${etags[2]}},{\"partNumber\":3,\"etag\":${etags[3]}}]}" "$complete")" 400
      contains "$SCRATCH/b" "Part 1 was never uploaded"
      { head -c 40 "$SCRATCH/obj"; printf 'X'; } >"$SCRATCH/part"
      equals "$(curl -sS -o "$SCRATCH/b" -w '%{http_code}' -X PUT --data-binary @"$SCRATCH/part" "$url")" 400
      contains "$SCRATCH/b" "must hold 40 bytes, got 41"
    fi
    tail -c +$(((n - 1) * 40 + 1)) "$SCRATCH/obj" | head -c 40 >"$SCRATCH/part"
    curl -sS -o /dev/null -D "$SCRATCH/h" -X PUT -H 'Transfer-Encoding: chunked' --data-binary @"$SCRATCH/part" "$url"
    local etag
    etag=$(header ETag)
    [[ -n "$etag" ]] || fail "part $n without ETag"
    etags[n]=$(jq -Rn --arg e "$etag" '$e')
  done
  local parts=""
  for n in 1 2 3; do parts+="${parts:+,}{\"partNumber\":$n,\"etag\":${etags[n]}}"; done
  equals "$(curl -sS -o "$SCRATCH/b" -w '%{http_code}' -X POST -d "{\"oid\":\"$oid\",\"parts\":[$parts]}" "$complete")" 200
  # Now stored: the batch offers no action, and verify confirms it.
  equals "$(hub POST /alice/r.git/info/lfs/objects/batch -H "$(auth $OWNER)" \
    -d "{\"operation\":\"upload\",\"objects\":[{\"oid\":\"$oid\",\"size\":100}]}")" 200
  equals "$(jq -r '.objects[0].actions // "none"' "$SCRATCH/b")" none
  equals "$(hub POST /alice/r.git/info/lfs/objects/verify -H "$(auth $OWNER)" -d "{\"oid\":\"$oid\",\"size\":100}")" 200
  equals "$(hub POST /alice/r.git/info/lfs/objects/batch -H "$(auth $OWNER)" \
    -d '{"operation":"upload","objects":[{"oid":"xyz","size":1}]}')" 200
  equals "$(jq -r '.objects[0].error.code' "$SCRATCH/b")" 422
}

test_fault_injection_and_stats() {
  start_hub || return
  create_repo r false
  commit_text_file alice/r f.txt "0123456789abcdef"
  equals "$(hub POST /_test/stats/reset)" 200
  equals "$(hub POST /_test/faults -d '{"match":"/api/models/alice/r","method":"GET","count":2,"action":"status","status":503,"retry_after":2}')" 200
  equals "$(hub GET /api/models/alice/r)" 503
  equals "$(header Retry-After)" 2
  equals "$(hub GET /api/models/alice/r)" 503
  equals "$(hub GET /api/models/alice/r)" 200
  equals "$(hub POST /_test/faults -d '{"match":"whoami","action":"status","status":429,"retry_after":3}')" 200
  equals "$(hub GET /api/whoami-v2 -H "$(auth $OWNER)")" 429
  equals "$(header RateLimit)" '"api";r=0;t=3'
  [[ -n "$(header RateLimit-Policy)" ]] || fail "429 without RateLimit-Policy"
  equals "$(hub GET /api/whoami-v2 -H "$(auth $OWNER)")" 200
  # A failed commit is not applied.
  equals "$(hub POST /_test/faults -d '{"match":"/commit/","method":"POST","action":"status","status":500}')" 200
  printf '{"key":"header","value":{"summary":"x"}}\n{"key":"file","value":{"path":"g.txt","content":"eA=="}}' >"$SCRATCH/c"
  equals "$(commit_ndjson alice/r "$SCRATCH/c")" 500
  equals "$(hub GET /alice/r/resolve/main/g.txt)" 404
  equals "$(hub POST /_test/faults -d '{"match":"/tree/","action":"malformed_json"}')" 200
  equals "$(hub GET /api/models/alice/r/tree/main)" 200
  jq . "$SCRATCH/b" >/dev/null 2>&1 && fail "malformed_json answered valid JSON"
  equals "$(hub POST /_test/faults -d '{"match":"f.txt","action":"corrupt_body"}')" 200
  equals "$(hub GET /alice/r/resolve/main/f.txt)" 200
  equals "$(wc -c <"$SCRATCH/b")" 16
  [[ "$(cat "$SCRATCH/b")" != "0123456789abcdef" ]] || fail "corrupt_body left the bytes intact"
  equals "$(hub POST /_test/faults -d '{"match":"f.txt","action":"truncate_body","bytes":5}')" 200
  local code
  code=$(curl -sS -o "$SCRATCH/b" -w '%{http_code}' "$HUB_URL/alice/r/resolve/main/f.txt" 2>"$SCRATCH/curl.err")
  equals "$(wc -c <"$SCRATCH/b")" 5
  contains "$SCRATCH/curl.err" "transfer closed"
  equals "$(hub POST /_test/faults -d '{"match":"f.txt","action":"drop_after_bytes","bytes":3}')" 200
  curl -sS -o "$SCRATCH/b" "$HUB_URL/alice/r/resolve/main/f.txt" 2>/dev/null
  equals "$(wc -c <"$SCRATCH/b")" 3
  # A resume after the drop gets the rest with a 206.
  equals "$(hub GET /alice/r/resolve/main/f.txt -H 'Range: bytes=3-')" 206
  equals "$(cat "$SCRATCH/b")" "3456789abcdef"
  equals "$(hub POST /_test/faults -d '{"match":"f.txt","method":"HEAD","action":"wrong_size","size":99}')" 200
  equals "$(hub HEAD /alice/r/resolve/main/f.txt -I)" 200
  equals "$(header Content-Length)" 99
  equals "$(hub HEAD /alice/r/resolve/main/f.txt -I)" 200
  equals "$(header Content-Length)" 16
  # A dropped upload: the PUT fails and nothing is stored.
  head -c 64 /dev/urandom >"$SCRATCH/obj"
  local oid
  oid=$(sha256sum "$SCRATCH/obj" | cut -d' ' -f1)
  hub POST /alice/r.git/info/lfs/objects/batch -H "$(auth $OWNER)" \
    -d "{\"operation\":\"upload\",\"objects\":[{\"oid\":\"$oid\",\"size\":64}]}" >/dev/null
  local href
  href=$(jq -r '.objects[0].actions.upload.href' "$SCRATCH/b")
  equals "$(hub POST /_test/faults -d '{"match":"/_lfs/upload/","method":"PUT","action":"drop_after_bytes","bytes":10}')" 200
  curl -sS -o /dev/null -X PUT --data-binary @"$SCRATCH/obj" "$href" 2>/dev/null && fail "dropped upload reported success"
  equals "$(hub POST /alice/r.git/info/lfs/objects/verify -H "$(auth $OWNER)" -d "{\"oid\":\"$oid\",\"size\":64}")" 404
  equals "$(curl -sS -o /dev/null -w '%{http_code}' -X PUT --data-binary @"$SCRATCH/obj" "$href")" 200
  equals "$(hub GET /_test/faults)" 200
  equals "$(jq '.faults | length' "$SCRATCH/b")" 0
  equals "$(hub POST /_test/faults -d '{"match":"x","action":"explode"}')" 400
  equals "$(hub POST /_test/faults -d '{"match":"/","action":"status","status":500,"count":50}')" 200
  equals "$(hub DELETE /_test/faults)" 200
  equals "$(hub GET /api/models/alice/r)" 200
  equals "$(hub GET /_test/stats)" 200
  equals "$(jq -r .by_route.model_info "$SCRATCH/b")" 4
  equals "$(jq -r .by_route.whoami "$SCRATCH/b")" 2
  equals "$(jq -r .by_method.PUT "$SCRATCH/b")" 2
  [[ "$(jq -r .total "$SCRATCH/b")" -ge 15 ]] || fail "stats total too small: $(cat "$SCRATCH/b")"
}

test_injected_tree_entries_are_listed_verbatim() {
  start_hub || return
  create_repo r false
  for p in "../evil" "/abs" ".git/x" "a/../../b"; do
    equals "$(hub POST /_test/inject-tree-entry -d "{\"repo\":\"alice/r\",\"path\":\"$p\",\"content\":\"pwned\"}")" 200
  done
  equals "$(hub GET '/api/models/alice/r/tree/main?recursive=true')" 200
  local paths
  paths=$(jq -r '[.[] | select(.type == "file") | .path] | sort | join("|")' "$SCRATCH/b")
  equals "$paths" "../evil|.git/x|.gitattributes|/abs|a/../../b"
}

test_concurrent_commits_are_serialized() {
  start_hub || return
  create_repo r false
  local i pids=()
  for i in $(seq 12); do
    printf '{"key":"header","value":{"summary":"c%s"}}\n{"key":"file","value":{"path":"f%s.txt","content":"%s"}}' \
      "$i" "$i" "$(printf 'file %s' "$i" | base64)" >"$SCRATCH/c$i"
    curl -sS -o "$SCRATCH/r$i" -w '%{http_code}' -X POST -H "$(auth $OWNER)" --data-binary @"$SCRATCH/c$i" \
      "$HUB_URL/api/models/alice/r/commit/main" >"$SCRATCH/s$i" &
    pids+=($!)
  done
  wait "${pids[@]}"
  for i in $(seq 12); do equals "$(cat "$SCRATCH/s$i")" 200; done
  equals "$(hub GET /api/models/alice/r/commits/main)" 200
  equals "$(jq length "$SCRATCH/b")" 13
  equals "$(hub GET '/api/models/alice/r/tree/main')" 200
  equals "$(jq length "$SCRATCH/b")" 13
}

# Several requests written at once on one connection (HTTP/1.1 pipelining): each is
# answered in turn, a body larger than the server's read buffer included, and the bytes
# of the next request already read with it are not lost.
test_pipelined_requests_on_one_connection() {
  start_hub || return
  create_repo r false
  head -c 300000 /dev/urandom | base64 >"$SCRATCH/big.txt" # text: the Hub refuses binary regular files
  printf '{"key":"header","value":{"summary":"big"}}\n{"key":"file","value":{"path":"big.txt","content":"%s","encoding":"base64"}}\n' \
    "$(base64 -w0 "$SCRATCH/big.txt")" >"$SCRATCH/commit.ndjson"
  local port=${HUB_URL##*:}
  {
    printf 'POST /api/models/alice/r/commit/main HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer %s\r\n' "$OWNER"
    printf 'Content-Type: application/x-ndjson\r\nContent-Length: %s\r\n\r\n' "$(stat -c %s "$SCRATCH/commit.ndjson")"
    cat "$SCRATCH/commit.ndjson"
    printf 'GET /api/whoami-v2 HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer %s\r\n\r\n' "$OWNER"
    printf 'GET /api/whoami-v2 HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n'
  } >"$SCRATCH/pipelined"
  exec {connection}<>"/dev/tcp/127.0.0.1/$port"
  cat "$SCRATCH/pipelined" >&"$connection"
  timeout 20 cat <&"$connection" >"$SCRATCH/answers"
  exec {connection}>&-
  equals "$(grep -a -o 'HTTP/1.1 [0-9]*' "$SCRATCH/answers" | tr '\n' ' ')" "HTTP/1.1 200 HTTP/1.1 200 HTTP/1.1 401 "
  contains "$SCRATCH/answers" '"name":"alice"'
  equals "$(hub GET /alice/r/resolve/main/big.txt)" 200
  cmp -s "$SCRATCH/b" "$SCRATCH/big.txt" || fail "the file committed on the pipelined connection differs"
}

test_restart_keeps_everything() {
  start_hub --lfs-threshold 4 || return
  create_repo r true
  commit_text_file alice/r kept.txt "survives restarts"
  local sha
  sha=$(jq -r .commitOid "$SCRATCH/b")
  stop_hub
  start_hub --lfs-threshold 4 || return
  equals "$(hub GET /api/models/alice/r -H "$(auth $OWNER)")" 200
  equals "$(jq -r .sha "$SCRATCH/b")" "$sha"
  equals "$(jq -r .private "$SCRATCH/b")" true
  equals "$(hub GET /alice/r/resolve/main/kept.txt -H "$(auth $OWNER)")" 200
  equals "$(cat "$SCRATCH/b")" "survives restarts"
}

# git_folder_ids DIR: "path oid" of every folder below DIR, as git computes them.
git_folder_ids() {
  git -C "$1" init -q . && git -C "$1" add -A &&
    git -C "$1" ls-tree -r -t "$(git -C "$1" write-tree)" |
    awk -F '\t' '{ split($1, m, " "); if (m[2] == "tree") print $2 " " m[3] }' | sort
}
# hub_folder_ids REPO: the same, as the Hub lists them at main.
hub_folder_ids() {
  curl -fsS -H "$(auth $OWNER)" "$HUB_URL/api/models/$1/tree/main?recursive=true" |
    jq -r '.[] | select(.type == "directory") | "\(.path) \(.oid)"' | sort
}

test_folder_ids_follow_each_commit_as_git_computes_them() {
  # The Hub works out a commit's tree from what the commit changes; the folder ids must be
  # git's for the whole tree after additions, a replacement, deletions of a file and of a
  # folder, and after a restart (commits are stored as their changes and replayed).
  start_hub || return
  create_repo t false
  local tree="$SCRATCH/tree" step path
  mkdir -p "$tree"
  for step in 1 2 3; do
    {
      printf '{"key":"header","value":{"summary":"step %s"}}\n' "$step"
      for path in a/b/x$step.txt a/c/y.txt z$step.txt "d/e f/$step" d/g/h/i.txt; do
        mkdir -p "$tree/$(dirname "$path")"
        printf 'step %s %s' "$step" "$path" >"$tree/$path"
        printf '{"key":"file","value":{"path":"%s","content":"%s","encoding":"base64"}}\n' "$path" \
          "$(printf 'step %s %s' "$step" "$path" | base64 -w0)"
      done
      if [[ $step == 2 ]]; then printf '{"key":"deletedFile","value":{"path":"z1.txt"}}\n'; rm "$tree/z1.txt"; fi
      if [[ $step == 3 ]]; then printf '{"key":"deletedFolder","value":{"path":"d"}}\n'; rm -r "$tree/d"; fi
    } >"$SCRATCH/commit.ndjson"
    equals "$(commit_ndjson alice/t "$SCRATCH/commit.ndjson")" 200
    hub_folder_ids alice/t >"$SCRATCH/hub.ids"
    rm -rf "$SCRATCH/mirror" && cp -r "$tree" "$SCRATCH/mirror"
    git_folder_ids "$SCRATCH/mirror" >"$SCRATCH/git.ids"
    diff "$SCRATCH/git.ids" "$SCRATCH/hub.ids" >"$SCRATCH/diff" ||
      fail "step $step: folder ids differ from git's: $(cat "$SCRATCH/diff")"
  done
  grep -q '^a/b ' "$SCRATCH/hub.ids" || fail "no folder a/b listed"
  lacks "$SCRATCH/hub.ids" "d/"
  stop_hub
  start_hub || return
  hub_folder_ids alice/t >"$SCRATCH/hub2.ids"
  diff "$SCRATCH/hub.ids" "$SCRATCH/hub2.ids" >"$SCRATCH/diff" || fail "ids changed across a restart: $(cat "$SCRATCH/diff")"
}

run_tests
