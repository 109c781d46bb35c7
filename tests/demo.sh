#!/usr/bin/env bash
# `make demo`: runs the main job end to end on the embedded default, a directory cache
# repo, with no network. HF_HOME points at a temp folder, so your own configuration is
# never read or touched. Set NEURON_CACHE_DEMO_KEEP=1 to keep the temp folder.
set -euo pipefail

BIN_DIR="$(cd "${1:-build/bin}" && pwd)"
NC="$BIN_DIR/neuron-cache"
WORK="$(mktemp -d "${TMPDIR:-/tmp}/neuron-cache-demo.XXXXXX")"
if [[ "${NEURON_CACHE_DEMO_KEEP:-0}" == 1 ]]; then
  echo "Demo files kept in $WORK"
else
  trap 'rm -rf "$WORK"' EXIT
fi
export HF_HOME="$WORK/hf-home"
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
echo
echo "== demo finished"
