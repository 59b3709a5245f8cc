#!/usr/bin/env bash
# benchmarks/search_benchmark.py for one kernel of every op family, one performance case each
# (the case of the smallest feasible space on an H200), at 12% of the space:
#
#   benchmarks/search_families.sh SOC OUT [search_benchmark.py options...]
#
# The kernels are spread over the GPUs the machine has (largest spaces first, each to the lane
# with the fewest configs so far); each lane runs its kernels one after another, smallest first,
# on its own GPU with its share of the cores as compile workers, all within LANE_S seconds
# (default 340; a kernel is stopped when they run out), so that the call ends inside its limit
# and what finished is kept: OUT/<op>-<kernel>/ holds each
# kernel's search_benchmark.jsonl and log, OUT/report.md their tables. MIN_CONFIGS and
# MAX_CONFIGS keep only the kernels of that many feasible configs (an exhaustive run of the
# largest spaces takes a call of its own). recsys-examples' ops need AUTOTUNE_RECSYS_EXAMPLES
# (upstream's autotune lists are warm starts there).
set -uo pipefail
soc=$1 out=$2; shift 2
mkdir -p "$out"
export PYTHONUNBUFFERED=1
# op:kernel case feasible-configs-on-an-H200 (the family in the comment)
targets=(
  "concat_2d_jagged:fwd b1024_n2048_d256_p0_fp32 3336"            # concat/split
  "addmm:fwd n131072_d1024_t256_fp32 1842"                          # addmm
  "jagged2_softmax:fwd b2048_n256_dim1_fp16 784"                    # softmax
  "jagged_dense_bmm_broadcast_add:fwd b256_n4096_d128_t256_fp32 722" # jagged broadcast/bmm
  "jagged_jagged_bmm:fwd b512_n1024_d64_t256_fp32 576"              # bmm
  "group_norm_mul_dropout:bwd_dx n131072_h8_d128_bf16 325"          # norm_mul_dropout
  "layer_norm:fwd n131072_d1024_bf16 300"                           # norm
  "jagged2_to_padded_dense:fwd b2048_n128_fp16 128"                 # FBGEMM jagged copy
  "jagged_flash_attention_basic:bwd b2048_n256_d256_bf16 84"        # attention
)
gpus=$(nvidia-smi -L 2>/dev/null | wc -l); gpus=$(( gpus > 0 ? gpus : 1 ))
workers=$(( $(nproc) / gpus - 2 )); workers=$(( workers > 1 ? workers : 1 ))
declare -a lanes load
for ((g = 0; g < gpus; g++)); do lanes[g]=""; load[g]=0; done
for t in "${targets[@]}"; do
  read -r _ _ size <<< "$t"
  (( size >= ${MIN_CONFIGS:-0} && size <= ${MAX_CONFIGS:-1000000} )) || continue
  best=0; for ((g = 1; g < gpus; g++)); do (( load[g] < load[best] )) && best=$g; done
  lanes[best]+="$t;"; load[best]=$(( load[best] + size ))
done
for ((g = 0; g < gpus; g++)); do
  (
    [ -n "${lanes[g]}" ] || exit 0
    IFS=';' read -ra mine <<< "${lanes[g]}"
    for ((i = ${#mine[@]} - 1; i >= 0; i--)); do
      read -r target case _ <<< "${mine[i]}"
      dir="$out/${target/:/-}"; mkdir -p "$dir"
      left=$(( ${LANE_S:-340} - SECONDS ))
      if (( left < 20 )); then echo "not run: the lane's LANE_S was spent" > "$dir/log.txt"; continue; fi
      CUDA_VISIBLE_DEVICES=$g AUTOTUNE_COMPILE_WORKERS=$workers timeout "$left" \
        python3 benchmarks/search_benchmark.py --soc "$soc" --out "$dir" --fraction 0.12 \
        --target "$target" --case "$case" "$@" > "$dir/log.txt" 2>&1
      echo "rc=$? gpu=$g" >> "$dir/log.txt"
      rm -rf "$dir"/triton-cache-*  # compiled binaries: large, and not results
    done
  ) &
done
wait
python3 benchmarks/search_benchmark.py --report "$out"/*/search_benchmark.jsonl > "$out/report.md" 2>&1
