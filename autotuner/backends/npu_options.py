"""Which of triton-ascend's compiler options (`ops.npu_tunables`) a soc's search may vary, what a
launch that leaves one out gets there, and why any is left out.

Defaults are bishengir-compile's own for a flag left out (AscendNPU-IR
bishengir/include/bishengir/Tools/bishengir-compile/Options.td: v1.2.0, the binary ascendnpu-ir
1.2.0 ships for the 910B and 910_93; f9d978b, the one it ships for the 950 as
`bishengir-compile-a5`), except where triton-ascend always passes the option: `multibuffer`
(`triton_ascend.multibuffer_default`) and `enable_auto_bind_sub_block`. Where a chip family's
differ from the options' own (`ops.npu_tunables`), and which options its spaces leave out, are
facts of the family in the soc registry (`core.socs.AscendFamily`); anywhere, an option the
installed triton-ascend's `NPUOptions` lacks is left out too.
"""

from __future__ import annotations

from core.errors import UserError
from core.socs import ascend_family
from ops.npu_tunables import MIXED_CV_OPTIONS, MULTIBUFFER

from . import triton_ascend

#: The options a study may add to the tiles and `multibuffer` (`--npu-options`).
OPTIONS = {t.name: t for t in MIXED_CV_OPTIONS}


def option_defaults(soc: str) -> dict[str, int | str]:
    """What a launch on `soc` that names none of the options gets, each option by name."""
    defaults: dict[str, int | str] = {t.name: t.default for t in MIXED_CV_OPTIONS}
    family = ascend_family(soc)
    if family is not None:
        defaults.update(family.option_defaults)
    defaults[MULTIBUFFER.name] = triton_ascend.multibuffer_default(soc, triton_ascend.installed())
    return defaults


def left_out(soc: str, compiler: triton_ascend.TritonAscend | None) -> dict[str, str]:
    """Option -> why a search on `soc` cannot vary it, with `compiler` installed (None: not
    installed here; the family's facts are 3.2.0's)."""
    family = ascend_family(soc)
    out = dict(family.left_out) if family is not None else {}
    if compiler is not None:
        for name in OPTIONS:
            if name not in compiler.options and name not in out:
                out[name] = f"triton-ascend {compiler.version} has no NPUOptions.{name}"
    return out


def chosen(soc: str, names: tuple[str, ...]) -> frozenset[str]:
    """The options `--npu-options` names for a search on `soc` ("all": every one the soc has);
    UserError naming the valid ones, or why one is left out on this soc."""
    dropped = left_out(soc, triton_ascend.installed())
    if names == ("all",):
        return frozenset(name for name in OPTIONS if name not in dropped)
    for name in names:
        if name not in OPTIONS:
            raise UserError(
                f"unknown --npu-options value {name!r}; use all or any of {', '.join(OPTIONS)}"
            )
        if name in dropped:
            raise UserError(
                f"--npu-options {name} cannot be searched on the {soc}: {dropped[name]}"
            )
    return frozenset(names)
