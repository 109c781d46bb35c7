#!/usr/bin/env bash
# `make demo`: runs the main job end to end on the embedded default, a directory cache
# repo, with no network. HF_HOME points at a temp folder, so your own configuration is
# never read or touched. Set NEURON_CACHE_DEMO_KEEP=1 to keep the temp folder.
#   demo.sh [BIN_DIR]   BIN_DIR holds neuron-cache and the stand-in compiler fake_neuronx_cc
# The release-package checks (tests/packaging) run it on an installed neuron-cache:
#   NEURON_CACHE_DEMO_BINARY      the neuron-cache to run (a path, or a name looked up in PATH)
#   NEURON_CACHE_DEMO_HUB_URL     a test Hub (neuron-cache-test-hub) to push to and pull from too,
#   NEURON_CACHE_DEMO_HUB_TOKEN   with a write token of the user NEURON_CACHE_DEMO_HUB_USER
#   NEURON_CACHE_DEMO_HUB_USER
set -euo pipefail

BIN_DIR="$(cd "${1:-build/bin}" && pwd)"
NC="${NEURON_CACHE_DEMO_BINARY:-$BIN_DIR/neuron-cache}"
WORK="$(mktemp -d "${TMPDIR:-/tmp}/neuron-cache-demo.XXXXXX")"
if [[ "${NEURON_CACHE_DEMO_KEEP:-0}" == 1 ]]; then
  echo "Demo files kept in $WORK"
else
  trap 'rm -rf "$WORK"' EXIT
fi
export HF_HOME="$WORK/hf-home"
export XDG_CONFIG_HOME="$WORK/xdg-config" # neuron-cache's own repo choice (directory repos) too
export XDG_CACHE_HOME="$WORK/xdg-cache"   # digest cache, completion's model ids
export XDG_STATE_HOME="$WORK/xdg-state"   # last-use records of the compile caches
unset CUSTOM_CACHE_REPO NEURON_CC_FLAGS NEURON_COMPILE_CACHE_URL HF_TOKEN

step() {
  echo
  echo "\$ neuron-cache $*"
  "$NC" "$@"
}

echo "== neuron-cache demo (work dir: $WORK)"
step --version
step create "$WORK/cache-repo"
step set "$WORK/cache-repo"
step config

SOURCE_DIR="$(cd "$(dirname "$0")/.." && pwd)"
export XDG_CACHE_HOME="$WORK/xdg-cache"   # synchronize's digest cache stays in the demo folder
export XDG_STATE_HOME="$WORK/xdg-state"   # and the last-use records too
echo
echo "== synchronize: a compile cache with 3 complete entries, plus failed, locked and unfinished ones"
"$SOURCE_DIR/tests/tools/make_sample_cache.sh" "$WORK/compile-cache" --entries 3 --faults
step synchronize --cache-dir "$WORK/compile-cache"
step synchronize --cache-dir "$WORK/compile-cache"
step synchronize --pull --cache-dir "$WORK/fresh-host-cache"

echo
echo "== status and cleanup: care of the local compile cache"
step status --cache-dir "$WORK/compile-cache"
step cleanup --cache-dir "$WORK/compile-cache" --all --dry-run
step cleanup --cache-dir "$WORK/compile-cache" --all

echo
echo "== add: compile a model with the stand-in compiler (tests/tools/fake_neuronx_cc) and push it"
step add -m "$SOURCE_DIR/tests/data/add/tiny-gpt2" --task text-generation --precision bf16 --num-cores 2 \
  --train-batch-size 4 --sequence-length 128 --cache-dir "$WORK/add-compile-cache" \
  -- "$BIN_DIR/fake_neuronx_cc" --model "{model_id}" --batch-size "{batch_size}" \
     --sequence-length "{sequence_length}" --num-cores "{num_cores}" --precision "{precision}"

echo
echo "== registry: which compiled configurations the repo holds"
step list
step lookup "$SOURCE_DIR/tests/data/add/tiny-gpt2" --batch_size 4
set +e
step lookup "$SOURCE_DIR/tests/data/add/tiny-gpt2" --batch_size 32
echo "(exit $? = nothing cached for that shape)"
set -e

echo
echo "== warm start: a fresh host takes only that model's graphs (the ones add recorded)"
step synchronize --pull --model "$SOURCE_DIR/tests/data/add/tiny-gpt2" --cache-dir "$WORK/warm-host-cache"
if [[ -n "${NEURON_CACHE_DEMO_HUB_URL:-}" ]]; then
  echo
  echo "== Hub: the same compile cache through a Hub repo (test Hub at $NEURON_CACHE_DEMO_HUB_URL)"
  export HF_ENDPOINT="$NEURON_CACHE_DEMO_HUB_URL" HF_TOKEN="$NEURON_CACHE_DEMO_HUB_TOKEN"
  HUB_REPO="$NEURON_CACHE_DEMO_HUB_USER/neuron-cache-demo"
  step create "$HUB_REPO" --no-set
  step synchronize --repo-id "$HUB_REPO" --cache-dir "$WORK/fresh-host-cache"
  step synchronize --pull --repo-id "$HUB_REPO" --cache-dir "$WORK/hub-host-cache"
  step status --cache-dir "$WORK/hub-host-cache"
  unset HF_ENDPOINT HF_TOKEN
fi

echo
echo "== demo finished"
