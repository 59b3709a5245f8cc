"""The baseline's compiles, ahead of its timing and in parallel.

Timing is serial (one process on the device, so no kernel shares it), but most of a catalogue's
baseline is not timing: each of the port's configs compiles on its first call, and upstream's
`triton.autotune` compiles every config of its list before it times them. Spawned processes run
every call of the baseline once, untimed, on the same device first; Triton keeps what they
compiled in its cache on disk (`~/.triton/cache`, `TRITON_CACHE_DIR`), where the timing process
then finds it. There upstream's autotune compiles and runs each config once and times none
(its Autotuner's `do_bench`, a cached_property in Triton 3.6 and 3.9, replaced): the timing
process tunes upstream itself, from compiled code, on a device nothing else uses. A call that
fails here is left to the timing process, which reports it.
"""

from __future__ import annotations

import multiprocessing as mp
import os
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool

import torch

from ops.spec import Case

_backend = None


def _start(soc: str, threads: int) -> None:
    global _backend
    import warnings

    from ..backends import get_backend

    warnings.filterwarnings("ignore")
    torch.set_num_threads(threads)
    _backend = get_backend(soc)


def _once(kernel_call: Callable[[], object], quantiles: tuple[float, ...]) -> list[float]:
    """An autotune benchmark that compiles and runs a config once and times nothing."""
    kernel_call()
    return [0.0] * len(quantiles)


def _run_once(op: str, case: Case) -> int:
    """Run every (part, source) call of one case once; how many ran."""
    from ops import get_op

    from . import upstream_picks
    from .baseline import FrozenSet, runs

    spec = get_op(op)
    if spec.upstream.missing() is None:
        for tuner in upstream_picks.autotuners(upstream_picks.modules_of(spec)).values():
            vars(tuner)["do_bench"] = _once  # Autotuner.do_bench is a cached_property
    frozen = FrozenSet.read(spec, _backend.soc)
    inputs = spec.make_inputs(case, _backend.device)
    ran = 0
    for part in spec.parts:
        try:
            for _, _, call in runs(spec, case, inputs, part, frozen):
                if call is not None:
                    call()
                    ran += 1
        except Exception:  # noqa: BLE001 (the timing process meets it again and says it)
            continue
    _backend.synchronize()
    _backend.release_memory()
    return ran


def warm(todo: list[tuple[str, Case]], soc: str, jobs: int) -> int:
    """Run the calls of every (op, case) once in `jobs` spawned processes; how many ran."""
    if jobs <= 0 or not todo:
        return 0
    jobs = min(jobs, len(todo))
    threads = max(1, (os.cpu_count() or 1) // jobs)
    ran = 0
    with ProcessPoolExecutor(
        jobs, mp_context=mp.get_context("spawn"), initializer=_start, initargs=(soc, threads)
    ) as pool:
        try:
            for count in pool.map(_run_once, *zip(*todo, strict=True)):
                ran += count
        except BrokenProcessPool:  # a worker died (a kernel's crash): the timing process says it
            pass
    return ran
