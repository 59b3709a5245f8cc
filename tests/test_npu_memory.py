"""The Ascend memory model without an NPU: the unified buffer, L1 and L0C a config's tiles take
(checked by hand), multibuffer's doubling, the grid limit, and the compiler's own overflow
reports kept and classified."""

import os
import shlex
import subprocess
import sys

import pytest
from optuna.trial import create_trial

from autotuner.backends import compile_verdict, soc_profile
from autotuner.backends.compile_verdict import classify, short
from autotuner.backends.npu import (
    npu_limits,
)
from autotuner.search.settle import retime_candidates
from autotuner.search.space import config_key
from autotuner.search.study import Plan
from core.limits import DeviceLimits
from ops import all_ops, get_op
from ops.spec import cube_bytes, cube_resident

from .conftest import KIB, ROOT

FA = get_op("jagged_dense_flash_attention")
COPY = get_op("jagged_to_padded_dense")
SOFTMAX = get_op("jagged_softmax")


# -- the unified-buffer model --------------------------------------------------------------------


def test_attention_forward_tile_bytes_by_hand():
    fwd = FA.kernel("fwd")
    case = FA.case("b1024_n256_d128_t128_bf16", "performance")  # D=128 -> BLOCK_D=128, bf16
    # BLOCK_T=64, BLOCK_L=32. bf16 tiles: k [128, 64] 16384 B, q [32, 128] 8192 B,
    # v [32, 128] 8192 B, bias [32, 64] 4096 B = 36864 B. fp32: s/p [32, 64] 8192 B,
    # acc [64, 128] 32768 B, m_i and l_i [64] 2 * 256 B = 41472 B. In all 78336 B.
    assert fwd.tile_bytes({"BLOCK_T": 64, "BLOCK_L": 32}, case) == 78336
    # BLOCK_T=128, BLOCK_L=32. bf16: k 32768 + q 8192 + v 8192 + bias 8192 = 57344 B;
    # fp32: s/p 16384 + acc 65536 + m_i, l_i 1024 = 82944 B. In all 140288 B.
    assert fwd.tile_bytes({"BLOCK_T": 128, "BLOCK_L": 32}, case) == 140288


def test_attention_dk_tile_bytes_by_hand():
    dk = FA.kernel("bwd_dk")
    case = FA.case("b2048_n512_d256_t32_bf16", "performance")  # BLOCK_D=256, bf16
    # BLOCK_T=32, BLOCK_L=32. bf16: k [256, 32] 16384 B, do [32, 256] 16384 B, q [32, 256]
    # 16384 B, v [32, 256] 16384 B, bias [32, 32] 2048 B = 67584 B. fp32: lse and delta [32]
    # 256 B, dk [256, 32] 32768 B, s/p [32, 32] 4096 B, dp/ds [32, 32] 4096 B = 41216 B.
    assert dk.tile_bytes({"BLOCK_T": 32, "BLOCK_L": 32}, case) == 108800
    # BLOCK_L=16 halves q, v, bias, s/p and dp/ds: bf16 50176 B + fp32 37120 B.
    assert dk.tile_bytes({"BLOCK_T": 32, "BLOCK_L": 16}, case) == 87296


def test_jagged_to_padded_dense_tile_bytes_by_hand():
    kernel = COPY.kernel("fwd")
    # The one tile is x [BLOCK_ROW, BLOCK_COL] in the values' dtype.
    fp32 = COPY.case("b1024_n1024_d128_fp32", "performance")
    assert kernel.tile_bytes({"BLOCK_ROW": 128, "BLOCK_COL": 128}, fp32) == 128 * 128 * 4
    fp16 = COPY.case("b2048_n256_d64_fp16", "performance")
    assert kernel.tile_bytes({"BLOCK_ROW": 32, "BLOCK_COL": 32}, fp16) == 2048


def plan_on(soc: str, spec, kernel: str, case: str) -> Plan:
    return Plan.make(
        spec, spec.kernel(kernel), spec.case(case, "performance"), soc, soc_profile(soc), 48
    )


def plan_910b(spec, kernel: str, case: str) -> Plan:
    return plan_on("910B", spec, kernel, case)


# What bishengir-compile planned for the 910B (ascendnpu-ir 1.2.0), read from its memory plan by
# `autotune space --compile`: docs/runs/2026-12-01_issue25_ascend_compile_matrix_space.jsonl.


def test_multibuffer_doubles_the_streamed_tiles_of_a_vector_kernel():
    """jagged_to_padded_dense fwd, BLOCK_ROW=32, BLOCK_COL=64, fp16: one 4096 B tile; the compiler
    plans 4096 B of UB, and 8192 B multibuffered."""
    copy = COPY.kernel("fwd")
    case = COPY.case("b2048_n256_d64_fp16", "performance")
    config = {"BLOCK_ROW": 32, "BLOCK_COL": 64}
    for multibuffer, planned in ((False, 4096), (True, 8192)):
        mine = {**config, "multibuffer": multibuffer}
        assert (
            copy.on_chip_violation(mine, case, DeviceLimits(unified_buffer_bytes=planned)) is None
        )
        assert copy.on_chip_violation(
            mine, case, DeviceLimits(unified_buffer_bytes=planned - 1)
        ) == (f"tiles need {planned} B of unified buffer, over {planned - 1} B")
    # A kernel without a loop has nothing to double.
    two = get_op("jagged2_to_padded_dense")
    kernel, small = two.kernel("fwd"), two.case("b1024_n256_fp32", "performance")
    blocks = {"BLOCK_M": 64, "BLOCK_N": 64}
    tight = DeviceLimits(unified_buffer_bytes=kernel.tile_bytes(blocks, small))
    assert kernel.violation({**blocks, "multibuffer": True}, small, tight) is None


def test_dot_operands_and_results_are_counted_where_the_compiler_keeps_them():
    """A bmm forward, 16 x 256 x 256 bf16 multibuffered: the compiler plans no UB at all, L1 for
    both operands twice (278528 B), L0C for the one result once (16384 B): the model's figures.
    Its tiles, as the kernel sees them, are 303104 B: the model rejected it before."""
    bmm = get_op("jagged_dense_bmm")
    fwd, case = bmm.kernel("fwd"), bmm.case("b1024_n256_d128_t128_bf16", "performance")
    config = {"BLOCK_M": 16, "BLOCK_N": 256, "BLOCK_K": 256, "multibuffer": True}
    assert fwd.tile_bytes(config, case) + fwd.stream_bytes(config, case) == 303104
    assert cube_bytes(fwd.dots(config, case), True) == (278528, 16384)
    assert fwd.on_chip_violation(config, case, npu_limits("910B")) is None
    assert fwd.on_chip_violation(config, case, DeviceLimits(l1_bytes=278527)) == (
        "dot operands need 278528 B of L1, over 278527 B"
    )
    # The attention forward, BLOCK_T=128, BLOCK_L=32: q, k and v are loaded for the dots (L1
    # only), p comes from the softmax and the results are read by it. The compiler plans
    # 186112 B of UB (it cuts the vector loop in two, tile_mix_vector_loop=2): the model's
    # 91136 B of tiles besides the cube's is a bound from below; its L1 is the compiler's,
    # 57344 B and 81920 B multibuffered.
    attention = FA.kernel("fwd")
    case = FA.case("b1024_n256_d128_t128_bf16", "performance")
    blocks = {"BLOCK_T": 128, "BLOCK_L": 32}
    assert attention.tile_bytes(blocks, case) - cube_resident(attention.dots(blocks, case)) == 91136
    for multibuffer, l1 in ((False, 57344), (True, 81920)):
        assert cube_bytes(attention.dots(blocks, case), multibuffer)[0] == l1
        mine = {**blocks, "multibuffer": multibuffer}
        assert (
            attention.on_chip_violation(mine, case, DeviceLimits(unified_buffer_bytes=91136))
            is None
        )


def test_the_attention_forward_of_the_issue_fits_a_950pr_multibuffered():
    """BLOCK_T=128, BLOCK_L=32 with multibuffer on a bf16 D=128 case: L1: k 32768 B once, q, p, v
    8192 B each twice: 81920 B; L0C: at least the larger result, pv [128, 128] fp32, 65536 B
    (the compiler gives s its own 16384 B beside it: 81920 B, 256 KiB there)."""
    plan = plan_on("950PR", FA, "fwd", "b1024_n256_d128_t128_bf16")
    config = {"BLOCK_T": 128, "BLOCK_L": 32, "multibuffer": True}
    assert config in plan.feasible
    dots = FA.kernel("fwd").dots(config, plan.case)
    assert cube_bytes(dots, True) == (81920, 65536)
    assert cube_bytes(dots, False) == (32768 + 3 * 8192, 65536)


def test_910b_rejects_tiles_over_its_unified_buffer_with_the_reason():
    assert npu_limits("910B") == DeviceLimits(
        unified_buffer_bytes=192 * KIB,
        l1_bytes=512 * KIB,
        l0c_bytes=128 * KIB,
        max_total_blocks=65535,
        cores=24,
        vector_cores=48,
    )
    # jagged_softmax fwd, fp16 D=64: BLOCK_L=256 x BLOCK_D=64 is over the UB multibuffered and
    # fits the model without (the compiler refuses that too, by 4096 bits: the compile step
    # catches it before any timing).
    plan = plan_910b(SOFTMAX, "fwd", "b2048_n256_d64_fp16")
    kernel, case, limits = plan.kernel, plan.case, npu_limits("910B")
    for config in plan.space.configs():
        streamed = kernel.stream_bytes(config, case) if config["multibuffer"] else 0
        over = kernel.tile_bytes(config, case) + streamed > 192 * KIB
        assert over == (kernel.on_chip_violation(config, case, limits) is not None), config
    wide = {"BLOCK_L": 256, "BLOCK_D": 64, "multibuffer": True, "PROGRAMS": 0}
    assert plan.rejected[config_key(wide)] == "tiles need 197120 B of unified buffer, over 196608 B"
    assert {**wide, "multibuffer": False} in plan.feasible


def test_the_l0c_check_rejects_dot_results_over_it_with_the_reason():
    """The forward's pv [BLOCK_T, BLOCK_D] fp32 result on a D=256 case, BLOCK_T=128: 131072 B,
    beside s [BLOCK_L, BLOCK_T] 8192 B: over the 910B's 128 KiB of L0C? Only the larger result
    must fit (the compiler shares buffers where it has to): 131072 B fits, multibuffered or not
    (L0C is not doubled). BLOCK_T=128 with D=512 would not."""
    fwd = FA.kernel("fwd")
    case = FA.case("b2048_n512_d256_t32_bf16", "performance")
    config = {"BLOCK_T": 128, "BLOCK_L": 16, "multibuffer": True}
    l0c = DeviceLimits(l0c_bytes=npu_limits("910B").l0c_bytes)
    assert fwd.on_chip_violation(config, case, l0c) is None
    assert fwd.on_chip_violation(config, case, DeviceLimits(l0c_bytes=131071)) == (
        "dot results need 131072 B of L0C, over 131071 B"
    )


def test_the_l1_check_counts_operands_loaded_in_the_loop_twice():
    fwd = FA.kernel("fwd")
    case = FA.case("b1024_n256_d128_t128_bf16", "performance")
    config = {"BLOCK_T": 128, "BLOCK_L": 32, "multibuffer": True}
    assert fwd.violation(config, case, DeviceLimits(l1_bytes=81919)) == (
        "dot operands need 81920 B of L1, over 81919 B"
    )
    assert fwd.violation(config, case, DeviceLimits(l1_bytes=81920)) is None
    # Kernels without tl.dot have no L1 or L0C to check.
    assert COPY.kernel("fwd").dots is None


def test_the_cube_buffers_of_every_dot_kernel_are_modelled():
    with_dots = {
        (spec.name, kernel.name)
        for spec in all_ops().values()
        for kernel in spec.kernels
        if kernel.dots is not None
    }
    assert with_dots == {
        ("addmm", "fwd"),
        ("jagged_dense_flash_attention", "fwd"),
        ("jagged_dense_flash_attention", "bwd_dv_db_dq"),
        ("jagged_dense_flash_attention", "bwd_dk"),
        ("jagged_flash_attention_basic", "fwd"),
        ("jagged_flash_attention_basic", "bwd"),
        ("multi_head_jagged_flash_attention", "fwd"),
        ("multi_head_jagged_flash_attention", "bwd"),
        ("jagged_dense_bmm", "fwd"),
        ("jagged_dense_bmm", "bwd_dx"),
        ("jagged_dense_bmm", "bwd_dy"),
        ("jagged_dense_bmm_broadcast_add", "fwd"),
        ("jagged_dense_bmm_broadcast_add", "bwd_dx"),
        ("jagged_dense_bmm_broadcast_add", "bwd_dy_db"),
        ("jagged_jagged_bmm", "fwd"),
        ("jagged_jagged_bmm", "bwd_dx"),
        ("jagged_jagged_bmm", "bwd_dy"),
        ("jagged_jagged_bmm_jagged_out", "fwd"),
        ("jagged_jagged_bmm_jagged_out", "bwd_dx"),
        ("jagged_jagged_bmm_jagged_out", "bwd_dy"),
        ("hstu_attention", "fwd"),
        ("hstu_attention", "bwd"),
        ("hstu_attention", "cached_fwd"),
    }


def test_a_grid_over_65535_blocks_is_rejected():
    plan = plan_910b(COPY, "fwd", "b512_n4096_d128_bf16")  # tiles: ceil(4096 / BLOCK_ROW) x 512
    config = {"BLOCK_ROW": 32, "BLOCK_COL": 64, "multibuffer": True, "PROGRAMS": 0}
    assert plan.rejected[config_key(config)] == "grid of 65536 blocks is over the limit 65535"
    assert {**config, "BLOCK_ROW": 64} in plan.feasible  # 32768 blocks
    # Smaller rows only add blocks: on the classic grid the space stops at 32, kept for
    # upstream's default, which is one block too many, so the launchers' default cannot launch
    # this case on an NPU; a program count launches it, and smaller rows, on 48 vector cores.
    classic = [c for c in plan.feasible if c["PROGRAMS"] == 0]
    assert min(c["BLOCK_ROW"] for c in classic) == 32
    assert plan.default_violation == "grid of 65536 blocks is over the limit 65535"
    limits = npu_limits("910B")
    assert plan.kernel.violation({**config, "BLOCK_ROW": 16}, plan.case, limits) == (
        "grid of 131072 blocks is over the limit 65535"
    )
    persistent = {**config, "BLOCK_ROW": 16, "PROGRAMS": 1}
    assert plan.kernel.launch_grid(persistent, plan.case, limits) == (48,)
    assert persistent in plan.feasible


def test_a_ub_overflow_of_bishengir_is_its_own_failure_category():
    """triton-ascend 3.2 raises the compiler's CalledProcessError as is (triton-ascend issue #302):
    the words are on its stderr only. 1572864 bits are the 910B's 192 KiB."""
    stderr = (
        b'loc("kernel.ttadapter.mlir":2:3): error: ub overflow, requires 3072000 bits while '
        b"1572864 bits available!\nerror: Failed to run BiShengHIR pipeline\n"
    )
    exc = subprocess.CalledProcessError(1, ["bishengir-compile", "kernel.mlir"], b"", stderr)
    assert classify(exc) == "ub_overflow"
    assert short(exc) == (
        'CalledProcessError: loc("kernel.ttadapter.mlir":2:3): error: ub overflow, requires '
        "3072000 bits while 1572864 bits available!"
    )
    other = subprocess.CalledProcessError(1, ["bishengir-compile"], b"", b"error: unsupported op\n")
    assert classify(other) == "compile"
    assert classify(RuntimeError("MLIRCompilationError: error: ub overflow, requires")) == (
        "ub_overflow"
    )
    assert npu_limits("910B").unified_buffer_bytes == 1572864 // 8


@pytest.mark.parametrize(
    ("words", "category"),
    [
        ("cbuf overflow, requires 5242880 bits while 4194304 bits available!", "cbuf_overflow"),
        ("cc overflow, requires 2097152 bits while 1048576 bits available!", "cc_overflow"),
    ],
)
def test_l1_and_l0c_overflows_are_memory_failures_of_their_own(words, category):
    """bishengir-compile's PlanMemory words (Ascend/AscendNPU-IR, PlanMemory.cpp)."""
    stderr = f'loc("kernel.ttadapter.mlir":5:7): error: {words}\n'.encode()
    exc = subprocess.CalledProcessError(1, ["bishengir-compile", "kernel.mlir"], b"", stderr)
    assert classify(exc) == category
    assert short(exc).endswith(f"error: {words}")


#: What bishengir-compile (Ascend/AscendNPU-IR v1.2.0, RetriablePassManager.cpp) writes on stderr
#: when a config overflowed the UB with multibuffer on and fit without it.
FALLBACK = (
    "[NOTE] Ub overflow detected; automatically set enable-code-motion to false and retrying "
    "compilation.\n"
    "[NOTE] Ub overflow detected; automatically set enable-auto-multi-buffer to false and "
    "retrying compilation.\n"
    "[NOTE] Due to Ub overflow, automatically set enable-code-motion to false, set "
    "enable-auto-multi-buffer to false; compilation then succeeded.\n"
)


def test_the_multibuffer_fallback_and_the_ub_used_are_read_from_the_compilers_output():
    assert compile_verdict.multibuffer_fell_back(FALLBACK)
    code_motion_only = FALLBACK.splitlines()[0]
    assert not compile_verdict.multibuffer_fell_back(code_motion_only)
    assert compile_verdict.notes("UB size = 1343488 bits\n" + FALLBACK) == {
        "multibuffer_fallback": True,
        "required_ub_bits": 1343488,
    }
    assert compile_verdict.notes("") == {}


def fake_compiler(folder, stderr: str, stdout: str = "", code: int = 0):
    """A `bishengir-compile` that writes what the real one would and exits with `code`."""
    script = folder / "bishengir-compile"
    script.write_text(
        "#!/usr/bin/env bash\n"
        f"printf '%s' {shlex.quote(stdout)}\n"
        f"printf '%s' {shlex.quote(stderr)} >&2\n"
        f"exit {code}\n"
    )
    script.chmod(0o755)
    return script


def test_the_compiler_log_keeps_what_triton_ascend_discards(tmp_path, monkeypatch):
    """A successful compile's stderr, which triton-ascend 3.2 captures and drops, reaches the
    trial; what triton-ascend itself reads (stdout, the exit status) is unchanged."""
    fake_compiler(tmp_path, FALLBACK, "UB size = 1343488 bits\n")
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("ENABLE_PRINT_UB_BITS", "1")
    code = (
        "import subprocess, shutil\n"
        "from autotuner.backends.compiler_log import compiler_log\n"
        "from autotuner.backends.compile_verdict import notes\n"
        "log = compiler_log()\n"
        "assert compiler_log() is log and shutil.which('bishengir-compile') != '{real}'\n"
        "run = subprocess.run(['bishengir-compile', 'k.mlir'], capture_output=True, text=True)\n"
        "print(run.returncode, repr(run.stdout), run.stderr == {fallback!r})\n"
        "print(notes(log.since_last()), notes(log.since_last()))\n"
    ).format(real=tmp_path / "bishengir-compile", fallback=FALLBACK)
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=60
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == [
        "0 'UB size = 1343488 bits\\n' True",
        "{'multibuffer_fallback': True, 'required_ub_bits': 1343488} {}",
    ]
    failing = tmp_path / "failing"
    failing.mkdir()
    fake_compiler(failing, "error: cc overflow, requires 1 bits while 0 bits available!\n", code=1)
    monkeypatch.setenv("PATH", f"{failing}{os.pathsep}{os.environ['PATH']}")
    result = subprocess.run(
        [sys.executable, "-c", code.split("print(run")[0] + "print(run.returncode, run.stderr)"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=60,
    )
    assert result.stdout.strip() == "1 error: cc overflow, requires 1 bits while 0 bits available!"


def test_a_trial_whose_multibuffer_fell_back_never_wins_as_multibuffered():
    default = {"BLOCK_T": 32, "BLOCK_L": 32, "multibuffer": True}
    fell_back = {"BLOCK_T": 128, "BLOCK_L": 64, "multibuffer": True}
    honest = {"BLOCK_T": 64, "BLOCK_L": 32, "multibuffer": True}
    trials = [
        create_trial(value=1.0, user_attrs={"config": fell_back, "multibuffer_fallback": True}),
        create_trial(value=1.1, user_attrs={"config": honest, "required_ub_bits": 1343488}),
        create_trial(value=1.5, user_attrs={"config": default}),
    ]
    assert [t.user_attrs["config"] for t in retime_candidates(trials, default)] == [honest]
