"""The ATK folders' Python files import without ATK and do what they say."""

import importlib.util
import json
import sys

import pytest
import torch

from core.paths import atk_dir
from ops import all_ops


def load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("op", list(all_ops()))
@pytest.mark.parametrize("side", ["npu_atk_test", "gpu_atk_test"])
def test_api_runs_without_atk(op, side, cpu, monkeypatch):
    if (
        side == "gpu_atk_test"
        and op != "jagged_dense_flash_attention"
        and not torch.cuda.is_available()
    ):
        pytest.skip("upstream's copy-op wrappers allocate on 'cuda'; this machine has no GPU")
    spec = all_ops()[op]
    if side == "gpu_atk_test" and spec.upstream.missing():
        pytest.skip(spec.upstream.missing())
    folder = atk_dir(op) / side
    monkeypatch.setattr(sys, "path", list(sys.path))
    # The API imports its kernel and support files by their bare names.
    for name in (op, f"{op}_support"):
        sys.modules.pop(name, None)
    api = load(folder / f"{op}_api.py", f"_atk_api_{side}_{op}")
    support = sys.modules.pop(f"{op}_support")  # each side has its own (ATK runs them apart)
    assert not support.ATK_AVAILABLE
    generator = load(atk_dir(op) / "npu_atk_test" / f"generate_{op}.py", f"_atk_gen_{op}")
    cases = generator.cases()
    assert [c["name"] for c in cases] == [c.name for c in spec.cases("accuracy")]
    case = next(
        c
        for c in spec.cases("accuracy")
        if c.dtype == "float32"
        and (side == "npu_atk_test" or len(spec.upstream_outputs(c)) == len(spec.output_names))
    )
    args = generator.generate(case.name)
    cls = next(
        v for v in vars(api).values() if isinstance(v, type) and getattr(v, "atk_name", None) == op
    )
    outputs = cls(None)(support.InputDataset(args))
    outputs = outputs if isinstance(outputs, tuple) else (outputs,)
    golden = spec.reference(dict(zip(spec.input_names, args, strict=True)))
    inputs = dict(zip(spec.input_names, args, strict=True))
    for name, value in zip(spec.output_names, outputs, strict=True):
        want = spec.comparable(name, golden[name], inputs)
        assert torch.allclose(
            spec.comparable(name, value, inputs).double(), want, rtol=1e-4, atol=1e-5
        ), (side, name)
    for name in (op, f"{op}_support"):
        sys.modules.pop(name, None)


@pytest.mark.parametrize(
    "op", ["jagged2_softmax", "jagged2_to_padded_dense", "jagged_dense_elementwise_mul_jagged_out"]
)
def test_jagged2_performance_json_counts_the_rows_of_its_square_blocks(op):
    spec = all_ops()[op]
    document = json.loads((atk_dir(op) / "npu_atk_test" / f"{op}_performance.json").read_text())
    for entry, case in zip(document["cases"], spec.cases("performance"), strict=True):
        assert entry["total_rows"] == sum(n * n for n in case.lengths) > sum(case.lengths)
