"""Verify's cases in this process, or spread over worker processes, one device each.

`--jobs N` starts N spawned workers; on a GPU or NPU each is bound to one device of the soc by
the visible-devices variable (`CUDA_VISIBLE_DEVICES`, `ASCEND_RT_VISIBLE_DEVICES`), set before
the worker starts, so it sees that device alone; workers beyond the devices share them in turn.
By default a device gets `verify_jobs_per_device` workers: most of a case's time is host work
(compiles, the float64 CPU golden), which the device's other workers overlap. Each worker gets
its share of the CPU cores for torch's own threads, and the largest cases are handed out first,
so that no large case starts last. Results come back as each case finishes, in the order they
finish.
"""

from __future__ import annotations

import math
import multiprocessing as mp
import os
import queue
import traceback
from collections.abc import Iterator

import torch

from core.errors import UserError
from core.socs import BackendKind
from ops.spec import Case, OpSpec

from ..backends import Backend, device_indices
from ..measure.accuracy import Level
from ..references.source import LIVE, ReferenceSource
from ..settings import settings
from .verify import CaseResult, environment, verify_case

#: Backend kind -> the variable that makes a process see some devices only.
VISIBLE_DEVICES = {
    BackendKind.CUDA: "CUDA_VISIBLE_DEVICES",
    BackendKind.NPU: "ASCEND_RT_VISIBLE_DEVICES",
}
_CONTEXT = mp.get_context("spawn")
#: Seconds between looks at the workers while waiting for a result.
_POLL_S = 0.5


def device_slots(backend: Backend) -> list[str]:
    """The visible-devices values that bind a worker to each device of the backend's soc."""
    variable = VISIBLE_DEVICES.get(backend.kind)
    if variable is None:
        return []
    given = os.environ.get(variable)
    names = [name.strip() for name in given.split(",")] if given else None
    return [names[i] if names else str(i) for i in device_indices(backend)]


def default_jobs(backend: Backend) -> int:
    """`verify_jobs_per_device` processes per device of the soc, at most one per CPU core; one in
    all on the interpreter."""
    devices = len(device_slots(backend))
    if not devices:
        return 1
    return max(1, min(devices * settings().verify_jobs_per_device, os.cpu_count() or 1))


def largest_first(todo: list[tuple[OpSpec, Case]]) -> list[int]:
    """Indices of `todo`, the largest case (the product of its shape's values) first."""

    def size(index: int) -> int:
        return math.prod(max(1, value) for value in todo[index][1].shape.values())

    return sorted(range(len(todo)), key=size, reverse=True)


def run_cases(
    todo: list[tuple[OpSpec, Case]],
    backend: Backend,
    level: Level,
    jobs: int,
    references: ReferenceSource = LIVE,
    keep_upstream: bool = False,
) -> Iterator[CaseResult]:
    """Each case's result as soon as it is known (`verify_case` says what `references` and
    `keep_upstream` do)."""
    jobs = min(jobs, len(todo))
    how = (references, keep_upstream)
    if jobs <= 1:
        for spec, case in todo:
            yield verify_case(spec, case, backend, level, *how)
        return
    yield from _in_workers(todo, backend, level, jobs, how)


def _in_workers(
    todo: list[tuple[OpSpec, Case]],
    backend: Backend,
    level: Level,
    jobs: int,
    how: tuple[ReferenceSource, bool],
) -> Iterator[CaseResult]:
    tasks, results = _CONTEXT.Queue(), _CONTEXT.Queue()
    for index in largest_first(todo):
        tasks.put((index, todo[index][0].name, todo[index][1]))
    for _ in range(jobs):
        tasks.put(None)
    slots = device_slots(backend)
    variable = VISIBLE_DEVICES.get(backend.kind)
    threads = max(1, (os.cpu_count() or 1) // jobs)
    workers = []
    try:
        for number in range(jobs):
            # Spawned processes start with the parent's environment.
            with environment(variable, slots[number % len(slots)] if slots else None):
                worker = _CONTEXT.Process(
                    target=_serve,
                    args=(backend.soc, level, how, threads, tasks, results),
                    daemon=True,
                )
                worker.start()
            workers.append(worker)
        running: dict[int, int] = {}  # worker pid -> index of the case it runs
        done = 0
        while done < len(todo):
            try:
                pid, index, outcome = results.get(timeout=_POLL_S)
            except queue.Empty:
                _check_alive(workers, running, todo)
                continue
            if outcome is None:  # started
                running[pid] = index
                continue
            running.pop(pid, None)
            if isinstance(outcome, Exception):
                raise outcome
            done += 1
            yield outcome
    finally:
        for worker in workers:
            if worker.is_alive():
                worker.kill()
            worker.join(timeout=10)


def _check_alive(workers, running: dict[int, int], todo) -> None:
    """Raise if a worker died (a crash in a kernel, the out-of-memory killer)."""
    for worker in workers:
        if worker.exitcode not in (None, 0):
            index = running.get(worker.pid)
            spec, case = todo[index] if index is not None else (None, None)
            what = f" while verifying {spec.name} {case.name}" if spec else ""
            raise RuntimeError(f"a verify worker died (exit code {worker.exitcode}){what}")


def _serve(
    soc: str, level: Level, how: tuple[ReferenceSource, bool], threads: int, tasks, results
) -> None:
    """A worker: verify cases from `tasks` until told to stop; each result, or the error, back.
    `threads`: torch's intra-op threads (the golden's), this worker's share of the cores."""
    import signal
    import warnings

    from ops import get_op

    from ..backends import get_backend

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle
    torch.set_num_threads(threads)
    warnings.filterwarnings("ignore", category=RuntimeWarning, module=r"triton\..*")
    backend = get_backend(soc)
    pid = os.getpid()
    while (task := tasks.get()) is not None:
        index, op, case = task
        results.put((pid, index, None))
        try:
            results.put((pid, index, verify_case(get_op(op), case, backend, level, *how)))
        except (UserError, ValueError) as exc:  # bad input: the parent says it in one line
            results.put((pid, index, ValueError(str(exc))))
        except Exception:  # noqa: BLE001 - reported to the parent, which stops
            results.put((pid, index, RuntimeError(f"{op} {case.name}: {traceback.format_exc()}")))
