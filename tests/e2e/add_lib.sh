# Sourced by the e2e suites that run `add` with the stand-in compiler
# (tests/tools/fake_neuronx_cc) on a tiny local model: test_add.sh, test_pull_model.sh.

FAKE="$BIN_DIR/fake_neuronx_cc"
# The stand-in, driven by the configuration's values.
FAKE_COMMAND=("$FAKE" --model "{model_id}" --task "{task}" --batch-size "{batch_size}"
              --sequence-length "{sequence_length}" --num-cores "{num_cores}" --precision "{precision}")

make_model() { # make_model DIR ID: a local model directory with a config.json
  mkdir -p "$1"
  printf '{"model_type": "gpt2", "n_layer": 2, "n_embd": 64, "_name_or_path": "%s"}' "$2" >"$1/config.json"
}

setup_repo() {
  run 0 "$NC" create "$SCRATCH/repo" -q || return
  make_model "$SCRATCH/tiny" "org/tiny-gpt2"
  export FAKE_NEURONX_CC_PID_FILE="$SCRATCH/fake.pids"
}


add_one() { # add_one EXIT [extra args...] -- uses the stand-in on the tiny model
  local expected="$1"; shift
  run "$expected" "$NC" add -m "$SCRATCH/tiny" --task text-generation --precision bf16 --num-cores 2 \
    --train-batch-size 4 --sequence-length 128 --cache-dir "$SCRATCH/cc" "$@" -- "${FAKE_COMMAND[@]}"
}

# manifest_head CACHE_DIR [ARG...]: a manifest's first lines: the repo ($SCRATCH/repo),
# CACHE_DIR and the stand-in as its command, ARGs added to it.
manifest_head() {
  local cache_dir="$1" arg extra=""; shift
  for arg in "$@"; do extra+=", \"$arg\""; done
  cat <<HEAD
repo: $SCRATCH/repo
cache_dir: $cache_dir
command: ["$FAKE", --model, "{model_id}", --batch-size, "{batch_size}", --sequence-length, "{sequence_length}",
          --num-cores, "{num_cores}", --precision, "{precision}"$extra]
HEAD
}
