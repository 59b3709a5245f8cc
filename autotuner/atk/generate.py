"""What the ATK generator scripts (`generate_<op>.py`) share: case lists and inputs from the op spec."""

from __future__ import annotations

import json
import sys

import torch

from ops import get_op


def case_list(op: str, kind: str = "accuracy") -> list[dict]:
    """The op's cases as plain data: name, shape, dtype and the deterministic jagged lengths."""
    return [
        {"name": c.name, "shape": c.shape, "dtype": c.dtype, "lengths": list(c.lengths)}
        for c in get_op(op).cases(kind)  # type: ignore[arg-type]
    ]


def generate_inputs(op: str, case_name: str, device: str = "cpu", seed: int = 0) -> list:
    """Inputs of a case in the API's argument order (`input_names` of the spec)."""
    spec = get_op(op)
    inputs = spec.make_inputs(spec.case(case_name), torch.device(device), seed)
    return [inputs[name] for name in spec.input_names]


def main(op: str) -> None:
    """`python generate_<op>.py [accuracy|performance]` prints the case list as JSON."""
    kind = sys.argv[1] if len(sys.argv) > 1 else "accuracy"
    json.dump(case_list(op, kind), sys.stdout, indent=1)
    sys.stdout.write("\n")
