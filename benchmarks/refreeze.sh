#!/usr/bin/env bash
# Issue 13's stable-freeze run: `autotune baseline`, then independent `autotune run --restart` +
# `autotune freeze` rounds of the given ops on one GPU, each round with its own sampler seed. Each
# round's run table says, per (kernel, case), whether the frozen config was kept ("kept: within
# noise of the frozen config") or beaten in the interleaved A/B ("beats the frozen config by X%
# (p=...)"); the files each freeze wrote are kept per round, so that
# `python benchmarks/frozen_changes.py WORK` counts the configs that changed.
#
#   benchmarks/refreeze.sh SOC WORK GPU OP...      # ROUNDS="1 2" (default): the seeds
set -euo pipefail
soc=$1 out=$2 gpu=$3; shift 3
mkdir -p "$out"
export PYTHONUNBUFFERED=1 CUDA_VISIBLE_DEVICES=$gpu
db="sqlite:///$out/refreeze_gpu$gpu.db"
args=(); for op in "$@"; do args+=(--op "$op"); done
snapshot() {  # ROUND: the files freeze rewrites, as they stand now (no frozen_configs file yet: none)
  for op in "$@"; do
    mkdir -p "$out/$round/$op"
    for file in "experimental/triton/atk_test/$op/npu_atk_test/$op.py" \
                "experimental/triton/atk_test/$op/npu_atk_test/${op}_performance.json" \
                "frozen_configs/$soc/$op.json"; do
      if [ -f "$file" ]; then cp "$file" "$out/$round/$op/"; fi
    done
  done
}
round=before snapshot "$@"
python3 -m autotuner baseline "${args[@]}" --soc "$soc" --db "$db" > "$out/baseline_gpu$gpu.txt" 2>&1
for round in ${ROUNDS:-1 2}; do
  for op in "$@"; do
    python3 -m autotuner run --op "$op" --soc "$soc" --db "$db" --restart --seed "$round" \
      > "$out/run${round}_$op.txt" 2>&1 || echo "run $round $op: exit $?" >> "$out/errors.txt"
    python3 -m autotuner freeze --op "$op" --soc "$soc" --db "$db" --force \
      > "$out/freeze${round}_$op.txt" 2>&1 || echo "freeze $round $op: exit $?" >> "$out/errors.txt"
  done
  snapshot "$@"
done
