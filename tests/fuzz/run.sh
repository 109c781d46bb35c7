#!/usr/bin/env bash
# Runs every libFuzzer target of a fuzz build for SECONDS each, one after the other, on a
# scratch copy of its committed seed corpus (tests/fuzz/corpus/<target>/): new inputs land
# in the scratch copy, never in the repo. Fails when a target crashes, leaks, trips a
# sanitizer or breaks a property; the input that did it is kept in BUILD/fuzz-artifacts/.
#
#   tests/fuzz/run.sh BUILD_DIR SECONDS [TARGET...]
#
# Targets run FUZZ_JOBS at a time (default: one per core), each on its own core for its
# full SECONDS: the same fuzzing per target, in a fraction of the wall time.
set -euo pipefail
build_dir=$(cd "$1" && pwd)
seconds=$2
shift 2
source_dir=$(cd "$(dirname "$0")" && pwd)
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  for binary in "$build_dir"/fuzz/fuzz_*; do
    targets+=("$(basename "$binary")")
  done
fi

scratch=$(mktemp -d "$build_dir/fuzz-run.XXXXXX")
trap 'rm -rf "$scratch"' EXIT
artifacts="$build_dir/fuzz-artifacts"
mkdir -p "$artifacts"
# Any report ends the run with the input saved; leaks count (libFuzzer checks each input).
export ASAN_OPTIONS="halt_on_error=1:abort_on_error=1:print_stacktrace=1:detect_leaks=1:strict_string_checks=1"
export UBSAN_OPTIONS="halt_on_error=1:abort_on_error=1:print_stacktrace=1"
# Targets that read files write them under here (fuzz_support.hpp scratch_dir()).
export TMPDIR="$scratch"

jobs=${FUZZ_JOBS:-$(nproc)}
[ "$jobs" -ge 1 ] 2>/dev/null || jobs=1

# fuzz_one TARGET: runs TARGET, leaves its table row in $scratch/TARGET.row and its exit
# status in $scratch/TARGET.status.
fuzz_one() {
  local target=$1
  local corpus="$scratch/$target"
  mkdir -p "$corpus"
  local seeds="$source_dir/corpus/$target"
  local dictionary=()
  case "$target" in
    fuzz_registry_entry | fuzz_legacy_registry | fuzz_model_config | fuzz_model_index | fuzz_hub_* | fuzz_ndjson_reader)
      dictionary=(-dict="$source_dir/json.dict") ;;
    fuzz_add_manifest) dictionary=(-dict="$source_dir/yaml.dict") ;;
    fuzz_s3_xml) dictionary=(-dict="$source_dir/xml.dict") ;;
  esac
  local log="$scratch/$target.log"
  local status=0
  # -timeout: one input running 10 s is a hang; -rss_limit_mb: a bounded parser stays small.
  "$build_dir/fuzz/$target" "$corpus" "$seeds" "${dictionary[@]}" \
    -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
    -print_final_stats=1 -artifact_prefix="$artifacts/$target-" >"$log" 2>&1 || status=$?
  local executions speed units
  executions=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  speed=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
  units=$(find "$corpus" -type f | wc -l)
  printf '%-22s %8s %12s %10s %8s\n' "$target" "$seconds" "${executions:-?}" "${speed:-?}" "$units" >"$scratch/$target.row"
  echo "$status" >"$scratch/$target.status"
}

echo "fuzzing ${#targets[@]} targets for $seconds s each, $jobs at a time"
for target in "${targets[@]}"; do
  while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n || true; done
  fuzz_one "$target" &
done
wait

failed=()
printf '%-22s %8s %12s %10s %8s\n' target seconds executions exec/s corpus
for target in "${targets[@]}"; do
  cat "$scratch/$target.row" 2>/dev/null || printf '%-22s %8s %12s %10s %8s\n' "$target" "$seconds" '?' '?' '?'
  status=$(cat "$scratch/$target.status" 2>/dev/null || echo "no status")
  if [ "$status" != 0 ]; then
    echo "--- $target failed (exit $status); last lines of its log:" >&2
    tail -60 "$scratch/$target.log" >&2
    failed+=("$target")
  fi
done
if [ ${#failed[@]} -gt 0 ]; then
  echo "fuzzing found problems in: ${failed[*]} (inputs in $artifacts)" >&2
  exit 1
fi
