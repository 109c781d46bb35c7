#!/usr/bin/env bash
# The Xet witness test (ctest xet_witness): the official JS Xet code checks the chunk
# boundaries and hashes of ours on deterministic random and NEFF-like inputs
# (xet_witness.mjs says how).
#
#   tests/hub-js/xet_witness.sh PATH/TO/xet_chunk_tool
set -euo pipefail
tool=$1
here=$(cd "$(dirname "$0")" && pwd)
if [[ ! -d "$here/node_modules/@huggingface/xetchunk-wasm" ]]; then
  echo "tests/hub-js/node_modules lacks @huggingface/xetchunk-wasm: run \`npm ci --prefix tests/hub-js\` (make deps)" >&2
  exit 1
fi
command -v node >/dev/null || { echo "node is not installed (needed for the Xet witness)" >&2; exit 1; }
work=$(mktemp -d "${TMPDIR:-/tmp}/neuron-cache-xet-witness.XXXXXX")
trap 'rm -rf "$work"' EXIT
node "$here/xet_witness.mjs" generate "$work/inputs"
# Blocks of an odd size, so chunks straddle them as they do when a file is streamed.
"$tool" --block-size 65521 "$work"/inputs/* >"$work/ours.jsonl"
node "$here/xet_witness.mjs" check "$work/inputs" "$work/ours.jsonl"
