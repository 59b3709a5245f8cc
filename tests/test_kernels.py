"""Every kernel of every op under the interpreter, alone, against the float64 golden, at small and
large tiles. The whole op at its defaults against the golden, every accuracy case and dtype, is
`autotune verify --all` (tests/test_cli.py, and under triton-ascend tests/test_triton_ascend.py)."""

import pytest
import torch

from ops import all_ops

OPS = all_ops()
# Small, default and large tiles: blocks larger and smaller than T, max_seq_len and D.
VARIANTS = {
    "BLOCK_T": (16, 64),
    "BLOCK_L": (16, 64),
    "BLOCK_D": (16, 64),
    "BLOCK_ROW": (1, 64),
    "BLOCK_COL": (16, 64),
}


#: Ops whose sequences max_seq_len bounds, as upstream requires (its grid has max_seq_len rows per
#: sequence and leaves longer ones unwritten): no case has a longer one.
BOUNDED_BY_MAX_SEQ_LEN = {"concat_2d_jagged", "split_2d_jagged", "hstu_attention"}
#: HSTU's attention is timed at HSTU's batch sizes, from 32 sequences (issue 49: B 32-256).
SMALL_BATCHES = {"hstu_attention"}


def configs(kernel, case):
    """The default's small- and large-tile variants, each distinct config once, the default left
    out: every kernel at its default on every accuracy case and dtype is `autotune verify --all`'s
    (tests/test_cli.py). A kernel without these tunables (the norms' row kernels) has none."""
    default = kernel.default(case)
    variants = [
        {k: VARIANTS[k][i] if k in VARIANTS else v for k, v in default.items()} for i in range(2)
    ]
    seen = [default]
    for config in variants:
        if config not in seen:
            seen.append(config)
            yield config


def relative_error(actual, golden):
    return float((actual.double() - golden).norm() / golden.norm().clamp_min(1e-30))


def edge_cases(spec, dtype):
    return [c for c in spec.cases("accuracy") if c.dtype == dtype]


def test_accuracy_cases_cover_the_edges():
    for spec in OPS.values():
        cases = spec.cases("accuracy")
        assert {c.dtype for c in cases} == {"float32", "float16", "bfloat16"}
        if "N" in spec.shape_keys:  # dense rows: one row, none, D not a power of two
            assert {1, 0} <= {c.shape["N"] for c in cases}, spec.name
            assert any(c.shape["D"] & (c.shape["D"] - 1) for c in cases), spec.name
            continue
        assert any(c.shape["B"] == 1 for c in cases), spec.name
        assert any(0 in c.lengths for c in cases), spec.name
        if spec.name in BOUNDED_BY_MAX_SEQ_LEN:
            assert all(max(c.lengths) <= c.shape["max_seq_len"] for c in cases), spec.name
            continue
        assert any(max(c.lengths) > c.shape["max_seq_len"] for c in cases), spec.name


def varied(spec) -> bool:
    """Whether any kernel of the op has a tile variant on any accuracy case (the tl.dot ops'
    BLOCK_M/N/K and the row kernels have none: their test is verify's, at the default)."""
    return any(list(configs(k, c)) for c in spec.cases("accuracy") for k in spec.kernels)


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
@pytest.mark.parametrize("op", [name for name, spec in OPS.items() if varied(spec)])
def test_each_kernel_alone(op, dtype, cpu):
    spec = OPS[op]
    for case in edge_cases(spec, dtype):
        inputs = spec.make_inputs(case, cpu.device)
        golden = spec.reference(inputs)
        for kernel in spec.kernels:
            kernel_inputs = spec.kernel_inputs(kernel.name, inputs, golden)
            for config in configs(kernel, case):
                outputs = spec.launch(kernel.name, kernel_inputs, config)
                assert set(outputs) == set(kernel.outputs)
                for name, value in outputs.items():
                    want = spec.comparable(name, golden[name], inputs)
                    have = spec.comparable(name, value, inputs)
                    assert torch.isfinite(have).all(), (case.name, kernel.name, config, name)
                    error = relative_error(have, want)
                    assert error <= spec.tolerance[dtype], (
                        case.name,
                        kernel.name,
                        config,
                        name,
                        error,
                    )


def test_copies_are_exact_and_write_every_element(cpu):
    for op in ("jagged_to_padded_dense", "dense_to_jagged"):
        spec = OPS[op]
        for case in spec.cases("accuracy"):
            inputs = spec.make_inputs(case, cpu.device)
            ((name, value),) = spec.run_port(inputs).items()
            assert torch.equal(value.double(), spec.reference(inputs)[name]), case.name


def test_flash_attention_edge_semantics(cpu):
    """Empty sequences give zero output and dk; rows past max_seq_len get zero dq and dv."""
    spec = OPS["jagged_dense_flash_attention"]
    case = spec.case("b4_n16_d32_t20_fp32")
    assert case.lengths == (0, 5, 16, 23)
    inputs = spec.make_inputs(case, cpu.device)
    out = spec.run_port(inputs)
    assert torch.count_nonzero(out["out"][0]) == 0 and torch.count_nonzero(out["dk"][0]) == 0
    truncated = slice(int(inputs["offsets"][3]) + 16, int(inputs["offsets"][4]))
    assert (
        torch.count_nonzero(out["dq"][truncated]) == 0
        and torch.count_nonzero(out["dv"][truncated]) == 0
    )
    assert torch.count_nonzero(out["dbias"][0]) == 0  # no rows at all
    assert torch.count_nonzero(out["dbias"][1, 5:]) == 0  # rows past the sequence


def test_port_defaults_are_the_upstream_defaults(cpu):
    from ops.ports import load_port

    for spec in OPS.values():
        port = load_port(spec.name)
        for kind in ("accuracy", "performance"):
            for case in spec.cases(kind):
                for kernel in spec.kernels:
                    assert port.default_config(kernel.name, case.shape) == kernel.default(case)


def test_performance_cases_are_recommendation_sized():
    for spec in OPS.values():
        for case in spec.cases("performance"):
            if "N" in case.shape:  # dense rows at HSTU sizes (H heads of D each: rows of H x D)
                width = case.shape.get("H", 1) * case.shape["D"]
                assert 10**5 <= case.shape["N"] <= 2**20 and 256 <= width <= 1024
                continue
            if "D" in case.shape:  # rows of D features
                least = 32 if spec.name in SMALL_BATCHES else 128
                assert least <= case.shape["B"] <= 2048 and 256 <= case.shape["max_seq_len"] <= 4096
                assert 64 <= case.shape["D"] <= 1024  # FBGEMM's 64-256, HSTU's embeddings to 1024
            else:  # jagged2 ops: an L x L block per sequence, so fewer and shorter sequences
                assert 128 <= case.shape["B"] <= 2048 and 128 <= case.shape["max_seq_len"] <= 4096
                assert case.shape["B"] * case.shape["max_seq_len"] ** 2 >= 2**24
            if "T" in case.shape:
                assert 32 <= case.shape["T"] <= 512
            assert len(case.lengths) == case.shape["B"]
