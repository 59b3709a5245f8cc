"""jagged_dense_elementwise_add (FBGEMM SLL `jagged_dense_elementwise_add`, Triton path).

out[offsets[b] + l, :] = x[offsets[b] + l, :] + (y[b, l, :] if l < max_seq_len else 0): jagged
rows past max_seq_len are kept, not truncated (upstream's documented behaviour). Backward:
dx = dout (no kernel), dy[b, l, :] = dout[offsets[b] + l, :] for l < min(len_b, max_seq_len), else 0.
"""

from __future__ import annotations

from collections.abc import Callable

import torch

from core.upstream import check_pinned, load

from .cases import effective_lengths, total_rows
from .jagged import pad_rows
from .jagged_copy import COPY_KERNEL, UPSTREAM_BLOCK, UPSTREAM_FILE, JaggedCopyOp
from .ports import load_port
from .spec import Case, Config, KernelSpec, Tensors, Upstream

NAME = "jagged_dense_elementwise_add"


def _fwd_tiles(config: Config, case: Case) -> int:
    """x and y tiles in the dtype, their fp32 sum, the output tile in the dtype."""
    tile = config["BLOCK_ROW"] * config["BLOCK_COL"]
    return tile * (3 * case.torch_dtype.itemsize + 4)


def _fwd_stream(config: Config, case: Case) -> int:
    return 2 * config["BLOCK_ROW"] * config["BLOCK_COL"] * case.torch_dtype.itemsize


class JaggedDenseElementwiseAdd(JaggedCopyOp):
    name = NAME
    summary = "Add a padded dense tensor to a 2-D jagged one, jagged output; forward and backward"
    output = "out"
    # The SLL entry point is a thin autograd wrapper (its file is pinned by hash here); the kernels
    # it runs, dense_to_jagged(operation_function="add") and jagged_to_dense, live in
    # triton/jagged/triton_jagged_tensor_ops.py (UPSTREAM_FILE, pinned too).
    upstream = Upstream(
        file="sll/triton/triton_jagged_dense_elementwise_add.py",
        sha256="15167bbea693231556933b6be74abde1489cdb4f5ed8aae22e017edcf403e903",
        functions=("jagged_dense_elementwise_add",),
        lines="18-53",
    )
    input_names = ("x", "offsets", "y", "max_seq_len", "dout")
    output_names = ("out", "dy")
    kernels = (
        KernelSpec(
            **{**COPY_KERNEL, "tile_bytes": _fwd_tiles, "stream_bytes": _fwd_stream},
            port_kernel="_jagged_dense_add_kernel",
            outputs=("out",),
            upstream_kernel="triton_dense_to_jagged",
        ),
        KernelSpec(
            **{**COPY_KERNEL, "name": "bwd"},
            port_kernel="_jagged_to_dense_grad_kernel",
            outputs=("dy",),
            upstream_kernel="triton_jagged_to_dense_optimization_2d",
        ),
    )
    parts = {"fwd": ("fwd",), "bwd": ("bwd",)}

    def make_inputs(self, case: Case, device: torch.device, seed: int = 0) -> Tensors:
        common = self._common(case, device)
        b, n, d = (case.shape[k] for k in self.shape_keys)
        rows = max(0, int(common["offsets"][-1]))
        gen = self._generator(case, seed)
        tensors = {
            "x": torch.randn(rows, d, generator=gen),
            "y": torch.randn(b, n, d, generator=gen),
            "dout": torch.randn(rows, d, generator=gen),
        }
        out = {k: v.to(case.torch_dtype).to(device) for k, v in tensors.items()}
        return {**out, **common}

    def reference(self, inputs: Tensors, compute_dtype: torch.dtype = torch.float64) -> Tensors:
        n = int(inputs["max_seq_len"])
        offsets = inputs["offsets"]
        x, y, dout = (inputs[k].to(compute_dtype) for k in ("x", "y", "dout"))
        rows = torch.arange(x.size(0), device=x.device)
        seq = torch.searchsorted(offsets[1:], rows, right=True)  # sequence of each jagged row
        pos = rows - offsets[:-1][seq]
        inside = pos < n
        added = y[seq.clamp(max=max(y.size(0) - 1, 0)), pos.clamp(max=max(n - 1, 0))]
        out = x + torch.where(inside[:, None], added, torch.zeros_like(added))
        dy, _ = pad_rows(dout, offsets, n)
        return {"out": out, "dy": dy}

    def upstream_outputs(self, case: Case) -> tuple[str, ...]:
        return ("out", "dy")

    def upstream_module(self):
        """The jagged tensor ops' module, which upstream's wrapper (sll's file, whose bytes are
        checked too, but which is not loaded: it imports `fbgemm_gpu` by its own name, whose
        `__init__` loads compiled ops built for one torch) calls. Both checks run once per
        process: this is called in timed calls."""
        check_pinned(self.upstream.file, self.upstream.sha256)
        return load(UPSTREAM_FILE.file, UPSTREAM_FILE.sha256)

    def traffic(self, case: Case, part: str) -> tuple[int, int]:
        """With E = sum_b min(len_b, max_seq_len) rows that meet y and R = sum_L rows, per element
        of D. fwd: x (R) read, y (E) read, out (R) written; E adds (rows past max_seq_len are
        copied). bwd: dout (E) read, dy (B * max_seq_len, padding zeros) written; no flops
        (dx = dout is no kernel)."""
        b, n, d = (case.shape[k] for k in self.shape_keys)
        e, r = sum(effective_lengths(case)), total_rows(case)
        size = case.torch_dtype.itemsize
        if part == "fwd":
            return (2 * r + e) * d * size, e * d
        return (e + b * n) * d * size, 0

    # -- the port ------------------------------------------------------------------------------
    def _fwd(self, inputs: Tensors, config: Config | None):
        port = load_port(NAME)
        x, offsets, y = inputs["x"], inputs["offsets"], inputs["y"]
        return port.jagged_dense_elementwise_add_fwd(x, offsets, y, config=config)

    def _bwd(self, inputs: Tensors, config: Config | None):
        port = load_port(NAME)
        dout, offsets = inputs["dout"], inputs["offsets"]
        return port.jagged_dense_elementwise_add_bwd(
            dout, offsets, int(inputs["max_seq_len"]), config=config
        )

    def run_port(self, inputs: Tensors, configs: dict[str, Config] | None = None) -> Tensors:
        configs = configs or {}
        out = self._fwd(inputs, configs.get("fwd"))
        _, dy = self._bwd(inputs, configs.get("bwd"))
        return {"out": out, "dy": dy}

    def launch(self, kernel: str, inputs: Tensors, config: Config | None) -> Tensors:
        if kernel == "fwd":
            return {"out": self._fwd(inputs, config)}
        if kernel == "bwd":
            return {"dy": self._bwd(inputs, config)[1]}
        raise ValueError(f"unknown kernel {kernel!r}")

    def port_part(
        self, part: str, inputs: Tensors, configs: dict[str, Config] | None
    ) -> Callable[[], object]:
        configs = configs or {}
        if part == "fwd":
            return lambda: self._fwd(inputs, configs.get("fwd"))
        return lambda: self._bwd(inputs, configs.get("bwd"))

    # -- upstream ------------------------------------------------------------------------------
    def _upstream_fwd(self, inputs: Tensors):
        up = self.upstream_module()
        x, offsets, y = inputs["x"], inputs["offsets"], inputs["y"]
        if x.is_cuda:  # JaggedDenseAdd.forward
            return up.dense_to_jagged(y, [offsets], operation_function="add", operation_jagged_values=x)[0]  # fmt: skip
        # Upstream's wrapper allocates on "cuda"; elsewhere launch its kernel exactly as it does.
        out = torch.empty(x.shape, dtype=y.dtype, device=x.device)
        up.triton_dense_to_jagged[(offsets.numel() - 1,)](
            out, offsets, out.stride(0), y, None, y.stride(-1), y.stride(-2), y.stride(-3),
            2, UPSTREAM_BLOCK, UPSTREAM_BLOCK,
            operation_function="add", operation_jagged_value_ptr=x,
        )  # fmt: skip
        return out

    def _upstream_bwd(self, inputs: Tensors):
        up = self.upstream_module()
        dout, offsets = inputs["dout"], inputs["offsets"]
        n = int(inputs["max_seq_len"])
        if dout.is_cuda:  # JaggedDenseAdd.backward: (grad_output, None, grad_dense, None)
            return dout, up.jagged_to_dense(dout, [offsets], [n])
        dense = torch.empty(
            offsets.numel() - 1, n, dout.size(1), dtype=dout.dtype, device=dout.device
        )
        up.triton_jagged_to_dense_optimization_2d[(dense.size(0),)](
            dout, offsets, dout.stride(0), dense, dense.stride(-2), dense.stride(-3),
            UPSTREAM_BLOCK, UPSTREAM_BLOCK, padded_value=0.0,
            operation_function=None, operation_dense=None,
        )  # fmt: skip
        return dout, dense

    def run_upstream(self, inputs: Tensors, case: Case) -> Tensors:
        return {"out": self._upstream_fwd(inputs), "dy": self._upstream_bwd(inputs)[1]}

    def upstream_part(self, part: str, inputs: Tensors, case: Case) -> Callable[[], object]:
        if part == "fwd":
            return lambda: self._upstream_fwd(inputs)
        return lambda: self._upstream_bwd(inputs)


SPEC = JaggedDenseElementwiseAdd()
