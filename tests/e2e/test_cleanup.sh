#!/usr/bin/env bash
# End to end: `status` and `cleanup` on a generated cache with every entry state across
# three compiler versions and controlled times; each option's selection checked exactly;
# --dry-run changes nothing; a compiler holding a lock keeps its entry; a read-only root
# fails clearly; bad input is a usage error that removes nothing; synchronize --pull
# --replace-failed.
source "$(dirname "$0")/lib.sh"

MAKE_CACHE="$SOURCE_DIR/tests/tools/make_sample_cache.sh"
FAKE_CC="$BIN_DIR/fake_neuronx_cc"
V1="neuronxcc-2.21.33363.0+82129205"
V2="neuronxcc-2.20.0.0+aaaaaaaa"
V3="neuronxcc-2.15.128.0+56dc5a86"
SUFFIX="39f12043"
NOW=$(date +%s)

m() { echo "$1/MODULE_$2+${3:-$SUFFIX}"; }   # m VERSION KEY [SUFFIX]: an entry path
age() { find "$1" -exec touch -h -d "@$((NOW - $2 * 86400))" {} +; }   # age PATH DAYS

# The cache every test starts from (C=$SCRATCH/cache):
#   V1: 4 success (100, 50, 40, 1 days), failed, locked, 2 incomplete, flags-mismatch (10 days),
#       exported model (200 days), registry, a root lock;  V2: 2 success (60 days);  V3: 2 success (120 days).
setup() {
  C="$SCRATCH/cache"
  "$MAKE_CACHE" "$C" --entries 4 --faults >/dev/null || fail "cannot make the cache"
  "$MAKE_CACHE" "$C" --entries 2 --seed 2 --version "${V2#neuronxcc-}" >/dev/null
  "$MAKE_CACHE" "$C" --entries 2 --seed 3 --version "${V3#neuronxcc-}" >/dev/null
  age "$C/$V1" 10
  age "$C/$(m "$V1" 1000000000000000)" 100
  age "$C/$(m "$V1" 1000000000000001)" 50
  age "$C/$(m "$V1" 1000000000000002)" 40
  age "$C/$(m "$V1" 1000000000000003)" 1
  age "$C/$V1/MODULE_0123456789abcdef0123" 200
  age "$C/$V2" 60
  age "$C/$V3" 120
}

# removed_paths: the sorted "path=reason" list of a cleanup --json report in $OUT.
removed_paths() { jq -r '.removed[] | "\(.path)=\(.reason)"' "$OUT" | sort | tr '\n' ' '; }
expect_removed() {
  if [[ $# -eq 0 ]]; then equals "$(removed_paths)" ""; return; fi
  equals "$(removed_paths)" "$(printf '%s\n' "$@" | sort | tr '\n' ' ')"
}

FAILED="$(m "$V1" 900001)=failed"
LOCK="$(m "$V1" 900002)/model.hlo_module.pb.lock=stale-lock"

test_status_reports_every_state_per_version() {
  setup || return
  run 0 "$NC" status --cache-dir "$C" --json || return
  valid_json "$OUT" status.schema.json
  equals "$(json_get "$OUT" '.versions | map(.name) | join(",")')" "$V3,$V2,$V1"
  equals "$(json_get "$OUT" ".versions[2].by_state | to_entries | map(\"\(.key)=\(.value.entries)\") | join(\",\")")" \
    "exported-model=1,failed=1,flags-mismatch=1,incomplete=2,locked=1,registry=1,success=4"
  equals "$(json_get "$OUT" '.versions[0].entries')" "2"
  equals "$(json_get "$OUT" '.entries')" "15"
  local bytes files
  bytes=$(find -L "$C" -type f ! -path "$C/lock" -printf '%s\n' | awk '{ s += $1 } END { print s }')
  files=$(find -L "$C" -type f ! -path "$C/lock" | wc -l)
  equals "$(json_get "$OUT" .total_bytes)" "$bytes"
  equals "$(json_get "$OUT" .total_files)" "$files"
  equals "$(json_get "$OUT" '.versions[0].oldest_use[0:10]')" "$(date -u -d "@$((NOW - 120 * 86400))" +%F)"
  equals "$(json_get "$OUT" '.versions[2].oldest_use[0:10]')" "$(date -u -d "@$((NOW - 200 * 86400))" +%F)"
  equals "$(json_get "$OUT" '.stale_locks | map(.path) | join(",")')" "$(m "$V1" 900002)/model.hlo_module.pb.lock"
  equals "$(json_get "$OUT" .repo)" "null"
  for key in cache_dir cache_dir_source total_bytes total_files entries by_state versions last_use compiler_running \
    stale_locks live_locks skipped repo seconds; do
    [[ "$(jq "has(\"$key\")" "$OUT")" == true ]] || fail "status lacks $key"
  done
  [[ "$(json_get "$OUT" '.last_use.mount_option')" =~ ^(noatime|relatime|strictatime)$ ]] || fail "no mount option"
  run 0 "$NC" status --cache-dir "$C" -q || return
  equals "$(cat "$OUT")" "$bytes"
  run 0 "$NC" status --cache-dir "$C" || return
  contains "$OUT" "Cache: $C (option)"
  contains "$OUT" "Last use from:"
  contains "$OUT" "Stale locks (no neuronx-cc process runs on this host): 1"
  run 1 "$NC" status --cache-dir "$SCRATCH/missing"
  contains "$ERR" "does not exist"
  one_line "$ERR"
}

test_status_tells_which_entries_the_repo_has_only_when_asked() {
  setup || return
  run 0 "$NC" create "$SCRATCH/repo" -q || return
  run 0 "$NC" synchronize --cache-dir "$C" -q || return
  run 0 "$NC" status --cache-dir "$C" --repo --json || return
  valid_json "$OUT" status.schema.json
  equals "$(json_get "$OUT" .repo.reachable)" "true"
  equals "$(json_get "$OUT" .repo.entries_in_repo)" "10"
  equals "$(json_get "$OUT" '.versions | map(.entries_in_repo) | join(",")')" "2,2,6"
  run 0 "$NC" status --cache-dir "$C" --repo-id "$SCRATCH/nope" --json || return
  equals "$(json_get "$OUT" .repo.reachable)" "false"
  contains "$ERR" "does not exist"
}

test_default_cleanup_removes_failed_entries_and_stale_locks() {
  setup || return
  local before; before=$(snapshot "$C")
  run 0 "$NC" cleanup --cache-dir "$C" --dry-run || return
  contains "$OUT" "Dry run: would remove 1 failed entry, 1 stale lock; would free"
  contains "$OUT" "$(m "$V1" 900001)"
  equals "$(snapshot "$C")" "$before"
  run 0 "$NC" cleanup --cache-dir "$C" --json || return
  valid_json "$OUT" cleanup.schema.json
  expect_removed "$FAILED" "$LOCK"
  equals "$(json_get "$OUT" .entries_removed)" "1"
  equals "$(json_get "$OUT" .locks_removed)" "1"
  [[ ! -e "$C/$(m "$V1" 900001)" ]] || fail "failed entry kept"
  [[ -f "$C/$(m "$V1" 900002)/model.hlo_module.pb" ]] || fail "locked entry's files removed"
  [[ -f "$C/lock" ]] || fail "root lock removed"
  [[ -z "$(find "$C" -name '.*.tmp.nc.*')" ]] || fail "trash left behind"
  run 0 "$NC" cleanup --cache-dir "$C" || return
  contains "$OUT" "Nothing to clean up"
}

# A compiler of the host (or of another container) is invisible to a container's /proc:
# there, a young lock is never taken for stale unless the user says so.
test_in_a_container_young_locks_are_kept_by_default() {
  if ! unshare -pf --mount-proc true 2>/dev/null; then
    echo "    (no pid namespaces here: only the host side is checked)"
  fi
  setup || return
  local lock="$C/$(m "$V1" 900002)/model.hlo_module.pb.lock"
  touch "$lock"
  if unshare -pf --mount-proc true 2>/dev/null; then
    unshare -pf --mount-proc "$NC" cleanup --cache-dir "$C" --json >"$OUT" 2>"$ERR"
    equals "$?" "0"
    valid_json "$OUT" cleanup.schema.json
    [[ -f "$lock" ]] || fail "a young lock was removed from inside a container"
    equals "$(json_get "$OUT" .stale_lock_age.seconds)" "3600"
    equals "$(json_get "$OUT" .stale_lock_age.source)" "default"
    [[ "$(json_get "$OUT" .stale_lock_age.reason)" == *"runs in a container"* ]] || fail "no reason given"
    unshare -pf --mount-proc "$NC" cleanup --cache-dir "$C" --dry-run >"$OUT" 2>"$ERR"
    contains "$ERR" "Locks younger than 1h are kept: this runs in a container"
    unshare -pf --mount-proc "$NC" cleanup --cache-dir "$C" --stale-lock-age 0s --json >"$OUT" 2>"$ERR"
    equals "$?" "0"
    [[ ! -f "$lock" ]] || fail "--stale-lock-age 0s kept the lock"
    touch "$lock"
  fi
  # On the host, on a local disk, every compiler is visible: no age needed.
  run 0 "$NC" cleanup --cache-dir "$C" --json || return
  equals "$(json_get "$OUT" .stale_lock_age.seconds)" "0"
  [[ ! -f "$lock" ]] || fail "a stale lock was kept on the host"
}

test_all_adds_incomplete_entries() {
  setup || return
  run 0 "$NC" cleanup --cache-dir "$C" --all --json || return
  valid_json "$OUT" cleanup.schema.json
  expect_removed "$FAILED" "$LOCK" "$(m "$V1" 900003)=incomplete" "$(m "$V1" 900004)=incomplete" \
    "$(m "$V1" 900005 0badf1a9)=incomplete"
  [[ -d "$C/$V1/MODULE_0123456789abcdef0123" ]] || fail "exported model removed by --all"
}

test_old_versions() {
  setup || return
  run 2 "$NC" cleanup --cache-dir "$C" --old-versions --keep-version 9.9
  contains "$ERR" "matches no compiler version"
  one_line "$ERR"
  PATH="/nonexistent" run 2 "$NC" cleanup --cache-dir "$C" --old-versions
  contains "$ERR" "cannot tell which neuronx-cc version is installed"
  [[ -d "$C/$V2" && -d "$C/$V3" ]] || fail "removed on a usage error"
  run 0 "$NC" cleanup --cache-dir "$C" --old-versions --keep-version 2.21 --keep-version 2.20.0.0+aaaaaaaa --json || return
  expect_removed "$FAILED" "$LOCK" "$V3=old-version"
  [[ ! -e "$C/$V3" && -d "$C/$V2" && -d "$C/$V1" ]] || fail "wrong versions removed"
  # The installed compiler, as `neuronx-cc --version` reports it.
  mkdir -p "$SCRATCH/bin" && ln -s "$FAKE_CC" "$SCRATCH/bin/neuronx-cc"
  PATH="$SCRATCH/bin:$PATH" FAKE_NEURONX_CC_VERSION=2.20.0.0+aaaaaaaa run 0 "$NC" cleanup --cache-dir "$C" --old-versions --json || return
  expect_removed "$V1=old-version"
  equals "$(json_get "$OUT" '.keep_versions | join(",")')" "2.20.0.0+aaaaaaaa"
  equals "$(ls "$C" | LC_ALL=C sort | tr '\n' ' ')" "lock $V2 "
}

test_older_than() {
  setup || return
  run 0 "$NC" cleanup --cache-dir "$C" --older-than 45d --json || return
  expect_removed "$FAILED" "$LOCK" "$(m "$V1" 1000000000000000)=older-than" "$(m "$V1" 1000000000000001)=older-than" \
    "$V1/MODULE_0123456789abcdef0123=older-than" "$(m "$V2" 2000000000000000)=older-than" \
    "$(m "$V2" 2000000000000001)=older-than" "$(m "$V3" 3000000000000000)=older-than" "$(m "$V3" 3000000000000001)=older-than"
  [[ -d "$C/$V1/0_REGISTRY" ]] || fail "registry removed"
  run 0 "$NC" cleanup --cache-dir "$C" --older-than 12h --dry-run || return
  contains "$OUT" "entries unused for 12h"
}

test_max_size_evicts_least_recently_used_outside_the_ttl() {
  setup || return
  run 0 "$NC" cleanup --cache-dir "$C" --max-size 0 --ttl 30d --dry-run --json || return
  equals "$(jq -r '[.removed[] | select(.reason == "max-size") | .path] | join(" ")' "$OUT")" \
    "$V1/MODULE_0123456789abcdef0123 $(m "$V3" 3000000000000000) $(m "$V3" 3000000000000001) $(m "$V1" 1000000000000000) $(m "$V2" 2000000000000000) $(m "$V2" 2000000000000001) $(m "$V1" 1000000000000001) $(m "$V1" 1000000000000002)"
  equals "$(json_get "$OUT" .above_max_size)" "true"
  # A limit that the failed entry and the two least recently used entries make room for.
  local size failed first second
  size=$(json_get "$OUT" .size_before)
  failed=$(jq -r '.removed[] | select(.reason == "failed") | .bytes' "$OUT")
  first=$(jq -r '[.removed[] | select(.reason == "max-size")][0].bytes' "$OUT")
  second=$(jq -r '[.removed[] | select(.reason == "max-size")][1].bytes' "$OUT")
  run 0 "$NC" cleanup --cache-dir "$C" --max-size "$((size - failed - first - second))" --json || return
  expect_removed "$FAILED" "$LOCK" "$V1/MODULE_0123456789abcdef0123=max-size" "$(m "$V3" 3000000000000000)=max-size"
  equals "$(json_get "$OUT" .above_max_size)" "false"
  equals "$(json_get "$OUT" .policy.ttl_seconds)" "$((30 * 86400))"
}

test_evict_applies_the_sdk_policy_from_neuron_cc_flags() {
  setup || return
  NEURON_CC_FLAGS="--model-type=transformer --cache_size=0 --cache_ttl=45" run 0 "$NC" cleanup --cache-dir "$C" --evict --json || return
  expect_removed "$FAILED" "$LOCK" "$(m "$V1" 1000000000000000)=max-size" "$(m "$V1" 1000000000000001)=max-size" \
    "$V1/MODULE_0123456789abcdef0123=max-size" "$(m "$V2" 2000000000000000)=max-size" \
    "$(m "$V2" 2000000000000001)=max-size" "$(m "$V3" 3000000000000000)=max-size" "$(m "$V3" 3000000000000001)=max-size"
  equals "$(json_get "$OUT" .policy.source)" "NEURON_CC_FLAGS"
  equals "$(json_get "$OUT" .policy.max_size)" "0"
  local before; before=$(snapshot "$C")
  NEURON_CC_FLAGS="--cache_size=lots" run 1 "$NC" cleanup --cache-dir "$C" --evict
  contains "$ERR" "NEURON_CC_FLAGS has --cache_size=lots"
  one_line "$ERR"
  equals "$(snapshot "$C")" "$before"
  run 0 "$NC" cleanup --cache-dir "$C" --evict --json || return
  equals "$(json_get "$OUT" .policy.max_size)" "$((100 * 1024 * 1024 * 1024))"
  equals "$(json_get "$OUT" .policy.source)" "default"
}

test_wipe_asks_unless_yes() {
  setup || return
  local before; before=$(snapshot "$C")
  run 2 "$NC" cleanup --cache-dir "$C" --wipe </dev/null
  contains "$ERR" "add --yes"
  one_line "$ERR"
  run 0 "$NC" cleanup --cache-dir "$C" --wipe --dry-run || return
  contains "$OUT" "would remove"
  equals "$(snapshot "$C")" "$before"
  # On a terminal it asks; anything but yes keeps everything.
  printf 'n\n' | script -qec "'$NC' cleanup --cache-dir '$C' --wipe" /dev/null >"$OUT" 2>&1
  contains "$OUT" "Remove everything in $C"
  contains "$OUT" "nothing removed: the wipe of $C was not confirmed"
  equals "$(snapshot "$C")" "$before"
  printf 'y\n' | script -qec "'$NC' cleanup --cache-dir '$C' --wipe" /dev/null >"$OUT" 2>&1
  contains "$OUT" "Removed"
  equals "$(ls -A "$C")" "lock"
  setup
  run 0 "$NC" cleanup --cache-dir "$C" --wipe --yes --json || return
  equals "$(ls -A "$C")" "lock"
  equals "$(json_get "$OUT" .entries_removed)" "15"
}

# --wipe --yes runs as root in CI: whatever names the root (an option, NEURON_CC_FLAGS,
# NEURON_COMPILE_CACHE_URL, a link), it empties a compile cache and nothing else.
test_wipe_refuses_what_is_not_only_a_compile_cache() {
  setup || return
  # `/`, through every way of naming it (dry runs: a guard that failed would not empty the machine).
  run 1 "$NC" cleanup --cache-dir / --wipe --yes --dry-run
  contains "$ERR" "refusing to wipe /: it is a system directory; nothing was removed"
  one_line "$ERR"
  NEURON_CC_FLAGS="--cache_dir=/" run 1 "$NC" cleanup --wipe --yes --dry-run
  contains "$ERR" "refusing to wipe /"
  NEURON_COMPILE_CACHE_URL="file:///" run 1 "$NC" cleanup --wipe --yes --dry-run
  contains "$ERR" "refusing to wipe /"
  ln -s /etc "$SCRATCH/etc-link"
  run 1 "$NC" cleanup --cache-dir "$SCRATCH/etc-link" --wipe --yes --dry-run
  contains "$ERR" "it is /etc, a system directory"
  # A stand-in home, named directly and through a link: nothing in it goes.
  local home="$SCRATCH/home"
  mkdir -p "$home/.ssh" "$home/src"
  echo key >"$home/.ssh/id"; echo rc >"$home/.bashrc"
  ln -s "$home" "$SCRATCH/home-link"
  HOME="$home" run 1 "$NC" cleanup --cache-dir "$SCRATCH/home-link" --wipe --yes
  contains "$ERR" "is or holds the home directory"
  HOME="$SCRATCH/elsewhere" run 1 "$NC" cleanup --cache-dir "$SCRATCH/home-link" --wipe --yes
  contains "$ERR" "it holds '.bashrc' and 2 more, which are not part of a compile cache"
  equals "$(cat "$home/.ssh/id") $(cat "$home/.bashrc")" "key rc"
  # The parent of a home.
  HOME="$C/$V1" run 1 "$NC" cleanup --cache-dir "$C" --wipe --yes
  contains "$ERR" "is or holds the home directory"
  # A compile cache with a stranger at its top: refused, the cache kept whole.
  local before; before=$(snapshot "$C")
  echo notes >"$C/notes.txt"
  run 1 "$NC" cleanup --cache-dir "$C" --wipe --yes
  contains "$ERR" "it holds 'notes.txt', which is not part of a compile cache"
  rm "$C/notes.txt"
  equals "$(snapshot "$C")" "$before"
}

# cleanup --repo prunes the repo itself: here a directory repo holding what optimum's
# synchronize publishes as it is (failed and incomplete entries too), three versions.
test_cleanup_repo_prunes_the_repo_in_one_commit() {
  setup || return
  local R="$SCRATCH/repo"
  run 0 "$NC" create "$R" -q || return
  cp -a "$C/." "$R/"
  rm -f "$R/lock" "$R/$(m "$V1" 900002)"/*.lock
  find "$R" -type l -delete # optimum's registry aliases: a directory repo serves files
  # What readers see (the repo's private folder, an index of digests, may change).
  repo_view() { (cd "$R" && find . -path ./.neuron-cache -prune -o -printf '%p %y %s\n' | sort); }
  local before; before=$(repo_view)
  run 2 "$NC" cleanup --repo --repo-id "$R" </dev/null
  contains "$ERR" "add --yes"
  run 2 "$NC" cleanup --repo --repo-id "$R" --old-versions --dry-run
  contains "$ERR" "needs --keep-version"
  run 2 "$NC" cleanup --repo --repo-id "$R" --cache-dir "$C" --dry-run
  run 2 "$NC" cleanup --repo --repo-id "$R" --old-versions --keep-version 9.9 --dry-run
  contains "$ERR" "matches no compiler version of the repo"
  run 0 "$NC" cleanup --repo --repo-id "$R" --dry-run --json || return
  valid_json "$OUT" cleanup-repo.schema.json
  equals "$(jq -r '.removed[] | "\(.path)=\(.reason)"' "$OUT")" "$(m "$V1" 900001)=failed"
  equals "$(jq -r '.removed[0].detail' "$OUT")" "compilation failed (model.log without model.neff)"
  equals "$(repo_view)" "$before"
  run 0 "$NC" cleanup --repo --repo-id "$R" --all --dry-run
  contains "$OUT" "Dry run: would delete"
  contains "$OUT" "incomplete"
  # Old versions go whole, with their registry; the kept one loses only its failed entry.
  run 0 "$NC" cleanup --repo --repo-id "$R" --old-versions --keep-version 2.21 --yes --json || return
  valid_json "$OUT" cleanup-repo.schema.json
  equals "$(json_get "$OUT" .committed)" "true"
  equals "$(jq -r '[.removed[].reason] | sort | join(",")' "$OUT")" "failed,old-version,old-version"
  [[ ! -e "$R/$V2" && ! -e "$R/$V3" ]] || fail "old versions kept"
  [[ ! -e "$R/$(m "$V1" 900001)" ]] || fail "failed entry kept"
  [[ -f "$R/$(m "$V1" 1000000000000000)/model.neff" ]] || fail "a good entry of the kept version went"
  [[ -d "$R/$V1/0_REGISTRY" ]] || fail "the kept version's registry went"
  run 0 "$NC" cleanup --repo --repo-id "$R" --yes || return
  contains "$OUT" "Nothing to prune"
  # The pruned repo still pulls.
  run 0 "$NC" synchronize --pull --repo-id "$R" --cache-dir "$SCRATCH/fresh" -q || return
}

# cleanup --repo --older-than and --unregistered, on a directory repo dated by mtimes: old
# graphs and registry files go, a registry entry naming a removed graph goes with it (every
# copy and add's record), graphs no entry names go unless their version's entries name none.
test_cleanup_repo_older_than_and_unregistered_keep_the_registry_consistent() {
  local R="$SCRATCH/repo" D="$V1" H1=0123456789abcdef0001 H2=0123456789abcdef0002 H3=0123456789abcdef0003
  run 0 "$NC" create "$R" -q || return
  local key
  for key in a b c d; do
    mkdir -p "$R/$D/MODULE_$key+$SUFFIX" && echo "neff $key" >"$R/$D/MODULE_$key+$SUFFIX/model.neff"
    echo done >"$R/$D/MODULE_$key+$SUFFIX/model.done"
  done
  local reg="$R/$D/0_REGISTRY/0.4.5/llama/org" rec="$R/$D/0_REGISTRY/neuron-cache-modules"
  mkdir -p "$reg/m1" "$reg/m2" "$reg/m3" "$rec"
  local h graph
  for h in "$H1:a" "$H2:b" "$H3:b"; do
    echo '{}' >"$reg/m${h:19:1}/${h%%:*}.json"
    graph="$D/MODULE_${h##*:}+$SUFFIX"
    echo "{\"modules\": [\"$graph\"]}" >"$rec/${h%%:*}.json"
  done
  # a and c (unregistered) are 100 days old; m3's registry entry too (its graph b is new).
  age "$R/$D/MODULE_a+$SUFFIX" 100
  age "$R/$D/MODULE_c+$SUFFIX" 100
  age "$reg/m3" 100
  age "$rec/$H3.json" 100
  local before; before=$(snapshot "$R/$D")
  run 2 "$NC" cleanup --repo --repo-id "$R" --older-than 30x --dry-run
  contains "$ERR" "invalid age '30x'"
  run 2 "$NC" cleanup --cache-dir "$SCRATCH/cache" --unregistered
  contains "$ERR" "goes with --repo"
  run 0 "$NC" cleanup --repo --repo-id "$R" --older-than 30d --dry-run --json || return
  valid_json "$OUT" cleanup-repo.schema.json
  local M1="$D/0_REGISTRY/0.4.5/llama/org/m1/$H1.json" M3="$D/0_REGISTRY/0.4.5/llama/org/m3/$H3.json"
  local R1="$D/0_REGISTRY/neuron-cache-modules/$H1.json" R3="$D/0_REGISTRY/neuron-cache-modules/$H3.json"
  expect_removed "$D/MODULE_a+$SUFFIX=older-than" "$D/MODULE_c+$SUFFIX=older-than" \
    "$M1=graphs-removed" "$R1=graphs-removed" "$M3=older-than" "$R3=older-than"
  equals "$(jq -r --arg p "$M1" '.removed[] | select(.path == $p) | .detail' "$OUT")" "names $D/MODULE_a+$SUFFIX"
  equals "$(snapshot "$R/$D")" "$before"
  run 0 "$NC" cleanup --repo --repo-id "$R" --unregistered --dry-run --json || return
  expect_removed "$D/MODULE_c+$SUFFIX=unregistered" "$D/MODULE_d+$SUFFIX=unregistered"
  run 0 "$NC" cleanup --repo --repo-id "$R" --unregistered --older-than 30d --dry-run || return
  contains "$OUT" "Dry run: would delete 3 folders and 4 registry files"
  run 0 "$NC" cleanup --repo --repo-id "$R" --unregistered --older-than 30d --yes --json || return
  valid_json "$OUT" cleanup-repo.schema.json
  equals "$(json_get "$OUT" .committed)" "true"
  equals "$(cd "$R/$D" && find . -type f | sort | tr '\n' ' ')" \
    "./0_REGISTRY/0.4.5/llama/org/m2/$H2.json ./0_REGISTRY/neuron-cache-modules/$H2.json ./MODULE_b+$SUFFIX/model.done ./MODULE_b+$SUFFIX/model.neff "
  # A version whose registry entries name no graphs (optimum's) keeps its unregistered graphs.
  mkdir -p "$R/$V2/MODULE_e+$SUFFIX" "$R/$V2/0_REGISTRY/0.4.5/llama/org/m4" && echo x >"$R/$V2/MODULE_e+$SUFFIX/model.neff"
  echo '{}' >"$R/$V2/0_REGISTRY/0.4.5/llama/org/m4/$H1.json"
  run 0 "$NC" cleanup --repo --repo-id "$R" --unregistered --yes --json || return
  expect_removed
  jq -r '.notes[]' "$OUT" >"$SCRATCH/notes"
  contains "$SCRATCH/notes" "kept the unregistered graphs of $V2: its registry entries name no graphs"
  run 0 "$NC" cleanup --repo --repo-id "$R" --unregistered --yes || return
  contains "$ERR" "kept the unregistered graphs of $V2"
  contains "$OUT" "Nothing to prune"
  [[ -f "$R/$V2/MODULE_e+$SUFFIX/model.neff" ]] || fail "an optimum version's graph went"
  # By age they go, and the run says what it cannot check.
  age "$R/$V2/MODULE_e+$SUFFIX" 100
  run 0 "$NC" cleanup --repo --repo-id "$R" --older-than 30d --dry-run --json || return
  expect_removed "$V2/MODULE_e+$SUFFIX=older-than"
  jq -r '.notes[]' "$OUT" >"$SCRATCH/notes"
  contains "$SCRATCH/notes" "old graphs of $V2 go although its registry entries name no graphs"
}

test_bad_input_is_a_usage_error_and_removes_nothing() {
  setup || return
  local before; before=$(snapshot "$C")
  local -a bad=(
    "--older-than 30" "--older-than 30x" "--older-than -1d" "--older-than 1.5d" "--older-than 99999999999d"
    "--max-size 10X" "--max-size -5G" "--max-size G" "--ttl 5d" "--max-size 1G --ttl soon"
    "--keep-version 2.21" "--wipe --all" "--wipe --older-than 1d" "--yes" "--evict --ttl 3d" "--evict --max-size 1G"
    "--stale-lock-age soon" "--older-than 1d --older-than 2d" "--bogus" "extra-argument"
  )
  local args
  for args in "${bad[@]}"; do
    # shellcheck disable=SC2086
    run 2 "$NC" cleanup --cache-dir "$C" $args || continue
    one_line "$ERR"
    contains "$ERR" "see 'neuron-cache cleanup --help'"
  done
  run 2 "$NC" cleanup --cache-dir "$C" --max-size ""
  contains "$ERR" "invalid size ''"
  run 2 "$NC" cleanup --cache-dir "$C" --older-than 30
  contains "$ERR" "e.g. 30d, 12h"
  equals "$(snapshot "$C")" "$before"
}

test_dry_run_changes_nothing() {
  setup || return
  local before; before=$(snapshot "$C")
  run 0 "$NC" cleanup --cache-dir "$C" --all --old-versions --keep-version 2.21 --older-than 0s --max-size 0 --ttl 0s \
    --dry-run || return
  contains "$OUT" "Would remove:"
  contains "$OUT" "PATH"
  contains "$OUT" "REASON"
  contains "$OUT" "old-version (2 entries)"
  contains "$OUT" "would free"
  equals "$(snapshot "$C")" "$before"
  run 0 "$NC" cleanup --cache-dir "$C" --all --dry-run --json || return
  equals "$(json_get "$OUT" .dry_run)" "true"
  equals "$(snapshot "$C")" "$before"
}

# A stand-in compiler named neuronx-cc holds a lock: no option removes its entry or lock.
test_cleanup_racing_a_compiler_never_removes_its_entry() {
  setup || return
  mkdir -p "$SCRATCH/bin" && ln -s "$FAKE_CC" "$SCRATCH/bin/neuronx-cc"
  NEURON_COMPILE_CACHE_URL="$C" "$SCRATCH/bin/neuronx-cc" --graphs 1 --mode hang >/dev/null 2>&1 &
  local compiler=$! lock=""
  for _ in $(seq 500); do
    lock=$(find "$C/$V1" -name '*.lock' ! -path '*MODULE_900002*' 2>/dev/null | head -1)
    [[ -n "$lock" ]] && break
    sleep 0.02
  done
  [[ -n "$lock" ]] || { kill "$compiler"; fail "the compiler never locked"; return; }
  local entry; entry=$(dirname "$lock")
  run 0 "$NC" cleanup --cache-dir "$C" --all --old-versions --keep-version 2.15 --older-than 0s --max-size 0 --ttl 0s --json
  run 1 "$NC" cleanup --cache-dir "$C" --wipe --yes
  contains "$ERR" "a neuronx-cc process is running"
  local still=0; [[ -f "$lock" ]] && still=1
  kill "$compiler"; wait "$compiler" 2>/dev/null
  equals "$still" "1"
  [[ -f "$entry/model.hlo_module.pb" ]] || fail "the compiler's entry lost files"
  [[ -f "$C/$(m "$V1" 900002)/model.hlo_module.pb.lock" ]] || fail "a lock was removed while a compiler ran"
  [[ -d "$C/$V1" ]] || fail "the compiler's version was removed"

  # Cleanups in a loop while a compiler works through 40 graphs: it never loses an entry it holds.
  NEURON_COMPILE_CACHE_URL="$C" "$SCRATCH/bin/neuronx-cc" --graphs 40 --compile-ms 20 --model racer >"$SCRATCH/cc.out" 2>&1 &
  compiler=$!
  local rounds=0
  while kill -0 "$compiler" 2>/dev/null && ((rounds < 500)); do
    "$NC" cleanup --cache-dir "$C" --all --older-than 0s --max-size 0 --ttl 0s -q >/dev/null 2>>"$SCRATCH/cleanup.err"
    rounds=$((rounds + 1))
  done
  wait "$compiler"
  equals "$?" "0"
  [[ ! -s "$SCRATCH/cleanup.err" ]] || fail "cleanup errors: $(head -c 500 "$SCRATCH/cleanup.err")"
  equals "$(grep -c 'Compiler status PASS' "$SCRATCH/cc.out")" "40"
}

test_read_only_root_fails_clearly() {
  setup || return
  local before; before=$(snapshot "$C")
  local how=""
  if unshare -m true 2>/dev/null; then
    how=bind
    unshare -m bash -c "mount --bind '$C' '$C' && mount -o remount,ro,bind '$C' '$C' && exec '$NC' cleanup --cache-dir '$C'" \
      >"$OUT" 2>"$ERR"
    equals "$?" "1"
    contains "$ERR" "Read-only file system"
  elif chattr +i "$C/$V1" 2>/dev/null; then
    how=immutable
    "$NC" cleanup --cache-dir "$C" >"$OUT" 2>"$ERR"
    equals "$?" "1"
    chattr -i "$C/$V1"
    contains "$ERR" "Operation not permitted"
  elif [[ "$(id -u)" != 0 ]]; then
    how=permissions
    chmod a-w "$C/$V1"
    "$NC" cleanup --cache-dir "$C" >"$OUT" 2>"$ERR"
    equals "$?" "1"
    chmod u+w "$C/$V1"
  else
    echo "    (skipped: no read-only bind mount, chattr or unprivileged user here)"
    return 0
  fi
  echo "    (read-only by: $how)"
  contains "$ERR" "nothing was removed"
  one_line "$ERR"
  equals "$(snapshot "$C")" "$before"
  # status only reads: it works on a read-only root.
  if [[ $how == bind ]]; then
    unshare -m bash -c "mount --bind '$C' '$C' && mount -o remount,ro,bind '$C' '$C' && exec '$NC' status --cache-dir '$C' -q" \
      >"$OUT" 2>"$ERR"
    equals "$?" "0"
  fi
}

test_symlinks_out_of_the_root_are_never_followed() {
  setup || return
  mkdir -p "$SCRATCH/outside/dir"
  echo precious >"$SCRATCH/outside/model.neff"
  cp -r "$C/$(m "$V2" 2000000000000000)/." "$SCRATCH/outside/dir/"
  ln -s "$SCRATCH/outside/dir" "$C/$(m "$V2" 7777)"
  rm "$C/$(m "$V3" 3000000000000000)/model.neff"
  ln -s "$SCRATCH/outside/model.neff" "$C/$(m "$V3" 3000000000000000)/model.neff"
  ln -s "$SCRATCH/outside" "$C/neuronxcc-9.9.9"
  age "$C/$V3" 120
  local outside; outside=$(snapshot "$SCRATCH/outside")
  run 0 "$NC" cleanup --cache-dir "$C" --all --older-than 0s --json || return
  equals "$(snapshot "$SCRATCH/outside")" "$outside"
  [[ -L "$C/$(m "$V2" 7777)" ]] || fail "an entry linked out of the root was removed"
  run 0 "$NC" cleanup --cache-dir "$C" --wipe --yes || return
  equals "$(snapshot "$SCRATCH/outside")" "$outside"
  equals "$(ls -A "$C")" "lock"
}

test_synchronize_pull_replace_failed() {
  "$MAKE_CACHE" "$SCRATCH/good" --entries 2 >/dev/null || return
  run 0 "$NC" create "$SCRATCH/repo" -q || return
  run 0 "$NC" synchronize --cache-dir "$SCRATCH/good" -q || return
  local e0 e1; e0=$(m "$V1" 1000000000000000); e1=$(m "$V1" 1000000000000001)
  C="$SCRATCH/local"
  mkdir -p "$C/$e0" "$C/$e1"
  for e in "$e0" "$e1"; do
    cp "$SCRATCH/good/$e/model.hlo_module.pb" "$SCRATCH/good/$e/compile_flags.json" "$C/$e/"
    echo "Failed compilation: out of memory" >"$C/$e/model.log"
  done
  : >"$C/$e1/model.hlo_module.pb.lock"   # a compiler retrying this one holds it
  run 0 "$NC" synchronize --pull --cache-dir "$C" --json || return
  equals "$(json_get "$OUT" '.skipped_by_reason["local-entry-differs"]')" "1"
  equals "$(json_get "$OUT" '.skipped_by_reason["locked-locally"]')" "1"
  equals "$(json_get "$OUT" ".transferred | length")" "0"
  local before; before=$(snapshot "$C")
  run 0 "$NC" synchronize --pull --replace-failed --cache-dir "$C" --dry-run --json || return
  equals "$(json_get "$OUT" '.replaced | join(",")')" "$e0"
  equals "$(snapshot "$C")" "$before"
  run 0 "$NC" synchronize --pull --replace-failed --cache-dir "$C" --json || return
  equals "$(json_get "$OUT" ".replaced | length")" "1"
  equals "$(json_get "$OUT" '.skipped_by_reason["locked-locally"]')" "1"
  diff -r "$SCRATCH/good/$e0" "$C/$e0" >/dev/null || fail "failed entry not replaced by the repo's"
  [[ -f "$C/$e1/model.log" && -f "$C/$e1/model.hlo_module.pb.lock" ]] || fail "a locked failed entry was replaced"
  [[ -z "$(find "$C" -name '.*.tmp.nc.*')" ]] || fail "trash left behind"
  run 2 "$NC" synchronize --replace-failed --cache-dir "$C"
  one_line "$ERR"
}

test_last_use_records_live_outside_the_root() {
  "$MAKE_CACHE" "$SCRATCH/good" --entries 3 >/dev/null || return
  run 0 "$NC" create "$SCRATCH/repo" -q || return
  run 0 "$NC" synchronize --cache-dir "$SCRATCH/good" -q || return
  C="$SCRATCH/fresh"
  run 0 "$NC" synchronize --pull --cache-dir "$C" -q || return
  age "$C" 100
  local records; records=$(ls "$HOME/.local/state/neuron-cache"/usage-*.tsv)
  [[ -f "$records" ]] || fail "no records file"
  equals "$(grep -c MODULE_ "$records")" "3"
  [[ -z "$(find "$C" -name 'usage-*')" ]] || fail "records inside the cache root"
  # Pulled today: in use, whatever the files' times say.
  run 0 "$NC" cleanup --cache-dir "$C" --older-than 30d --json || return
  expect_removed
  run 0 "$NC" status --cache-dir "$C" --json || return
  equals "$(json_get "$OUT" '.last_use.sources.record')" "3"
  contains "$OUT" "$records"
  # A records file that cannot be trusted is ignored.
  printf 'neuron-cache-usage 1\n%s\tneuronxcc-x/../../etc\nnot a line\n' "$((NOW + 99999999))" >"$records"
  run 0 "$NC" cleanup --cache-dir "$C" --older-than 30d --json || return
  equals "$(json_get "$OUT" .entries_removed)" "3"
  # Never read through a symlink, and never written through one.
  local passwd; passwd=$(sha256sum /etc/passwd)
  rm -f "$records" && ln -s /etc/passwd "$records"
  run 0 "$NC" synchronize --pull --cache-dir "$C" -q || return
  equals "$(sha256sum /etc/passwd)" "$passwd"
  [[ -f "$records" && ! -L "$records" ]] || fail "records not replaced by a regular file"
  equals "$(grep -c MODULE_ "$records")" "3"
}

run_tests
