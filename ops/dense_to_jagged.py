"""dense_to_jagged (FBGEMM Triton `dense_to_jagged`): [B, max_len, D] -> [sum_L, D].

Rows of a sequence beyond max_len have no dense source and come out as zeros.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import torch

from .cases import effective_lengths, total_rows
from .jagged import unpad_rows
from .jagged_copy import COPY_KERNEL, UPSTREAM_BLOCK, UPSTREAM_FILE, JaggedCopyOp
from .ports import load_port
from .spec import Case, Config, KernelSpec, Tensors

NAME = "dense_to_jagged"


class DenseToJagged(JaggedCopyOp):
    name = NAME
    summary = "Gather the real rows of a [B, max_len, D] dense tensor into a 2-D jagged one"
    output = "values"
    input_names = ("dense", "offsets", "max_seq_len")
    output_names = ("values",)
    upstream = dataclasses.replace(UPSTREAM_FILE, functions=("dense_to_jagged",), lines="627-776")
    kernels = (
        KernelSpec(
            **COPY_KERNEL,
            port_kernel="_dense_to_jagged_kernel",
            outputs=("values",),
            upstream_kernel="triton_dense_to_jagged",
        ),
    )

    def make_inputs(self, case: Case, device: torch.device, seed: int = 0) -> Tensors:
        b, n, d = (case.shape[k] for k in self.shape_keys)
        dense = torch.randn(b, n, d, generator=self._generator(case, seed)).to(case.torch_dtype)
        # A host value: launches never read offsets[-1] from the device.
        rows = torch.tensor(total_rows(case))
        return {"dense": dense.to(device), **self._common(case, device), "total_rows": rows}

    def reference(self, inputs: Tensors, compute_dtype: torch.dtype = torch.float64) -> Tensors:
        offsets = inputs["offsets"]
        return {"values": unpad_rows(inputs["dense"].to(compute_dtype), offsets, int(offsets[-1]))}

    def traffic(self, case: Case, part: str) -> tuple[int, int]:
        """Bytes: the dense rows that have a jagged row (min(len_b, max_seq_len) of sequence b)
        read, all sum_L rows of values written (those past max_seq_len as zeros). Flops: none."""
        d = case.shape["D"]
        rows_read = sum(effective_lengths(case))
        return (rows_read + total_rows(case)) * d * case.torch_dtype.itemsize, 0

    def launch(self, kernel: str, inputs: Tensors, config: Config | None) -> Tensors:
        port = load_port(NAME)
        values, _ = port.dense_to_jagged(
            inputs["dense"], [inputs["offsets"]], int(inputs["total_rows"]), config=config
        )
        return {"values": values}

    def run_upstream(self, inputs: Tensors, case: Case) -> Tensors:
        up = self.upstream_module()
        dense, offsets = inputs["dense"], inputs["offsets"]
        if dense.is_cuda:
            return {"values": up.dense_to_jagged(dense, [offsets])[0]}
        # Upstream's wrapper allocates on "cuda"; elsewhere launch its kernel exactly as it does.
        values = self._values(inputs)
        self._upstream_kernel(up, inputs, values)()
        return {"values": values}

    @staticmethod
    def _values(inputs: Tensors) -> torch.Tensor:
        dense = inputs["dense"]
        rows = int(inputs["total_rows"])
        return torch.empty(rows, dense.size(-1), dtype=dense.dtype, device=dense.device)

    @staticmethod
    def _upstream_kernel(up, inputs: Tensors, values: torch.Tensor) -> Callable[[], object]:
        """Upstream's kernel launched as its dense_to_jagged wrapper launches it, into `values`
        (the wrapper reads offsets[-1] on the host to allocate it: outside the call)."""
        dense, offsets = inputs["dense"], inputs["offsets"]
        return lambda: up.triton_dense_to_jagged[(offsets.numel() - 1,)](
            values, offsets, values.stride(0), dense, None,
            dense.stride(-1), dense.stride(-2), dense.stride(-3), 2, UPSTREAM_BLOCK, UPSTREAM_BLOCK,
            operation_function=None, operation_jagged_value_ptr=None,
        )  # fmt: skip

    def upstream_part(self, part: str, inputs: Tensors, case: Case) -> Callable[[], object]:
        return self._upstream_kernel(self.upstream_module(), inputs, self._values(inputs))


SPEC = DenseToJagged()
