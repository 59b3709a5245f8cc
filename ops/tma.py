"""Whether a device runs Triton's TMA tensor descriptors (Hopper's Tensor Memory Accelerator):
upstream paths that take them (`enable_tma=True`) need a CUDA device of compute capability 9.0
or later and a Triton with host descriptors (`triton.tools.tensor_descriptor.TensorDescriptor`)
and device ones (`tl.make_tensor_descriptor`, which upstream's attention backward builds).

Unverified on hardware: written and tested on a machine without a GPU (the checks' logic, with
the device's capability and Triton's modules stood in for).

Triton is imported when asked, never with `ops`: a `triton.language` imported before
`TRITON_INTERPRET=1` is set (the `cpu` backend sets it when it opens) keeps its `@jit` helpers
(`tl.zeros`) compiled ones, which triton-ascend 3.2's interpreter then refuses to call ("Cannot
call @triton.jit'd outside of the scope of a kernel").
"""

from __future__ import annotations

import importlib

import torch

#: The least compute capability with TMA (sm_90, Hopper).
TMA_CAPABILITY = (9, 0)


def tma_missing(device: torch.device) -> str | None:
    """Why `device` cannot run TMA descriptors, in one line; None where it can."""
    import triton
    import triton.language as tl

    if device.type != "cuda":
        return f"TMA descriptors are CUDA's, not {device.type}'s"
    capability = torch.cuda.get_device_capability(device)
    if capability < TMA_CAPABILITY:
        return f"TMA needs sm_90 or later; this GPU is sm_{capability[0]}{capability[1]}"
    try:
        importlib.import_module("triton.tools.tensor_descriptor")
    except ImportError:
        return f"Triton {triton.__version__} has no triton.tools.tensor_descriptor"
    if not hasattr(tl, "make_tensor_descriptor"):
        return f"Triton {triton.__version__} has no tl.make_tensor_descriptor"
    return None
