"""autotune: search and freeze launch configs of Triton kernels ported to Ascend NPUs."""

__version__ = "0.1.0"
