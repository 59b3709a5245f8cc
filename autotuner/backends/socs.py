"""Names of the chips a number can belong to, and how device names map onto them.

The port files carry a generated copy of `SOC_PATTERNS` and `soc_from_device_name` (they must run
without this package); a test keeps the two in step.
"""

import re

CPU = "cpu"
NPU_SOCS = ("950PR", "950DT", "910B", "910_93")
GPU_SOCS = (
    "GH200",
    "H200",
    "H100",
    "H800",
    "H20",
    "B200",
    "B100",
    "A100",
    "A800",
    "A10",
    "L40S",
    "L40",
    "L4",
    "V100",
    "T4",
)
KNOWN_SOCS = (CPU, *NPU_SOCS, *GPU_SOCS)


#: (regex over the device name, soc); the first match wins. The 950 family's older names,
#: `Ascend910_95xx`, carry the chip ids of its newer ones: 9581 is a 950DT's (`Ascend950DT_9581`),
#: the others in use a 950PR's (Ascend/AscendNPU-IR,
#: bishengir/include/bishengir/Dialect/HACC/Targets/NPUTargetSpec.td, lists both namings).
SOC_PATTERNS: tuple[tuple[str, str], ...] = (
    (r"^Ascend950PR", "950PR"),
    (r"^Ascend950DT", "950DT"),
    (r"^Ascend910_9581", "950DT"),
    (r"^Ascend910_95", "950PR"),
    (r"^Ascend910B", "910B"),
    (r"^Ascend910_93", "910_93"),
    *((rf"\b{soc}\b", soc) for soc in GPU_SOCS),
)
VENDOR_WORDS = ("NVIDIA", "GeForce", "Tesla", "Quadro")


def is_npu_soc(soc: str) -> bool:
    """An Ascend soc: a known one, or an unknown Ascend device name kept verbatim."""
    return soc in NPU_SOCS or soc.startswith("Ascend")


def soc_from_device_name(name: str) -> str:
    """`Ascend950PR_9599` -> `950PR`, `NVIDIA A100-SXM4-80GB` -> `A100`.

    An unknown name becomes its words without vendor names, joined (`NVIDIA RTX 6000` -> `RTX6000`).
    """
    for pattern, soc in SOC_PATTERNS:
        if re.search(pattern, name):
            return soc
    words = [w for w in name.split() if w not in VENDOR_WORDS]
    return "".join(words) or name
