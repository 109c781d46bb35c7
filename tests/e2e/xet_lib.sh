# Shared by the Xet suites (test_xet.sh, test_xet_cas.sh, test_xet_js.sh), sourced after
# lib.sh: the test Hub with --xet and a writer alice, its stats and faults, a tree's digests.
MAKE_CACHE="$SOURCE_DIR/tests/tools/make_sample_cache.sh"
HUB_BIN="$BIN_DIR/neuron-cache-test-hub"
VERSION_DIR="neuronxcc-2.21.33363.0+82129205"
TOKEN=hf_alice_xet_write_token
export NEURON_CACHE_HTTP_BACKOFF_BASE_MS=2

start_hub() {
  launch_test_hub --user "alice:$TOKEN:write" --lfs-threshold 1024 --xet "$@" || return 1
  export HF_ENDPOINT="$HUB_URL" HF_TOKEN="$TOKEN"
}
stat_of() { curl -fsS "$HUB_URL/_test/stats" | jq "$1"; }
fault() { curl -fsS -X POST "$HUB_URL/_test/faults" -d "$1" >/dev/null || fail "cannot inject $1"; }
clear_faults() { curl -fsS -X DELETE "$HUB_URL/_test/faults" >/dev/null; }
reset_stats() { curl -fsS -X POST "$HUB_URL/_test/stats/reset" >/dev/null; }
tree() { (cd "$1" && find . -type f -print0 | sort -z | xargs -0 sha256sum); }
# pulls_back_whole REPO: with the faults cleared, a pull of alice/REPO into $SCRATCH/fresh
# gives every file of $SCRATCH/cache byte for byte.
pulls_back_whole() {
  clear_faults
  run 0 "$NC" pull --repo-id "alice/$1" --cache-dir "$SCRATCH/fresh" --json || return
  equals "$(tree "$SCRATCH/fresh/$VERSION_DIR")" "$(tree "$SCRATCH/cache/$VERSION_DIR")"
}
# faulted_repo REPO ENTRIES NEFF_SIZE SEED FAULT: a sample cache in $SCRATCH/cache, the repo
# alice/REPO, FAULT armed on the running test Hub and its counters reset: what a test of a
# push meeting that fault starts from.
faulted_repo() {
  "$MAKE_CACHE" "$SCRATCH/cache" --entries "$2" --neff-size "$3" --seed "$4" >/dev/null || { fail "no cache"; return 1; }
  run 0 "$NC" create "alice/$1" -q || return 1
  fault "$5"
  reset_stats
}
