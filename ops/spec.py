"""The contract every op spec module fulfils: cases, reference, tolerances, kernels and their spaces.

An op module in this package defines `SPEC = SomeOp()` (a subclass of `OpSpec`); `ops.all_ops()`
finds it. The port it describes lives in the op's ATK folder and is loaded by path.
"""

from __future__ import annotations

import math
import types
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Literal

import torch

from core.limits import DeviceLimits
from core.upstream import FBGEMM, UpstreamSource, load

from .jagged import skewed_lengths, user_lengths
from .npu_tunables import SIMT_ONLY, SIMT_WARPS
from .tunable import PROGRAMS, Tunable

#: Tunable values: ints, booleans for on/off options (named, so that a pydantic model holding a
#: config keeps them booleans), and the one string `compile_mode`.
Config = dict[str, bool | int | str]
Tensors = dict[str, torch.Tensor]
CaseKind = Literal["accuracy", "performance"]

DTYPES: dict[str, torch.dtype] = {
    "float32": torch.float32,
    "float16": torch.float16,
    "bfloat16": torch.bfloat16,
}
#: Dtype names as case names spell them (`b4_n16_d40_fp32`).
SHORT_DTYPE = {"float32": "fp32", "float16": "fp16", "bfloat16": "bf16"}
DTYPE_ALIASES = {short: name for name, short in SHORT_DTYPE.items()} | {"half": "float16"}


def canonical_dtype(name: str) -> str:
    """`bf16` -> `bfloat16`; raises ValueError naming the accepted spellings."""
    key = DTYPE_ALIASES.get(name.strip().lower(), name.strip().lower())
    if key not in DTYPES:
        raise ValueError(
            f"unknown dtype {name!r}; use one of {', '.join(DTYPES)} (or fp32, fp16, bf16)"
        )
    return key


def next_pow2(n: int) -> int:
    return 1 << max(0, math.ceil(math.log2(max(1, n))))


def pow2_range(lo: int, hi: int) -> tuple[int, ...]:
    return tuple(1 << e for e in range(int(math.log2(lo)), int(math.log2(hi)) + 1))


@dataclass(frozen=True)
class Dot:
    """One `tl.dot` of a kernel: [m, k] @ [k, n] operands of `size` bytes an element, an fp32
    [m, n] result. On Ascend's cube core the operands are copied into L1 (cbuf) and the result
    accumulates in L0C. `fixed` names the operands ("a", "b") loaded once before the kernel's
    loop; the others, and the result, belong to the loop, which multibuffer double-buffers.

    Where the unified buffer comes in (`cube_resident`): an operand the kernel loads for the dot
    goes from global memory to L1 by the cube's DMA, one its vector code computes (`vector`: a
    softmax's p, a gradient ds) is in the UB first; a result the vector code reads is copied
    from L0C into the UB, one `stored` is not: it accumulates in L0C and goes from there to
    global memory (a bmm's, a gradient the loop only adds to)."""

    m: int
    n: int
    k: int
    size: int
    fixed: str = ""
    vector: str = ""
    stored: bool = False
    #: The row length, in elements, of each operand the vector code makes (or transposes), as it
    #: lies in the UB: a transposed operand's rows run along its other dimension.
    vector_rows: tuple[int, ...] = ()


def cube_bytes(dots: tuple[Dot, ...], multibuffer: bool) -> tuple[int, int]:
    """(L1, L0C) bytes the dots of a kernel need.

    L1 holds every operand (a bound from above: an operand two dots share counts twice), those of
    the loop twice under multibuffer: bishengir's MarkMultiBuffer pass doubles only buffers
    allocated inside a loop, L1 written by ND2NZ among them (Ascend/AscendNPU-IR,
    bishengir/lib/Dialect/HIVM/Transforms/MarkMultiBuffer.cpp). L0C is not doubled. It needs at
    least every accumulator of the loop (`stored` results) and the largest other result: where
    all fit, bishengir-compile gives each result a buffer of its own (their sum is the L0C it
    plans for the 910B for all but two of the dot kernels here, multibuffered or not), and where
    they do not it shares buffers (a bwd_dk of 128 x 128 tiles plans its three 64 KiB results
    in 128 KiB): the compile matrix, docs/benchmarks.md."""
    copies = 2 if multibuffer else 1
    l1 = 0
    for dot in dots:
        for name, elements in (("a", dot.m * dot.k), ("b", dot.k * dot.n)):
            l1 += elements * dot.size * (1 if name in dot.fixed else copies)
    kept = sum(4 * dot.m * dot.n for dot in dots if dot.stored)
    passing = max((4 * dot.m * dot.n for dot in dots if not dot.stored), default=0)
    return l1, kept + passing


def cube_resident(dots: tuple[Dot, ...]) -> int:
    """Bytes of dot operands and results that never pass through the unified buffer: operands
    loaded for the dot go from global memory to L1 by the cube's DMA, stored results from L0C to
    global memory by fixpipe (see `Dot`). A kernel's `tile_bytes` counts them with its other
    tiles; the compiler keeps them out of the UB (it plans no UB at all for a jagged_dense_bmm
    forward: `autotune space --compile`)."""
    resident = 0
    for dot in dots:
        for name, elements in (("a", dot.m * dot.k), ("b", dot.k * dot.n)):
            if name not in dot.vector:
                resident += elements * dot.size
        if dot.stored:
            resident += 4 * dot.m * dot.n
    return resident


@dataclass(frozen=True)
class Case:
    """One input of an op: a shape, a dtype and the jagged lengths, all deterministic."""

    op: str
    name: str
    shape: dict[str, int]
    dtype: str
    lengths: tuple[int, ...] = ()
    kind: CaseKind = "accuracy"
    #: User-given offsets (CLI `--offsets`), kept verbatim so a launcher's checked mode sees them.
    offsets: tuple[int, ...] | None = None

    @property
    def torch_dtype(self) -> torch.dtype:
        return DTYPES[self.dtype]

    def describe(self) -> str:
        return " ".join(f"{k}={v}" for k, v in self.shape.items()) + f" {self.dtype}"


Constraint = Callable[[Config, Case, DeviceLimits], "str | None"]

#: Host bytes of one sequence length: a Python int in a tuple, and its int64 offset.
LENGTH_BYTES = 44


@dataclass(frozen=True)
class Footprint:
    """Bytes a case takes: on the host (inputs as made, the float64 golden, the lengths) and on
    the device (inputs, outputs and the op's intermediates)."""

    host: int
    device: int

    def scaled(self, factor: float) -> Footprint:
        return Footprint(host=int(self.host * factor), device=int(self.device * factor))


@dataclass(frozen=True)
class KernelSpec:
    """A `@triton.jit` function of the port with tunables."""

    name: str
    tunables: tuple[Tunable, ...]
    #: Outputs of the op this kernel produces; its correctness gate compares them with the golden.
    outputs: tuple[str, ...]
    #: The upstream default for a case (a function, since e.g. BLOCK_D = D upstream).
    default: Callable[[Case], Config]
    #: The classic launch grid for a config and case (one program per block), for the grid
    #: limits of a backend; a kernel with `PROGRAMS` launches `launch_grid`.
    grid: Callable[[Config, Case], tuple[int, ...]]
    #: Bytes of the tiles live at once in one program (inputs in their dtype, fp32 intermediates):
    #: the unified-buffer footprint on Ascend.
    tile_bytes: Callable[[Config, Case], int]
    #: Bytes one loop iteration loads; Triton multi-buffers them in shared memory, so
    #: `stream_bytes * (num_stages - 1)` is a lower bound of the shared memory a CUDA launch needs.
    #: On Ascend, multibuffer doubles them in the unified buffer (and nothing else there).
    stream_bytes: Callable[[Config, Case], int]
    constraints: tuple[Constraint, ...] = field(default=())
    #: False for a kernel without a loop: multibuffer has nothing to double.
    loops: bool = True
    #: The kernel's `tl.dot`s for a config and case, for Ascend's L1 and L0C; None: it has none.
    dots: Callable[[Config, Case], tuple[Dot, ...]] | None = None
    #: Name of the `@triton.jit` function in the port file (its source keys the study).
    port_kernel: str = ""
    #: Name of the upstream `@triton.jit` function this kernel ports.
    upstream_kernel: str = ""
    #: Other upstream `@triton.jit` functions this kernel does the work of (launch variants of
    #: one computation that the port runs as one kernel); `upstream_kernels` has them all.
    upstream_variants: tuple[str, ...] = ()
    #: The kernel whose input this one's config sizes (a norm's bwd_dx leaves bwd_dw a partial
    #: row per program): a trial times both (`OpSpec.timed_call`), so that no config wins by
    #: moving work into the next kernel, and its studies are others than those of it alone.
    feeds: str = ""
    #: Shape keys of the dimensions one program holds whole (a norm's row): the kernel's block
    #: is the dimension padded to a power of two, no tunable. A config frozen for another padded
    #: size was tuned for another tile, so a launcher facing a shape nobody froze scales the
    #: nearest case's warps with that size (the generated block's `_WHOLE_KEYS`, `_fit_warps`).
    whole_keys: tuple[str, ...] = ()

    @property
    def upstream_kernels(self) -> tuple[str, ...]:
        """Every upstream `@triton.jit` function this kernel covers (the coverage table's)."""
        return tuple(n for n in (self.upstream_kernel, *self.upstream_variants) if n)

    def tunable(self, name: str) -> Tunable:
        return next(t for t in self.tunables if t.name == name)

    def launch_grid(self, config: Config, case: Case, limits: DeviceLimits) -> tuple[int, ...]:
        """The grid a launch of this config has: the classic `grid`, or for a program count
        (`PROGRAMS`) that many programs per core, at most one per block. Where the device's core
        count is unknown, the classic grid bounds it. (A kernel that counts its programs
        outright, the norms' NUM_PROGRAMS, says so in its `grid`.)"""
        grid = self.grid(config, case)
        programs = config.get(PROGRAMS.name, 0) if PROGRAMS in self.tunables else 0
        cores = limits.vector_cores or limits.cores
        if not programs or cores is None:
            return grid
        return (max(1, min(math.prod(grid), int(programs) * cores)),)

    @property
    def tile_keys(self) -> dict[str, str]:
        """tunable -> the shape key of the dimension it tiles (its BlockFits constraint)."""
        return {c.tunable: c.key for c in self.constraints if isinstance(c, BlockFits)}

    def same_launch(self, a: Config, b: Config) -> bool:
        """Whether two configs launch alike: a key one of them leaves out is taken at its
        tunable's default (an M1 config frozen before PROGRAMS existed is PROGRAMS=0)."""
        defaults = {t.name: t.default for t in self.tunables if t.default is not None}
        return {**defaults, **a} == {**defaults, **b}

    def violation(self, config: Config, case: Case, limits: DeviceLimits) -> str | None:
        """The first reason this config cannot run on this case and device, or None."""
        return (
            self._launch_limits(config, case, limits)
            or self.on_chip_violation(config, case, limits)
            or self._constraints(config, case, limits)
        )

    def launch_violation(self, config: Config, case: Case, limits: DeviceLimits) -> str | None:
        """What a compiler cannot see: values outside the tunables, a grid over the device's
        limits, the op's own constraints; everything `violation` checks but on-chip memory."""
        return self._launch_limits(config, case, limits) or self._constraints(config, case, limits)

    def _launch_limits(self, config: Config, case: Case, limits: DeviceLimits) -> str | None:
        simt = config.get(SIMT_ONLY.name) in SIMT_ONLY.values
        for tunable in self.tunables:
            if simt and tunable.name == SIMT_WARPS.name:
                tunable = SIMT_WARPS  # Ascend SIMT code has warp counts of its own
            if tunable.name in config and config[tunable.name] not in tunable.values:
                return f"{tunable.name}={config[tunable.name]} is outside {list(tunable.values)}"
        grid = self.launch_grid(config, case, limits)
        for axis, (size, limit) in enumerate(zip(grid, limits.max_grid, strict=False)):
            if size > limit:
                return f"grid axis {axis} has {size} blocks, over the limit {limit}"
        if limits.max_total_blocks is not None and math.prod(grid) > limits.max_total_blocks:
            return f"grid of {math.prod(grid)} blocks is over the limit {limits.max_total_blocks}"
        return None

    def _constraints(self, config: Config, case: Case, limits: DeviceLimits) -> str | None:
        if limits.shared_memory_bytes is not None:
            need = self.stream_bytes(config, case) * (config.get("num_stages", 1) - 1)
            if need > limits.shared_memory_bytes:
                return f"pipelined tiles need at least {need} B of shared memory, over {limits.shared_memory_bytes} B"
        for constraint in self.constraints:
            reason = constraint(config, case, limits)
            if reason:
                return reason
        return None

    def on_chip_violation(self, config: Config, case: Case, limits: DeviceLimits) -> str | None:
        """Ascend: the tiles over the unified buffer, or the dot operands over L1 or results over
        L0C. Multibuffer doubles only what a loop moves (see `cube_bytes`); the dots' operands
        and results are counted where the compiler keeps them, not in the UB (`cube_resident`).
        Also the one config pattern the soc's compiler is known to abort on."""
        multibuffer = bool(config.get("multibuffer")) and self.loops
        dots = self.dots(config, case) if self.dots is not None else ()
        if config.get(SIMT_ONLY.name) in SIMT_ONLY.values:
            dots = ()  # SIMT code runs on the vector cores alone: its dots are UB tiles too
        if limits.unified_buffer_bytes is not None:
            # Of a kernel with dots, the compiler doubles the streamed UB tiles in some loops
            # and not in others (an attention forward's never, its bwd_dk's mostly: the compile
            # matrix, docs/benchmarks.md): those count once, a bound from below.
            streamed = self.stream_bytes(config, case) if multibuffer and not dots else 0
            need = self.tile_bytes(config, case) - cube_resident(dots) + streamed
            registers = limits.register_file_bytes or 0
            if need > limits.unified_buffer_bytes + registers:
                also = f" and {registers} B of registers" if registers else ""
                return (
                    f"tiles need {need} B of unified buffer, over {limits.unified_buffer_bytes} B"
                    + also
                )
        if not dots:
            return None
        crash = limits.crashing_dot_row_bytes
        rows = {row * dot.size for dot in dots for row in dot.vector_rows}
        if crash is not None and crash in rows:
            return (
                f"the compiler aborts on a dot operand the vector code makes with rows of {crash} "
                "B (bishengir-compile-a5 1.2.0: an identity vtranspose replaced with a value, "
                "AscendNPU-IR f9d978b HIVMCanonicalizations.cpp:376)"
            )
        l1, l0c = cube_bytes(dots, multibuffer)
        if limits.l1_bytes is not None and l1 > limits.l1_bytes:
            return f"dot operands need {l1} B of L1, over {limits.l1_bytes} B"
        if limits.l0c_bytes is not None and l0c > limits.l0c_bytes:
            return f"dot results need {l0c} B of L0C, over {limits.l0c_bytes} B"
        return None


@dataclass(frozen=True)
class BlockFits:
    """A constraint: the block `tunable` is no larger than `bound(case)`, the dimension it tiles
    padded (a larger block only computes padding). `key` names the shape key of that dimension:
    a launcher facing a shape nobody froze shrinks a nearest case's block to it (the generated
    block's `_TILE_KEYS`)."""

    tunable: str
    bound: Callable[[Case], int]
    key: str

    def __call__(self, config: Config, case: Case, limits: DeviceLimits) -> str | None:
        limit = self.bound(case)
        if self.tunable in config and config[self.tunable] > limit:
            return (
                f"{self.tunable}={config[self.tunable]} is larger than {self.key} padded to {limit}"
            )
        return None


@dataclass(frozen=True)
class Upstream:
    """Where the upstream kernels of an op come from (see core.upstream)."""

    file: str  # relative to the source's root, e.g. "sll/triton/triton_jagged_softmax.py"
    sha256: str
    functions: tuple[str, ...]  # the public entry points the op calls
    lines: str  # line range in the upstream file, e.g. "17-864"
    source: UpstreamSource = FBGEMM

    def load(self) -> types.ModuleType:
        """The upstream module, checked against its pin (UserError, one line, where it cannot)."""
        return load(self.file, self.sha256, self.source)

    def missing(self) -> str | None:
        """Why upstream cannot be loaded here (one line: no checkout, say), or None."""
        return self.source.missing()


#: How the performance cases' jagged lengths are made, as `<op>_performance.json` states it.
LENGTHS_RULE = (
    "ops.jagged.skewed_lengths(B, max_seq_len): floor(frac(i * 0.618...)^2 * 1.25 * max_seq_len)"
)


class OpSpec(ABC):
    """What to run for one op; `autotuner` decides how."""

    name: str
    summary: str
    upstream: Upstream
    #: The rule of the performance cases' lengths (an op whose cases make them otherwise says so).
    lengths_rule: str = LENGTHS_RULE
    #: Whether a case has sequence lengths (jagged rows); False for ops over dense rows, whose
    #: user cases are a shape alone.
    jagged: bool = True
    #: Keys of `Case.shape`, in order; launchers match frozen cases on these.
    shape_keys: tuple[str, ...]
    #: Names of `make_inputs`' tensors in the order the ATK APIs take them.
    input_names: tuple[str, ...]
    #: Names of the op's outputs in the order the ATK APIs return them.
    output_names: tuple[str, ...]
    dtypes: tuple[str, ...] = ("float32", "float16", "bfloat16")
    #: Norm-wise relative error a tuned config may have against the float64 golden, per dtype.
    tolerance: dict[str, float] = {"float32": 1e-4, "float16": 5e-3, "bfloat16": 4e-2}
    kernels: tuple[KernelSpec, ...]

    # -- cases -------------------------------------------------------------------------------
    @abstractmethod
    def cases(self, kind: CaseKind) -> list[Case]:
        """Accuracy cases are interpreter-sized; performance cases are realistic shapes."""

    def case(self, name: str, kind: CaseKind | None = None) -> Case:
        kinds: Iterable[CaseKind] = (kind,) if kind else ("accuracy", "performance")
        for k in kinds:
            for c in self.cases(k):
                if c.name == name:
                    return c
        valid = [c.name for k in kinds for c in self.cases(k)]
        raise ValueError(f"unknown case {name!r} for {self.name}; valid: {', '.join(valid)}")

    @abstractmethod
    def make_case(
        self,
        shape: dict[str, int],
        dtype: str,
        lengths: tuple[int, ...],
        kind: CaseKind,
        offsets: tuple[int, ...] | None = None,
    ) -> Case:
        """A case named after its shape and dtype."""

    def case_from_shape(self, shape: dict[str, int], dtype: str, offsets: list[int] | None) -> Case:
        """A user-given case (CLI `--shape`, `--offsets`); ValueError with one line if malformed."""
        missing = [k for k in self.shape_keys if k not in shape]
        extra = [k for k in shape if k not in self.shape_keys]
        if missing or extra:
            raise ValueError(
                f"{self.name} shapes take exactly {', '.join(self.shape_keys)}"
                + (f"; missing {', '.join(missing)}" if missing else "")
                + (f"; unknown {', '.join(extra)}" if extra else "")
            )
        bad = [k for k, v in shape.items() if v <= 0]
        if bad:
            raise ValueError(
                f"shape values must be positive: {', '.join(f'{k}={shape[k]}' for k in bad)}"
            )
        batch = shape["B"]
        lengths, given = user_lengths(batch, offsets, skewed_lengths(batch, shape["max_seq_len"]))
        ordered = {k: shape[k] for k in self.shape_keys}
        return self.make_case(ordered, canonical_dtype(dtype), lengths, "accuracy", given)

    # -- data --------------------------------------------------------------------------------
    @abstractmethod
    def make_inputs(self, case: Case, device: torch.device, seed: int = 0) -> Tensors:
        """Inputs in the case dtype on `device`; values seeded, shapes deterministic."""

    @abstractmethod
    def reference(self, inputs: Tensors, compute_dtype: torch.dtype = torch.float64) -> Tensors:
        """Outputs (and intermediates the kernels need) computed with plain torch ops.

        In float64 this is the golden; in the case dtype it is what a user gets from torch alone,
        the second reference where upstream cannot run a dtype.
        """

    def tolerance_for(self, case: Case) -> float:
        """The tuning gate's tolerance for a case (by dtype unless the op says otherwise)."""
        return self.tolerance[case.dtype]

    def comparable(self, name: str, tensor: torch.Tensor, inputs: Tensors) -> torch.Tensor:
        """The part of an output that is defined (e.g. lse of non-empty sequences only)."""
        return tensor

    # -- the port and upstream ---------------------------------------------------------------
    @abstractmethod
    def run_port(self, inputs: Tensors, configs: dict[str, Config] | None = None) -> Tensors:
        """The whole op through the port's launchers (frozen or default configs unless given)."""

    @abstractmethod
    def upstream_outputs(self, case: Case) -> tuple[str, ...]:
        """Outputs upstream can produce for this case (none where it cannot run the dtype)."""

    @abstractmethod
    def run_upstream(self, inputs: Tensors, case: Case) -> Tensors:
        """The upstream kernels with their upstream defaults."""

    def kernel_inputs(self, kernel: str, inputs: Tensors, golden: Tensors) -> Tensors:
        """Inputs one kernel needs when run alone (e.g. lse and delta for the backward)."""
        return inputs

    # -- parts: what baselines and checks time as one ------------------------------------------
    #: Name -> the port kernels the part runs (e.g. the forward, the whole backward).
    parts: dict[str, tuple[str, ...]] = {"fwd": ("fwd",)}

    @abstractmethod
    def port_part(
        self, part: str, inputs: Tensors, configs: dict[str, Config] | None
    ) -> Callable[[], object]:
        """A call of one part of the port (`configs` None: the launchers' own pick, i.e. the
        frozen config of the soc). What it needs from earlier parts is computed here, untimed."""

    @abstractmethod
    def upstream_part(self, part: str, inputs: Tensors, case: Case) -> Callable[[], object] | None:
        """The same part through upstream's kernels and defaults; None where upstream cannot."""

    def upstream_tma_part(
        self, part: str, inputs: Tensors, case: Case
    ) -> Callable[[], object] | None:
        """The same part through upstream's TMA path (`enable_tma=True`), a second upstream
        source of the baseline; None where upstream has none (this default), or where the device
        cannot run it or upstream cannot run the case (`upstream_tma_missing` says which)."""
        return None

    def upstream_tma_missing(self, device: torch.device) -> str | None:
        """Why `upstream_tma_part` gives nothing on `device`, in one line; None where upstream
        has no TMA path (nothing is missing) or it runs here."""
        return None

    # -- torch eager: what a user runs without the port, in the case dtype ----------------------
    #: Inputs autograd differentiates the torch form into for a "bwd" part (e.g. x, weight).
    torch_grad_inputs: tuple[str, ...] = ()
    #: Output of the torch form -> the input holding the gradient that flows into it.
    torch_grad_outputs: dict[str, str] = {}

    def torch_forward(self, inputs: Tensors) -> Tensors:
        """The op's forward in plain torch ops (autograd gives its backward); an op without one
        raises NotImplementedError, and no torch part is timed for it."""
        raise NotImplementedError(f"{self.name} declares no torch form")

    def torch_part(self, part: str, inputs: Tensors) -> Callable[[], object] | None:
        """A part through torch eager in the case dtype: "fwd" the forward without autograd,
        "bwd" autograd's backward of it (the forward run once before, untimed, its graph kept);
        None where the op declares no torch form or the part is neither."""
        if type(self).torch_forward is OpSpec.torch_forward or part not in ("fwd", "bwd"):
            return None
        if part == "fwd":

            def forward() -> Tensors:
                with torch.no_grad():
                    return self.torch_forward(inputs)

            return forward
        leaves = {
            k: v.detach().requires_grad_() if k in self.torch_grad_inputs else v
            for k, v in inputs.items()
        }
        outputs = self.torch_forward(leaves)
        flowing = [outputs[name] for name in self.torch_grad_outputs]
        incoming = [inputs[name] for name in self.torch_grad_outputs.values()]
        into = [leaves[name] for name in self.torch_grad_inputs]
        return lambda: torch.autograd.grad(flowing, into, incoming, retain_graph=True)

    def upstream_module(self) -> types.ModuleType:
        """The upstream module that holds the kernels `KernelSpec.upstream_kernel` names: the
        pinned file's own, unless an op's upstream entry point calls kernels of another file."""
        return self.upstream.load()

    def jagged_rows(self, case: Case) -> int:
        """Rows of the op's jagged values tensor for a case (its `total_rows` in ATK's json)."""
        return sum(case.lengths)

    def traffic(self, case: Case, part: str) -> tuple[int, int]:
        """(bytes the part must move to and from device memory, flops it must compute): the
        least any implementation does, for the roofline (`benchmarks/roofline.py`)."""
        raise NotImplementedError(f"{self.name} declares no traffic model")

    def footprint(self, case: Case) -> Footprint:
        """The memory a case takes before a kernel runs, from the traffic model: every part's
        tensors (each part reads its inputs and writes its outputs once) on the device, and on
        the host the same tensors as made there, their float64 golden and the lengths list."""
        tensors = sum(self.traffic(case, part)[0] for part in self.parts)
        golden = tensors * 8 // case.torch_dtype.itemsize
        return Footprint(host=tensors + golden + LENGTH_BYTES * len(case.lengths), device=tensors)

    @abstractmethod
    def launch(self, kernel: str, inputs: Tensors, config: Config) -> Tensors:
        """Run one kernel of the port with an explicit config."""

    def timed_call(self, kernel: str, inputs: Tensors, config: Config) -> Callable[[], object]:
        """What a trial of `kernel` at `config` times: its launch, and for a kernel that feeds
        another (`KernelSpec.feeds`) that one's too, which an op with such a kernel gives."""
        if self.kernel(kernel).feeds:
            raise NotImplementedError(f"{self.name}: {kernel} feeds a kernel; time them together")
        return lambda: self.launch(kernel, inputs, config)

    def kernel(self, name: str) -> KernelSpec:
        for k in self.kernels:
            if k.name == name:
                return k
        raise ValueError(
            f"unknown kernel {name!r} for {self.name}; valid: {', '.join(k.name for k in self.kernels)}"
        )
