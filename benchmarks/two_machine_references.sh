#!/usr/bin/env bash
# Issue 52 on one GPU host: the migration RFC's two-machine accuracy flow, with the Triton
# interpreter (`--soc cpu`) in the NPU's place.
#
#   benchmarks/two_machine_references.sh SOC OUT
#
# 1. save:   autotune verify --all --soc SOC --cases accuracy --save-references OUT/references
#            (the GPU's own verdicts too; upstream's outputs of every op's accuracy cases saved)
# 2. folder: autotune verify --all --soc cpu --references OUT/references
# 3. server: autotune reference-server --soc SOC on loopback (a token required), and
#            autotune verify --all --soc cpu --references http://127.0.0.1:PORT
# Raw output of each step goes to OUT (save.txt, from_folder.txt, server.txt, from_server.txt),
# the set's size and file count to OUT/set_size.txt, the steps' seconds to OUT/times.txt. JOBS
# (default: the CPU cores) processes in all; each step has a timeout (SAVE_S, FOLDER_S,
# SERVER_S seconds; FOLDER_S=0 leaves the folder step to the other machine) so that the whole
# fits one 10-minute call. The databases are OUT's own. OPS (space-separated op names) narrows
# every step to those ops (default: every op), SERVER_OPS the server step alone.
# The save runs an op at a time in SAVE_PARALLEL (4) verifies of JOBS/SAVE_PARALLEL processes
# each, the longest ops first, so a save cut by its timeout keeps every op it finished (a whole
# catalogue's verify on a cold H200 took over 290 s, 2026-12-04).
#
# Every number records the project commit (`project_commit`): on a copy of the tree whose .git
# lags behind it, set AUTOTUNE_PROJECT_COMMIT to the commit of the tree you sent.
set -uo pipefail
soc=$1 out=$2
if [ -z "${AUTOTUNE_PROJECT_COMMIT:-}" ] && [ -n "$(git status --porcelain --untracked-files=no 2>/dev/null)" ]; then
  echo "two_machine_references.sh: the tree differs from HEAD $(git rev-parse --short HEAD 2>/dev/null); set AUTOTUNE_PROJECT_COMMIT to the commit it is, or commit first" >&2
  exit 2
fi
mkdir -p "$out"
export PYTHONUNBUFFERED=1 COLUMNS=250
export AUTOTUNE_RECSYS_EXAMPLES=${AUTOTUNE_RECSYS_EXAMPLES:-$PWD/.upstream/recsys-examples}
jobs=${JOBS:-$(nproc)}
ops=${OPS:-$(python3 -c 'from ops import all_ops; print(" ".join(all_ops()))')}
which=(); for op in $ops; do which+=(--op "$op"); done
serving=(); for op in ${SERVER_OPS:-$ops}; do serving+=(--op "$op"); done
parallel=${SAVE_PARALLEL:-4}
set_dir=$out/references
port=${PORT:-8765}
AUTOTUNE_REFERENCE_TOKEN=$(python3 -c 'import secrets; print(secrets.token_hex(16))')
export AUTOTUNE_REFERENCE_TOKEN

step() {  # name, timeout, command...: its output to OUT/name.txt (and here), rc and seconds after
  local name=$1 limit=$2; shift 2
  local start=$SECONDS
  timeout "$limit" "$@" 2>&1 | tee "$out/$name.txt"
  local rc=${PIPESTATUS[0]}
  echo "rc=$rc" >> "$out/$name.txt"
  echo "$name: rc=$rc, $((SECONDS - start)) s" | tee -a "$out/times.txt"
}

save_one() {  # op: its accuracy cases verified on SOC, upstream's outputs added to the set
  python3 -m autotuner verify --op "$1" --soc "$soc" --cases accuracy --jobs "$((jobs / parallel))" \
    --db "sqlite:///$out/gpu_$1.db" --save-references "$set_dir" > "$out/save_$1.txt" 2>&1
  echo "rc=$?" >> "$out/save_$1.txt"
}
export -f save_one; export soc out jobs parallel set_dir
longest_first=$(python3 -c "
import sys; from ops import all_ops
print(' '.join(sorted(sys.argv[1:], key=lambda op: -len(all_ops()[op].cases('accuracy')))))" $ops)
step save "${SAVE_S:-300}" bash -c "printf '%s\n' $longest_first | xargs -P $parallel -I{} bash -c 'save_one {}'"
for op in $longest_first; do cat "$out/save_$op.txt" 2>/dev/null; done > "$out/save.txt"
{ du -sh "$set_dir"; echo "files: $(find "$set_dir" -name '*.npy' | wc -l)";
  du -sh "$set_dir"/*; } > "$out/set_size.txt" 2>&1

[ "${FOLDER_S:-80}" != 0 ] && step from_folder "${FOLDER_S:-80}" python3 -m autotuner verify \
  "${which[@]}" --soc cpu --jobs "$jobs" --db "sqlite:///$out/cpu_folder.db" --references "$set_dir"

python3 -m autotuner reference-server --soc "$soc" --port "$port" > "$out/server.txt" 2>&1 &
server=$!
trap 'kill "$server" 2>/dev/null || true' EXIT
for _ in $(seq 120); do  # up when it answers (torch and the device take a few seconds)
  python3 -c "import urllib.request; urllib.request.urlopen('http://127.0.0.1:$port/', timeout=1)" \
    2>/dev/null && break
  sleep 0.5
done
step from_server "${SERVER_S:-150}" python3 -m autotuner verify "${serving[@]}" --soc cpu \
  --jobs "$jobs" --db "sqlite:///$out/cpu_server.db" --references "http://127.0.0.1:$port"
# The server refuses a client without the token, in one line.
AUTOTUNE_REFERENCE_TOKEN=wrong step wrong_token 40 python3 -m autotuner verify \
  --op jagged_softmax --soc cpu --db "sqlite:///$out/cpu_refused.db" \
  --references "http://127.0.0.1:$port"
kill "$server" 2>/dev/null || true
