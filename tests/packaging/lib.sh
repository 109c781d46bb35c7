# Shared by the release-package checks (test_packages.sh, minimal_root.sh).

DEMO_HUB_USER=demo
DEMO_HUB_TOKEN=hf_demo_packaging_write_token_01

# start_demo_hub BIN_DIR DATA_DIR: starts the test Hub (127.0.0.1, port chosen at run time)
# with one user, for tests/demo.sh's Hub part; sets DEMO_HUB_PID and exports the
# NEURON_CACHE_DEMO_HUB_* variables demo.sh reads. The caller stops it (stop_demo_hub).
start_demo_hub() {
  local bin_dir="$1" data="$2" url
  mkdir -p "$data/hub-data"
  coproc DEMO_HUB { exec "$bin_dir/neuron-cache-test-hub" --port 0 --data "$data/hub-data" \
    --user "$DEMO_HUB_USER:$DEMO_HUB_TOKEN:write" 2>"$data/hub.log"; }
  DEMO_HUB_PID=$DEMO_HUB_PID
  if ! read -r -t 20 url <&"${DEMO_HUB[0]}" || [[ "$url" != http://127.0.0.1:* ]]; then
    echo "the test Hub did not start: ${url:-no output}; $(cat "$data/hub.log")" >&2
    return 1
  fi
  export NEURON_CACHE_DEMO_HUB_URL="$url" NEURON_CACHE_DEMO_HUB_TOKEN="$DEMO_HUB_TOKEN" \
    NEURON_CACHE_DEMO_HUB_USER="$DEMO_HUB_USER"
}

stop_demo_hub() {
  [[ -n "${DEMO_HUB_PID:-}" ]] && kill "$DEMO_HUB_PID" 2>/dev/null && wait "$DEMO_HUB_PID" 2>/dev/null
  DEMO_HUB_PID=""
}
