"""Catch a timed call that waits for the device: a read of a device value on the host.

The timers cover the host's launch work with a spin of the device, so host work costs nothing in
the timed window as long as the host never waits for the device. A read of a device value
(`int(t)`, `t.item()`, `t.tolist()`, `t.cpu()`, ...) makes it wait: the window then times the
host's latency, not the kernels. Such reads belong in the preparation, outside the window.

The check runs a call once under a torch function mode and reports the reads made by code outside
torch and Triton (the Triton interpreter moves tensors to the host by design): on the `cpu`
backend too, where no read waits for anything, so that CI catches a launcher that would on a
device. Reads of an op's host scalars (its 0-d inputs, such as `max_seq_len`, which stay on the
host on every backend) wait for nothing and are not reported. Files opened inside the call are
reported too: reading (and hashing) a source file on every call cost upstream's timed calls about
a millisecond each.
"""

from __future__ import annotations

import sys
import sysconfig
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import torch
import triton
from torch.overrides import TorchFunctionMode

#: Tensor methods that copy a value to the host, so wait for the device.
READS = frozenset(
    {"__int__", "__float__", "__bool__", "__index__", "item", "tolist", "cpu", "numpy"}
)
#: Code under these folders may read: its reads are not the launcher's (the standard library's
#: file opens are reported at the frame that called into it).
_EXEMPT = (
    *(str(Path(m.__file__).parent) for m in (torch, triton)),
    sysconfig.get_paths()["stdlib"],
)


def _caller() -> str | None:
    """`file:line` of the innermost frame outside torch, Triton and this module."""
    frame = sys._getframe(2)
    while frame is not None:
        name = frame.f_code.co_filename
        if name != __file__ and not name.startswith(_EXEMPT):
            return f"{Path(name).name}:{frame.f_lineno}"
        if name.startswith(_EXEMPT) and "interpreter" in name:
            return None  # the interpreter running a kernel
        frame = frame.f_back
    return None


#: The recorder of the call being checked, if any (an audit hook cannot be removed: one for all).
_ACTIVE: list[_Reads] = []


def _audit(event: str, args: tuple) -> None:
    if event == "open" and _ACTIVE and isinstance(args[0], str | Path):
        where = _caller()
        if where is not None:
            _ACTIVE[-1].found.append(f"open({Path(args[0]).name}) at {where}")


sys.addaudithook(_audit)  # idle (one comparison an event) unless a call is being watched


class _Reads(TorchFunctionMode):
    def __init__(self, host: set[int]) -> None:
        super().__init__()
        self.host = host
        self.found: list[str] = []

    def __torch_function__(self, func, types, args=(), kwargs=None):
        name = getattr(func, "__name__", "")
        read = name in READS or (name == "to" and _to_host(args, kwargs or {}))
        if read and not (args and id(args[0]) in self.host):
            where = _caller()
            if where is not None:
                self.found.append(f"{name} at {where}")
        return func(*args, **(kwargs or {}))


def _to_host(args: tuple, kwargs: dict[str, Any]) -> bool:
    device = kwargs.get("device", args[1] if len(args) > 1 else None)
    return str(device).startswith("cpu")


def host_scalars(inputs: dict[str, Any]) -> list[torch.Tensor]:
    """An op's 0-d input tensors: host values on every backend."""
    return [t for t in inputs.values() if isinstance(t, torch.Tensor) and t.dim() == 0]


def host_reads(
    call: Callable[[], Any], host: Iterable[torch.Tensor] = (), *, warm: bool = True
) -> list[str]:
    """The device-value reads and file opens of a call of `call`, as `what at file:line`, leaving
    out reads of the `host` tensors. `warm`: call it once first, unwatched (that call imports and
    compiles, as the untimed first call of a timing does); False where it has just run."""
    if warm:
        call()
    with _Reads({id(t) for t in host}) as mode:
        _ACTIVE.append(mode)
        try:
            call()
        finally:
            _ACTIVE.pop()
    return mode.found
