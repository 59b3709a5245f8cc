#!/usr/bin/env bash
# The M1 campaign on a two-GPU machine, in three steps (each well inside a 10-minute call):
#
#   benchmarks/campaign.sh SOC WORK search  # issue 3's benchmark: attention fwd on GPU 0,
#                                           # attention bwd_dk on GPU 1, all performance cases
#   benchmarks/campaign.sh SOC WORK tune    # jagged_to_padded_dense's benchmark, then
#                                           # dense_to_jagged, on GPU 0; the attention's other
#                                           # kernels on GPU 1 (`autotune run --trials 25%`)
#   benchmarks/campaign.sh SOC WORK freeze  # baselines, freeze (label M1), baselines of the
#                                           # frozen configs and show on GPU 0, while GPU 1
#                                           # verifies every op with the frozen configs
#
#   benchmarks/campaign.sh SOC WORK ops OP...  # more ops, alternately on GPU 0 and 1: verify
#                                           # (VERIFY=0 skips it), tune while time lasts, freeze M1
#   benchmarks/campaign.sh SOC WORK report OP...  # alternately on GPU 0 and 1: baselines (upstream,
#                                           # default, frozen), verify on the performance cases;
#                                           # then the roofline of every baseline in the database
#
# All steps share WORK/campaign.db: the benchmark's search phase is the campaign's `autotune run
# --trials 25%` (same seed, same budget), so the later runs resume it instead of repeating it.
# WORK keeps logs, benchmark rows and the database; step "freeze" also packs the files it rewrote.
set -euo pipefail
soc=$1 out=$2 step=$3
mkdir -p "$out"
db="sqlite:///$out/campaign.db"
export AUTOTUNE_DB=$db AUTOTUNE_COMPILE_WORKERS=${AUTOTUNE_COMPILE_WORKERS:-6} PYTHONUNBUFFERED=1
benchmark() {  # GPU, lane name, target
  CUDA_VISIBLE_DEVICES=$1 python3 benchmarks/search_benchmark.py --soc "$soc" --out "$out/$2" \
    --search-db "$db" --autotune-parallel 4 --target "$3" > "$out/$2.log" 2>&1
}
tune() {  # GPU, op
  CUDA_VISIBLE_DEVICES=$1 python3 -m autotuner run --op "$2" --soc "$soc" --trials 25% --quiet
}
ops=(jagged_dense_flash_attention jagged_to_padded_dense dense_to_jagged)
if [ "$step" = ops ] || [ "$step" = report ]; then ops=("${@:4}"); fi
even=(); odd=(); for i in "${!ops[@]}"; do  # the two GPUs' lanes
  if (( i % 2 )); then odd+=("${ops[$i]}"); else even+=("${ops[$i]}"); fi
done
even_args=(); for op in "${even[@]}"; do even_args+=(--op "$op"); done
odd_args=(); for op in "${odd[@]}"; do odd_args+=(--op "$op"); done
op_args=(); for op in "${ops[@]}"; do op_args+=(--op "$op"); done
case $step in
  search)
    benchmark 0 fwd jagged_dense_flash_attention:fwd &
    benchmark 1 bwd_dk jagged_dense_flash_attention:bwd_dk &
    wait
    ;;
  tune)
    { benchmark 0 copy jagged_to_padded_dense:fwd
      tune 0 jagged_to_padded_dense  # resumes: the benchmark's search phase tuned it
      tune 0 dense_to_jagged; } > "$out/tune0.log" 2>&1 &
    tune 1 jagged_dense_flash_attention > "$out/tune1.log" 2>&1 &
    wait
    ;;
  freeze)
    {
      CUDA_VISIBLE_DEVICES=0 python3 -m autotuner baseline "${op_args[@]}" --soc "$soc"
      for op in "${ops[@]}"; do python3 -m autotuner freeze --op "$op" --soc "$soc" --label M1; done
    } > "$out/freeze.log" 2>&1
    { CUDA_VISIBLE_DEVICES=0 python3 -m autotuner baseline "${op_args[@]}" --soc "$soc"
      for op in "${ops[@]}"; do python3 -m autotuner show --op "$op" --soc "$soc"; done
      python3 -m autotuner status; } > "$out/show.log" 2>&1 &
    CUDA_VISIBLE_DEVICES=1 python3 -m autotuner verify --all --soc "$soc" > "$out/verify.log" 2>&1 &
    wait
    tar -czf "$out/frozen_files.tar.gz" frozen_configs experimental/triton/atk_test/*/npu_atk_test
    ;;
  ops)
    # Bounded by the clock: verify each lane's ops on their performance cases, then tune them
    # (TRIALS per study, default 10) until TUNE_UNTIL seconds; then freeze what has verdicts.
    begin=$SECONDS
    lane() {  # GPU, ops of this lane
      local gpu=$1; shift
      local args=(); for op in "$@"; do args+=(--op "$op"); done
      if [ "${VERIFY:-1}" = 1 ]; then
        CUDA_VISIBLE_DEVICES=$gpu python3 -m autotuner verify "${args[@]}" --soc "$soc" --cases performance
      fi
      for op in "$@"; do
        local left=$(( ${TUNE_UNTIL:-300} - (SECONDS - begin) ))
        if (( left < 20 )); then echo "not tuned (time): $op"; continue; fi
        CUDA_VISIBLE_DEVICES=$gpu timeout -s INT "$left" python3 -m autotuner run --op "$op" \
          --soc "$soc" --trials "${TRIALS:-10}" --quiet || echo "tuning of $op stopped"
      done
    }
    lane 0 "${even[@]}" > "$out/ops0.log" 2>&1 &
    lane 1 "${odd[@]}" > "$out/ops1.log" 2>&1 &
    wait
    for op in "${ops[@]}"; do
      python3 -m autotuner freeze --op "$op" --soc "$soc" --label M1 || echo "not frozen: $op"
    done > "$out/ops_freeze.log" 2>&1
    tar -czf "$out/frozen_files.tar.gz" frozen_configs experimental/triton/atk_test/*/npu_atk_test
    ;;
  report)
    report() {  # GPU, --op arguments
      local gpu=$1; shift
      CUDA_VISIBLE_DEVICES=$gpu python3 -m autotuner baseline "$@" --soc "$soc"
      CUDA_VISIBLE_DEVICES=$gpu python3 -m autotuner verify "$@" --soc "$soc" --cases performance
    }
    report 0 "${even_args[@]}" > "$out/report0.log" 2>&1 &
    report 1 "${odd_args[@]}" > "$out/report1.log" 2>&1 &
    wait
    CUDA_VISIBLE_DEVICES=0 python3 benchmarks/roofline.py --soc "$soc" --db "$db" > "$out/roofline.md" 2>&1
    ;;
  *) echo "step must be search, tune, freeze, ops or report" >&2; exit 2 ;;
esac
