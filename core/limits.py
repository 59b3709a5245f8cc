"""What a device allows a launch: the limits a config is checked against before it is compiled.

Op specs judge configs by them (`ops.spec.KernelSpec.violation`); each backend states its own
(`autotuner.backends`), and a soc's are known without its device.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class DeviceLimits:
    """Hard limits a config must respect before it is worth compiling."""

    shared_memory_bytes: int | None = None  # per block, CUDA
    unified_buffer_bytes: int | None = None  # per AI core, Ascend
    #: Ascend 950: vector registers that can hold tiles the UB then need not (a static model
    #: lets tiles exceed the UB by this much before it rejects them)
    register_file_bytes: int | None = None
    #: Ascend 950: rows of this many bytes in a dot operand made by vector code abort the compiler
    #: (bishengir-compile-a5 of ascendnpu-ir 1.2.0)
    crashing_dot_row_bytes: int | None = None
    l1_bytes: int | None = None  # Ascend: L1 (cbuf) of a cube core, where tl.dot operands go
    l0c_bytes: int | None = None  # Ascend: L0C of a cube core, where tl.dot results accumulate
    max_grid: tuple[int, int, int] = (2**31 - 1, 65535, 65535)
    max_total_blocks: int | None = None  # Ascend: a launch over 65535 blocks fails
    cores: int | None = None  # CUDA: SMs; Ascend: AI (cube) cores
    vector_cores: int | None = None  # Ascend: vector cores
