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

import torch

from ops.spec import Case

from ..backends import BackendSpec
from ..vocabulary import Failure
from . import interrupts


class WorkerLost(Exception):
    """The worker timed out (and was killed) or died (`Failure.TIMEOUT`, `Failure.CRASH`)."""

    def __init__(self, category: Failure, message: str) -> None:
        super().__init__(message)
        self.category = category


_CONTEXT = mp.get_context("spawn")
#: What a worker does: time configs on the device, compile them for it ahead of timing, or compile
#: them for an Ascend soc with no device here (`backends.compile`).
TIMING, COMPILE, COMPILE_WITHOUT_DEVICE = "timing", "compile", "compile_without_device"


def preparing_lock():
    """The lock a run's compile workers share: each holds it while it builds a case's tensors."""
    return _CONTEXT.Lock()


def _serve(connection: Connection, spec: BackendSpec, mode: str, preparing) -> None:
    """The worker's loop: ("prepare", op, kernel, case), ("measure", config), ("samples", config,
    reps), ("compile", config), ("compile_key", config)."""
    import signal
    import warnings

    from ..backends import compile as compiling
    from ..backends import open_backend
    from ..backends.compile_verdict import short
    from .trial import CaseRunner, compile_inputs

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle
    warnings.filterwarnings("ignore", category=RuntimeWarning, module=r"triton\..*")
    if mode == COMPILE_WITHOUT_DEVICE:
        compiling.activate(compiling.ascend_compiler(spec.soc))
        backend, device = None, torch.device("cpu")
    else:
        backend = open_backend(spec)
        device = backend.device
        if mode == COMPILE:
            compiling.activate(None)
    runners: dict[tuple, CaseRunner] = {}
    runner: CaseRunner | None = None
    inputs: dict[tuple, tuple] = {}
    prepared: tuple | None = None
    while True:
        try:
            request = connection.recv()
        except EOFError:
            return
        kind = request[0]
        try:
            if kind == "prepare":
                _, op, kernel, case = request
                prepared = (op, kernel, case.name, case.dtype)
                with preparing or contextlib.nullcontext():
                    if mode == TIMING and prepared not in runners:
                        runners.clear()  # one case at a time: its tensors can be large
                        runners[prepared] = CaseRunner(backend, op, kernel, case)
                    elif mode != TIMING and prepared not in inputs:
                        inputs.clear()
                        inputs[prepared] = compile_inputs(op, kernel, case, device)
                        if backend is not None:
                            backend.release_memory()
                runner = runners.get(prepared)
                reply: Any = True
            elif kind == "measure":
                assert runner is not None, "prepare first"
                reply = runner.measure(request[1]).as_dict()
            elif kind in ("compile", "compile_key"):
                assert prepared in inputs, "prepare first"
                spec, kernel_spec, tensors = inputs[prepared]
                if kind == "compile_key":
                    reply = compiling.compile_key(spec, kernel_spec, tensors, request[1])
                else:
                    result = compiling.compile_config(spec, kernel_spec, tensors, request[1])
                    notes = backend.compiler_notes() if backend is not None else {}
                    reply = {"result": result.as_dict(), "notes": notes}
            elif kind == "samples":
                assert runner is not None, "prepare first"
                reply = runner.samples(request[1], request[2])
            else:
                reply = RuntimeError(f"unknown request {kind!r}")
        except Exception as exc:  # noqa: BLE001 - reported to the parent, which decides
            reply = RuntimeError(f"{short(exc)}\n{traceback.format_exc(limit=5)}")
        connection.send(reply)


class Worker:
    """One worker process with the backend its parent opened (or, compiling without a device, the
    soc of the spec alone); `call` raises WorkerLost after a timeout or crash."""

    def __init__(self, spec: BackendSpec, *, mode: str = TIMING, preparing=None) -> None:
        """`mode`: TIMING, COMPILE or COMPILE_WITHOUT_DEVICE; `preparing`: a `preparing_lock()` to
        build cases one worker at a time, or None."""
        self.spec = spec
        self.mode = mode
        self.preparing = preparing
        self.prepared: tuple | None = None
        self.busy = False
        self._start()

    def _start(self) -> None:
        self.connection, child = _CONTEXT.Pipe()
        self.process = _CONTEXT.Process(
            target=_serve, args=(child, self.spec, self.mode, self.preparing), daemon=True
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
                raise WorkerLost(Failure.CRASH, f"worker process died (exit code {code})")
            if time.monotonic() > deadline:
                self.restart()
                raise WorkerLost(
                    Failure.TIMEOUT, f"no answer within {timeout:g} s; worker killed and replaced"
                )
        try:
            reply = self.connection.recv()
        except (EOFError, OSError):
            self.restart()
            raise WorkerLost(Failure.CRASH, "worker process died while answering") from None
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
