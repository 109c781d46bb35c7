#!/usr/bin/env bash
# Writes a synthetic Neuron compile cache (generation C entries, as libneuronxla lays
# them out) for tests, the demo and bench/sync.
#   make_sample_cache.sh ROOT [--entries N] [--neff-size BYTES] [--big-every K]
#                        [--big-size BYTES] [--version V] [--faults] [--seed S]
# --faults adds one entry of each kind synchronize must skip or carry specially: failed,
# locked, unfinished (no model.done), empty neff, wrong flags suffix, a temp file, a
# root-level lock, an exported model and an optimum registry with its alias symlink.
set -euo pipefail

root="${1:?usage: make_sample_cache.sh ROOT [options]}"; shift
entries=5 neff_size=4096 big_every=0 big_size=$((20 * 1024 * 1024))
version="2.21.33363.0+82129205" faults=0 seed=1
while [[ $# -gt 0 ]]; do
  case "$1" in
    --entries) entries="$2"; shift 2 ;;
    --neff-size) neff_size="$2"; shift 2 ;;
    --big-every) big_every="$2"; shift 2 ;;
    --big-size) big_size="$2"; shift 2 ;;
    --version) version="$2"; shift 2 ;;
    --faults) faults=1; shift ;;
    --seed) seed="$2"; shift 2 ;;
    *) echo "make_sample_cache.sh: unknown option $1" >&2; exit 2 ;;
  esac
done

flags='["--model-type=transformer", "--auto-cast=none", "--execute-repetition=1"]'
suffix=$(printf '%s' "$flags" | md5sum | cut -c1-8)
vdir="$root/neuronxcc-$version"
mkdir -p "$vdir"

# Content that differs per entry and per seed without a process per small file.
payload() { # payload SIZE LABEL
  if (($1 <= 4096)); then
    local line="$2 $seed "
    local text="$line"
    while ((${#text} < $1)); do text+="$text"; done # doubling: the same bytes, in log2(SIZE) steps
    printf '%s' "${text:0:$1}"
  else
    # A binary header, as real NEFFs have (NULs in the first bytes).
    { printf 'NEFF\0\0\0\1%s %s ' "$2" "$seed"; head -c "$1" /dev/urandom; } | head -c "$1"
  fi
}

dirs=()
for ((i = 0; i < entries; i++)); do
  printf -v key '%d%015d' "$seed" "$i" # printf -v: no subshell per entry
  dirs+=("$vdir/MODULE_$key+$suffix")
done
((entries == 0)) || printf '%s\0' "${dirs[@]}" | xargs -0 mkdir -p
for ((i = 0; i < entries; i++)); do
  d="${dirs[$i]}"
  size=$neff_size
  if ((big_every > 0 && i % big_every == 0)); then size=$big_size; fi
  printf '%s' "$flags" >"$d/compile_flags.json"
  payload 256 "hlo-$i" >"$d/model.hlo_module.pb"
  payload "$size" "neff-$i" >"$d/model.neff"
  : >"$d/model.done"
done

if ((faults)); then
  mk() { mkdir -p "$vdir/$1"; printf '%s' "$flags" >"$vdir/$1/compile_flags.json"; payload 64 "hlo-$1" >"$vdir/$1/model.hlo_module.pb"; }
  mk "MODULE_900001+$suffix"; echo "Failed compilation: out of memory" >"$vdir/MODULE_900001+$suffix/model.log"
  mk "MODULE_900002+$suffix"; : >"$vdir/MODULE_900002+$suffix/model.hlo_module.pb.lock"
  mk "MODULE_900003+$suffix"; payload 100 neff >"$vdir/MODULE_900003+$suffix/model.neff"   # no model.done
  mk "MODULE_900004+$suffix"; : >"$vdir/MODULE_900004+$suffix/model.neff"; : >"$vdir/MODULE_900004+$suffix/model.done"
  mk "MODULE_900005+0badf1a9"; payload 100 neff >"$vdir/MODULE_900005+0badf1a9/model.neff"; : >"$vdir/MODULE_900005+0badf1a9/model.done"
  d0="${dirs[0]:-}"
  if [[ -n "$d0" ]]; then payload 50 partial >"$d0/model.neff.tmp.nc.somehost.4242.abcdef"; fi
  : >"$root/lock"
  mkdir -p "$vdir/MODULE_0123456789abcdef0123/compiled"
  printf '{"model_type": "bert"}' >"$vdir/MODULE_0123456789abcdef0123/config.json"
  payload 2000 traced >"$vdir/MODULE_0123456789abcdef0123/compiled/model.neuron"
  reg="$vdir/0_REGISTRY/0.4.6"
  mkdir -p "$reg/a0f6f2dd0000000000000000000000000000000000000000000000000000de49" "$reg/llama/meta-llama/Llama-3.2-1B"
  printf '{"model_id": "meta-llama/Llama-3.2-1B", "batch_size": 1}' \
    >"$reg/a0f6f2dd0000000000000000000000000000000000000000000000000000de49/2d3e776c01807213e8e2.json"
  ln -s "$reg/a0f6f2dd0000000000000000000000000000000000000000000000000000de49/2d3e776c01807213e8e2.json" \
    "$reg/llama/meta-llama/Llama-3.2-1B/2d3e776c01807213e8e2.json"
fi
