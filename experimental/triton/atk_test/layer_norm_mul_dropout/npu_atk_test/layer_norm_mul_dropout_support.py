# Copyright (c) 2026 The autotune authors.
# Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except
# in compliance with the License. You may obtain a copy at http://www.apache.org/licenses/LICENSE-2.0
#
# Rendered by `autotune lint --fix` from autotuner/templates/atk_support.py.j2; do not edit by hand.
"""What the NPU folder of layer_norm_mul_dropout needs besides torch and triton, so it runs copied alone:
ATK's API classes (or stand-ins where ATK is not installed), the cases' constants, the cases and their inputs."""

from __future__ import annotations

import json
import sys

import torch

try:
    from atk.configs.dataset_config import InputDataset
    from atk.tasks.api_execute import register
    from atk.tasks.api_execute.base_api import BaseApi

    ATK_AVAILABLE = True
except ImportError:
    ATK_AVAILABLE = False

    class InputDataset:  # type: ignore[no-redef]
        """What ATK hands an API: positional tensors in `args`, the rest in `kwargs`."""

        def __init__(self, args: list, kwargs: dict | None = None) -> None:
            self.args = args
            self.kwargs = kwargs or {}

    class BaseApi:  # type: ignore[no-redef]
        def __init__(self, dataset: InputDataset | None = None) -> None:
            self.dataset = dataset

    def register(name: str):  # type: ignore[no-redef]
        def keep(cls):
            cls.atk_name = name
            return cls

        return keep


DROPOUT_RATIO = 0.0
EPS = 1e-06
SEED = 1234
OP = "layer_norm_mul_dropout"
#: kind -> the op's cases: name, shape, dtype and the deterministic jagged lengths (one string).
CASES = {
    "accuracy": [
        {"name": "n1_d64_fp32", "shape": {"N": 1, "D": 64}, "dtype": "float32", "lengths": ""},
        {"name": "n1_d64_fp16", "shape": {"N": 1, "D": 64}, "dtype": "float16", "lengths": ""},
        {"name": "n1_d64_bf16", "shape": {"N": 1, "D": 64}, "dtype": "bfloat16", "lengths": ""},
        {"name": "n0_d32_fp32", "shape": {"N": 0, "D": 32}, "dtype": "float32", "lengths": ""},
        {"name": "n0_d32_fp16", "shape": {"N": 0, "D": 32}, "dtype": "float16", "lengths": ""},
        {"name": "n0_d32_bf16", "shape": {"N": 0, "D": 32}, "dtype": "bfloat16", "lengths": ""},
        {"name": "n37_d100_fp32", "shape": {"N": 37, "D": 100}, "dtype": "float32", "lengths": ""},
        {"name": "n37_d100_fp16", "shape": {"N": 37, "D": 100}, "dtype": "float16", "lengths": ""},
        {"name": "n37_d100_bf16", "shape": {"N": 37, "D": 100}, "dtype": "bfloat16", "lengths": ""},
        {"name": "n5_d1_fp32", "shape": {"N": 5, "D": 1}, "dtype": "float32", "lengths": ""},
        {"name": "n5_d1_fp16", "shape": {"N": 5, "D": 1}, "dtype": "float16", "lengths": ""},
        {"name": "n5_d1_bf16", "shape": {"N": 5, "D": 1}, "dtype": "bfloat16", "lengths": ""},
        {"name": "n130_d48_fp32", "shape": {"N": 130, "D": 48}, "dtype": "float32", "lengths": ""},
        {"name": "n130_d48_fp16", "shape": {"N": 130, "D": 48}, "dtype": "float16", "lengths": ""},
        {"name": "n130_d48_bf16", "shape": {"N": 130, "D": 48}, "dtype": "bfloat16", "lengths": ""},
        {"name": "n3_d9000_fp32", "shape": {"N": 3, "D": 9000}, "dtype": "float32", "lengths": ""},
        {"name": "n3_d9000_fp16", "shape": {"N": 3, "D": 9000}, "dtype": "float16", "lengths": ""},
        {"name": "n3_d9000_bf16", "shape": {"N": 3, "D": 9000}, "dtype": "bfloat16", "lengths": ""},
    ],
    "performance": [
        {
            "name": "n131072_d256_bf16",
            "shape": {"N": 131072, "D": 256},
            "dtype": "bfloat16",
            "lengths": "",
        },
        {
            "name": "n262144_d512_fp16",
            "shape": {"N": 262144, "D": 512},
            "dtype": "float16",
            "lengths": "",
        },
        {
            "name": "n1048576_d256_fp32",
            "shape": {"N": 1048576, "D": 256},
            "dtype": "float32",
            "lengths": "",
        },
        {
            "name": "n131072_d1024_bf16",
            "shape": {"N": 131072, "D": 1024},
            "dtype": "bfloat16",
            "lengths": "",
        },
    ],
}
#: Input names in the API's argument order.
INPUT_NAMES = ["x", "u", "weight", "bias", "dy"]
#: Accuracy case -> one recipe per input: ("randn", shape, dtype) for seeded values, ("tensor",
#: values, shape, dtype) for exact integer data (offsets, lengths; one string), ("value", v) for
#: a scalar.
INPUTS = {
    "n1_d64_fp32": [
        ("randn", [1, 64], "float32"),
        ("randn", [1, 64], "float32"),
        ("randn", [64], "float32"),
        ("randn", [64], "float32"),
        ("randn", [1, 64], "float32"),
    ],
    "n1_d64_fp16": [
        ("randn", [1, 64], "float16"),
        ("randn", [1, 64], "float16"),
        ("randn", [64], "float16"),
        ("randn", [64], "float16"),
        ("randn", [1, 64], "float16"),
    ],
    "n1_d64_bf16": [
        ("randn", [1, 64], "bfloat16"),
        ("randn", [1, 64], "bfloat16"),
        ("randn", [64], "bfloat16"),
        ("randn", [64], "bfloat16"),
        ("randn", [1, 64], "bfloat16"),
    ],
    "n0_d32_fp32": [
        ("randn", [0, 32], "float32"),
        ("randn", [0, 32], "float32"),
        ("randn", [32], "float32"),
        ("randn", [32], "float32"),
        ("randn", [0, 32], "float32"),
    ],
    "n0_d32_fp16": [
        ("randn", [0, 32], "float16"),
        ("randn", [0, 32], "float16"),
        ("randn", [32], "float16"),
        ("randn", [32], "float16"),
        ("randn", [0, 32], "float16"),
    ],
    "n0_d32_bf16": [
        ("randn", [0, 32], "bfloat16"),
        ("randn", [0, 32], "bfloat16"),
        ("randn", [32], "bfloat16"),
        ("randn", [32], "bfloat16"),
        ("randn", [0, 32], "bfloat16"),
    ],
    "n37_d100_fp32": [
        ("randn", [37, 100], "float32"),
        ("randn", [37, 100], "float32"),
        ("randn", [100], "float32"),
        ("randn", [100], "float32"),
        ("randn", [37, 100], "float32"),
    ],
    "n37_d100_fp16": [
        ("randn", [37, 100], "float16"),
        ("randn", [37, 100], "float16"),
        ("randn", [100], "float16"),
        ("randn", [100], "float16"),
        ("randn", [37, 100], "float16"),
    ],
    "n37_d100_bf16": [
        ("randn", [37, 100], "bfloat16"),
        ("randn", [37, 100], "bfloat16"),
        ("randn", [100], "bfloat16"),
        ("randn", [100], "bfloat16"),
        ("randn", [37, 100], "bfloat16"),
    ],
    "n5_d1_fp32": [
        ("randn", [5, 1], "float32"),
        ("randn", [5, 1], "float32"),
        ("randn", [1], "float32"),
        ("randn", [1], "float32"),
        ("randn", [5, 1], "float32"),
    ],
    "n5_d1_fp16": [
        ("randn", [5, 1], "float16"),
        ("randn", [5, 1], "float16"),
        ("randn", [1], "float16"),
        ("randn", [1], "float16"),
        ("randn", [5, 1], "float16"),
    ],
    "n5_d1_bf16": [
        ("randn", [5, 1], "bfloat16"),
        ("randn", [5, 1], "bfloat16"),
        ("randn", [1], "bfloat16"),
        ("randn", [1], "bfloat16"),
        ("randn", [5, 1], "bfloat16"),
    ],
    "n130_d48_fp32": [
        ("randn", [130, 48], "float32"),
        ("randn", [130, 48], "float32"),
        ("randn", [48], "float32"),
        ("randn", [48], "float32"),
        ("randn", [130, 48], "float32"),
    ],
    "n130_d48_fp16": [
        ("randn", [130, 48], "float16"),
        ("randn", [130, 48], "float16"),
        ("randn", [48], "float16"),
        ("randn", [48], "float16"),
        ("randn", [130, 48], "float16"),
    ],
    "n130_d48_bf16": [
        ("randn", [130, 48], "bfloat16"),
        ("randn", [130, 48], "bfloat16"),
        ("randn", [48], "bfloat16"),
        ("randn", [48], "bfloat16"),
        ("randn", [130, 48], "bfloat16"),
    ],
    "n3_d9000_fp32": [
        ("randn", [3, 9000], "float32"),
        ("randn", [3, 9000], "float32"),
        ("randn", [9000], "float32"),
        ("randn", [9000], "float32"),
        ("randn", [3, 9000], "float32"),
    ],
    "n3_d9000_fp16": [
        ("randn", [3, 9000], "float16"),
        ("randn", [3, 9000], "float16"),
        ("randn", [9000], "float16"),
        ("randn", [9000], "float16"),
        ("randn", [3, 9000], "float16"),
    ],
    "n3_d9000_bf16": [
        ("randn", [3, 9000], "bfloat16"),
        ("randn", [3, 9000], "bfloat16"),
        ("randn", [9000], "bfloat16"),
        ("randn", [9000], "bfloat16"),
        ("randn", [3, 9000], "bfloat16"),
    ],
}


def _ints(text: str) -> list[int]:
    return [int(v) for v in text.split()]


def cases(kind: str = "accuracy") -> list[dict]:
    """The cases of one kind as plain data, the lengths as a list."""
    return [{**case, "lengths": _ints(case["lengths"])} for case in CASES[kind]]


def generate(name: str, device: str = "cpu", seed: int = 0) -> list:
    """Inputs of an accuracy case in the API's argument order: float values seeded normals,
    shapes and integer data (offsets, lengths) exactly the case's."""
    if name not in INPUTS:
        if any(case["name"] == name for case in CASES["performance"]):
            raise ValueError(f"{name!r} is a performance case: only accuracy inputs are rendered")
        raise ValueError(f"no case {name!r} of {OP}; accuracy cases: {', '.join(INPUTS)}")
    generator = torch.Generator().manual_seed(seed)
    made = []
    for recipe in INPUTS[name]:
        if recipe[0] == "randn":
            _, shape, dtype = recipe
            values = torch.randn(shape, generator=generator)
            made.append(values.to(getattr(torch, dtype)).to(device))
        elif recipe[0] == "tensor":
            _, values, shape, dtype = recipe
            exact = torch.tensor(_ints(values), dtype=getattr(torch, dtype))
            made.append(exact.reshape(shape).to(device))
        else:
            made.append(recipe[1])
    return made


def main() -> None:
    """`python generate_<op>.py [accuracy|performance]` prints the case list as JSON."""
    kind = sys.argv[1] if len(sys.argv) > 1 else "accuracy"
    json.dump(cases(kind), sys.stdout, indent=1)
    sys.stdout.write("\n")
