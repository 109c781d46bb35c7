#!/usr/bin/env bash
# End to end: the Hub as it is run. The test Hub enforces the real Hub's limits (commits per
# hour, the commit time budget, files per commit, entries per folder, files per repo, api /
# resolver quotas with RateLimit headers), each answered as the Hub answers; and pushes and
# pulls live within them: a push lands in several commits of whole entries, registry last,
# survives a kill, an interrupt (stopped after the commit in flight), a lost answer, a
# concurrent writer and a spent commit quota, and refuses an over-full folder before
# anything moves; a pull paces itself on the resolver quota.
source "$(dirname "$0")/lib.sh"

HUB_BIN="$BIN_DIR/neuron-cache-test-hub"
MAKE_CACHE="$SOURCE_DIR/tests/tools/make_sample_cache.sh"
ALICE=hf_alice_limits_write_token_01
export NEURON_CACHE_HTTP_BACKOFF_BASE_MS=2

# start_hub [ARGS...]: a fresh server on $SCRATCH/hub-data; sets HUB_URL, HUB_PID, HF_ENDPOINT.
start_hub() {
  launch_test_hub --user "alice:$ALICE:write" "$@" || return 1
  export HF_ENDPOINT="$HUB_URL"
}

# hub METHOD PATH [CURL ARGS...]: headers to $SCRATCH/h, body to $SCRATCH/b, prints the status.
hub() {
  local method="$1" path="$2"; shift 2
  curl -sS -o "$SCRATCH/b" -D "$SCRATCH/h" -w '%{http_code}' -X "$method" "$HUB_URL$path" \
    -H "Authorization: Bearer $ALICE" "$@"
}
header() { grep -i "^$1:" "$SCRATCH/h" | head -n 1 | cut -d' ' -f2- | tr -d '\r'; }
stats() { curl -sS "$HUB_URL/_test/stats"; }

create_repo() { # create_repo NAME
  [[ "$(hub POST /api/repos/create -d "{\"name\":\"$1\",\"organization\":\"alice\",\"type\":\"model\"}")" == 200 ]] ||
    fail "create $1: $(cat "$SCRATCH/b")"
}

# commit_files REPO PATH...: one commit adding each PATH (its own name as content); prints the status.
commit_files() {
  local repo="$1"; shift
  {
    printf '{"key":"header","value":{"summary":"add %s files"}}\n' "$#"
    for path in "$@"; do
      printf '{"key":"file","value":{"path":"%s","content":"%s","encoding":"base64"}}\n' "$path" \
        "$(printf '%s' "$path" | base64 -w0)"
    done
  } >"$SCRATCH/commit.ndjson"
  hub POST "/api/models/$repo/commit/main" -H "Content-Type: application/x-ndjson" --data-binary @"$SCRATCH/commit.ndjson"
}

head_of() { curl -fsS -H "Authorization: Bearer $ALICE" "$HUB_URL/api/models/$1/revision/main" | jq -r .sha; }

# tree_at REPO REV: every file path at REV, sorted (one page: the hub runs with a big page size).
tree_at() {
  curl -fsS -H "Authorization: Bearer $ALICE" "$HUB_URL/api/models/$1/tree/$2?recursive=true" |
    jq -r '.[] | select(.type == "file") | .path' | sort
}
# tree_with_oids REPO: "path oid" of every file at main.
tree_with_oids() {
  curl -fsS -H "Authorization: Bearer $ALICE" "$HUB_URL/api/models/$1/tree/main?recursive=true" |
    jq -r '.[] | select(.type == "file") | "\(.path) \(.oid)"' | sort
}
# commit_ids REPO: the commits of main, oldest first.
commit_ids() {
  curl -fsS -H "Authorization: Bearer $ALICE" "$HUB_URL/api/models/$1/commits/main?limit=1000" |
    jq -r '.[].id' | tac
}

# only_whole_entries FINAL SNAPSHOT...: in every snapshot (a file of paths), each entry
# (neuronxcc-*/<dir>) present holds exactly the files it holds in FINAL, and a registry file
# appears only once every entry of FINAL is there.
only_whole_entries() {
  python3 - "$@" <<'EOF' || fail "a reader saw a partial state: $(cat "$SCRATCH/partial" 2>/dev/null)"
import collections, sys
def entries(paths):
    found = collections.defaultdict(set)
    registry = False
    for path in paths:
        parts = path.split("/")
        if len(parts) >= 3 and parts[0].startswith("neuronxcc-"):
            if parts[1] == "0_REGISTRY":
                registry = True
            else:
                found["/".join(parts[:2])].add(path)
    return found, registry
final, _ = entries(open(sys.argv[1]).read().split())
for name in sys.argv[2:]:
    seen, registry = entries(open(name).read().split())
    for entry, files in seen.items():
        if files != final.get(entry):
            open(sys.environ["SCRATCH"] + "/partial", "w").write(f"{name}: {entry} has {sorted(files)}")
            sys.exit(1)
    if registry and len(seen) != len(final):
        open(sys.environ["SCRATCH"] + "/partial", "w").write(f"{name}: registry with {len(seen)} of {len(final)} entries")
        sys.exit(1)
EOF
}

# every_commit_whole REPO: only_whole_entries over the tree of every commit of REPO.
every_commit_whole() {
  tree_at "$1" main >"$SCRATCH/final.paths"
  local n=0 snapshots=()
  for id in $(commit_ids "$1"); do
    tree_at "$1" "$id" >"$SCRATCH/commit-$n.paths"
    snapshots+=("$SCRATCH/commit-$n.paths")
    n=$((n + 1))
  done
  only_whole_entries "$SCRATCH/final.paths" "${snapshots[@]}"
}

# No commit repeats its parent's tree: a lost answer never made a duplicate commit.
no_empty_commits() {
  local previous="" current
  for id in $(commit_ids "$1"); do
    current=$(tree_at "$1" "$id" | sha1sum)
    [[ "$current" != "$previous" ]] || fail "commit $id of $1 changes nothing (a duplicate)"
    previous="$current"
  done
}

push() { # push REPO [ARGS...]: synchronize the sample cache to alice/REPO, --json
  local repo="$1"; shift
  CUSTOM_CACHE_REPO="alice/$repo" HF_TOKEN=$ALICE "$NC" synchronize --cache-dir "$SCRATCH/cache" --json "$@"
}

# Waits (up to 30 s) until the Hub has answered one commit request. Polled every 100 ms: a
# commit of these pushes takes a second or more, and each poll costs a curl and a jq.
first_commit_answered() {
  for _ in $(seq 300); do
    [[ "$(stats | jq -r '.by_route.commit // 0')" -ge 1 ]] && return 0
    sleep 0.1
  done
  fail "no commit within 30 s"
}

# --- the test Hub's limits, as the Hub answers them -----------------------------------------

test_commit_rate_limit_answers_like_the_hub() {
  start_hub --commits-per-hour 2 || return
  create_repo r
  equals "$(commit_files alice/r a.txt)" 200
  equals "$(commit_files alice/r b.txt)" 200
  equals "$(commit_files alice/r c.txt)" 429
  contains "$SCRATCH/b" "You have exceeded the rate limit for repository commits (2 per hour). You can retry this action in about 1 hour. To reduce the number of commits, you can upload entire folders at once using the Hub Python library"
  local wait; wait=$(header Retry-After)
  [[ "$wait" -gt 3000 && "$wait" -le 3601 ]] || fail "Retry-After $wait"
  tree_at alice/r main >"$SCRATCH/paths"
  lacks "$SCRATCH/paths" c.txt
  # Per repo: another repo still commits.
  create_repo other
  equals "$(commit_files alice/other a.txt)" 200
  stop_hub
  # A short window: the quota comes back.
  start_hub --commits-per-hour 1 --commit-window-s 1 || return
  equals "$(commit_files alice/r d.txt)" 200
  equals "$(commit_files alice/r e.txt)" 429
  contains "$SCRATCH/b" "(1 per 1 second)"
  sleep 1.1
  equals "$(commit_files alice/r e.txt)" 200
}

test_folder_entries_and_repo_files_limits() {
  start_hub --max-folder-entries 3 --max-repo-files 4 || return
  create_repo r
  equals "$(commit_files alice/r d/1 d/2 d/3 d/4)" 400
  contains "$SCRATCH/b" "Your push was rejected because it contains too many files per directory. Each directory in your git repo can only contain up to 3 files. Offending reference: refs/heads/main Offending directories: /d/"
  # Sub-folders count as entries too.
  equals "$(commit_files alice/r d/1 d/2 d/x/1 d/y/1)" 400
  contains "$SCRATCH/b" "Offending directories: /d/"
  equals "$(commit_files alice/r d/1 d/2 d/3)" 200
  [[ -z "$(header Warning)" ]] || fail "a warning below the recommended repo size"
  equals "$(commit_files alice/r e/1 e/2)" 200
  contains <(header Warning) 'the Hub recommends fewer than 4 files per repository'
  stop_hub
  start_hub --max-repo-files 4 --refuse-past-max-repo-files || return
  equals "$(commit_files alice/r f/1)" 400
  contains "$SCRATCH/b" "more than the 4 allowed per repository"
}

test_files_per_commit_and_commit_time_budget() {
  start_hub --max-files-per-commit 2 || return
  create_repo r
  equals "$(commit_files alice/r a b c)" 400
  contains "$SCRATCH/b" "contains too many files (3)"
  equals "$(commit_files alice/r a b)" 200
  stop_hub
  # 150 ms of work per file against a 200 ms budget: the commit lands, its answer is a 504.
  start_hub --commit-timeout-ms 200 --commit-cost-us-per-file 150000 || return
  local before; before=$(head_of alice/r)
  equals "$(commit_files alice/r slow1 slow2)" 504
  [[ "$(head_of alice/r)" != "$before" ]] || fail "the timed-out commit did not land"
  tree_at alice/r main >"$SCRATCH/paths"
  contains "$SCRATCH/paths" slow2
}

test_api_and_resolver_quotas_announce_and_refuse() {
  start_hub --api-quota 5 --resolver-quota 2 --quota-window-s 60 || return
  create_repo r # 1 api request
  equals "$(commit_files alice/r a.txt)" 200
  equals "$(hub GET /api/models/alice/r)" 200
  [[ "$(header RateLimit)" =~ ^\"api\"\;r=2\;t=([0-9]+)$ ]] || fail "RateLimit: $(header RateLimit)"
  local t="${BASH_REMATCH[1]}"
  [[ "$t" -ge 1 && "$t" -le 60 ]] || fail "t=$t"
  equals "$(header RateLimit-Policy)" '"fixed window";"api";q=5;w=60'
  equals "$(hub GET /api/models/alice/r)" 200
  equals "$(hub GET /api/models/alice/r)" 200
  equals "$(hub GET /api/models/alice/r)" 429
  [[ "$(header RateLimit)" =~ ^\"api\"\;r=0\;t= ]] || fail "RateLimit: $(header RateLimit)"
  [[ "$(header Retry-After)" -ge 1 ]] || fail "no Retry-After"
  contains "$SCRATCH/b" "We had to rate limit you, you hit the quota of 5 api requests per 1 minute period."
  # Resolvers have their own quota; its answers are text, as /resolve errors are.
  equals "$(hub GET /alice/r/resolve/main/a.txt)" 200
  equals "$(header RateLimit-Policy)" '"fixed window";"resolvers";q=2;w=60'
  equals "$(hub GET /alice/r/resolve/main/a.txt)" 200
  equals "$(hub GET /alice/r/resolve/main/a.txt)" 429
  contains "$SCRATCH/b" "quota of 2 resolvers requests"
  equals "$(stats | jq -r '.by_status["429"]')" 2
  # Anonymous callers have the per-IP quota (500 api by default).
  start_hub_anonymous_check() {
    local code; code=$(curl -sS -o /dev/null -D "$SCRATCH/h" -w '%{http_code}' "$HUB_URL/api/models/alice/r")
    [[ "$(header RateLimit-Policy)" == '"fixed window";"api";q=5;w=60' ]] || fail "anonymous policy: $(header RateLimit-Policy)"
    [[ "$code" == 200 || "$code" == 401 || "$code" == 404 ]] || fail "anonymous: HTTP $code"
  }
  start_hub_anonymous_check
  stop_hub
  start_hub --user "pat:hf_pat_pro_token:write:pro" || return
  [[ "$(curl -sS -o /dev/null -D "$SCRATCH/h" -w '%{http_code}' -H 'Authorization: Bearer hf_pat_pro_token' \
    "$HUB_URL/api/whoami-v2")" == 200 ]] || fail "whoami"
  equals "$(header RateLimit-Policy)" '"fixed window";"api";q=2500;w=300'
  curl -sS -o /dev/null -D "$SCRATCH/h" "$HUB_URL/api/models/alice/r"
  equals "$(header RateLimit-Policy)" '"fixed window";"api";q=500;w=300'
}

# --- pushes within the limits ---------------------------------------------------------------

test_multi_commit_push_shows_readers_only_whole_entries() {
  # 2,200 files: three commits even at the 1,000-file ceiling a light push starts at.
  "$MAKE_CACHE" "$SCRATCH/cache" --entries 550 --faults >/dev/null || { fail "cannot make the sample cache"; return; }
  start_hub --page-size 100000 || return
  create_repo big
  # A reader polls the head the whole time.
  (
    n=0
    while [[ ! -e "$SCRATCH/push-done" ]]; do
      tree_at alice/big main >"$SCRATCH/poll-$n.paths" 2>/dev/null
      n=$((n + 1))
    done
  ) &
  local reader=$!
  run 0 push big || { touch "$SCRATCH/push-done"; wait $reader; return; }
  touch "$SCRATCH/push-done"
  wait $reader
  cp "$OUT" "$SCRATCH/push.json"
  local commits; commits=$(json_get "$SCRATCH/push.json" .commits)
  [[ "$commits" -ge 3 ]] || fail "2,200 files landed in $commits commits"
  equals "$(json_get "$SCRATCH/push.json" .entries_left)" 0
  contains "$SCRATCH/push.json" '"committed": true'
  # Every commit, and every head the reader saw, holds whole entries, registry last.
  tree_at alice/big main >"$SCRATCH/final.paths"
  grep -q 0_REGISTRY "$SCRATCH/final.paths" || fail "no registry pushed"
  only_whole_entries "$SCRATCH/final.paths" "$SCRATCH"/poll-*.paths
  every_commit_whole alice/big
  equals "$(commit_ids alice/big | wc -l)" "$((commits + 1))"
  curl -fsS -H "Authorization: Bearer $ALICE" "$HUB_URL/api/models/alice/big/commits/main" |
    jq -r '.[].title' >"$SCRATCH/titles"
  contains "$SCRATCH/titles" "(part 2)"
  # The no-op re-run: no commit.
  run 0 push big || return
  equals "$(json_get "$OUT" .commits)" 0
  equals "$(json_get "$OUT" .committed)" false
}

test_killed_push_resumes_to_the_same_repo() {
  # 2,200 files, three commits of up to 1,000 files taking ~1 s each (1 ms a file): the
  # push is killed between two of them.
  "$MAKE_CACHE" "$SCRATCH/cache" --entries 550 >/dev/null || { fail "cannot make the sample cache"; return; }
  start_hub --page-size 100000 --commit-cost-us-per-file 1000 || return
  create_repo killed
  create_repo whole
  # A simple command, so that $! is neuron-cache itself (a function would run in a subshell,
  # and killing that would leave the push running).
  CUSTOM_CACHE_REPO="alice/killed" HF_TOKEN=$ALICE "$NC" synchronize --cache-dir "$SCRATCH/cache" --json \
    >"$SCRATCH/killed.out" 2>"$SCRATCH/killed.err" &
  local pusher=$!
  first_commit_answered
  kill -KILL "$pusher" 2>/dev/null
  wait "$pusher" 2>/dev/null
  local landed; landed=$(commit_ids alice/killed | wc -l)
  [[ "$landed" -ge 2 ]] || fail "no commit landed before the kill"
  sleep 1.5 # a commit in flight at the kill lands or not: either way the re-run copes
  every_commit_whole alice/killed
  run 0 push killed || return
  equals "$(json_get "$OUT" .entries_left)" 0
  run 0 push whole || return
  diff <(tree_with_oids alice/killed) <(tree_with_oids alice/whole) >"$SCRATCH/diff" ||
    fail "the resumed push differs from an uninterrupted one: $(head -5 "$SCRATCH/diff")"
  every_commit_whole alice/killed
  no_empty_commits alice/killed
}

# interrupt_push SIGNAL REPO [ARGS...]: a push of the sample cache in commits of ~1 s, sent
# SIGNAL once its first commit was answered; STATUS is its exit code.
interrupt_push() {
  local signal="$1" repo="$2"; shift 2
  # A simple command, so that $! is neuron-cache itself (not a subshell running it).
  CUSTOM_CACHE_REPO="alice/$repo" HF_TOKEN=$ALICE "$NC" synchronize --cache-dir "$SCRATCH/cache" --json "$@" \
    >"$OUT" 2>"$ERR" &
  local pusher=$!
  first_commit_answered
  kill "-$signal" "$pusher"
  wait "$pusher"
  STATUS=$?
}

test_sigint_stops_a_push_after_the_commit_in_flight() {
  "$MAKE_CACHE" "$SCRATCH/cache" --entries 550 --faults >/dev/null || { fail "cannot make the sample cache"; return; }
  start_hub --page-size 100000 --commit-cost-us-per-file 1000 || return
  create_repo stopped
  create_repo whole
  interrupt_push INT stopped
  equals "$STATUS" 130
  local total; total=$(json_get "$OUT" '.planned | length')
  grep -qE "^Interrupted: [0-9]+ of $total entries published; run the same command to finish\.$" "$ERR" ||
    fail "no account of the interrupt: $(cat "$ERR")"
  lacks "$ERR" "error:"
  valid_json "$OUT" transfer.schema.json
  equals "$(json_get "$OUT" .stopped.reason)" interrupted
  local published; published=$(json_get "$OUT" .stopped.entries_published)
  equals "$(json_get "$OUT" .stopped.entries_total)" "$total"
  [[ "$published" -ge 1 && "$published" -lt "$total" ]] || fail "published $published of $total"
  equals "$(json_get "$OUT" '.transferred | length')" "$published"
  equals "$(json_get "$OUT" .entries_left)" "$((total - published))"
  # Every commit made is whole, the commit in flight at the signal included; no registry.
  local commits; commits=$(json_get "$OUT" .commits)
  [[ "$commits" -ge 1 ]] || fail "no commit counted"
  equals "$(commit_ids alice/stopped | wc -l)" "$((commits + 1))"
  every_commit_whole alice/stopped
  tree_at alice/stopped main >"$SCRATCH/paths"
  lacks "$SCRATCH/paths" 0_REGISTRY
  equals "$(grep -c '/model.done$' "$SCRATCH/paths")" "$(grep -c '/model.neff$' "$SCRATCH/paths")"
  # The same command finishes it: the repo then equals an uninterrupted push.
  run 0 push stopped || return
  equals "$(json_get "$OUT" '.planned | length')" "$((total - published))"
  equals "$(json_get "$OUT" .entries_left)" 0
  run 0 push whole || return
  diff <(tree_with_oids alice/stopped) <(tree_with_oids alice/whole) >"$SCRATCH/diff" ||
    fail "the finished push differs from an uninterrupted one: $(head -5 "$SCRATCH/diff")"
  every_commit_whole alice/stopped
  no_empty_commits alice/stopped
}

test_sigterm_stops_a_push_the_same_way() {
  "$MAKE_CACHE" "$SCRATCH/cache" --entries 550 >/dev/null || { fail "cannot make the sample cache"; return; }
  start_hub --page-size 100000 --commit-cost-us-per-file 1000 || return
  create_repo termed
  interrupt_push TERM termed
  equals "$STATUS" 143
  grep -qE '^Interrupted: [0-9]+ of 550 entries published; run the same command to finish\.$' "$ERR" ||
    fail "no account of the interrupt: $(cat "$ERR")"
  every_commit_whole alice/termed
  run 0 push termed || return
  tree_at alice/termed main >"$SCRATCH/paths"
  equals "$(grep -c '/model.done$' "$SCRATCH/paths")" 550
}

test_lost_commit_answer_is_recognised_not_repeated() {
  # 1,100 files: a first commit of 1,000 files x 3 ms > 600 ms lands, but its answer is the
  # gateway's 504; the 100 left (300 ms) make the second.
  "$MAKE_CACHE" "$SCRATCH/cache" --entries 275 >/dev/null || { fail "cannot make the sample cache"; return; }
  start_hub --page-size 100000 --commit-timeout-ms 600 --commit-cost-us-per-file 3000 || return
  create_repo lost
  run 0 push lost || return
  # At least the first answer is lost; on a loaded machine (a sanitizer build) the second
  # commit may pass the budget too. Each lost answer must be recognised, never repeated.
  [[ "$(stats | jq -r '.by_status["504"] // 0')" -ge 1 ]] || fail "no commit answer was lost"
  equals "$(json_get "$OUT" .commits)" 2
  equals "$(commit_ids alice/lost | wc -l)" 3 # the repo's first commit, then the push's two
  no_empty_commits alice/lost
  every_commit_whole alice/lost
  tree_at alice/lost main | grep -c '/model.neff$' >"$SCRATCH/neffs"
  equals "$(cat "$SCRATCH/neffs")" 275
}

test_concurrent_writer_makes_the_push_replan() {
  # 1,400 files: two commits, the second (400 files x 2 ms) worked on while the other writes.
  "$MAKE_CACHE" "$SCRATCH/cache" --entries 350 >/dev/null || { fail "cannot make the sample cache"; return; }
  start_hub --page-size 100000 --commit-cost-us-per-file 2000 || return
  create_repo shared
  push shared >"$SCRATCH/push.out" 2>"$SCRATCH/push.err" &
  local pusher=$!
  first_commit_answered
  # Another writer commits while the push's second commit is being worked on.
  equals "$(commit_files alice/shared other/notes.txt)" 200
  wait "$pusher" || fail "the push failed: $(cat "$SCRATCH/push.err")"
  [[ "$(stats | jq -r '.by_status["412"] // 0')" -ge 1 ]] || fail "the push never met the other writer's commit"
  tree_at alice/shared main >"$SCRATCH/final.paths"
  contains "$SCRATCH/final.paths" other/notes.txt
  equals "$(grep -c '/model.neff$' "$SCRATCH/final.paths")" 350
  every_commit_whole alice/shared
  no_empty_commits alice/shared
}

test_spent_commit_quota_stops_cleanly_then_resumes() {
  # 2,200 files: more than the two commits of 1,000 files the quota allows.
  "$MAKE_CACHE" "$SCRATCH/cache" --entries 550 --faults >/dev/null || { fail "cannot make the sample cache"; return; }
  start_hub --page-size 100000 --commits-per-hour 2 || return
  create_repo quota
  run 1 push quota || return
  contains "$ERR" "the Hub allows 2 commits per hour: run again after "
  grep -Eq 'published [0-9]+ of [0-9]+ entries' "$ERR" || fail "no count: $(cat "$ERR")"
  equals "$(json_get "$OUT" .stopped.reason)" commit-quota
  equals "$(json_get "$OUT" .commits)" 2
  local left; left=$(json_get "$OUT" .entries_left)
  [[ "$left" -gt 0 ]] || fail "entries_left $left"
  [[ "$(json_get "$OUT" .stopped.wait_seconds)" -gt 3000 ]] || fail "wait $(json_get "$OUT" .stopped.wait_seconds)"
  equals "$(json_get "$OUT" '.transferred | length')" "$(($(json_get "$OUT" '.planned | length') - left))"
  every_commit_whole alice/quota
  tree_at alice/quota main >"$SCRATCH/paths"
  lacks "$SCRATCH/paths" 0_REGISTRY
  # An hour later (a restarted Hub forgets the window): the re-run publishes the rest.
  stop_hub
  start_hub --page-size 100000 || return
  run 0 push quota || return
  equals "$(json_get "$OUT" '.planned | length')" "$left" # only what the stopped push left
  [[ "$(json_get "$OUT" .commits)" -ge 1 ]] || fail "the re-run made no commit"
  equals "$(json_get "$OUT" .entries_left)" 0
  every_commit_whole alice/quota
  no_empty_commits alice/quota
}

test_short_commit_quota_wait_is_waited_out() {
  # 1,200 files: two commits of up to 1,000.
  "$MAKE_CACHE" "$SCRATCH/cache" --entries 300 >/dev/null || { fail "cannot make the sample cache"; return; }
  start_hub --page-size 100000 --commits-per-hour 1 --commit-window-s 2 || return
  create_repo wait
  local started=$EPOCHREALTIME
  run 0 push wait || return
  equals "$(json_get "$OUT" .commits)" 2
  equals "$(stats | jq -r '.by_status["429"] // 0')" 1
  awk -v a="$started" -v b="$EPOCHREALTIME" 'BEGIN { exit !(b - a >= 1.5) }' || fail "the quota was not waited out"
}

test_over_full_folder_is_refused_before_any_upload() {
  "$MAKE_CACHE" "$SCRATCH/cache" --entries 12 >/dev/null || { fail "cannot make the sample cache"; return; }
  start_hub --max-folder-entries 10 || return
  create_repo full
  local before; before=$(head_of alice/full)
  curl -sS -X POST "$HUB_URL/_test/stats/reset" >/dev/null
  NEURON_CACHE_HUB_MAX_FOLDER_ENTRIES=10 run 1 push full || return
  contains "$ERR" "the push would put 12 entries in the folder 'neuronxcc-2.21.33363.0+82129205/'"
  contains "$ERR" "at most 10 entries per folder; nothing was uploaded"
  contains "$ERR" "a directory repo, an s3:// repo"
  equals "$(stats | jq -r '[.by_route.preupload, .by_route.lfs_batch, .by_route.commit] | map(. // 0) | add')" 0
  equals "$(head_of alice/full)" "$before"
  # A Hub whose limit the client does not know refuses the commit itself: nothing partial.
  run 1 push full || return
  contains "$ERR" "too many files per directory"
  equals "$(head_of alice/full)" "$before"
}

# --- pulls, lookups and listings within the quotas --------------------------------------------

test_pull_paces_itself_on_the_resolver_quota() {
  "$MAKE_CACHE" "$SCRATCH/cache" --entries 30 >/dev/null || { fail "cannot make the sample cache"; return; }
  start_hub --page-size 100000 --resolver-quota 40 --quota-window-s 2 --log-requests || return
  create_repo pulled
  run 0 push pulled || return
  curl -sS -X POST "$HUB_URL/_test/stats/reset" >/dev/null
  local started=$EPOCHREALTIME
  CUSTOM_CACHE_REPO=alice/pulled HF_TOKEN=$ALICE run 0 "$NC" synchronize --pull --cache-dir "$SCRATCH/pulled" --json ||
    return
  local took; took=$(awk -v a="$started" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }')
  local resolves; resolves=$(stats | jq -r '.by_route.resolve // 0')
  [[ "$resolves" -gt 80 ]] || fail "only $resolves resolver requests: the test does not span windows"
  [[ "$(stats | jq -r '.by_status["429"] // 0')" == 0 ]] ||
    fail "refused by the quota: $(grep ' 429 ' "$SCRATCH/hub.err" | head -5) (requests logged: $SCRATCH/hub.err)"
  # The quota's floor: whole windows of 40 requests (the first one may be partial).
  awk -v t="$took" -v n="$resolves" 'BEGIN { exit !(t >= (n / 40 - 1) * 2 - 0.5) }' ||
    fail "$resolves resolver requests in $took s: faster than the quota allows"
  equals "$(find "$SCRATCH/pulled" -name model.neff | wc -l)" 30
}

run_tests
