# Copyright (c) 2026 The autotune authors.
# Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except
# in compliance with the License. You may obtain a copy at http://www.apache.org/licenses/LICENSE-2.0
#
# Rendered by `autotune lint --fix` from autotuner/templates/atk_support.py.j2; do not edit by hand.
"""What the NPU folder of hstu_attention needs besides torch and triton, so it runs copied alone:
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


OP = "hstu_attention"
#: kind -> the op's cases: name, shape, dtype and the deterministic jagged lengths (one string).
CASES = {
    "accuracy": [
        {
            "name": "b1_h2_n16_d32_t0_c0_w0_fp32",
            "shape": {
                "B": 1,
                "H": 2,
                "max_seq_len": 16,
                "D": 32,
                "targets": 0,
                "contextual": 0,
                "window": 0,
            },
            "dtype": "float32",
            "lengths": "16",
        },
        {
            "name": "b1_h2_n16_d32_t0_c0_w0_fp16",
            "shape": {
                "B": 1,
                "H": 2,
                "max_seq_len": 16,
                "D": 32,
                "targets": 0,
                "contextual": 0,
                "window": 0,
            },
            "dtype": "float16",
            "lengths": "16",
        },
        {
            "name": "b1_h2_n16_d32_t0_c0_w0_bf16",
            "shape": {
                "B": 1,
                "H": 2,
                "max_seq_len": 16,
                "D": 32,
                "targets": 0,
                "contextual": 0,
                "window": 0,
            },
            "dtype": "bfloat16",
            "lengths": "16",
        },
        {
            "name": "b4_h1_n40_d64_t1_c0_w0_fp32",
            "shape": {
                "B": 4,
                "H": 1,
                "max_seq_len": 40,
                "D": 64,
                "targets": 1,
                "contextual": 0,
                "window": 0,
            },
            "dtype": "float32",
            "lengths": "0 1 40 23",
        },
        {
            "name": "b4_h1_n40_d64_t1_c0_w0_fp16",
            "shape": {
                "B": 4,
                "H": 1,
                "max_seq_len": 40,
                "D": 64,
                "targets": 1,
                "contextual": 0,
                "window": 0,
            },
            "dtype": "float16",
            "lengths": "0 1 40 23",
        },
        {
            "name": "b4_h1_n40_d64_t1_c0_w0_bf16",
            "shape": {
                "B": 4,
                "H": 1,
                "max_seq_len": 40,
                "D": 64,
                "targets": 1,
                "contextual": 0,
                "window": 0,
            },
            "dtype": "bfloat16",
            "lengths": "0 1 40 23",
        },
        {
            "name": "b3_h2_n36_d128_t1_c4_w0_fp32",
            "shape": {
                "B": 3,
                "H": 2,
                "max_seq_len": 36,
                "D": 128,
                "targets": 1,
                "contextual": 4,
                "window": 0,
            },
            "dtype": "float32",
            "lengths": "36 9 20",
        },
        {
            "name": "b3_h2_n36_d128_t1_c4_w0_fp16",
            "shape": {
                "B": 3,
                "H": 2,
                "max_seq_len": 36,
                "D": 128,
                "targets": 1,
                "contextual": 4,
                "window": 0,
            },
            "dtype": "float16",
            "lengths": "36 9 20",
        },
        {
            "name": "b3_h2_n36_d128_t1_c4_w0_bf16",
            "shape": {
                "B": 3,
                "H": 2,
                "max_seq_len": 36,
                "D": 128,
                "targets": 1,
                "contextual": 4,
                "window": 0,
            },
            "dtype": "bfloat16",
            "lengths": "36 9 20",
        },
        {
            "name": "b3_h2_n40_d32_t0_c4_w8_fp32",
            "shape": {
                "B": 3,
                "H": 2,
                "max_seq_len": 40,
                "D": 32,
                "targets": 0,
                "contextual": 4,
                "window": 8,
            },
            "dtype": "float32",
            "lengths": "40 0 17",
        },
        {
            "name": "b3_h2_n40_d32_t0_c4_w8_fp16",
            "shape": {
                "B": 3,
                "H": 2,
                "max_seq_len": 40,
                "D": 32,
                "targets": 0,
                "contextual": 4,
                "window": 8,
            },
            "dtype": "float16",
            "lengths": "40 0 17",
        },
        {
            "name": "b3_h2_n40_d32_t0_c4_w8_bf16",
            "shape": {
                "B": 3,
                "H": 2,
                "max_seq_len": 40,
                "D": 32,
                "targets": 0,
                "contextual": 4,
                "window": 8,
            },
            "dtype": "bfloat16",
            "lengths": "40 0 17",
        },
        {
            "name": "b2_h2_n40_d24_t1_c0_w6_fp32",
            "shape": {
                "B": 2,
                "H": 2,
                "max_seq_len": 40,
                "D": 24,
                "targets": 1,
                "contextual": 0,
                "window": 6,
            },
            "dtype": "float32",
            "lengths": "33 40",
        },
        {
            "name": "b2_h2_n40_d24_t1_c0_w6_fp16",
            "shape": {
                "B": 2,
                "H": 2,
                "max_seq_len": 40,
                "D": 24,
                "targets": 1,
                "contextual": 0,
                "window": 6,
            },
            "dtype": "float16",
            "lengths": "33 40",
        },
        {
            "name": "b2_h2_n40_d24_t1_c0_w6_bf16",
            "shape": {
                "B": 2,
                "H": 2,
                "max_seq_len": 40,
                "D": 24,
                "targets": 1,
                "contextual": 0,
                "window": 6,
            },
            "dtype": "bfloat16",
            "lengths": "33 40",
        },
    ],
    "performance": [
        {
            "name": "b256_h4_n256_d64_t1_c0_w0_bf16",
            "shape": {
                "B": 256,
                "H": 4,
                "max_seq_len": 256,
                "D": 64,
                "targets": 1,
                "contextual": 0,
                "window": 0,
            },
            "dtype": "bfloat16",
            "lengths": "97 14 186 57 2 128 27 228 80 8 163 44 0 108 18 202 65 3 141 33 245 91 11 177 52 1 120 23 218 74 6 154 39 0 101 15 192 60 2 133 29 234 84 9 168 47 0 113 20 208 69 4 146 35 251 95 13 183 55 1 125 25 224 78 7 159 42 0 106 17 198 63 3 138 31 241 88 10 174 50 0 117 22 214 72 5 151 38 0 99 14 188 58 2 130 28 230 82 8 165 45 0 110 19 204 67 4 143 34 247 92 12 179 53 1 122 24 220 76 6 156 40 0 103 16 194 61 3 135 30 237 86 10 170 48 0 115 21 210 70 5 148 36 254 96 13 185 56 1 127 26 226 80 8 161 43 0 107 18 200 64 3 140 32 243 90 11 176 51 1 119 23 216 74 6 153 39 0 100 15 191 59 2 132 28 233 83 9 167 46 0 112 20 206 68 4 145 35 250 94 12 181 54 1 124 25 222 77 7 158 42 0 105 17 197 62 3 136 31 239 87 10 172 49 0 116 22 212 71 5 150 37 0 98 14 187 57 2 129 27 229 81 8 163 44 0 109 18 202 66 4 141 33 246 91 12",
        },
        {
            "name": "b128_h4_n1024_d128_t1_c4_w0_bf16",
            "shape": {
                "B": 128,
                "H": 4,
                "max_seq_len": 1024,
                "D": 128,
                "targets": 1,
                "contextual": 4,
                "window": 0,
            },
            "dtype": "bfloat16",
            "lengths": "391 57 746 228 8 513 108 913 323 33 652 177 1 435 74 808 262 15 564 133 980 364 47 710 208 4 483 95 872 299 25 618 159 0 407 63 770 241 10 532 117 938 339 38 674 188 2 453 82 832 276 19 584 143 1007 380 53 732 220 6 501 103 897 314 30 639 170 0 425 70 793 254 13 552 127 964 354 43 696 200 3 471 90 857 290 23 605 153 0 397 59 755 233 9 520 112 922 329 35 660 181 1 442 77 817 268 17 572 136 990 370 49 718 212 5 490 98 881 305 27 626 163 0 414 66 779 246 12",
        },
        {
            "name": "b64_h2_n2048_d128_t0_c0_w0_fp16",
            "shape": {
                "B": 64,
                "H": 2,
                "max_seq_len": 2048,
                "D": 128,
                "targets": 0,
                "contextual": 0,
                "window": 0,
            },
            "dtype": "float16",
            "lengths": "782 114 1493 456 16 1027 217 1826 647 66 1305 355 2 871 149 1616 525 31 1129 266 1961 729 94 1420 416 9 966 190 1744 599 51 1236 319 0 815 127 1540 482 21 1065 235 1877 678 76 1348 377 4 907 164 1665 553 38 1169 286 2014 761 106 1465 440 13 1003 207 1794 628",
        },
        {
            "name": "b32_h8_n4096_d64_t1_c0_w512_bf16",
            "shape": {
                "B": 32,
                "H": 8,
                "max_seq_len": 4096,
                "D": 64,
                "targets": 1,
                "contextual": 0,
                "window": 512,
            },
            "dtype": "bfloat16",
            "lengths": "1564 228 2987 913 33 2054 435 3652 1295 133 2610 710 4 1743 299 3233 1051 63 2259 532 3923 1458 188 2840 832 19 1932 380 3489 1198 103 2473",
        },
    ],
}
#: Input names in the API's argument order.
INPUT_NAMES = [
    "q",
    "k",
    "v",
    "offsets",
    "num_targets",
    "max_seq_len",
    "alpha",
    "contextual",
    "window",
    "dout",
    "delta_q",
    "k_cache",
    "v_cache",
    "cache_offsets",
]
#: Accuracy case -> one recipe per input: ("randn", shape, dtype) for seeded values, ("tensor",
#: values, shape, dtype) for exact integer data (offsets, lengths; one string), ("value", v) for
#: a scalar.
INPUTS = {
    "b1_h2_n16_d32_t0_c0_w0_fp32": [
        ("randn", [16, 2, 32], "float32"),
        ("randn", [16, 2, 32], "float32"),
        ("randn", [16, 2, 32], "float32"),
        ("tensor", "0 16", [2], "int64"),
        ("tensor", "", [0], "int64"),
        ("value", 16),
        ("value", 0.17677669529663687),
        ("value", 0),
        ("value", 0),
        ("randn", [16, 2, 32], "float32"),
        ("randn", [1, 2, 32], "float32"),
        ("randn", [17, 2, 32], "float32"),
        ("randn", [17, 2, 32], "float32"),
        ("tensor", "0 17", [2], "int64"),
    ],
    "b1_h2_n16_d32_t0_c0_w0_fp16": [
        ("randn", [16, 2, 32], "float16"),
        ("randn", [16, 2, 32], "float16"),
        ("randn", [16, 2, 32], "float16"),
        ("tensor", "0 16", [2], "int64"),
        ("tensor", "", [0], "int64"),
        ("value", 16),
        ("value", 0.17677669529663687),
        ("value", 0),
        ("value", 0),
        ("randn", [16, 2, 32], "float16"),
        ("randn", [1, 2, 32], "float16"),
        ("randn", [17, 2, 32], "float16"),
        ("randn", [17, 2, 32], "float16"),
        ("tensor", "0 17", [2], "int64"),
    ],
    "b1_h2_n16_d32_t0_c0_w0_bf16": [
        ("randn", [16, 2, 32], "bfloat16"),
        ("randn", [16, 2, 32], "bfloat16"),
        ("randn", [16, 2, 32], "bfloat16"),
        ("tensor", "0 16", [2], "int64"),
        ("tensor", "", [0], "int64"),
        ("value", 16),
        ("value", 0.17677669529663687),
        ("value", 0),
        ("value", 0),
        ("randn", [16, 2, 32], "bfloat16"),
        ("randn", [1, 2, 32], "bfloat16"),
        ("randn", [17, 2, 32], "bfloat16"),
        ("randn", [17, 2, 32], "bfloat16"),
        ("tensor", "0 17", [2], "int64"),
    ],
    "b4_h1_n40_d64_t1_c0_w0_fp32": [
        ("randn", [64, 1, 64], "float32"),
        ("randn", [64, 1, 64], "float32"),
        ("randn", [64, 1, 64], "float32"),
        ("tensor", "0 0 1 41 64", [5], "int64"),
        ("tensor", "0 0 3 4", [4], "int64"),
        ("value", 40),
        ("value", 0.125),
        ("value", 0),
        ("value", 0),
        ("randn", [64, 1, 64], "float32"),
        ("randn", [8, 1, 64], "float32"),
        ("randn", [72, 1, 64], "float32"),
        ("randn", [72, 1, 64], "float32"),
        ("tensor", "0 2 5 47 72", [5], "int64"),
    ],
    "b4_h1_n40_d64_t1_c0_w0_fp16": [
        ("randn", [64, 1, 64], "float16"),
        ("randn", [64, 1, 64], "float16"),
        ("randn", [64, 1, 64], "float16"),
        ("tensor", "0 0 1 41 64", [5], "int64"),
        ("tensor", "0 0 2 10", [4], "int64"),
        ("value", 40),
        ("value", 0.125),
        ("value", 0),
        ("value", 0),
        ("randn", [64, 1, 64], "float16"),
        ("randn", [8, 1, 64], "float16"),
        ("randn", [72, 1, 64], "float16"),
        ("randn", [72, 1, 64], "float16"),
        ("tensor", "0 2 5 47 72", [5], "int64"),
    ],
    "b4_h1_n40_d64_t1_c0_w0_bf16": [
        ("randn", [64, 1, 64], "bfloat16"),
        ("randn", [64, 1, 64], "bfloat16"),
        ("randn", [64, 1, 64], "bfloat16"),
        ("tensor", "0 0 1 41 64", [5], "int64"),
        ("tensor", "0 0 6 4", [4], "int64"),
        ("value", 40),
        ("value", 0.125),
        ("value", 0),
        ("value", 0),
        ("randn", [64, 1, 64], "bfloat16"),
        ("randn", [8, 1, 64], "bfloat16"),
        ("randn", [72, 1, 64], "bfloat16"),
        ("randn", [72, 1, 64], "bfloat16"),
        ("tensor", "0 2 5 47 72", [5], "int64"),
    ],
    "b3_h2_n36_d128_t1_c4_w0_fp32": [
        ("randn", [65, 2, 128], "float32"),
        ("randn", [65, 2, 128], "float32"),
        ("randn", [65, 2, 128], "float32"),
        ("tensor", "0 36 45 65", [4], "int64"),
        ("tensor", "9 4 6", [3], "int64"),
        ("value", 36),
        ("value", 0.08838834764831843),
        ("value", 4),
        ("value", 0),
        ("randn", [65, 2, 128], "float32"),
        ("randn", [6, 2, 128], "float32"),
        ("randn", [71, 2, 128], "float32"),
        ("randn", [71, 2, 128], "float32"),
        ("tensor", "0 38 49 71", [4], "int64"),
    ],
    "b3_h2_n36_d128_t1_c4_w0_fp16": [
        ("randn", [65, 2, 128], "float16"),
        ("randn", [65, 2, 128], "float16"),
        ("randn", [65, 2, 128], "float16"),
        ("tensor", "0 36 45 65", [4], "int64"),
        ("tensor", "9 0 0", [3], "int64"),
        ("value", 36),
        ("value", 0.08838834764831843),
        ("value", 4),
        ("value", 0),
        ("randn", [65, 2, 128], "float16"),
        ("randn", [6, 2, 128], "float16"),
        ("randn", [71, 2, 128], "float16"),
        ("randn", [71, 2, 128], "float16"),
        ("tensor", "0 38 49 71", [4], "int64"),
    ],
    "b3_h2_n36_d128_t1_c4_w0_bf16": [
        ("randn", [65, 2, 128], "bfloat16"),
        ("randn", [65, 2, 128], "bfloat16"),
        ("randn", [65, 2, 128], "bfloat16"),
        ("tensor", "0 36 45 65", [4], "int64"),
        ("tensor", "5 4 4", [3], "int64"),
        ("value", 36),
        ("value", 0.08838834764831843),
        ("value", 4),
        ("value", 0),
        ("randn", [65, 2, 128], "bfloat16"),
        ("randn", [6, 2, 128], "bfloat16"),
        ("randn", [71, 2, 128], "bfloat16"),
        ("randn", [71, 2, 128], "bfloat16"),
        ("tensor", "0 38 49 71", [4], "int64"),
    ],
    "b3_h2_n40_d32_t0_c4_w8_fp32": [
        ("randn", [57, 2, 32], "float32"),
        ("randn", [57, 2, 32], "float32"),
        ("randn", [57, 2, 32], "float32"),
        ("tensor", "0 40 40 57", [4], "int64"),
        ("tensor", "", [0], "int64"),
        ("value", 40),
        ("value", 0.17677669529663687),
        ("value", 4),
        ("value", 8),
        ("randn", [57, 2, 32], "float32"),
        ("randn", [6, 2, 32], "float32"),
        ("randn", [63, 2, 32], "float32"),
        ("randn", [63, 2, 32], "float32"),
        ("tensor", "0 42 44 63", [4], "int64"),
    ],
    "b3_h2_n40_d32_t0_c4_w8_fp16": [
        ("randn", [57, 2, 32], "float16"),
        ("randn", [57, 2, 32], "float16"),
        ("randn", [57, 2, 32], "float16"),
        ("tensor", "0 40 40 57", [4], "int64"),
        ("tensor", "", [0], "int64"),
        ("value", 40),
        ("value", 0.17677669529663687),
        ("value", 4),
        ("value", 8),
        ("randn", [57, 2, 32], "float16"),
        ("randn", [6, 2, 32], "float16"),
        ("randn", [63, 2, 32], "float16"),
        ("randn", [63, 2, 32], "float16"),
        ("tensor", "0 42 44 63", [4], "int64"),
    ],
    "b3_h2_n40_d32_t0_c4_w8_bf16": [
        ("randn", [57, 2, 32], "bfloat16"),
        ("randn", [57, 2, 32], "bfloat16"),
        ("randn", [57, 2, 32], "bfloat16"),
        ("tensor", "0 40 40 57", [4], "int64"),
        ("tensor", "", [0], "int64"),
        ("value", 40),
        ("value", 0.17677669529663687),
        ("value", 4),
        ("value", 8),
        ("randn", [57, 2, 32], "bfloat16"),
        ("randn", [6, 2, 32], "bfloat16"),
        ("randn", [63, 2, 32], "bfloat16"),
        ("randn", [63, 2, 32], "bfloat16"),
        ("tensor", "0 42 44 63", [4], "int64"),
    ],
    "b2_h2_n40_d24_t1_c0_w6_fp32": [
        ("randn", [73, 2, 24], "float32"),
        ("randn", [73, 2, 24], "float32"),
        ("randn", [73, 2, 24], "float32"),
        ("tensor", "0 33 73", [3], "int64"),
        ("tensor", "9 10", [2], "int64"),
        ("value", 40),
        ("value", 0.20412414523193154),
        ("value", 0),
        ("value", 6),
        ("randn", [73, 2, 24], "float32"),
        ("randn", [4, 2, 24], "float32"),
        ("randn", [77, 2, 24], "float32"),
        ("randn", [77, 2, 24], "float32"),
        ("tensor", "0 35 77", [3], "int64"),
    ],
    "b2_h2_n40_d24_t1_c0_w6_fp16": [
        ("randn", [73, 2, 24], "float16"),
        ("randn", [73, 2, 24], "float16"),
        ("randn", [73, 2, 24], "float16"),
        ("tensor", "0 33 73", [3], "int64"),
        ("tensor", "10 10", [2], "int64"),
        ("value", 40),
        ("value", 0.20412414523193154),
        ("value", 0),
        ("value", 6),
        ("randn", [73, 2, 24], "float16"),
        ("randn", [4, 2, 24], "float16"),
        ("randn", [77, 2, 24], "float16"),
        ("randn", [77, 2, 24], "float16"),
        ("tensor", "0 35 77", [3], "int64"),
    ],
    "b2_h2_n40_d24_t1_c0_w6_bf16": [
        ("randn", [73, 2, 24], "bfloat16"),
        ("randn", [73, 2, 24], "bfloat16"),
        ("randn", [73, 2, 24], "bfloat16"),
        ("tensor", "0 33 73", [3], "int64"),
        ("tensor", "8 0", [2], "int64"),
        ("value", 40),
        ("value", 0.20412414523193154),
        ("value", 0),
        ("value", 6),
        ("randn", [73, 2, 24], "bfloat16"),
        ("randn", [4, 2, 24], "bfloat16"),
        ("randn", [77, 2, 24], "bfloat16"),
        ("randn", [77, 2, 24], "bfloat16"),
        ("tensor", "0 35 77", [3], "int64"),
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
