"""The engine's words for what happened to a config: why a trial failed (`Failure`), what a compile
that refused nothing said (`Fit`), and where a proposal came from (`Source`). StrEnums, so a
trial's user attributes and the database hold the same strings as before; the backend kinds are
`core.socs.BackendKind` (storage reads them too)."""

from __future__ import annotations

from enum import StrEnum


class Failure(StrEnum):
    """A failed trial's category (`autotuner.search.trial` says what each one means)."""

    COMPILE = "compile"  # the compiler rejected the config
    RESOURCE = "resource"  # out of shared memory, registers or device memory
    UB_OVERFLOW = "ub_overflow"  # Ascend: tiles over the unified buffer
    CBUF_OVERFLOW = "cbuf_overflow"  # Ascend: dot operands over L1
    CC_OVERFLOW = "cc_overflow"  # Ascend: dot results over L0C
    LAUNCHER = "launcher"  # the port's launcher refused it before launching (no compiler asked)
    RUNTIME = "runtime"  # any other error of the launch
    WRONG_RESULT = "wrong_result"  # outputs off the float64 reference
    HOST_SYNC = "host_sync"  # the launch reads a device value on the host
    TIMEOUT = "timeout"  # the worker did not answer in time and was replaced
    CRASH = "crash"  # the worker (or a compiler) died
    INFEASIBLE = "infeasible"  # the static model rejected it before compiling
    INTERRUPTED = "interrupted"  # the run stopped (Ctrl-C) before it was measured
    STALE = "stale"  # its claim went stale (another host's, or a dead run's): re-queued


class Fit(StrEnum):
    """A compile's verdict that refuses nothing."""

    PLANNED = "planned"  # every compiler pass accepted it, memory planned (no code generator)
    COMPILED = "compiled"
    NO_LAUNCH = "no_launch"  # the config launches no kernel on its case: nothing to refuse


class Source(StrEnum):
    """Where the sampler (or the study) took a proposal from."""

    DEFAULT = "default"  # the kernel's default config, measured first
    WARM = "warm"  # a sibling study's winner or a frozen config
    LOCAL = "local"  # a neighbour of the best so far
    PATTERN = "pattern"  # a pattern move from the best so far
    GLOBAL = "global"  # the model sampler's draw
    EXHAUSTIVE = "exhaustive"  # the next config of a space small enough to measure whole
    POLISH = "polish"  # a neighbour of the winner, in the last trials of the budget
    RETRY = "retry"  # a config whose worker died, measured again
