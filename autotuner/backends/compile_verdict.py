"""What a compiler's failure or output says: the verdict of one compile, read from text.

Pure functions of compiler text, so they are tested with strings. Read from triton-ascend (tag
v3.2.0: python/triton/compiler/compiler.py wraps a failing stage's stderr in
`MLIRCompilationError`) and bishengir-compile, its compiler (Ascend/AscendNPU-IR, tag v1.2.0):

- Overflows: "ub overflow", "cbuf overflow" (L1) and "cc overflow" (L0C), each "requires N bits
  while M bits available!". From v1.2.0 bishengir retries an overflowing compile with
  `enable-auto-multi-buffer` false and says so on stderr ("[NOTE] ... set enable-auto-multi-buffer
  to false ...", bishengir/lib/Tools/RetriablePassManager/RetriablePassManager.cpp).
- Without CANN the pipeline ends by running CANN's code generator, `hivmc` ("Cannot find hivmc
  under $PATH", "External hivmc run fails"): a compile that gets there was accepted by every
  BiShengIR pass, PlanMemory included. That is "planned", not "runs".
- A compiler that aborts prints an LLVM assertion or stack dump ("Assertion `...' failed",
  "PLEASE submit a bug report").
- With `--save-temps=DIR`, `DIR/module.hivm.opt.mlir` holds the planned buffers:
  `hivm.hir.pointer_cast(%c<offset>_i64[, ...]) : memref<...xT, #hivm.address_space<S>>`, a buffer of
  the memref's size at each offset (several offsets: a multibuffered one) in address space S.
"""

from __future__ import annotations

import re
import subprocess
from dataclasses import dataclass

from ..vocabulary import Failure, Fit

#: The compiler's overflow words and the failure category of each, in the order they are tested.
OVERFLOWS = (
    ("ub overflow", Failure.UB_OVERFLOW),
    ("cbuf overflow", Failure.CBUF_OVERFLOW),
    ("cc overflow", Failure.CC_OVERFLOW),
)
_FALLBACK = "set enable-auto-multi-buffer to false"
_REQUIRES = re.compile(r"requires\s+(\d+)\s+bits\s+while\s+(\d+)\s+bits\s+available")
_UB_SIZE = re.compile(r"UB\s+size\s*=\s*(\d+)\s*bits")
_NO_HIVMC = ("cannot find hivmc", "external hivmc run fails")
_CRASH_WORDS = ("assertion", "please submit a bug report", "stack dump", "segmentation fault")
#: hivm address spaces by the names this project uses: UB, L1 (cbuf), L0A/L0B (ca/cb), L0C (cc).
ADDRESS_SPACES = {"ub": "ub", "cbuf": "l1", "ca": "l0a", "cb": "l0b", "cc": "l0c"}
_POINTER_CAST = re.compile(
    r"hivm\.hir\.pointer_cast\(([^)]*)\)\s*:\s*memref<([^,>]*?)(?:,[^>]*)?,\s*"
    r"#hivm\.address_space<(\w+)>>"
)
_SSA = re.compile(r"%[\w.]+")
_CONSTANT = re.compile(
    r"(%[\w.]+)\s*=\s*(?:llvm\.mlir\.constant\((\d+)\s*:\s*i64\)|arith\.constant\s+(\d+)\s*:\s*i64)"
)
_ELEMENT_BYTES = {"f32": 4, "i32": 4, "f16": 2, "bf16": 2, "i16": 2, "i8": 1, "i1": 1, "f64": 8,
                  "i64": 8, "ui8": 1, "ui16": 2, "ui32": 4, "ui64": 8}  # fmt: skip


@dataclass(frozen=True)
class Reading:
    """What one compiler run's text says."""

    category: Fit | Failure  # planned or compiled; else an overflow, a crash or "compile"
    message: str  # one line: the compiler's own first error line, or "" where it planned
    required_bits: int | None = None
    available_bits: int | None = None
    multibuffer_dropped: bool = False


def overflow_category(text: str) -> Failure | None:
    """The on-chip memory a compiler's message says overflowed, as a failure category."""
    lowered = text.lower()
    return next((category for words, category in OVERFLOWS if words in lowered), None)


def multibuffer_fell_back(output: str) -> bool:
    """Whether bishengir-compile's output says it turned multibuffer off to make a config fit."""
    return _FALLBACK in output


def ub_bits(output: str) -> int | None:
    """The UB bits bishengir-compile says a kernel allocates (`--enable-print-memory-allocated-size`)."""
    match = _UB_SIZE.search(output)
    return int(match.group(1)) if match else None


def notes(output: str) -> dict[str, bool | int]:
    """What a trial records of the compiler's output: a multibuffer fallback, the UB bits used."""
    found: dict[str, bool | int] = {}
    if multibuffer_fell_back(output):
        found["multibuffer_fallback"] = True
    bits = ub_bits(output)
    if bits is not None:
        found["required_ub_bits"] = bits
    return found


def _error_lines(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if "error" in line.lower()]


def read(text: str, succeeded: bool = False) -> Reading:
    """The verdict of a compile from everything the compiler wrote (`succeeded`: it produced a
    binary). An overflow error or a crash wins over reaching `hivmc`; the notes of a retry
    ("[NOTE] Ub overflow detected; ... retrying") are no error: the retry may plan."""
    dropped = multibuffer_fell_back(text)
    lowered = text.lower()
    errors = _error_lines(text)
    overflow = overflow_category("\n".join(errors))
    if overflow:
        line = next(line for line in errors if overflow.replace("_", " ") in line.lower())
        match = _REQUIRES.search(line)
        required, available = (int(match.group(1)), int(match.group(2))) if match else (None, None)
        return Reading(overflow, _clean(line), required, available, dropped)
    if any(word in lowered for word in _CRASH_WORDS):
        line = next(
            (line for line in text.splitlines() if "assertion" in line.lower()),
            next((line for line in text.splitlines() if line.strip()), "compiler crash"),
        )
        return Reading(Failure.CRASH, _clean(line), multibuffer_dropped=dropped)
    if succeeded:
        return Reading(Fit.COMPILED, "", multibuffer_dropped=dropped)
    if any(word in lowered for word in _NO_HIVMC):
        return Reading(Fit.PLANNED, "", multibuffer_dropped=dropped)
    first = errors[0] if errors else next((ln for ln in text.splitlines() if ln.strip()), "")
    return Reading(Failure.COMPILE, _clean(first), multibuffer_dropped=dropped)


def _clean(line: str) -> str:
    """A compiler line without its `loc("/tmp/...":1:1): error: ` prefix, at most 300 characters."""
    line = re.sub(r'^loc\("[^"]*":\d+:\d+\):\s*', "", line.strip())
    return re.sub(r"^error:\s*", "", line)[:300]


def planned_memory(mlir: str) -> dict[str, int]:
    """Bytes the plan uses per on-chip memory (`ADDRESS_SPACES` names): the end of its highest
    buffer, counting every offset of a multibuffered one. An offset is an i64 constant of the
    function (`%c16384_i64` from the A2/A3 pipeline, `%2 = llvm.mlir.constant(16384 : i64)` from
    the 950's), named in the function where it is used."""
    used: dict[str, int] = {}
    for function in mlir.split("func.func "):
        constants = {name: int(a or b) for name, a, b in _CONSTANT.findall(function)}
        for offsets, shape, space in _POINTER_CAST.findall(function):
            name = ADDRESS_SPACES.get(space)
            *dims, element = shape.split("x")
            size = _ELEMENT_BYTES.get(element.strip())
            if name is None or size is None or not all(d.isdigit() for d in dims):
                continue
            nbytes = size
            for d in dims:
                nbytes *= int(d)
            for ssa in _SSA.findall(offsets):
                if ssa in constants:
                    used[name] = max(used.get(name, 0), constants[ssa] + nbytes)
    return used


def compiler_errors(exc: BaseException) -> list[str]:
    """The error lines a failed compiler process wrote: triton-ascend 3.2 lets bishengir-compile's
    CalledProcessError through in places, whose message leaves out its stderr."""
    if not isinstance(exc, subprocess.CalledProcessError):
        return []
    streams = (exc.stderr, exc.stdout)
    text = "\n".join(
        s.decode(errors="replace") if isinstance(s, bytes) else s or "" for s in streams
    )
    return _error_lines(text)


def exception_text(exc: BaseException) -> str:
    """Everything an exception of a compile carries: its message and a compiler's error lines."""
    return "\n".join([f"{type(exc).__name__}: {exc}", *compiler_errors(exc)])


def classify(exc: BaseException) -> Failure:
    """The failure category of an exception raised by a launch (compiling or running)."""
    import torch

    text = exception_text(exc).lower()
    overflow = overflow_category(text)
    if overflow:
        return overflow
    if (
        "outofresources" in text
        or "out of resource" in text
        or isinstance(exc, torch.OutOfMemoryError)
    ):
        return Failure.RESOURCE
    if (
        "compilationerror" in text
        or "compilation" in type(exc).__name__.lower()
        or isinstance(exc, subprocess.CalledProcessError)  # a compiler stage (triton-ascend)
    ):
        return Failure.COMPILE
    return Failure.RUNTIME


def short(exc: BaseException, limit: int = 500) -> str:
    """The exception's type and last line, or the first error line of a failed compiler."""
    lines = [line for line in str(exc).strip().splitlines() if line.strip()]
    errors = compiler_errors(exc)
    text = errors[0] if errors else lines[-1] if lines else ""
    return f"{type(exc).__name__}: {text}"[:limit]
