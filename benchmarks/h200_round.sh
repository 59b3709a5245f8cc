#!/usr/bin/env bash
# An op round on a single GPU in steps, each a part of one device call (issue 29's ops):
#
#   benchmarks/h200_round.sh SOC OUT verify OP...    # verify each op against upstream
#   benchmarks/h200_round.sh SOC OUT tune OP...      # autotune run --trials TRIALS (8), then
#                                                   # freeze as LABEL (M1; M2 for issue 27's
#                                                   # round; --force: an unsettled study is
#                                                   # named, not frozen)
#   benchmarks/h200_round.sh SOC OUT baseline OP...  # upstream, the port's default and frozen
#                                                   # configs interleaved; then the report
#
# For `tune`, an argument may carry `autotune run` options after the op, quoted as one word:
# "layer_norm_mul_dropout --case n262144_d512_fp16 --case n131072_d1024_bf16" tunes only those cases.
# "jagged_jagged_bmm --stale" tunes only the pairs whose frozen config is stale (a round's re-tune).
#
# Each command has a timeout (seconds: VERIFY_S, TUNE_S per op, BASELINE_S) so that the call ends
# inside its limit; every log goes to OUT, and `tune` packs the files freeze rewrote into
# OUT/frozen.tgz. The database is AUTOTUNE_DB's.
#
# Every number records the project commit (`project_commit`). On a copy of the tree whose .git
# lags behind it (a device machine's), HEAD names an older commit: there, set
# AUTOTUNE_PROJECT_COMMIT to the commit of the tree you sent; a tree that differs from its HEAD
# without it is refused.
set -uo pipefail
soc=$1 out=$2 step=$3; shift 3
if [ -z "${AUTOTUNE_PROJECT_COMMIT:-}" ] && [ -n "$(git status --porcelain --untracked-files=no 2>/dev/null)" ]; then
  echo "h200_round.sh: the tree differs from HEAD $(git rev-parse --short HEAD 2>/dev/null); set AUTOTUNE_PROJECT_COMMIT to the commit it is, or commit first" >&2
  exit 2
fi
mkdir -p "$out"
export PYTHONUNBUFFERED=1
ops=(); for op in "$@"; do ops+=(--op "$op"); done
case $step in
  verify)
    for op in "$@"; do
      timeout "${VERIFY_S:-150}" python3 -m autotuner verify --op "$op" --soc "$soc" > "$out/verify_$op.txt" 2>&1
      echo "rc=$?" >> "$out/verify_$op.txt"
    done
    ;;
  tune)
    for words in "$@"; do
      read -r op options <<< "$words"
      # shellcheck disable=SC2086 # the options are words on purpose
      timeout "${TUNE_S:-120}" python3 -m autotuner run --op "$op" $options --soc "$soc" --trials "${TRIALS:-8}" --quiet >> "$out/tune_$op.txt" 2>&1
      echo "rc=$?" >> "$out/tune_$op.txt"
      python3 -m autotuner freeze --op "$op" --soc "$soc" --label "${LABEL:-M1}" --force >> "$out/tune_$op.txt" 2>&1
    done
    tar czf "$out/frozen.tgz" experimental/triton/atk_test frozen_configs
    ;;
  baseline)
    timeout "${BASELINE_S:-200}" python3 -m autotuner baseline "${ops[@]}" --soc "$soc" > "$out/baseline.txt" 2>&1
    echo "rc=$?" >> "$out/baseline.txt"
    python3 -m autotuner report --soc "$soc" "${ops[@]}" >> "$out/baseline.txt" 2>&1
    ;;
  *) echo "unknown step $step" >&2; exit 2 ;;
esac
