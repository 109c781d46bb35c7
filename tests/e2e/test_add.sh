#!/usr/bin/env bash
# End to end: `neuron-cache add` on directory repos with the stand-in compiler
# (tests/tools/fake_neuronx_cc): one model, manifests, idempotent re-runs, dry runs, and
# every fault the issue names — each a clear error, a non-zero exit, nothing half-pushed.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/add_lib.sh"

# What the repo holds, as readers see it (its private folder left out).
repo_state() {
  (cd "$SCRATCH/repo" && find . -path ./.neuron-cache -prune -o -type f -printf '%p %s %T@\n' | sort | sha1sum)
}

# Every process the stand-in started has ended.
no_stand_in_survives() {
  [[ -s "$FAKE_NEURONX_CC_PID_FILE" ]] || { fail "the stand-in never started"; return; }
  local pid
  while read -r pid; do
    if kill -0 "$pid" 2>/dev/null && [[ "$(awk '{print $3}' "/proc/$pid/stat" 2>/dev/null)" != Z ]]; then
      fail "stand-in process $pid survived"
      kill -KILL "$pid" 2>/dev/null
    fi
  done <"$FAKE_NEURONX_CC_PID_FILE"
}

test_add_one_model_pushes_entries_and_registry_in_one_commit() {
  setup_repo || return
  local before; before=$(repo_state)
  add_one 0 --json || return
  valid_json "$OUT" add.schema.json
  equals "$(json_get "$OUT" '.results[0].status')" "added"
  equals "$(json_get "$OUT" '.results[0].entries | length')" "2"
  equals "$(json_get "$OUT" '.results[0].compiler_version')" "2.21.33363.0+82129205"
  json_get "$OUT" '.results[0].registry_files[0]' | grep -q '^neuronxcc-2.21.33363.0+82129205/0_REGISTRY/neuron-cache-add-1/gpt2/org/tiny-gpt2/[0-9a-f]\{20\}\.json$' \
    || fail "unexpected registry path $(json_get "$OUT" '.results[0].registry_files[0]')"
  [[ "$(repo_state)" != "$before" ]] || fail "nothing pushed"
  contains "$ERR" "Compiler status PASS" # the command's output is streamed
  # list knows the configuration's size from the graphs add recorded for it.
  run 0 "$NC" list --json || return
  [[ "$(json_get "$OUT" '.models[] | select(.model_id == "org/tiny-gpt2") | .size')" -gt 0 ]] \
    || fail "no size for the added configuration: $(cat "$OUT")"
  run 0 "$NC" list -m org/tiny-gpt2 --json || return
  # The repo holds this configuration's two graphs and nothing else compiled.
  equals "$(json_get "$OUT" '.configurations[0].size')" \
    "$(find "$SCRATCH/repo"/neuronxcc-*/MODULE_* -type f -printf '%s\n' | awk '{s += $1} END {print s}')"
  # The repo now holds the entries: a pull into an empty root installs them whole.
  run 0 "$NC" synchronize --pull --cache-dir "$SCRATCH/pulled" -q || return
  local pulled
  pulled=$(find "$SCRATCH/pulled" -name model.done -path '*MODULE_*' | wc -l)
  equals "$pulled" "2"
  # And lookup finds the configuration, from the model directory or its id.
  run 0 "$NC" lookup "$SCRATCH/tiny" --json || return
  equals "$(json_get "$OUT" '.entries[0].neuron.batch_size')" "4"
  equals "$(json_get "$OUT" '.entries[0].neuron.num_cores')" "2"
  equals "$(json_get "$OUT" '.entries[0].neuron.torch_dtype')" "bfloat16"
  equals "$(json_get "$OUT" '.entries[0].model_id')" "org/tiny-gpt2"
  run 0 "$NC" lookup "$SCRATCH/tiny" --batch_size 4 --num_cores 2
  run 3 "$NC" lookup "$SCRATCH/tiny" --batch_size 8
}

test_human_output_matches_golden() {
  setup_repo || return
  write_manifest "$SCRATCH/ci.yaml"
  add_one 0 || return
  cp "$OUT" "$SCRATCH/add-human.txt"
  # One configuration registered already, so the table shows both states.
  run 0 "$NC" add -m "$SCRATCH/tiny" --task text-generation --precision bf16 --num-cores 2 --train-batch-size 1 \
    --sequence-length 128 --cache-dir "$SCRATCH/cc" -q -- "${FAKE_COMMAND[@]}" || return
  run 0 "$NC" add --manifest "$SCRATCH/ci.yaml" || return
  cat "$OUT" >>"$SCRATCH/add-human.txt"
  run 0 "$NC" add --manifest "$SCRATCH/ci.yaml" || return
  cat "$OUT" >>"$SCRATCH/add-human.txt"
  matches_golden "$SCRATCH/add-human.txt" add-human.txt
}

test_add_twice_compiles_nothing_the_second_time() {
  setup_repo || return
  add_one 0 -q || return
  local before; before=$(repo_state)
  rm -f "$FAKE_NEURONX_CC_PID_FILE"
  add_one 0 || return
  contains "$OUT" "is already registered in file://$SCRATCH/repo; nothing compiled"
  [[ ! -e "$FAKE_NEURONX_CC_PID_FILE" ]] || fail "the command ran again"
  equals "$(repo_state)" "$before"
}

test_add_keeps_user_cc_flags_and_records_them() {
  setup_repo || return
  # --cache_dir in NEURON_CC_FLAGS picks the root (as synchronize resolves it); the rest is kept.
  NEURON_CC_FLAGS="--model-type=transformer --cache_dir=$SCRATCH/from-flags" run 0 "$NC" add -m "$SCRATCH/tiny" \
    --task text-generation --precision fp --num_cores 1 --train_batch_size 2 --sequence_length 64 --json \
    -- "${FAKE_COMMAND[@]}" || return
  local entry; entry=$(json_get "$OUT" '.results[0].entries[0]')
  [[ "$entry" != *+d41d8cd9 ]] || fail "flags were not passed to the compiler: $entry"
  equals "$(cat "$SCRATCH/from-flags/$entry/compile_flags.json")" '["--model-type=transformer"]'
  run 0 "$NC" lookup "$SCRATCH/tiny" --json || return
  equals "$(json_get "$OUT" '.entries[0].neuron.compiler_flags | join(" ")')" "--model-type=transformer"
  equals "$(json_get "$OUT" '.entries[0].neuron.torch_dtype')" "float32"
}

write_manifest() { # write_manifest FILE: three configurations of two models
  make_model "$SCRATCH/models/bert" "org/tiny-bert"
  manifest_head "$SCRATCH/cc" --compile-ms 200 >"$1"
  cat >>"$1" <<EOF
models:
  - model: $SCRATCH/tiny
    task: text-generation
    precision: bf16
    configurations:
      - {batch_size: 1, sequence_length: 128, num_cores: 2}
      - {batch_size: 4, sequence_length: 256, num_cores: 2}
  - model: models/bert
    configurations:
      - {task: fill-mask, precision: fp, num_cores: 1, train_batch_size: 8, sequence_length: 64}
EOF
}

test_manifest_runs_two_at_a_time_and_rerun_compiles_nothing() {
  setup_repo || return
  write_manifest "$SCRATCH/ci.yaml"
  local before; before=$(repo_state)
  run 0 "$NC" add --manifest "$SCRATCH/ci.yaml" --jobs 2 || return
  contains "$OUT" "3 configurations: 3 added, 0 already registered, 0 failed."
  contains "$OUT" "org/tiny-bert"
  # Concurrent output is prefixed with its configuration.
  contains "$ERR" "[org/tiny-gpt2 text-generation bs=4 seq=256 cores=2 bf16] Compiler status PASS"
  [[ "$(repo_state)" != "$before" ]] || fail "nothing pushed"
  before=$(repo_state)
  # Results were installed into the shared local cache too.
  equals "$(find "$SCRATCH/cc" -name model.done | wc -l)" "6"
  rm -f "$FAKE_NEURONX_CC_PID_FILE"
  run 0 "$NC" add --manifest "$SCRATCH/ci.yaml" --jobs 2 --json || return
  equals "$(json_get "$OUT" '.summary.already_registered')" "3"
  equals "$(json_get "$OUT" '.summary.added')" "0"
  [[ ! -e "$FAKE_NEURONX_CC_PID_FILE" ]] || fail "a configuration was compiled again"
  equals "$(repo_state)" "$before"
  run 0 "$NC" list --json
  equals "$(json_get "$OUT" '.models | length')" "2"
}

test_manifest_dry_run_changes_nothing() {
  setup_repo || return
  write_manifest "$SCRATCH/ci.yaml"
  # One configuration registered already.
  run 0 "$NC" add -m "$SCRATCH/tiny" --task text-generation --precision bf16 --num-cores 2 --train-batch-size 1 \
    --sequence-length 128 --cache-dir "$SCRATCH/cc" -q -- "${FAKE_COMMAND[@]}" || return
  rm -f "$FAKE_NEURONX_CC_PID_FILE"
  local before; before=$(snapshot "$SCRATCH/repo")
  local cache_before; cache_before=$(snapshot "$SCRATCH/cc")
  run 0 "$NC" add --manifest "$SCRATCH/ci.yaml" --dry-run --json || return
  equals "$(json_get "$OUT" '.summary.would_run')" "2"
  equals "$(json_get "$OUT" '.summary.already_registered')" "1"
  equals "$(json_get "$OUT" '[.results[] | select(.status == "would-run")][0].command[2]')" "org/tiny-gpt2"
  run 0 "$NC" add --manifest "$SCRATCH/ci.yaml" --dry-run
  contains "$OUT" "would run"
  contains "$OUT" "already registered  "
  [[ ! -e "$FAKE_NEURONX_CC_PID_FILE" ]] || fail "a dry run compiled"
  equals "$(snapshot "$SCRATCH/repo")" "$before"
  equals "$(snapshot "$SCRATCH/cc")" "$cache_before"
}

test_command_failure_pushes_nothing_and_shows_output() {
  setup_repo || return
  local before; before=$(snapshot "$SCRATCH/repo")
  FAKE_NEURONX_CC_MODE=fail add_one 1 || return
  contains "$ERR" "ERROR: Compilation failed for" # its output, shown
  contains "$ERR" "neuron-cache: error: could not add org/tiny-gpt2 text-generation bs=4 seq=128 cores=2 bf16 to the cache: the command exited with status 70; nothing was pushed"
  equals "$(snapshot "$SCRATCH/repo")" "$before"
  # In a manifest: the failure is in the table and the exit code; --continue-on-error runs the rest.
  write_manifest "$SCRATCH/ci.yaml"
  FAKE_NEURONX_CC_MODE=fail run 1 "$NC" add --manifest "$SCRATCH/ci.yaml" --continue-on-error --json
  equals "$(json_get "$OUT" '.summary.failed')" "3"
  equals "$(json_get "$OUT" '.results[0].output_tail | map(select(test("Compilation failed"))) | length')" "1"
  # A failing add reports as every failing command: the error object's fields beside the
  # results, and one error line on stderr.
  valid_json "$OUT" add.schema.json
  equals "$(json_get "$OUT" .exit_code)" "1"
  equals "$(json_get "$OUT" .results | jq length)" "3"
  contains "$ERR" "neuron-cache: error: 3 of 3 configurations failed; the first: org/tiny-gpt2 text-generation bs=1"
  equals "$(grep -c '^neuron-cache: error: ' "$ERR")" "1"
  equals "$(json_get "$OUT" .error)" "$(grep '^neuron-cache: error: ' "$ERR" | sed 's/^neuron-cache: error: //; s/; a re-run skips.*//')"
  FAKE_NEURONX_CC_MODE=fail run 1 "$NC" add --manifest "$SCRATCH/ci.yaml"
  contains "$OUT" "FAILED"
  contains "$OUT" "not run"
  contains "$ERR" "neuron-cache: error: could not add org/tiny-gpt2 text-generation bs=1 seq=128 cores=2 bf16 to the cache: the command exited with status 70; nothing was pushed"
  FAKE_NEURONX_CC_MODE=fail run 1 "$NC" add --manifest "$SCRATCH/ci.yaml" --json
  valid_json "$OUT" add.schema.json
  equals "$(json_get "$OUT" .summary.failed)" "1"
  equals "$(json_get "$OUT" '.error | startswith("could not add org/tiny-gpt2 text-generation bs=1")')" "true"
  equals "$(snapshot "$SCRATCH/repo")" "$before"
}

test_command_creating_no_entry_is_an_error() {
  setup_repo || return
  local before; before=$(snapshot "$SCRATCH/repo")
  FAKE_NEURONX_CC_MODE=nothing add_one 1 || return
  contains "$ERR" "the command succeeded but created no new compile-cache entry in $SCRATCH/cc"
  equals "$(snapshot "$SCRATCH/repo")" "$before"
}

test_no_command_anywhere_is_a_usage_error() {
  setup_repo || return
  run 2 "$NC" add -m "$SCRATCH/tiny" --task text-generation --precision bf16 --num-cores 2 --train-batch-size 4 \
    --sequence-length 128 || return
  contains "$ERR" "no command to run: give it after '--'"
  contains "$ERR" "NEURON_CACHE_ADD_COMMAND"
  one_line "$ERR"
  # ...and a template in the environment is one.
  NEURON_CACHE_ADD_COMMAND="$FAKE --model {model_id} --batch-size {batch_size}" run 0 "$NC" add -m "$SCRATCH/tiny" \
    --task text-generation --precision bf16 --num-cores 2 --train-batch-size 4 --sequence-length 128 \
    --cache-dir "$SCRATCH/cc" -q
}

test_bad_options_are_usage_errors() {
  setup_repo || return
  run 2 "$NC" add -m "$SCRATCH/tiny" --task t --precision bf16 --num-cores 2 --train-batch-size 4 -- true
  contains "$ERR" "You need to specify either sequence_length or encoder_sequence_length and decoder_sequence_length"
  run 2 "$NC" add -m "$SCRATCH/tiny" --task t --precision fp8 --num-cores 2 --train-batch-size 4 --sequence-length 8 -- true
  contains "$ERR" "--precision must be one of fp, bf16, fp16 (got 'fp8')"
  run 2 "$NC" add -m "$SCRATCH/tiny" --precision fp --num-cores 2 --train-batch-size 4 --sequence-length 8 -- true
  contains "$ERR" "--task is required"
  run 2 "$NC" add --manifest "$SCRATCH/x.yaml" -m "$SCRATCH/tiny" -- true
  contains "$ERR" "--model cannot be used with --manifest"
  run 1 "$NC" add -m "$SCRATCH/absent" --task t --precision fp --num-cores 2 --train-batch-size 4 --sequence-length 8 -- true
  contains "$ERR" "is neither a directory nor a Hub model id"
  run 1 "$NC" add -m "$SCRATCH/tiny" --task t --precision fp --num-cores 2 --train-batch-size 4 --sequence-length 8 \
    -- "{batchsize}"
  contains "$ERR" "unknown placeholder {batchsize} in the command template"
  [[ ! -e "$FAKE_NEURONX_CC_PID_FILE" ]] || fail "something compiled"
}

test_bad_manifests_name_line_and_column() {
  setup_repo || return
  local before; before=$(snapshot "$SCRATCH/repo")
  printf 'models: [\n  {model: a\n' >"$SCRATCH/not-yaml.yaml"
  run 1 "$NC" add --manifest "$SCRATCH/not-yaml.yaml" || return
  contains "$ERR" "$SCRATCH/not-yaml.yaml:"
  contains "$ERR" "not valid YAML"
  one_line "$ERR"
  printf 'repo: %s\n' "$SCRATCH/repo" >"$SCRATCH/missing.yaml"
  run 1 "$NC" add --manifest "$SCRATCH/missing.yaml"
  contains "$ERR" "missing.yaml:1:1: missing required key 'models'"
  printf 'models:\n  - model: org/m\n    configurations:\n      - {task: t, precision: fp, num_cores: 1, batch: 3}\n' \
    >"$SCRATCH/unknown.yaml"
  run 1 "$NC" add --manifest "$SCRATCH/unknown.yaml"
  contains "$ERR" "unknown.yaml:4:48: unknown key 'batch' in a configuration"
  printf 'models:\n  - model: org/m\n    configurations:\n      - {task: t, precision: fp, num_cores: many}\n' \
    >"$SCRATCH/type.yaml"
  run 1 "$NC" add --manifest "$SCRATCH/type.yaml"
  contains "$ERR" "type.yaml:4:45: 'num_cores' must be an integer, got 'many'"
  one_line "$ERR"
  run 1 "$NC" add --manifest "$SCRATCH/absent.yaml"
  contains "$ERR" "does not exist"
  [[ ! -e "$FAKE_NEURONX_CC_PID_FILE" ]] || fail "something compiled"
  equals "$(snapshot "$SCRATCH/repo")" "$before"
}

# interrupt SIGNAL EXIT: an add whose command hangs (with a worker process) gets SIGNAL.
interrupt_single_add() {
  local signal="$1" expected="$2"
  FAKE_NEURONX_CC_MODE=hang "$NC" add -m "$SCRATCH/tiny" --task text-generation --precision bf16 --num-cores 2 \
    --train-batch-size 4 --sequence-length 128 --cache-dir "$SCRATCH/cc" -- "${FAKE_COMMAND[@]}" --spawn-worker \
    >"$OUT" 2>"$ERR" &
  local add_pid=$!
  for _ in $(seq 100); do
    [[ -f "$FAKE_NEURONX_CC_PID_FILE" && "$(wc -l <"$FAKE_NEURONX_CC_PID_FILE")" -ge 2 ]] && break
    sleep 0.1
  done
  kill "-$signal" "$add_pid"
  wait "$add_pid"
  local code=$?
  equals "$code" "$expected"
}

test_sigint_terminates_the_command_and_pushes_nothing_then_rerun_continues() {
  setup_repo || return
  local before; before=$(snapshot "$SCRATCH/repo")
  interrupt_single_add INT 130
  contains "$ERR" "was terminated because this program received SIGINT; nothing was pushed"
  no_stand_in_survives
  equals "$(snapshot "$SCRATCH/repo")" "$before"
  # The interrupted entry's lock is gone, so the next compile does not wait on it.
  equals "$(find "$SCRATCH/cc" -name '*.lock' | wc -l)" "0"
  rm -f "$FAKE_NEURONX_CC_PID_FILE"
  add_one 0 --json || return
  equals "$(json_get "$OUT" '.results[0].entries | length')" "2"
}

test_timeout_terminates_the_command() {
  setup_repo || return
  local before; before=$(snapshot "$SCRATCH/repo")
  FAKE_NEURONX_CC_MODE=hang add_one 1 --timeout 1 || return
  contains "$ERR" "the command timed out after 1s and was terminated; nothing was pushed"
  no_stand_in_survives
  equals "$(snapshot "$SCRATCH/repo")" "$before"
}

test_sigterm_during_a_manifest_run() {
  setup_repo || return
  write_manifest "$SCRATCH/ci.yaml"
  local before; before=$(snapshot "$SCRATCH/repo")
  mkdir -p "$SCRATCH/tmp"
  FAKE_NEURONX_CC_MODE=hang TMPDIR="$SCRATCH/tmp" "$NC" add --manifest "$SCRATCH/ci.yaml" --jobs 2 >"$OUT" 2>"$ERR" &
  local add_pid=$!
  for _ in $(seq 100); do
    [[ -f "$FAKE_NEURONX_CC_PID_FILE" && "$(wc -l <"$FAKE_NEURONX_CC_PID_FILE")" -ge 2 ]] && break
    sleep 0.1
  done
  kill -TERM "$add_pid"
  wait "$add_pid"
  equals "$?" "143"
  contains "$OUT" "interrupted"
  contains "$ERR" "neuron-cache: error: interrupted; nothing half-pushed"
  no_stand_in_survives
  equals "$(snapshot "$SCRATCH/repo")" "$before"
  [[ -z "$(ls -A "$SCRATCH/tmp")" ]] || fail "staging left behind: $(ls -A "$SCRATCH/tmp")"
  # A re-run does everything.
  run 0 "$NC" add --manifest "$SCRATCH/ci.yaml" --jobs 2 || return
  contains "$OUT" "3 configurations: 3 added"
}

test_no_write_access_is_refused_before_compiling() {
  setup_repo || return
  if [[ "$(id -u)" == 0 ]]; then
    # Root ignores permission bits: put a regular file where commits stage.
    rm -rf "$SCRATCH/repo/.neuron-cache/staging"
    : >"$SCRATCH/repo/.neuron-cache/staging"
  else
    chmod a-w "$SCRATCH/repo" "$SCRATCH/repo/.neuron-cache/staging"
  fi
  add_one 1 || return
  contains "$ERR" "You do not have write access to file://$SCRATCH/repo"
  one_line "$ERR"
  [[ ! -e "$FAKE_NEURONX_CC_PID_FILE" ]] || fail "it compiled before checking write access"
  run 1 "$NC" add -m "$SCRATCH/tiny" --task t --precision fp --num-cores 1 --train-batch-size 1 --sequence-length 8 \
    --repo-id "$SCRATCH/not-a-repo" -- "${FAKE_COMMAND[@]}"
  contains "$ERR" "does not exist"
  [[ ! -e "$FAKE_NEURONX_CC_PID_FILE" ]] || fail "it compiled into a missing repo"
}

# --- Hub repos, against the local test Hub --------------------------------------------

ALICE=hf_alice_add_write_token_0001
CAROL=hf_carol_add_read_token_00002
BOB=hf_bob_add_write_token_000003
AWS=hf_aws_neuron_add_write_token_4
HUB_PID=""
start_test_hub() {
  [[ -n "$HUB_PID" ]] && return 0
  mkdir -p "$SUITE_ROOT/hub-data"
  coproc HUB { exec "$BIN_DIR/neuron-cache-test-hub" --port 0 --data "$SUITE_ROOT/hub-data" \
    --user "alice:$ALICE:write" --user "carol:$CAROL:read" --user "bob:$BOB:write" \
    --user "aws-neuron:$AWS:write" --org my-org:alice --org meta-llama:alice --org google-t5:alice \
    2>"$SUITE_ROOT/hub.log"; }
  HUB_PID=$HUB_PID
  trap 'kill "$HUB_PID" 2>/dev/null; wait "$HUB_PID" 2>/dev/null; rm -rf "$SUITE_ROOT"' EXIT
  read -r -t 20 HUB_URL <&"${HUB[0]}" && [[ "$HUB_URL" == http://127.0.0.1:* ]] \
    || { fail "the test Hub did not start: $(cat "$SUITE_ROOT/hub.log")"; return 1; }
  HUB_PORT="${HUB_URL##*:}"
}
if [[ -x "$BIN_DIR/neuron-cache-test-hub" ]]; then
  start_test_hub
fi

# hub_inject REPO PATH CONTENT: commits a file to a test Hub repo.
hub_inject() {
  local body response
  body=$(jq -cn --arg repo "$1" --arg path "$2" --arg content "$3" '{repo: $repo, path: $path, content: $content}')
  exec 3<>"/dev/tcp/127.0.0.1/$HUB_PORT" || { fail "cannot reach the test Hub"; return 1; }
  printf 'POST /_test/inject-tree-entry HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s' \
    "${#body}" "$body" >&3
  response="$(cat <&3)"
  exec 3<&-
  [[ "$response" == "HTTP/1.1 2"* ]] || fail "inject $2: ${response%%$'\r'*}"
}

test_hub_repo_add_with_a_hub_model() {
  [[ -n "$HUB_PID" ]] || { echo "    (skipped: no test Hub binary)"; return 0; }
  export HF_ENDPOINT="$HUB_URL" FAKE_NEURONX_CC_PID_FILE="$SCRATCH/fake.pids"
  HF_TOKEN=$ALICE run 0 "$NC" create alice/tiny-model -q || return
  HF_TOKEN=$ALICE run 0 "$NC" create alice/add-cache -q || return
  hub_inject alice/tiny-model config.json '{"model_type": "bert", "hidden_size": 32}' || return
  HF_TOKEN=$ALICE run 0 "$NC" add -m alice/tiny-model --task fill-mask --precision bf16 --num-cores 1 \
    --train-batch-size 2 --sequence-length 32 --cache-dir "$SCRATCH/cc" --json -- "${FAKE_COMMAND[@]}" || return
  equals "$(json_get "$OUT" '.repo')" "alice/add-cache"
  equals "$(json_get "$OUT" '.results[0].entries | length')" "2"
  HF_TOKEN=$ALICE run 0 "$NC" lookup alice/tiny-model --json || return
  equals "$(json_get "$OUT" '.entries[0].neuron.batch_size')" "2"
  # Re-run: registered, nothing compiled.
  rm -f "$FAKE_NEURONX_CC_PID_FILE"
  HF_TOKEN=$ALICE run 0 "$NC" add -m alice/tiny-model --task fill-mask --precision bf16 --num-cores 1 \
    --train-batch-size 2 --sequence-length 32 --cache-dir "$SCRATCH/cc" -- "${FAKE_COMMAND[@]}" || return
  contains "$OUT" "already registered"
  [[ ! -e "$FAKE_NEURONX_CC_PID_FILE" ]] || fail "compiled again"
  # A model id the Hub does not have: refused before compiling.
  HF_TOKEN=$ALICE run 1 "$NC" add -m alice/absent-model --task t --precision fp --num-cores 1 --train-batch-size 1 \
    --sequence-length 8 --cache-dir "$SCRATCH/cc" -- "${FAKE_COMMAND[@]}"
  [[ ! -e "$FAKE_NEURONX_CC_PID_FILE" ]] || fail "compiled for a missing model"
}

# Stand-ins for the launchers the shipped example manifest names: neuron_parallel_compile
# runs its command, torchrun maps the training script's options onto the stand-in compiler.
install_example_launchers() {
  mkdir -p "$SCRATCH/bin"
  printf '#!/usr/bin/env bash\nexec "$@"\n' >"$SCRATCH/bin/neuron_parallel_compile"
  cat >"$SCRATCH/bin/torchrun" <<LAUNCHER
#!/usr/bin/env bash
args=(); cores=1
while [[ \$# -gt 0 ]]; do
  case "\$1" in
    --nproc_per_node) cores=\$2; shift 2 ;;
    --model_name_or_path) args+=(--model "\$2"); shift 2 ;;
    --per_device_train_batch_size) args+=(--batch-size "\$2"); shift 2 ;;
    --block_size|--max_source_length) args+=(--sequence-length "\$2"); shift 2 ;;
    *) shift ;;
  esac
done
exec "$FAKE" "\${args[@]}" --num-cores "\$cores"
LAUNCHER
  chmod +x "$SCRATCH/bin/neuron_parallel_compile" "$SCRATCH/bin/torchrun"
  export PATH="$SCRATCH/bin:$PATH"
}

test_shipped_example_manifest_twice_compiles_nothing_the_second_time() {
  [[ -n "$HUB_PID" ]] || { echo "    (skipped: no test Hub binary)"; return 0; }
  export HF_ENDPOINT="$HUB_URL" FAKE_NEURONX_CC_PID_FILE="$SCRATCH/fake.pids" HF_TOKEN=$ALICE
  install_example_launchers
  run 0 "$NC" create my-org/neuron-cache -q || return
  for model in meta-llama/Llama-3.2-1B google-t5/t5-small; do
    run 0 "$NC" create "$model" -q || return
  done
  hub_inject meta-llama/Llama-3.2-1B config.json '{"model_type": "llama", "hidden_size": 64}' || return
  hub_inject google-t5/t5-small config.json '{"model_type": "t5", "d_model": 32}' || return
  local manifest="$SOURCE_DIR/examples/add-manifest.yaml"
  # The shell's flags differ from the manifest's env: the manifest's win, for the
  # compile, the recorded flags and the registered check alike.
  export NEURON_CC_FLAGS="-O1"
  run 0 "$NC" add --manifest "$manifest" --cache-dir "$SCRATCH/cc" --json || return
  equals "$(json_get "$OUT" '.summary.added')" "3"
  equals "$(json_get "$OUT" '.repo')" "my-org/neuron-cache"
  local entry; entry=$(json_get "$OUT" '.results[0].entries[0]')
  equals "$(cat "$SCRATCH/cc/$entry/compile_flags.json")" '["--model-type=transformer"]'
  # Every template of the example uses shape placeholders: no warning.
  lacks "$ERR" "uses none of"
  run 0 "$NC" lookup meta-llama/Llama-3.2-1B --repo-id my-org/neuron-cache --json || return
  equals "$(json_get "$OUT" '[.entries[].neuron.compiler_flags | join(" ")] | unique | join(",")')" "--model-type=transformer"
  rm -f "$FAKE_NEURONX_CC_PID_FILE"
  run 0 "$NC" add --manifest "$manifest" --cache-dir "$SCRATCH/cc2" --json || return
  equals "$(json_get "$OUT" '.summary.already_registered')" "3"
  equals "$(json_get "$OUT" '.summary.added')" "0"
  [[ ! -e "$FAKE_NEURONX_CC_PID_FILE" ]] || fail "the second run compiled again"
  # Nothing would run, so a dry run prints no command.
  run 0 "$NC" add --manifest "$manifest" --cache-dir "$SCRATCH/cc2" --dry-run || return
  lacks "$OUT" "would run for"
  contains "$OUT" "3 configurations: 0 added, 3 already registered"
}

test_manifest_env_decides_the_cache_root() {
  setup_repo || return
  write_manifest "$SCRATCH/ci.yaml"
  sed -i "/^cache_dir:/d" "$SCRATCH/ci.yaml"
  printf 'env:\n  NEURON_CC_FLAGS: "--cache_dir=%s -O1"\n' "$SCRATCH/from-env" >>"$SCRATCH/ci.yaml"
  NEURON_COMPILE_CACHE_URL="$SCRATCH/from-shell" run 0 "$NC" add --manifest "$SCRATCH/ci.yaml" --json || return
  equals "$(json_get "$OUT" '.cache_dir')" "$SCRATCH/from-env"
  equals "$(find "$SCRATCH/from-env" -name model.done | wc -l)" "6"
  [[ ! -e "$SCRATCH/from-shell" ]] || fail "the shell's cache root was used"
  rm -f "$FAKE_NEURONX_CC_PID_FILE"
  NEURON_CC_FLAGS="-O2" run 0 "$NC" add --manifest "$SCRATCH/ci.yaml" --json || return
  equals "$(json_get "$OUT" '.summary.already_registered')" "3"
  [[ ! -e "$FAKE_NEURONX_CC_PID_FILE" ]] || fail "a configuration was compiled again"
}

# What optimum sees of add's work: nothing of add's own (training) entries, which no
# optimum registry version holds; an export command's entries, filed as optimum main
# files them (0.4.6.dev4/<digest>/ and the alias), pushed unchanged and found by
# optimum's own lookup.
test_add_entries_optimum_sees() {
  setup_repo || return
  add_one 0 || return
  run 0 "$NC" lookup "$SCRATCH/tiny" --task text-generation -q || return # neuron-cache's view
  run 0 "$NC" lookup "$SCRATCH/tiny" --optimum --task text-generation || return
  equals "$(cat "$OUT")" "No cached entries found for $SCRATCH/tiny."
  local digest
  digest=$("$NC" lookup "$SCRATCH/tiny" --optimum --task text-generation --json | jq -r '.optimum.arch_digest')
  [[ "$digest" =~ ^[0-9a-f]{64}$ ]] || { fail "no digest: $digest"; return; }
  local entry='{"_entry_class": "SingleModelCacheEntry", "_model_id": "org/tiny-gpt2", "_task": "text-generation", "model_type": "gpt2", "n_embd": 64, "n_layer": 2, "neuron": {"batch_size": 8, "sequence_length": 128, "tp_degree": 2, "torch_dtype": "bfloat16", "target": "trn1"}}'
  local script="$SCRATCH/export.sh"
  cat >"$script" <<EOF
#!/usr/bin/env bash
"$FAKE" --model org/tiny-gpt2 --batch-size 8 --sequence-length 128 --num-cores 2 || exit 1
root="\$NEURON_COMPILE_CACHE_URL/neuronxcc-2.21.33363.0+82129205/0_REGISTRY/0.4.6.dev4"
mkdir -p "\$root/$digest" "\$root/gpt2/org/tiny-gpt2"
printf '%s' '$entry' >"\$root/$digest/00000000000000000008.json"
ln -s "\$root/$digest/00000000000000000008.json" "\$root/gpt2/org/tiny-gpt2/00000000000000000008.json"
EOF
  chmod +x "$script"
  run 0 "$NC" add -m "$SCRATCH/tiny" --task text-generation --precision bf16 --num-cores 2 --train-batch-size 8 \
    --sequence-length 128 --cache-dir "$SCRATCH/cc" -- "$script" "{batch_size}" || return
  run 0 "$NC" lookup "$SCRATCH/tiny" --optimum --task text-generation || return
  contains "$OUT" "       8              128              2            bfloat16          trn1      "
  equals "$(wc -l <"$OUT")" "3"
}

test_add_pushes_registry_entries_the_command_wrote_as_they_are() {
  setup_repo || return
  # An optimum export writes its own registry entry next to the graphs.
  local entry='{"model_type": "gpt2", "n_embd": 64, "neuron": {"batch_size": 2, "sequence_length": 64, "tp_degree": 2}}'
  local script="$SCRATCH/export.sh"
  cat >"$script" <<EOF
#!/usr/bin/env bash
"$FAKE" --model org/tiny-gpt2 --batch-size 2 --sequence-length 64 --num-cores 2 || exit 1
dir="\$NEURON_COMPILE_CACHE_URL/neuronxcc-2.21.33363.0+82129205/0_REGISTRY/0.4.6/gpt2/org/tiny-gpt2"
mkdir -p "\$dir" && printf '%s' '$entry' >"\$dir/00000000000000000001.json"
EOF
  chmod +x "$script"
  run 0 "$NC" add -m "$SCRATCH/tiny" --task text-generation --precision bf16 --num-cores 2 --train-batch-size 2 \
    --sequence-length 64 --cache-dir "$SCRATCH/cc" --json -- "$script" "{batch_size}" "{sequence_length}" || return
  equals "$(json_get "$OUT" '.results[0].registry_files | join(",")')" \
    "neuronxcc-2.21.33363.0+82129205/0_REGISTRY/0.4.6/gpt2/org/tiny-gpt2/00000000000000000001.json"
  equals "$(cat "$SCRATCH/repo/neuronxcc-2.21.33363.0+82129205/0_REGISTRY/0.4.6/gpt2/org/tiny-gpt2/00000000000000000001.json")" "$entry"
  [[ ! -e "$SCRATCH/repo/neuronxcc-2.21.33363.0+82129205/0_REGISTRY/neuron-cache-add-1" ]] || fail "our own entry was written too"
  # The record ties the configuration to its graphs: a re-run compiles nothing, a pull finds them.
  rm -f "$FAKE_NEURONX_CC_PID_FILE"
  run 0 "$NC" add -m "$SCRATCH/tiny" --task text-generation --precision bf16 --num-cores 2 --train-batch-size 2 \
    --sequence-length 64 --cache-dir "$SCRATCH/cc" -- "$script" "{batch_size}" "{sequence_length}" || return
  contains "$OUT" "already registered"
  [[ ! -e "$FAKE_NEURONX_CC_PID_FILE" ]] || fail "compiled again"
  HF_HUB_OFFLINE=1 run 0 "$NC" synchronize --pull --model org/tiny-gpt2 --cache-dir "$SCRATCH/warm" --json || return
  equals "$(json_get "$OUT" '.transferred | length')" "2"
}

test_template_without_shape_placeholders_warns_once() {
  setup_repo || return
  write_manifest "$SCRATCH/ci.yaml"
  # One template for every model, without shapes.
  sed -i '/^command:/,/^models:/{/^models:/!d}' "$SCRATCH/ci.yaml"
  sed -i "s|^models:|command: [\"$FAKE\", --model, \"{model_id}\", --num-cores, \"{num_cores}\"]\nmodels:|" \
    "$SCRATCH/ci.yaml"
  run 0 "$NC" add --manifest "$SCRATCH/ci.yaml" --dry-run || return
  equals "$(grep -c "uses none of {batch_size}" "$ERR")" "1"
  # The commands are the dry run's data, on stdout.
  equals "$(grep -c "^would run for .*fake_neuronx_cc --model org/tiny-" "$OUT")" "3"
  run 0 "$NC" add --manifest "$SCRATCH/ci.yaml" --dry-run -q || return
  equals "$(wc -l <"$OUT")" "3"
  contains "$OUT" "fake_neuronx_cc --model org/tiny-bert --num-cores 1"
}

test_hub_repo_without_write_access_is_refused_before_compiling() {
  [[ -n "$HUB_PID" ]] || { echo "    (skipped: no test Hub binary)"; return 0; }
  export HF_ENDPOINT="$HUB_URL" FAKE_NEURONX_CC_PID_FILE="$SCRATCH/fake.pids"
  make_model "$SCRATCH/tiny" "org/tiny-gpt2"
  # Public: others can read it, so only the write probe can tell.
  HF_TOKEN=$ALICE run 0 "$NC" create alice/guarded-cache --public -q || return
  for token in "$CAROL" "$BOB"; do # read-only token; another user's write token
    HF_TOKEN=$token run 1 "$NC" add -m "$SCRATCH/tiny" --task t --precision fp --num-cores 1 --train-batch-size 1 \
      --sequence-length 8 --cache-dir "$SCRATCH/cc" --repo-id alice/guarded-cache -- "${FAKE_COMMAND[@]}"
    contains "$ERR" "You do not have write access to alice/guarded-cache"
    one_line "$ERR"
    lacks "$ERR" "$token"
  done
  # Private: others cannot even see it.
  HF_TOKEN=$ALICE run 0 "$NC" create alice/private-cache -q || return
  HF_TOKEN=$BOB run 1 "$NC" add -m "$SCRATCH/tiny" --task t --precision fp --num-cores 1 --train-batch-size 1 \
    --sequence-length 8 --cache-dir "$SCRATCH/cc" --repo-id alice/private-cache -- "${FAKE_COMMAND[@]}"
  contains "$ERR" "cache repo alice/private-cache does not exist or cannot be read"
  [[ ! -e "$FAKE_NEURONX_CC_PID_FILE" ]] || fail "it compiled without write access"
}

test_pushing_to_the_public_default_warns() {
  [[ -n "$HUB_PID" ]] || { echo "    (skipped: no test Hub binary)"; return 0; }
  export HF_ENDPOINT="$HUB_URL" FAKE_NEURONX_CC_PID_FILE="$SCRATCH/fake.pids"
  make_model "$SCRATCH/tiny" "org/tiny-gpt2"
  HF_TOKEN=$AWS run 0 "$NC" create aws-neuron/optimum-neuron-cache --public -q || return
  rm "$HF_HOME/optimum_neuron_custom_cache" # no custom repo set: the default is used
  HF_TOKEN=$AWS run 0 "$NC" add -m "$SCRATCH/tiny" --task t --precision fp --num-cores 1 --train-batch-size 1 \
    --sequence-length 8 --cache-dir "$SCRATCH/cc" -q -- "${FAKE_COMMAND[@]}" || return
  contains "$ERR" "neuron-cache: warning: No custom cache repo is set: pushing to the public default aws-neuron/optimum-neuron-cache."
}

test_hub_repo_needs_a_token() {
  setup_repo || return
  run 1 "$NC" add -m "$SCRATCH/tiny" --task t --precision fp --num-cores 1 --train-batch-size 1 --sequence-length 8 \
    --repo-id my-org/neuron-cache -- "${FAKE_COMMAND[@]}" || return
  contains "$ERR" "You need to log in to the Hugging Face Hub to push to my-org/neuron-cache"
  one_line "$ERR"
  [[ ! -e "$FAKE_NEURONX_CC_PID_FILE" ]] || fail "it compiled without a token"
}

test_add_for_inference_batch_size_auto_cast_type_and_fp16() {
  setup_repo || return
  local inference=("$FAKE" --model "{model_id}" --task "{task}" --batch-size "{batch_size}"
                   --sequence-length "{sequence_length}" --num-cores "{num_cores}" --precision "{auto_cast_type}")
  run 0 "$NC" add -m "$SCRATCH/tiny" --task text-generation --batch-size 2 --sequence-length 128 --num-cores 2 \
    --auto-cast-type fp16 --cache-dir "$SCRATCH/cc" --json -- "${inference[@]}" || return
  valid_json "$OUT" add.schema.json
  equals "$(json_get "$OUT" '.results[0].status')" "added"
  equals "$(json_get "$OUT" '.results[0].label')" "org/tiny-gpt2 text-generation bs=2 seq=128 cores=2 cast=fp16"
  local entry="$SCRATCH/repo/$(json_get "$OUT" '.results[0].registry_files[0]')"
  equals "$(jq -r '.neuron.auto_cast_type' "$entry")" "fp16"
  equals "$(jq -r '.neuron.batch_size' "$entry")" "2"
  equals "$(jq -r '.neuron | has("torch_dtype")' "$entry")" "false"
  # lookup reads the auto-cast type as the dtype, as for optimum's own entries.
  run 0 "$NC" lookup "$SCRATCH/tiny" --dtype float16 --json || return
  equals "$(json_get "$OUT" '.entries | length')" "1"
  run 3 "$NC" lookup "$SCRATCH/tiny" --dtype bfloat16 -q
  # The same configuration again is registered; fp16 weights are another one.
  run 0 "$NC" add -m "$SCRATCH/tiny" --task text-generation --batch_size 2 --sequence-length 128 --num-cores 2 \
    --auto-cast-type fp16 --cache-dir "$SCRATCH/cc" --json -- "${inference[@]}" || return
  equals "$(json_get "$OUT" '.results[0].status')" "already-registered"
  run 0 "$NC" add -m "$SCRATCH/tiny" --task text-generation --batch-size 2 --sequence-length 128 --num-cores 2 \
    --precision fp16 --cache-dir "$SCRATCH/cc-fp16" --json -- "${FAKE_COMMAND[@]}" || return
  equals "$(json_get "$OUT" '.results[0].status')" "added"
  entry="$SCRATCH/repo/$(json_get "$OUT" '.results[0].registry_files[0]')"
  equals "$(jq -r '.neuron.torch_dtype' "$entry")" "float16"
  # What is not a value optimum records, or no dtype at all: usage errors, nothing run.
  run 2 "$NC" add -m "$SCRATCH/tiny" --task text-generation --batch-size 2 --sequence-length 128 --num-cores 2 \
    --auto-cast-type int8 -- "${inference[@]}"
  contains "$ERR" "--auto-cast-type must be one of bf16, fp16, tf32, fp32 (got 'int8')"
  run 2 "$NC" add -m "$SCRATCH/tiny" --task text-generation --batch-size 2 --sequence-length 128 --num-cores 2 \
    -- "${inference[@]}"
  contains "$ERR" "--precision or --auto-cast-type is required"
  run 2 "$NC" add -m "$SCRATCH/tiny" --task text-generation --sequence-length 128 --num-cores 2 --precision fp \
    -- "${inference[@]}"
  contains "$ERR" "--train-batch-size (or --batch-size) is required"
}

run_tests
