"""autotune: search and freeze launch configs of Triton kernels ported to Ascend NPUs.

One package per stage, in the order the data flows: `backends` (devices and socs), `atk` (the ATK
folder's files), `cases` (user cases), `measure` (what every measurement shares), `verify`,
`search`, `baseline`, `freeze` and `report`; `cli` on top. A stage imports the stages before it,
never one after it (tests/test_layers.py).
"""

__version__ = "0.1.0"
