#!/usr/bin/env bash
# Issue 27: `autotune check` on a quiet GPU and beside a second process that keeps it busy
# (benchmarks/gpu_coload.py), with the frozen configs as tuned and made slower
# (benchmarks/slow_configs.py: every BLOCK_* at its smallest; with SLOWER=--neighbour, num_warps
# one step down), on one GPU:
#
#   [SLOWER=--neighbour] benchmarks/check_contention.sh SOC OUT OP [OP ...]
#
# Steps, each one `autotune check --json` per op into OUT/check_<step>_<op>.json (exit codes in
# OUT/exit_codes.txt: 0 ok, 1 regression, 3 contended): quiet, coload, coload_slower,
# quiet_slower. `autotune baseline` first (OUT/baseline.txt). The port files are changed in
# place by the slower steps: run it on a copy of the tree.
set -euo pipefail
soc=$1 out=$2; shift 2
mkdir -p "$out"
export PYTHONUNBUFFERED=1
db="sqlite:///$out/contention.db"
load_pid=
stop_load() { [ -n "$load_pid" ] && kill "$load_pid" 2>/dev/null && wait "$load_pid" || true; load_pid=; }
trap stop_load EXIT
trap 'exit 143' TERM INT

checks() {  # step
  for op in "${ops[@]}"; do
    set +e
    python3 -m autotuner check --op "$op" --soc "$soc" --db "$db" --json \
      > "$out/check_$1_$op.json" 2>> "$out/check_$1.err"
    echo "$1 $op exit $?" | tee -a "$out/exit_codes.txt"
    set -e
  done
}
ops=("$@")
args=(); for op in "${ops[@]}"; do args+=(--op "$op"); done
start=$SECONDS
python3 -m autotuner baseline "${args[@]}" --soc "$soc" --db "$db" > "$out/baseline.txt" 2>&1
echo "baseline: $((SECONDS - start)) s" | tee -a "$out/times.txt"
checks quiet
python3 benchmarks/gpu_coload.py >> "$out/coload.txt" 2>&1 & load_pid=$!
sleep 2
checks coload
echo "coload: $((SECONDS - start)) s" | tee -a "$out/times.txt"
python3 benchmarks/slow_configs.py --soc "$soc" ${SLOWER:-} "${ops[@]}" > "$out/slow_configs.txt"
checks coload_slower
stop_load
echo "coload_slower: $((SECONDS - start)) s" | tee -a "$out/times.txt"
checks quiet_slower
echo "quiet_slower: $((SECONDS - start)) s" | tee -a "$out/times.txt"
