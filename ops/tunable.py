"""What a searchable parameter of a kernel is (`Tunable`), and the one every backend's
persistent kernels share, their program count (`PROGRAMS`). The NPU compiler's launch options
are in `ops.npu_tunables`."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class Role(StrEnum):
    """How a launch passes a tunable on: a constexpr of the kernel (the launcher passes the
    config's constexprs as they are), a launch option of the compiler (num_warps, multibuffer),
    or an argument of the launcher itself, which reads it to shape the launch (a program count,
    a grid form) and passes the kernel what it derives."""

    CONSTEXPR = "constexpr"
    LAUNCH_OPTION = "launch_option"
    LAUNCHER_ARGUMENT = "launcher_argument"


@dataclass(frozen=True)
class Tunable:
    """One searchable parameter; `values` are ordered, so powers of two are treated as ordinal."""

    name: str
    values: tuple[int | str, ...]
    #: How a launch passes it on (`Role`).
    role: Role = Role.CONSTEXPR
    #: The value a launch that leaves this option out gets (the compiler's own default), for the
    #: options upstream's default config cannot name; None where the default config names it.
    default: int | str | None = None
    #: (another tunable, its value): this one is read only while the other has that value; a
    #: config where it is not read holds it at its default (the others would compile alike).
    read_only_when: tuple[str, int | str] | None = None
    #: Where the tunable and its values come from (a launch option: the document or file of the
    #: toolchain, at a commit); "" for the port's own constexprs.
    source: str = ""

    @property
    def launch_option(self) -> bool:
        """A launch option (num_warps, num_stages, multibuffer) rather than a kernel argument."""
        return self.role is Role.LAUNCH_OPTION


#: The program count of a kernel given a persistent form: 1, 2 or 4 programs per core, each
#: looping over the row blocks `range(pid, blocks, programs)`, or 0, the classic grid of one
#: program per block (the default: a config that names no PROGRAMS launches as before). Ordered
#: by programs (0, every block, last). The cores are those the kernel runs on: an Ascend NPU's
#: vector cores (the kernels given this form have no tl.dot), a GPU's SMs (`DeviceLimits`).
#: triton-ascend's guide: "keep the launch close to the number of physical Vector Cores and let
#: each program process multiple tiles in an inner loop" (Ascend/triton-ascend main,
#: docs/en/programming_guide/vector_operator.md); more programs than cores run in waves.
PROGRAMS = Tunable(
    "PROGRAMS",
    (1, 2, 4, 0),
    role=Role.LAUNCHER_ARGUMENT,
    default=0,
    source="Ascend/triton-ascend main docs/en/programming_guide/vector_operator.md "
    "(grid = num_vectorcore, range(pid, num_blocks, num_core))",
)
