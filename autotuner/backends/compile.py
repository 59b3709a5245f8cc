"""Compiling a port kernel for a case and config without running it: on the device here, or for an
Ascend soc on a machine with no NPU and no CANN.

The launch goes through the port's own launcher, each `@triton.jit` call made a
`JITFunction.warmup` (compile, never run), so a compile sees exactly the arguments, constexprs and
launch options a run would (Triton's `runtime/autotuner.py` warms its configs up the same way).
A `@triton.jit` helper the port's kernels call stays a JITFunction: Triton inlines it.

Without a device, an Ascend compile drives triton-ascend's real pipeline (TTIR -> linalg by its
`triton-adapter-opt`, then bishengir-compile) with the compiler target supplied here: triton-ascend
reads it from CANN (`NPUDriver.get_current_target`, and `NPUUtils().get_arch()` inside
`linalg_to_bin_enable_npu_compile_A2_A3`; Ascend/triton-ascend v3.2.0,
python/triton/backends/ascend/{driver,compiler}.py). Each launch names the `NPUOptions` that
depend on the chip family as a build for that family has them: for the 950, `compile_on_910_95`
(which sends 3.2.0 through `linalg_to_bin_enable_npu_compile_910_95`) and `enable_select_analysis`
on, `multibuffer` and `enable_auto_bind_sub_block` off (each `not`/`is_compile_on_910_95`,
compiler.py; 3.2.0 hard-codes False, the 3.5 line detects the chip), the reverse for A2/A3; and
ascendnpu-ir's `bishengir-compile-a5` runs under the only name triton-ascend looks for
(`_get_npucompiler_path`, utils.py). The config's own launch options come on top. Every such compile then stops at CANN's code generator
`hivmc`: reaching it means the whole BiShengIR pipeline, memory planning included, accepted the
kernel (`Fit.PLANNED`). That is not a run: no code was generated, nothing ran on a chip.
"""

from __future__ import annotations

import ast
import contextlib
import functools
import hashlib
import importlib.util
import io
import json
import os
import shutil
import subprocess
import tempfile
import textwrap
import time
import types
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from core.errors import UserError
from core.socs import SOCS, ascend_family
from ops.ports import load_port
from ops.spec import Config, KernelSpec, OpSpec, Tensors

from ..vocabulary import Failure, Fit
from . import compile_verdict, triton_ascend
from .compiler_log import CompilerLog

#: What to install for compiling without a device.
INSTALL = "pip install 'autotune[ascend-compile]' (triton-ascend 3.2.0 and ascendnpu-ir 1.2.0)"
_PRINT_MEMORY = "--enable-print-memory-allocated-size"
_PLAN_FILE = "module.hivm.opt.mlir"
#: Variables that change what triton-ascend asks of the compiler (`--disable-ffts`,
#: `--enable-auto-blockify-loop`; utils.py `force_disable_ffts`, `_is_auto_map_parallel_blocks_enabled`).
_COMPILE_ENVIRONMENT = ("TRITON_DISABLE_FFTS", "TRITON_ALL_BLOCKS_PARALLEL")


@dataclass(frozen=True)
class AscendCompiler:
    """The compiler for one Ascend soc without its device: target name, binary and its version."""

    soc: str
    target: str
    binary: str
    version: str
    #: The binary accepts `--enable-print-memory-allocated-size`, which triton-ascend passes under
    #: `ENABLE_PRINT_UB_BITS=1` (the 910B binary of ascendnpu-ir 1.2.0 does not).
    prints_memory: bool

    def describe(self) -> str:
        return f"{self.target} ({self.version})"


def find_binary(name: str) -> str | None:
    """A bishengir binary: on PATH (CANN's), else in the installed ascendnpu-ir's `bin/`."""
    found = shutil.which(name)
    if found:
        return found
    spec = importlib.util.find_spec("ascendnpuir")
    if spec is None or spec.origin is None:
        return None
    candidate = Path(spec.origin).parent / "bin" / name
    return str(candidate) if os.access(candidate, os.X_OK) else None


def compile_socs() -> tuple[str, ...]:
    """The socs a compile without their device can target: those with a compile target and a
    chip family (its compiler) in the registry."""
    return tuple(
        name for name, soc in SOCS.items() if soc.compile_target and soc.family is not None
    )


def ascend_compiler(soc: str) -> AscendCompiler:
    """The compile-only compiler of an Ascend soc; UserError in one line where it is missing."""
    known = SOCS.get(soc)
    if known is None or known.family is None or known.compile_target is None:
        raise UserError(
            f"--compile is for an Ascend soc ({', '.join(compile_socs())}), not {soc!r}"
        )
    if triton_ascend.installed() is None:
        raise UserError(f"compiling for the {soc} needs triton-ascend: {INSTALL}")
    binary = find_binary(known.family.compiler)
    if binary is None:
        raise UserError(f"compiling for the {soc} needs {known.family.compiler}: {INSTALL}")
    return AscendCompiler(soc, known.compile_target, binary, *_probe(binary))


@functools.cache
def bishengir_version(soc: str) -> str:
    """The first line of `--version` of the soc's bishengir binary, "none" where it is missing."""
    family = ascend_family(soc)
    binary = find_binary(family.compiler) if family is not None else None
    return _probe(binary)[0] if binary else "none"


def _output(binary: str, flag: str) -> str:
    done = subprocess.run([binary, flag], capture_output=True, text=True, timeout=60)
    return done.stdout + done.stderr


def _probe(binary: str) -> tuple[str, bool]:
    """(the first line of `--version`, whether it takes the memory print flag)."""
    lines = [line.strip() for line in _output(binary, "--version").splitlines() if line.strip()]
    return (lines[0] if lines else ""), prints_memory(binary)


@functools.cache
def prints_memory(binary: str) -> bool:
    """Whether a bishengir-compile takes `--enable-print-memory-allocated-size`, which
    triton-ascend passes under `ENABLE_PRINT_UB_BITS=1` (the 910B binary of ascendnpu-ir 1.2.0
    rejects it: "Unknown command line argument", and the compile fails)."""
    return _PRINT_MEMORY in _output(binary, "--help")


@dataclass(frozen=True)
class CompileResult:
    """The verdict of compiling one config of a kernel on a case (all its `@triton.jit` launches)."""

    category: Fit | Failure  # Failure.LAUNCHER: the port's launcher refused it (e.g. equal blocks)
    message: str = ""
    seconds: float = 0.0
    required_bits: int | None = None
    available_bits: int | None = None
    multibuffer_dropped: bool = False
    #: Bytes the plan uses per on-chip memory (ub, l1, l0a, l0b, l0c), where it could be read.
    memory: dict[str, int] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return self.category in tuple(Fit)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


class _TargetDriver:
    """Triton's active driver for a compile with no device: the target, device 0, stream 0."""

    def __init__(self, target: str) -> None:
        from triton.backends.compiler import GPUTarget

        self.target = GPUTarget("npu", target, 0)

    def get_current_target(self):
        return self.target

    def get_current_device(self) -> int:
        return 0

    def get_current_stream(self, device: int | None = None) -> int:
        return 0


@dataclass
class _Session:
    """The process's compile mode: its compiler (None: the device here) and compiler log."""

    compiler: AscendCompiler | None
    log: CompilerLog | None = None
    #: NPUOptions every launch of this target gets unless the config names them.
    target_options: dict[str, Any] = field(default_factory=dict)


_session: _Session | None = None


def activate(compiler: AscendCompiler | None) -> None:
    """Make this process compile without running, for `compiler`'s target (None: the device here).
    Once per process, before a port is loaded: it replaces Triton's active driver."""
    global _session
    if _session is not None:
        return
    if compiler is None:
        _session = _Session(None)
        return
    os.environ["TRITON_INTERPRET"] = "0"
    import triton.backends as triton_backends
    from triton.runtime import driver

    if compiler.prints_memory:
        os.environ.setdefault("ENABLE_PRINT_UB_BITS", "1")
    else:
        os.environ.pop("ENABLE_PRINT_UB_BITS", None)
    log = CompilerLog(compiler.binary)
    driver.set_active(_TargetDriver(compiler.target))
    backend = triton_backends.backends["ascend"].compiler.add_stages.__globals__
    backend["NPUUtils"] = lambda: types.SimpleNamespace(get_arch=lambda: compiler.target)
    # Each compile asks the binary for its --help twice (which output file name, which pipeline
    # flag: utils.py, `_check_bishengir_api_change`, `_check_bishengir_is_regbased`), as long as
    # the rest of a small compile; the answer cannot change within a process.
    for name in ("_check_bishengir_api_change", "_check_bishengir_is_regbased"):
        backend[name] = functools.cache(backend[name])
    in_950 = triton_ascend.compiles_on_910_95(compiler.soc)
    if in_950:
        # The 3.5 line never uses FFTS on the 950 (Ascend/triton-ascend e4747419d, "blacklist
        # Ascend 910_95 arch for FFTS"); 3.2.0 leaves it to TRITON_DISABLE_FFTS.
        os.environ["TRITON_DISABLE_FFTS"] = "1"
    options = {
        "compile_on_910_95": in_950,
        "multibuffer": not in_950,
        "enable_auto_bind_sub_block": not in_950,
        "enable_select_analysis": in_950,
    }
    _session = _Session(compiler, log, options)


class _Warmup:
    """A port's `@triton.jit` function whose launches compile and never run."""

    def __init__(self, fn: Any) -> None:
        self.fn = fn

    def __getitem__(self, grid: Any):
        return lambda *args, **kwargs: _launches.run(self.fn, grid, args, kwargs)


#: Attempts at a launch's compile before a crash is its verdict. triton-ascend 3.2.0's
#: `triton-adapter-opt` aborts now and then on the same input ("Malformed type storage object",
#: in its TritonToUnstructure pass): 45 of 2000 runs on group_norm_mul_dropout's bwd_dx TTIR, none
#: of 600 with address-space randomisation off, none of 18,000 on the other 46 kernels. A crash
#: that repeats is the kernel's; one that does not is the tool's (three in a row at that rate:
#: about one in 90,000).
CRASH_ATTEMPTS = 3


@dataclass
class _Launches:
    """The launches of one compile request: the mode and what each launch gave."""

    mode: str = "compile"  # or "key": record Triton's specialization, compile nothing
    launch_options: dict[str, Any] = field(default_factory=dict)
    results: list[CompileResult] = field(default_factory=list)
    keys: list[str] = field(default_factory=list)

    def run(self, fn: Any, grid: Any, args: tuple, kwargs: dict[str, Any]) -> Any:
        assert _session is not None
        kwargs = {**kwargs, **_session.target_options, **self.launch_options}
        if self.mode == "key":
            return self._key(fn, grid, args, kwargs)
        crashes: list[CompileResult] = []
        for _ in range(CRASH_ATTEMPTS):
            with tempfile.TemporaryDirectory(prefix="autotune-compile-") as temps:
                result = self._compile(fn, grid, args, kwargs, Path(temps))
            if result.category != Failure.CRASH:
                break
            crashes.append(result)
        if crashes and result.category != Failure.CRASH:
            note = (
                f"the compiler crashed on {len(crashes)} earlier attempt(s): {crashes[0].message}"
            )
            result = replace(result, message="; ".join(m for m in (result.message, note) if m))
        self.results.append(result)

    def _key(self, fn: Any, grid: Any, args: tuple, kwargs: dict[str, Any]) -> None:
        from triton.runtime.jit import JITFunction

        def hook(*, fn: Any, compile: dict[str, Any], **_: Any) -> bool:
            self.keys.append(fn.jit_function.cache_key + compile["specialization_data"])
            return True  # compile nothing

        fn.cache.clear()  # a kernel compiled earlier in this process would skip the hook
        JITFunction.cache_hook = hook
        try:
            _quiet_warmup(fn, grid, args, kwargs)
        finally:
            JITFunction.cache_hook = None

    def _compile(
        self, fn: Any, grid: Any, args: tuple, kwargs: dict[str, Any], temps: Path
    ) -> CompileResult:
        assert _session is not None
        log = _session.log
        if log is not None:
            os.environ["AUTOTUNE_SAVE_TEMPS"] = str(temps)
            os.environ["TRITON_CACHE_DIR"] = str(temps / "cache")  # no cross-talk between compiles
            log.since_last()
        start = time.perf_counter()
        try:
            _quiet_warmup(fn, grid, args, kwargs)
            error, text = None, ""
        except Exception as exc:  # noqa: BLE001 - a compiler's refusal is the verdict
            error, text = exc, compile_verdict.exception_text(exc)
        seconds = time.perf_counter() - start
        if log is None:  # the device here: its compiler either built the kernel or refused it
            if error is None:
                return CompileResult(Fit.COMPILED, seconds=seconds)
            return CompileResult(
                compile_verdict.classify(error), compile_verdict.short(error), seconds
            )
        reading = compile_verdict.read(text + "\n" + log.since_last(), error is None)
        plan = temps / _PLAN_FILE
        memory = compile_verdict.planned_memory(plan.read_text()) if plan.is_file() else {}
        return CompileResult(
            reading.category,
            reading.message,
            seconds,
            reading.required_bits,
            reading.available_bits,
            reading.multibuffer_dropped,
            memory,
        )


_launches = _Launches()
#: The device a launcher is told of where its choices depend on the device (no tensor is there).
_NPU = types.SimpleNamespace(type="npu", index=0)
#: Set on a port module once `_warmed` has made it compile-only.
_WARMED = "_autotune_compile_only"


def _quiet_warmup(fn: Any, grid: Any, args: tuple, kwargs: dict[str, Any]) -> None:
    """`fn.warmup` with Triton's prints kept off stdout (a `--json` report goes there): 3.2.0
    prints "[WARNING] Please DO NOT tune args [...]" for every option outside its own short list,
    `compile_on_910_95` among them (python/triton/runtime/jit.py, `JITFunction.run`)."""
    with contextlib.redirect_stdout(io.StringIO()):
        fn.warmup(*args, grid=grid, **kwargs)


def _warmed(op: OpSpec) -> types.ModuleType:
    """The op's port with every `@triton.jit` function made a `_Warmup`, once per process (the
    port module is loaded once; wrapping it again at every compile nested `_precision` one call
    deeper each time, until a worker's thousandth tl.dot compile died of a RecursionError)."""
    from triton.runtime.jit import JITFunction

    port = load_port(op.name)
    if getattr(port, _WARMED, False):
        return port
    setattr(port, _WARMED, True)
    jitted = {name: value for name, value in vars(port).items() if isinstance(value, JITFunction)}
    kernels = [v.fn for v in vars(port).values() if isinstance(v, _Warmup)] + list(jitted.values())
    called = {name for value in kernels for name in _calls(value.src)}
    for name, value in jitted.items():
        if name not in called:  # a helper the kernels call stays itself: Triton inlines it
            setattr(port, name, _Warmup(value))
    compiling_for_npu = _session is not None and _session.compiler is not None
    if compiling_for_npu and hasattr(port, "_precision"):
        # The inputs are on the CPU: tl.dot's precision as on an NPU. On a device here (a GPU's
        # compile workers) the inputs' own device decides: hf32 there fails every fp32 tl.dot.
        on_host = port._precision
        port._precision = lambda allow_tf32, device: on_host(allow_tf32, _NPU)
    return port


def _calls(source: str) -> set[str]:
    """Names a function's source calls by name (a kernel's `@triton.jit` helpers among them)."""
    tree = ast.parse(textwrap.dedent(source))
    return {
        node.func.id
        for node in ast.walk(tree)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
    }


@contextlib.contextmanager
def _launching(op: OpSpec, config: Config, mode: str) -> Iterator[_Launches]:
    global _launches
    if _session is None:
        raise RuntimeError("compile.activate() first")
    port = _warmed(op)
    options = port._split_config(config, _NPU)[1] if _session.compiler is not None else {}
    _launches = _Launches(mode, options)
    try:
        yield _launches
    finally:
        _launches = _Launches()


def compile_key(op: OpSpec, kernel: KernelSpec, inputs: Tensors, config: Config) -> str:
    """What the compiled code of a config depends on: each launched kernel's source and
    dependencies with Triton's specialization of the launch (arguments, constexprs, options), and
    the target and compiler; equal keys compile alike, whatever case they came from."""
    with _launching(op, config, "key") as launches:
        op.launch(kernel.name, inputs, config)
    assert _session is not None
    compiler = _session.compiler
    environment = [os.environ.get(name, "") for name in _COMPILE_ENVIRONMENT]
    identity = [*launches.keys, compiler.describe() if compiler else "device", *environment]
    return hashlib.sha256(json.dumps(identity).encode()).hexdigest()


def compile_config(
    op: OpSpec, kernel: KernelSpec, inputs: Tensors, config: Config
) -> CompileResult:
    """Compile every `@triton.jit` launch of one config of `kernel` on `inputs`; the first refusal
    is the verdict, else the kernels planned (no device) or compiled."""
    with _launching(op, config, "compile") as launches:
        try:
            op.launch(kernel.name, inputs, config)
        except Exception as exc:  # noqa: BLE001 - the launcher refused the config itself
            return CompileResult(Failure.LAUNCHER, compile_verdict.short(exc))
    results = launches.results
    if not results:
        return CompileResult(Fit.NO_LAUNCH, "the launcher launched no kernel on this case")
    failed = next((r for r in results if not r.ok), None)
    memory: dict[str, int] = {}
    for result in results:
        for space, used in result.memory.items():
            memory[space] = max(memory.get(space, 0), used)
    first = failed or results[0]
    return CompileResult(
        first.category,
        first.message,
        sum(r.seconds for r in results),
        first.required_bits,
        first.available_bits,
        any(r.multibuffer_dropped for r in results),
        memory,
    )
