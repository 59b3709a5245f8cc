"""Worker processes: a request/response loop over a pipe, replaced after a timeout or a crash.

The timing worker checks and times configs on the device; compile workers (on a GPU) compile
upcoming configs at the same time, so the timing worker finds them in Triton's on-disk cache.
Compile workers prepare their cases one at a time: a case's reference can take tens of GiB of
device memory for a moment, and several at once ran the H200 out of memory.
"""

from __future__ import annotations

import contextlib
import multiprocessing as mp
import time
import traceback
from multiprocessing.connection import Connection
from typing import Any

from ops.spec import Case

from . import interrupts


class WorkerLost(Exception):
    """The worker timed out (and was killed) or died; `category` is "timeout" or "crash"."""

    def __init__(self, category: str, message: str) -> None:
        super().__init__(message)
        self.category = category


def _compile_only(port) -> None:
    """Make the port's launches compile without running (`JITFunction.warmup`)."""
    from triton.runtime.jit import JITFunction

    class CompileOnly:
        def __init__(self, fn: JITFunction) -> None:
            self.fn = fn

        def __getitem__(self, grid):
            return lambda *args, **kwargs: self.fn.warmup(*args, grid=grid, **kwargs)

    for name, value in list(vars(port).items()):
        if isinstance(value, JITFunction):
            setattr(port, name, CompileOnly(value))


_CONTEXT = mp.get_context("spawn")


def preparing_lock():
    """The lock a run's compile workers share: each holds it while it builds a case's tensors."""
    return _CONTEXT.Lock()


def _serve(connection: Connection, soc: str, compile_only: bool, preparing) -> None:
    """The worker's loop: ("prepare", op, kernel, case), ("measure", config), ("samples", config, reps)."""
    import signal
    import warnings

    from ops.ports import load_port

    from ..backends import get_backend
    from .trial import CaseRunner, Outcome, classify, short

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle
    warnings.filterwarnings("ignore", category=RuntimeWarning, module=r"triton\..*")
    backend = get_backend(soc)
    runners: dict[tuple, CaseRunner] = {}
    runner: CaseRunner | None = None
    while True:
        try:
            request = connection.recv()
        except EOFError:
            return
        kind = request[0]
        try:
            if kind == "prepare":
                _, op, kernel, case = request
                key = (op, kernel, case.name, case.dtype)
                if key not in runners:
                    if compile_only:
                        _compile_only(load_port(op))
                    runners.clear()  # one case at a time: its tensors can be large
                    with preparing or contextlib.nullcontext():
                        runners[key] = CaseRunner(backend, op, kernel, case, compile_only)
                runner = runners[key]
                reply: Any = True
            elif kind == "measure":
                assert runner is not None, "prepare first"
                reply = runner.measure(request[1]).as_dict()
            elif kind == "compile":
                assert runner is not None, "prepare first"
                start = time.perf_counter()
                try:
                    runner.launch(request[1])
                    outcome = Outcome(True, compile_s=time.perf_counter() - start)
                except Exception as exc:  # noqa: BLE001
                    outcome = Outcome(False, classify(exc), short(exc))
                outcome.extra = backend.compiler_notes()
                reply = outcome.as_dict()
            elif kind == "samples":
                assert runner is not None, "prepare first"
                reply = runner.samples(request[1], request[2])
            else:
                reply = RuntimeError(f"unknown request {kind!r}")
        except Exception as exc:  # noqa: BLE001 - reported to the parent, which decides
            reply = RuntimeError(f"{short(exc)}\n{traceback.format_exc(limit=5)}")
        connection.send(reply)


class Worker:
    """One worker process bound to a soc; `call` raises WorkerLost after a timeout or crash."""

    def __init__(self, soc: str, *, compile_only: bool = False, preparing=None) -> None:
        """`preparing`: a `preparing_lock()` to build cases one worker at a time, or None."""
        self.soc = soc
        self.compile_only = compile_only
        self.preparing = preparing
        self.prepared: tuple | None = None
        self.busy = False
        self._start()

    def _start(self) -> None:
        self.connection, child = _CONTEXT.Pipe()
        self.process = _CONTEXT.Process(
            target=_serve, args=(child, self.soc, self.compile_only, self.preparing), daemon=True
        )
        self.process.start()
        child.close()
        self.prepared = None
        self.busy = False

    def send(self, request: tuple) -> None:
        self.connection.send(request)
        self.busy = True

    def ready(self) -> bool:
        return self.connection.poll()

    def receive(self, timeout: float) -> Any:
        deadline = time.monotonic() + timeout
        while not self.connection.poll(0.05):
            interrupts.check()
            if not self.process.is_alive():
                code = self.process.exitcode
                self.restart()
                raise WorkerLost("crash", f"worker process died (exit code {code})")
            if time.monotonic() > deadline:
                self.restart()
                raise WorkerLost(
                    "timeout", f"no answer within {timeout:g} s; worker killed and replaced"
                )
        try:
            reply = self.connection.recv()
        except (EOFError, OSError):
            self.restart()
            raise WorkerLost("crash", "worker process died while answering") from None
        self.busy = False
        if isinstance(reply, Exception):
            raise reply
        return reply

    def call(self, request: tuple, timeout: float) -> Any:
        self.send(request)
        return self.receive(timeout)

    def prepare(self, op: str, kernel: str, case: Case, timeout: float) -> None:
        key = (op, kernel, case.name, case.dtype)
        if self.prepared != key:
            self.call(("prepare", op, kernel, case), timeout)
            self.prepared = key

    def restart(self) -> None:
        self.kill()
        self._start()

    def kill(self) -> None:
        if self.process.is_alive():
            self.process.kill()
        self.process.join(timeout=10)
        self.connection.close()

    def close(self) -> None:
        self.kill()
