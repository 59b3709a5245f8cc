# Copyright (c) 2026 The autotune authors.
# Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except
# in compliance with the License. You may obtain a copy at http://www.apache.org/licenses/LICENSE-2.0
#
# Rendered by `autotune lint --fix` from autotuner/templates/atk_support.py.j2; do not edit by hand.
"""What the NPU folder of jagged_jagged_bmm_jagged_out needs besides torch and triton, so it runs copied alone:
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


OP = "jagged_jagged_bmm_jagged_out"
#: kind -> the op's cases: name, shape, dtype and the deterministic jagged lengths (one string).
CASES = {
    "accuracy": [
        {
            "name": "b1_n16_d16_fp32",
            "shape": {"B": 1, "max_seq_len": 16, "D": 16},
            "dtype": "float32",
            "lengths": "16",
        },
        {
            "name": "b1_n16_d16_fp16",
            "shape": {"B": 1, "max_seq_len": 16, "D": 16},
            "dtype": "float16",
            "lengths": "16",
        },
        {
            "name": "b1_n16_d16_bf16",
            "shape": {"B": 1, "max_seq_len": 16, "D": 16},
            "dtype": "bfloat16",
            "lengths": "16",
        },
        {
            "name": "b4_n16_d40_fp32",
            "shape": {"B": 4, "max_seq_len": 16, "D": 40},
            "dtype": "float32",
            "lengths": "0 5 16 23",
        },
        {
            "name": "b4_n16_d40_fp16",
            "shape": {"B": 4, "max_seq_len": 16, "D": 40},
            "dtype": "float16",
            "lengths": "0 5 16 23",
        },
        {
            "name": "b4_n16_d40_bf16",
            "shape": {"B": 4, "max_seq_len": 16, "D": 40},
            "dtype": "bfloat16",
            "lengths": "0 5 16 23",
        },
        {
            "name": "b3_n40_d24_fp32",
            "shape": {"B": 3, "max_seq_len": 40, "D": 24},
            "dtype": "float32",
            "lengths": "40 0 57",
        },
        {
            "name": "b3_n40_d24_fp16",
            "shape": {"B": 3, "max_seq_len": 40, "D": 24},
            "dtype": "float16",
            "lengths": "40 0 57",
        },
        {
            "name": "b3_n40_d24_bf16",
            "shape": {"B": 3, "max_seq_len": 40, "D": 24},
            "dtype": "bfloat16",
            "lengths": "40 0 57",
        },
    ],
    "performance": [
        {
            "name": "b512_n256_d128_bf16",
            "shape": {"B": 512, "max_seq_len": 256, "D": 128},
            "dtype": "bfloat16",
            "lengths": "122 17 233 71 2 160 34 285 101 10 203 55 0 136 23 252 82 4 176 41 306 113 14 221 65 1 150 29 272 93 8 193 49 0 127 19 240 75 3 166 36 293 105 11 210 59 0 141 25 260 86 6 182 44 314 119 16 229 68 2 156 32 280 98 9 199 53 0 132 22 248 79 4 172 39 301 110 13 217 62 1 147 28 267 90 7 189 47 0 124 18 236 72 2 162 35 288 102 10 206 56 0 138 24 255 83 5 178 42 309 115 15 224 66 1 153 30 275 95 8 195 51 0 129 20 243 76 3 168 37 296 107 12 213 60 0 143 26 263 88 6 185 45 318 121 17 231 70 2 159 33 283 100 10 202 54 0 134 22 250 81 4 175 40 304 112 14 220 64 1 149 29 270 92 7 191 49 0 126 19 238 74 3 165 36 291 104 11 209 58 0 140 25 258 85 5 181 43 312 117 16 227 67 1 155 31 278 97 9 198 52 0 131 21 246 78 4 171 39 299 109 13 215 61 1 146 27 266 89 6 187 47 0 122 18 234 71 2 161 34 286 101 10 204 55 0 137 23 253 82 5 177 42 307 114 15 222 65 1 151 30 273 94 8 194 50 0 128 20 241 75 3 167 37 294 106 12 211 59 0 142 26 261 87 6 183 45 316 119 16 230 69 2 157 32 281 98 9 200 53 0 133 22 249 80 4 173 40 302 111 13 218 63 1 148 28 268 91 7 190 48 0 124 18 237 73 3 163 35 289 103 11 207 57 0 139 24 256 84 5 179 43 310 116 15 225 67 1 154 31 276 96 8 196 51 0 130 20 244 77 3 169 38 297 108 12 214 60 0 144 27 264 88 6 186 46 319 121 17 232 70 2 159 33 284 100 10 203 55 0 135 23 251 81 4 175 41 305 113 14 221 64 1 150 29 271 93 7 192 49 0 127 19 240 74 3 165 36 292 105 11 210 58 0 141 25 259 86 5 182 44 314 118 16 228 68 2 156 32 279 97 9 199 53 0 132 21 247 79 4 172 39 300 110 13 217 62 1 146 27 267 90 7 188 47 0 123 18 235 72 2 162 34 287 102 10 205 56 0 137 24 254 83 5 178 42 308 115 15 223 66 1 152 30 274 94 8 195 50 0 129 20 242 76 3 168 37 295 107 12 212 60",
        },
        {
            "name": "b128_n512_d64_fp32",
            "shape": {"B": 128, "max_seq_len": 512, "D": 64},
            "dtype": "float32",
            "lengths": "244 35 466 142 5 320 68 570 202 20 407 110 0 272 46 505 164 9 352 83 613 227 29 443 130 3 301 59 545 187 16 386 99 0 254 39 481 150 6 333 73 586 211 23 421 118 1 283 51 520 172 12 365 89 629 238 33 458 137 4 313 64 560 196 18 399 106 0 265 44 496 159 8 345 79 602 221 27 435 125 2 294 56 535 181 14 378 95 0 248 37 472 145 5 325 70 576 205 21 413 113 0 276 48 511 167 10 357 85 619 231 30 449 133 3 306 61 551 190 17 391 102 0 259 41 486 153 7",
        },
        {
            "name": "b768_n256_d256_fp16",
            "shape": {"B": 768, "max_seq_len": 256, "D": 256},
            "dtype": "float16",
            "lengths": "122 17 233 71 2 160 34 285 101 10 203 55 0 136 23 252 82 4 176 41 306 113 14 221 65 1 150 29 272 93 8 193 49 0 127 19 240 75 3 166 36 293 105 11 210 59 0 141 25 260 86 6 182 44 314 119 16 229 68 2 156 32 280 98 9 199 53 0 132 22 248 79 4 172 39 301 110 13 217 62 1 147 28 267 90 7 189 47 0 124 18 236 72 2 162 35 288 102 10 206 56 0 138 24 255 83 5 178 42 309 115 15 224 66 1 153 30 275 95 8 195 51 0 129 20 243 76 3 168 37 296 107 12 213 60 0 143 26 263 88 6 185 45 318 121 17 231 70 2 159 33 283 100 10 202 54 0 134 22 250 81 4 175 40 304 112 14 220 64 1 149 29 270 92 7 191 49 0 126 19 238 74 3 165 36 291 104 11 209 58 0 140 25 258 85 5 181 43 312 117 16 227 67 1 155 31 278 97 9 198 52 0 131 21 246 78 4 171 39 299 109 13 215 61 1 146 27 266 89 6 187 47 0 122 18 234 71 2 161 34 286 101 10 204 55 0 137 23 253 82 5 177 42 307 114 15 222 65 1 151 30 273 94 8 194 50 0 128 20 241 75 3 167 37 294 106 12 211 59 0 142 26 261 87 6 183 45 316 119 16 230 69 2 157 32 281 98 9 200 53 0 133 22 249 80 4 173 40 302 111 13 218 63 1 148 28 268 91 7 190 48 0 124 18 237 73 3 163 35 289 103 11 207 57 0 139 24 256 84 5 179 43 310 116 15 225 67 1 154 31 276 96 8 196 51 0 130 20 244 77 3 169 38 297 108 12 214 60 0 144 27 264 88 6 186 46 319 121 17 232 70 2 159 33 284 100 10 203 55 0 135 23 251 81 4 175 41 305 113 14 221 64 1 150 29 271 93 7 192 49 0 127 19 240 74 3 165 36 292 105 11 210 58 0 141 25 259 86 5 182 44 314 118 16 228 68 2 156 32 279 97 9 199 53 0 132 21 247 79 4 172 39 300 110 13 217 62 1 146 27 267 90 7 188 47 0 123 18 235 72 2 162 34 287 102 10 205 56 0 137 24 254 83 5 178 42 308 115 15 223 66 1 152 30 274 94 8 195 50 0 129 20 242 76 3 168 37 295 107 12 212 60 0 143 26 262 87 6 184 45 317 120 17 231 70 2 158 33 282 99 9 201 54 0 134 22 250 80 4 174 40 303 112 14 219 63 1 149 28 270 92 7 191 48 0 125 19 238 74 3 164 35 290 104 11 208 57 0 139 24 257 85 5 180 43 312 117 16 226 67 1 154 31 277 96 9 197 52 0 131 21 245 78 4 170 38 298 109 13 215 61 1 145 27 265 89 6 187 46 0 122 17 233 71 2 160 34 285 101 10 204 55 0 136 23 253 82 5 176 41 306 114 14 222 65 1 151 29 273 93 8 193 50 0 127 19 241 75 3 166 37 293 106 12 211 59 0 142 25 260 86 6 183 44 315 119 16 229 69 2 157 32 280 98 9 200 53 0 133 22 248 79 4 172 39 301 111 13 218 62 1 147 28 268 91 7 189 48 0 124 18 236 73 2 163 35 288 103 11 206 57 0 138 24 255 83 5 179 42 310 116 15 225 66 1 153 30 276 95 8 196 51 0 129 20 243 77 3 169 38 296 108 12 213 60 0 144 26 263 88 6 185 46 318 121 17 232 70 2 159 33 283 100 10 202 54 0 135",
        },
        {
            "name": "b192_n512_d128_bf16",
            "shape": {"B": 192, "max_seq_len": 512, "D": 128},
            "dtype": "bfloat16",
            "lengths": "244 35 466 142 5 320 68 570 202 20 407 110 0 272 46 505 164 9 352 83 613 227 29 443 130 3 301 59 545 187 16 386 99 0 254 39 481 150 6 333 73 586 211 23 421 118 1 283 51 520 172 12 365 89 629 238 33 458 137 4 313 64 560 196 18 399 106 0 265 44 496 159 8 345 79 602 221 27 435 125 2 294 56 535 181 14 378 95 0 248 37 472 145 5 325 70 576 205 21 413 113 0 276 48 511 167 10 357 85 619 231 30 449 133 3 306 61 551 190 17 391 102 0 259 41 486 153 7 337 75 592 215 25 426 120 1 287 53 526 176 13 370 91 636 242 34 463 140 4 318 66 566 200 20 404 109 0 269 45 501 162 9 350 81 609 225 28 440 128 2 299 58 541 185 15 383 98 0 252 38 477 148 6 330 72 582 209 23 418 116 1 280",
        },
    ],
}
#: Input names in the API's argument order.
INPUT_NAMES = ["x", "y", "offsets", "z_offsets", "max_seq_len", "dz"]
#: Accuracy case -> one recipe per input: ("randn", shape, dtype) for seeded values, ("tensor",
#: values, shape, dtype) for exact integer data (offsets, lengths; one string), ("value", v) for
#: a scalar.
INPUTS = {
    "b1_n16_d16_fp32": [
        ("randn", [16, 16], "float32"),
        ("randn", [16, 16], "float32"),
        ("tensor", "0 16", [2], "int64"),
        ("tensor", "0 256", [2], "int64"),
        ("value", 16),
        ("randn", [256], "float32"),
    ],
    "b1_n16_d16_fp16": [
        ("randn", [16, 16], "float16"),
        ("randn", [16, 16], "float16"),
        ("tensor", "0 16", [2], "int64"),
        ("tensor", "0 256", [2], "int64"),
        ("value", 16),
        ("randn", [256], "float16"),
    ],
    "b1_n16_d16_bf16": [
        ("randn", [16, 16], "bfloat16"),
        ("randn", [16, 16], "bfloat16"),
        ("tensor", "0 16", [2], "int64"),
        ("tensor", "0 256", [2], "int64"),
        ("value", 16),
        ("randn", [256], "bfloat16"),
    ],
    "b4_n16_d40_fp32": [
        ("randn", [44, 40], "float32"),
        ("randn", [44, 40], "float32"),
        ("tensor", "0 0 5 21 44", [5], "int64"),
        ("tensor", "0 0 25 281 810", [5], "int64"),
        ("value", 16),
        ("randn", [810], "float32"),
    ],
    "b4_n16_d40_fp16": [
        ("randn", [44, 40], "float16"),
        ("randn", [44, 40], "float16"),
        ("tensor", "0 0 5 21 44", [5], "int64"),
        ("tensor", "0 0 25 281 810", [5], "int64"),
        ("value", 16),
        ("randn", [810], "float16"),
    ],
    "b4_n16_d40_bf16": [
        ("randn", [44, 40], "bfloat16"),
        ("randn", [44, 40], "bfloat16"),
        ("tensor", "0 0 5 21 44", [5], "int64"),
        ("tensor", "0 0 25 281 810", [5], "int64"),
        ("value", 16),
        ("randn", [810], "bfloat16"),
    ],
    "b3_n40_d24_fp32": [
        ("randn", [97, 24], "float32"),
        ("randn", [97, 24], "float32"),
        ("tensor", "0 40 40 97", [4], "int64"),
        ("tensor", "0 1600 1600 4849", [4], "int64"),
        ("value", 40),
        ("randn", [4849], "float32"),
    ],
    "b3_n40_d24_fp16": [
        ("randn", [97, 24], "float16"),
        ("randn", [97, 24], "float16"),
        ("tensor", "0 40 40 97", [4], "int64"),
        ("tensor", "0 1600 1600 4849", [4], "int64"),
        ("value", 40),
        ("randn", [4849], "float16"),
    ],
    "b3_n40_d24_bf16": [
        ("randn", [97, 24], "bfloat16"),
        ("randn", [97, 24], "bfloat16"),
        ("tensor", "0 40 40 97", [4], "int64"),
        ("tensor", "0 1600 1600 4849", [4], "int64"),
        ("value", 40),
        ("randn", [4849], "bfloat16"),
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
