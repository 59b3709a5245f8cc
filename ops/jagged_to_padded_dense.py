"""jagged_to_padded_dense (FBGEMM Triton `jagged_to_dense`): [sum_L, D] -> [B, max_len, D], padded."""

from __future__ import annotations

import dataclasses

import torch

from .cases import effective_lengths
from .jagged import pad_rows
from .jagged_copy import COPY_KERNEL, UPSTREAM_BLOCK, UPSTREAM_FILE, JaggedCopyOp
from .ports import load_port
from .spec import Case, Config, KernelSpec, Tensors

NAME = "jagged_to_padded_dense"
#: Not zero, so a padded position the kernel forgot to write cannot pass as padding.
PADDING_VALUE = -1.0


class JaggedToPaddedDense(JaggedCopyOp):
    name = NAME
    summary = "Copy a 2-D jagged tensor into a [B, max_len, D] dense one, padding short sequences"
    output = "dense"
    input_names = ("values", "offsets", "max_seq_len")
    output_names = ("dense",)
    upstream = dataclasses.replace(UPSTREAM_FILE, functions=("jagged_to_dense",), lines="268-624")
    kernels = (
        KernelSpec(
            **COPY_KERNEL,
            port_kernel="_jagged_to_padded_dense_kernel",
            outputs=("dense",),
            upstream_kernel="triton_jagged_to_dense_optimization_2d",
        ),
    )

    def make_inputs(self, case: Case, device: torch.device, seed: int = 0) -> Tensors:
        common = self._common(case, device)
        rows, d = max(0, int(common["offsets"][-1])), case.shape["D"]
        values = torch.randn(rows, d, generator=self._generator(case, seed)).to(case.torch_dtype)
        return {"values": values.to(device), **common}

    def reference(self, inputs: Tensors, compute_dtype: torch.dtype = torch.float64) -> Tensors:
        n = int(inputs["max_seq_len"])
        padded, mask = pad_rows(inputs["values"].to(compute_dtype), inputs["offsets"], n)
        return {
            "dense": torch.where(mask[..., None], padded, torch.full_like(padded, PADDING_VALUE))
        }

    def traffic(self, case: Case, part: str) -> tuple[int, int]:
        """Bytes: the first min(len_b, max_seq_len) rows of values read, the whole [B, N, D]
        dense written (padding included). Flops: none, a copy."""
        b, n, d = (case.shape[k] for k in self.shape_keys)
        size = case.torch_dtype.itemsize
        return (sum(effective_lengths(case)) * d + b * n * d) * size, 0

    def launch(self, kernel: str, inputs: Tensors, config: Config | None) -> Tensors:
        port = load_port(NAME)
        n = int(inputs["max_seq_len"])
        dense = port.jagged_to_padded_dense(
            inputs["values"], [inputs["offsets"]], [n], PADDING_VALUE, config=config
        )
        return {"dense": dense}

    def run_upstream(self, inputs: Tensors, case: Case) -> Tensors:
        up = self.upstream_module()
        values, offsets = inputs["values"], inputs["offsets"]
        n = int(inputs["max_seq_len"])
        if values.is_cuda:
            return {"dense": up.jagged_to_dense(values, [offsets], [n], PADDING_VALUE)}
        # Upstream's wrapper allocates on "cuda"; elsewhere launch its kernel exactly as it does.
        dense = torch.empty(
            offsets.numel() - 1, n, values.size(1), dtype=values.dtype, device=values.device
        )
        up.triton_jagged_to_dense_optimization_2d[(dense.size(0),)](
            values, offsets, values.stride(0), dense, dense.stride(-2), dense.stride(-3),
            UPSTREAM_BLOCK, UPSTREAM_BLOCK, padded_value=PADDING_VALUE,
            operation_function=None, operation_dense=None,
        )  # fmt: skip
        return {"dense": dense}


SPEC = JaggedToPaddedDense()
