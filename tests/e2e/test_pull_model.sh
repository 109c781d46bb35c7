#!/usr/bin/env bash
# End to end: `synchronize --pull --model` installs only the graphs of one model's
# configurations that `add` recorded, filtered by task, sequence length and cores, asks
# beyond --max-size on a terminal, and sizes each entry with a subtotal per model in a dry run.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/add_lib.sh"

test_pull_one_model_installs_only_its_configurations_graphs() {
  setup_repo || return
  add_one 0 -q || return # bs 4
  run 0 "$NC" add -m "$SCRATCH/tiny" --task text-generation --precision bf16 --num-cores 2 --train-batch-size 8 \
    --sequence-length 128 --cache-dir "$SCRATCH/cc" -q -- "${FAKE_COMMAND[@]}" || return
  mkdir -p "$SCRATCH/other" # another architecture
  echo '{"model_type": "gpt2", "n_layer": 4, "n_embd": 128, "_name_or_path": "org/other-gpt2"}' >"$SCRATCH/other/config.json"
  run 0 "$NC" add -m "$SCRATCH/other" --task text-generation --precision bf16 --num-cores 2 --train-batch-size 4 \
    --sequence-length 128 --cache-dir "$SCRATCH/cc" -q -- "${FAKE_COMMAND[@]}" || return
  # add recorded which graphs each configuration produced.
  equals "$(find "$SCRATCH/repo" -path '*0_REGISTRY/neuron-cache-modules/*.json' | wc -l)" "3"
  run 0 "$NC" synchronize --pull --model "$SCRATCH/tiny" --batch-size 4 --cache-dir "$SCRATCH/warm" --json || return
  equals "$(json_get "$OUT" '.transferred | length')" "2"
  equals "$(find "$SCRATCH/warm" -name model.done | wc -l)" "2"
  # Both configurations of the model, by its Hub id (offline: the entries filed under it).
  HF_HUB_OFFLINE=1 run 0 "$NC" synchronize --pull --model org/tiny-gpt2 --cache-dir "$SCRATCH/warm2" --json || return
  equals "$(json_get "$OUT" '.transferred | length')" "4"
  # Nothing for another compiler: what the repo has instead.
  run 1 "$NC" synchronize --pull --model "$SCRATCH/tiny" --compiler-version 2.22 --cache-dir "$SCRATCH/warm3"
  contains "$ERR" "0 entries of $SCRATCH/tiny for 2.22; the repo has 2.21.33363.0+82129205"
  # A whole pull says it the same way, with the same exit code.
  run 1 "$NC" synchronize --pull --compiler-version 2.22 --cache-dir "$SCRATCH/warm3"
  contains "$ERR" "0 entries for 2.22; the repo has 2.21.33363.0+82129205"
  one_line "$ERR"
  run 1 "$NC" synchronize --pull --model "$SCRATCH/tiny" --batch-size 3 --cache-dir "$SCRATCH/warm3"
  contains "$ERR" "cached: batch 4, 8 at sequence 128 (2 cores)"
  [[ ! -e "$SCRATCH/warm3" ]] || [[ -z "$(find "$SCRATCH/warm3" -name model.done)" ]] || fail "a failed selection pulled"
  # With a neuronx-cc on PATH, its version is the default filter.
  mkdir -p "$SCRATCH/bin" && ln -s "$FAKE" "$SCRATCH/bin/neuronx-cc"
  PATH="$SCRATCH/bin:$PATH" FAKE_NEURONX_CC_VERSION=2.22.0.0+0badc0de \
    run 1 "$NC" synchronize --pull --model "$SCRATCH/tiny" --cache-dir "$SCRATCH/warm3"
  # Graphs of another compiler are of no use to it: never advised to pull them.
  contains "$ERR" "0 entries of $SCRATCH/tiny for the installed neuronx-cc 2.22.0.0+0badc0de, which graphs of 2.21.33363.0+82129205 cannot serve"
  contains "$ERR" "compile and publish them with this neuronx-cc"
  lacks "$ERR" "pass --compiler-version"
  PATH="$SCRATCH/bin:$PATH" run 0 "$NC" synchronize --pull --model "$SCRATCH/tiny" --cache-dir "$SCRATCH/warm6" --json \
    || return
  equals "$(json_get "$OUT" '.compiler_version')" "2.21.33363.0+82129205"
  # An entry written by another tool names no graphs: counted, not guessed.
  local alias_dir="$SCRATCH/repo/neuronxcc-2.21.33363.0+82129205/0_REGISTRY/0.4.5/gpt2/org/tiny-gpt2"
  mkdir -p "$alias_dir"
  printf '{"model_type": "gpt2", "n_embd": 64, "n_layer": 2, "neuron": {"batch_size": 16, "sequence_length": 128, "num_cores": 2}}' \
    >"$alias_dir/0123456789abcdef0123.json"
  HF_HUB_OFFLINE=1 run 0 "$NC" synchronize --pull --model org/tiny-gpt2 --cache-dir "$SCRATCH/warm4" --json || return
  contains "$ERR" "1 matching configuration of org/tiny-gpt2 cannot be attributed to compiled graphs"
  equals "$(json_get "$OUT" '.transferred | length')" "4"
  # A pull beyond --max-size is refused without a terminal, unless --yes.
  run 1 "$NC" synchronize --pull --max-size 10 --cache-dir "$SCRATCH/warm5" </dev/null
  contains "$ERR" "more than --max-size 10 B"
  [[ ! -e "$SCRATCH/warm5" ]] || [[ -z "$(find "$SCRATCH/warm5" -name model.done)" ]] || fail "pulled beyond --max-size"
  run 0 "$NC" synchronize --pull --max-size 10 --yes --cache-dir "$SCRATCH/warm5" -q </dev/null || return
  run 2 "$NC" synchronize --batch-size 4
}

# add_config NAME TASK BATCH SEQUENCE CORES: adds one configuration of the tiny model and
# keeps the entries it produced in $SCRATCH/entries-NAME (one path a line, sorted).
add_config() {
  run 0 "$NC" add -m "$SCRATCH/tiny" --task "$2" --precision bf16 --train-batch-size "$3" --sequence-length "$4" \
    --num-cores "$5" --cache-dir "$SCRATCH/cc" --json -- "${FAKE_COMMAND[@]}" || return
  json_get "$OUT" '.results[0].entries[]' | sort >"$SCRATCH/entries-$1"
  [[ -s "$SCRATCH/entries-$1" ]] || fail "configuration $1 produced no entry"
}

# pulled_is DIR NAME...: DIR holds exactly the entries of configurations NAME...
pulled_is() {
  local dir=$1; shift
  local name expected=""
  for name in "$@"; do expected+=$(cat "$SCRATCH/entries-$name")$'\n'; done
  equals "$(cd "$dir" && find . -name model.done -path '*/MODULE_*' | sed 's|^\./||; s|/model.done$||' | sort)" \
    "$(sort <<<"${expected%$'\n'}")"
}

test_pull_one_model_filters_by_task_sequence_length_and_cores() {
  setup_repo || return
  add_config base text-generation 4 128 2 || return
  add_config long text-generation 4 256 2 || return
  add_config one-core text-generation 4 128 1 || return
  add_config features feature-extraction 4 128 2 || return
  local pull=(synchronize --pull --model "$SCRATCH/tiny" --json)
  run 0 "$NC" "${pull[@]}" --task feature-extraction --cache-dir "$SCRATCH/by-task" || return
  pulled_is "$SCRATCH/by-task" features
  run 0 "$NC" "${pull[@]}" --task text-generation --cache-dir "$SCRATCH/by-task2" || return
  pulled_is "$SCRATCH/by-task2" base long one-core
  run 0 "$NC" "${pull[@]}" --sequence-length 256 --cache-dir "$SCRATCH/by-sequence" || return
  pulled_is "$SCRATCH/by-sequence" long
  run 0 "$NC" "${pull[@]}" --sequence_length 128 --cache-dir "$SCRATCH/by-sequence2" || return
  pulled_is "$SCRATCH/by-sequence2" base one-core features
  run 0 "$NC" "${pull[@]}" --num-cores 1 --cache-dir "$SCRATCH/by-cores" || return
  pulled_is "$SCRATCH/by-cores" one-core
  run 0 "$NC" "${pull[@]}" --tensor-parallel-size 2 --cache-dir "$SCRATCH/by-cores2" || return
  pulled_is "$SCRATCH/by-cores2" base long features
  # Together they narrow to one configuration.
  run 0 "$NC" "${pull[@]}" --task text-generation --sequence-length 128 --num-cores 2 --cache-dir "$SCRATCH/all" || return
  pulled_is "$SCRATCH/all" base
  # A filter matching nothing says what is cached and installs nothing.
  run 1 "$NC" "${pull[@]}" --sequence-length 512 --cache-dir "$SCRATCH/none"
  contains "$ERR" "no configuration of $SCRATCH/tiny in file://$SCRATCH/repo matches"
  run 1 "$NC" "${pull[@]}" --task text-classification --cache-dir "$SCRATCH/none"
  run 1 "$NC" "${pull[@]}" --num-cores 8 --cache-dir "$SCRATCH/none"
  [[ ! -e "$SCRATCH/none" ]] || [[ -z "$(find "$SCRATCH/none" -name model.done)" ]] || fail "a filter matching nothing pulled"
}

test_pull_beyond_max_size_asks_on_a_terminal() {
  export NO_COLOR=1 # the terminal would colour "error:"; the prompt is what is tested here
  setup_repo || return
  add_one 0 -q || return
  local code
  # Anything but yes: nothing installed, a non-zero exit.
  printf 'n\n' | script -qec "'$NC' synchronize --pull --max-size 10 --cache-dir '$SCRATCH/warm'" /dev/null >"$OUT" 2>&1
  code=$?
  equals "$code" "1"
  contains "$OUT" "more than --max-size 10 B. Continue? [y/N]"
  contains "$OUT" "neuron-cache: error: pull cancelled"
  [[ ! -e "$SCRATCH/warm" ]] || [[ -z "$(find "$SCRATCH/warm" -name model.done)" ]] || fail "a refused pull installed entries"
  # The targeted pull asks the same way.
  printf '\n' | script -qec "'$NC' synchronize --pull --model '$SCRATCH/tiny' --max-size 1K --cache-dir '$SCRATCH/warm'" \
    /dev/null >"$OUT" 2>&1
  code=$?
  equals "$code" "1"
  contains "$OUT" "more than --max-size 1.0 KB. Continue? [y/N]"
  [[ ! -e "$SCRATCH/warm" ]] || [[ -z "$(find "$SCRATCH/warm" -name model.done)" ]] || fail "a refused pull installed entries"
  # Yes installs.
  printf 'y\n' | script -qec "'$NC' synchronize --pull --max-size 10 --cache-dir '$SCRATCH/warm'" /dev/null >"$OUT" 2>&1
  code=$?
  equals "$code" "0"
  contains "$OUT" "Continue? [y/N]"
  contains "$OUT" "Pulled 3 entries" # the graphs and the registry
  equals "$(find "$SCRATCH/warm" -name model.done | wc -l)" "2"
  # Under the size, no question.
  script -qec "'$NC' synchronize --pull --cache-dir '$SCRATCH/warm2'" /dev/null </dev/null >"$OUT" 2>&1 || fail "pull failed"
  lacks "$OUT" "Continue?"
}

test_pull_dry_run_sizes_each_entry_and_subtotals_by_model() {
  setup_repo || return
  add_one 0 -q || return
  mkdir -p "$SCRATCH/other"
  echo '{"model_type": "gpt2", "n_layer": 4, "n_embd": 128, "_name_or_path": "org/other-gpt2"}' >"$SCRATCH/other/config.json"
  run 0 "$NC" add -m "$SCRATCH/other" --task text-generation --precision bf16 --num-cores 2 --batch-size 4 \
    --sequence-length 128 --cache-dir "$SCRATCH/cc" -q -- "${FAKE_COMMAND[@]}" || return
  # What would a whole pull fetch, and how big: each entry, then each model's share.
  run 0 "$NC" pull --dry-run --cache-dir "$SCRATCH/warm" || return
  matches_golden "$OUT" pull-dry-run-by-model.txt
  contains "$OUT" "By model:"
  contains "$OUT" "  org/tiny-gpt2: 2 entries, "
  contains "$OUT" "  org/other-gpt2: 2 entries, "
  run 0 "$NC" pull --dry-run --cache-dir "$SCRATCH/warm" --json || return
  valid_json "$OUT" transfer.schema.json
  equals "$(json_get "$OUT" '[.entries[] | select(.model == "org/tiny-gpt2")] | length')" "2"
  equals "$(json_get "$OUT" '[.entries[] | select(.model == "org/other-gpt2")] | length')" "2"
  equals "$(json_get "$OUT" '[.entries[].bytes] | add')" "$(json_get "$OUT" .bytes.planned)"
  # --model: every entry is that model's; --verbose says each on stderr.
  run 0 "$NC" pull --dry-run --model "$SCRATCH/tiny" --cache-dir "$SCRATCH/warm" --verbose || return
  contains "$OUT" "By model:"$'\n'"  org/tiny-gpt2: 2 entries, "
  lacks "$OUT" "org/other-gpt2"
  equals "$(grep -c '^would pull neuronxcc-.*; model org/tiny-gpt2)$' "$ERR")" "2"
  # A real pull reports what it moved, each entry transferred, the model where --model names it.
  run 0 "$NC" pull --model "$SCRATCH/tiny" --cache-dir "$SCRATCH/warm" --json || return
  valid_json "$OUT" transfer.schema.json
  equals "$(json_get "$OUT" '[.entries[] | select(.transferred and .model == "org/tiny-gpt2")] | length')" "2"
  # Records that are not add's (garbage, a wrong shape) name no model, and break nothing.
  local records="$SCRATCH/repo/neuronxcc-2.21.33363.0+82129205/0_REGISTRY/neuron-cache-modules"
  printf 'not json' >"$records/00000000000000000000.json"
  printf '{"model_id": ["x"], "modules": []}' >"$records/00000000000000000001.json"
  run 0 "$NC" pull --dry-run --cache-dir "$SCRATCH/warm9" --json || return
  equals "$(json_get "$OUT" '[.entries[] | select(.model == null and (.path | contains("MODULE_")))] | length')" "0"
}

run_tests
