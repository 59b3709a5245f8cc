"""OpSpec.traffic: every op models every part of every performance case; small cases by hand."""

import pytest

from ops import all_ops

PERFORMANCE = [
    (name, case, part)
    for name, spec in all_ops().items()
    for case in spec.cases("performance")
    for part in spec.parts
]


@pytest.mark.parametrize(
    "name,case,part", PERFORMANCE, ids=[f"{n}-{c.name}-{p}" for n, c, p in PERFORMANCE]
)
def test_every_performance_part_has_a_model(name, case, part):
    moved, flops = all_ops()[name].traffic(case, part)
    assert type(moved) is int and type(flops) is int
    assert moved > 0 and flops >= 0


def test_jagged_to_padded_dense_by_hand():
    spec = all_ops()["jagged_to_padded_dense"]
    # Lengths 1, 6 (truncated to 4) and 0: 5 value rows read, the whole [3, 4, 2] dense written.
    case = spec.make_case({"B": 3, "max_seq_len": 4, "D": 2}, "float16", (1, 6, 0), "accuracy")
    assert spec.traffic(case, "fwd") == ((5 * 2 + 3 * 4 * 2) * 2, 0)


def test_jagged_dense_flash_attention_fwd_by_hand():
    spec = all_ops()["jagged_dense_flash_attention"]
    # Lengths 2 and 5 (truncated to 3): E = 5 rows, each against T = 4 columns of k, D = 2.
    shape = {"B": 2, "max_seq_len": 3, "D": 2, "T": 4}
    case = spec.make_case(shape, "float32", (2, 5), "accuracy")
    qk = 2 * (2 * 4 * 2) + 2 * (3 * 4 * 2)  # 2 flops per multiply-add, per sequence
    pv = qk
    q = v = 5 * 2 * 4
    k = 2 * 2 * 4 * 4
    bias = 5 * 4 * 4  # the valid rows of [B, N, T]
    out = 2 * 4 * 2 * 4
    lse = 2 * 4 * 4
    assert spec.traffic(case, "fwd") == (q + v + k + bias + out + lse, qk + pv)
    assert spec.traffic(case, "fwd")[1] == 160
    moved, flops = spec.traffic(case, "bwd")
    assert flops == 400  # S, dP, dv, dq, dk: 2.5x the forward


def test_jagged_dense_bmm_by_hand():
    spec = all_ops()["jagged_dense_bmm"]
    # Lengths 3 and 6 (truncated to 4): E = 7 rows used of R = 9; D = 3, T = 2, bf16.
    shape = {"B": 2, "max_seq_len": 4, "D": 3, "T": 2}
    case = spec.make_case(shape, "bfloat16", (3, 6), "accuracy")
    x, y, out = 7 * 3 * 2, 2 * 3 * 2 * 2, 9 * 2 * 2
    assert spec.traffic(case, "fwd") == (x + y + out, 2 * 7 * 3 * 2)
    dout, dx, dy = 7 * 2 * 2, 9 * 3 * 2, y
    assert spec.traffic(case, "bwd") == (dout + y + x + dx + dy, 4 * 7 * 3 * 2)


def test_masked_self_attention_by_hand():
    spec = all_ops()["jagged_flash_attention_basic"]
    shape = {"B": 1, "max_seq_len": 4, "D": 2}
    plain = spec.make_case(shape, "float32", (3,), "accuracy")
    masked = spec.make_case(shape, "float32", (3,), "accuracy", use_mask=True)
    # 9 (query, key) pairs in the softmax; 6 with key >= query reach the output.
    assert spec.traffic(plain, "fwd")[1] == 2 * 2 * (9 + 9)
    assert spec.traffic(masked, "fwd")[1] == 2 * 2 * (9 + 6)
    assert spec.traffic(masked, "bwd")[1] == 2 * 2 * (3 * 9 + 2 * 6)
    heads = all_ops()["multi_head_jagged_flash_attention"]
    two = heads.make_case({"B": 1, "H": 2, "max_seq_len": 4, "D": 2}, "float32", (3,), "accuracy")
    assert heads.traffic(two, "fwd") == tuple(2 * x for x in spec.traffic(plain, "fwd"))
