#!/usr/bin/env bash
# Issue 13's repeatability and sensitivity runs of `autotune check` on a two-GPU machine: each GPU
# takes half the ops (a lane), in steps that each fit a 10-minute call.
#
#   benchmarks/check_repeatability.sh SOC WORK baseline     # per lane: `autotune baseline`, then
#                                                            # one `autotune check` on a quiet host
#   benchmarks/check_repeatability.sh SOC WORK loaded       # per lane: checks with LOAD busy
#                                                            # processes per CPU core beside them,
#                                                            # one per number in CHECKS (default
#                                                            # "1 2": loaded1, loaded2)
#   benchmarks/check_repeatability.sh SOC WORK sensitivity  # frozen configs swapped for slower ones
#                                                            # (benchmarks/slow_configs.py), then checks
#
# WORK keeps the lanes' databases (carry it between calls), the logs and each check's JSON.
set -euo pipefail
soc=$1 out=$2 step=$3
mkdir -p "$out"
export PYTHONUNBUFFERED=1
lane0=(jagged_dense_flash_attention jagged_dense_bmm jagged2_softmax dense_to_jagged
       jagged_dense_elementwise_add jagged2_to_padded_dense)
lane1=(multi_head_jagged_flash_attention jagged_flash_attention_basic jagged_jagged_bmm
       jagged_softmax jagged_to_padded_dense jagged_dense_elementwise_mul_jagged_out)
sensitive=(jagged_dense_elementwise_add jagged_to_padded_dense jagged_dense_bmm)

checks() {  # GPU, db, tag, ops...: one `autotune check --json` per op (exit 1 = a regression)
  local gpu=$1 db=$2 tag=$3; shift 3
  for op in "$@"; do
    CUDA_VISIBLE_DEVICES=$gpu python3 -m autotuner check --op "$op" --soc "$soc" --db "$db" \
      --json > "$out/check_${tag}_$op.json" 2>> "$out/check_${tag}.err" || true
  done
}

lane() {  # GPU, ops...
  local gpu=$1; shift
  local db="sqlite:///$out/lane$gpu.db" args=()
  for op in "$@"; do args+=(--op "$op"); done
  case $step in
    baseline)
      CUDA_VISIBLE_DEVICES=$gpu python3 -m autotuner baseline "${args[@]}" --soc "$soc" --db "$db" \
        > "$out/baseline_lane$gpu.txt" 2>&1
      checks "$gpu" "$db" quiet "$@" ;;
    loaded)
      for n in ${CHECKS:-1 2}; do checks "$gpu" "$db" "loaded$n" "$@"; done ;;
    sensitivity)
      local mine=()
      for op in "$@"; do [[ " ${sensitive[*]} " == *" $op "* ]] && mine+=("$op"); done
      [ ${#mine[@]} -gt 0 ] && checks "$gpu" "$db" slower "${mine[@]}" ;;
  esac
}

load_pids=()
stop_load() { for pid in "${load_pids[@]}"; do kill "$pid" 2>/dev/null || true; done; }
trap stop_load EXIT  # also when a `timeout` stops this script: no busy process outlives it
trap 'exit 143' TERM INT
if [ "$step" = loaded ]; then  # LOAD busy processes per core, for the checks' whole duration
  for _ in $(seq $(( ${LOAD:-2} * $(nproc) ))); do
    python3 -c 'while True: pass' & load_pids+=($!)
  done
  echo "load: ${#load_pids[@]} busy processes on $(nproc) cores" | tee "$out/load.txt"
fi
if [ "$step" = sensitivity ]; then
  python3 benchmarks/slow_configs.py --soc "$soc" "${sensitive[@]}" | tee "$out/slow_configs.txt"
fi
start=$SECONDS
lane 0 "${lane0[@]}" & first=$!
lane 1 "${lane1[@]}" & second=$!
wait "$first" "$second" || true
echo "$step: $((SECONDS - start)) s" | tee -a "$out/times.txt"
