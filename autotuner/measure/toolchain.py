"""What a study's numbers depend on beyond the kernel source: the compilers, runtimes and the
port's launchers. Part of a study's identity: a Triton, triton-ascend, torch, torch_npu or CANN
upgrade, or an edited launcher, starts new studies instead of reusing old winners."""

from __future__ import annotations

import ast
import hashlib
import json

from core.paths import port_file

from ..atk.generated_block import BEGIN_MARKER, END_MARKER, PICK_FUNCTIONS
from ..backends import Backend

#: The entries of `Backend.versions()` that change what a config compiles to or how it runs.
VERSION_KEYS = ("triton", "torch", "torch_npu", "cann", "cuda_runtime")


def launcher_hash(op: str) -> str:
    """sha256 of the port file, of its generated block only the functions that run a config (the
    shared launcher helpers): not its data, the frozen configs every freeze rewrites and the soc
    names, nor the pick of a config for a launch that names none (a study always names one)."""
    source = port_file(op).read_text(encoding="utf-8")
    if BEGIN_MARKER in source and END_MARKER in source:
        head, rest = source.split(BEGIN_MARKER, 1)
        block, tail = rest.split(END_MARKER, 1)
        functions = [
            ast.get_source_segment(block, node) or ""
            for node in ast.parse(block).body
            if isinstance(node, ast.FunctionDef) and node.name not in PICK_FUNCTIONS
        ]
        source = head + "\n".join(functions) + tail
    return hashlib.sha256(source.encode()).hexdigest()


def toolchain(backend: Backend, op: str) -> dict[str, str]:
    """The versions that matter on this backend, and the hash of the op's launchers."""
    versions = backend.versions()
    found = {key: str(versions[key]) for key in VERSION_KEYS if key in versions}
    return {**found, "launchers": launcher_hash(op)[:16]}


def fingerprint(chain: dict[str, str]) -> str:
    """A short name of a toolchain, for study names."""
    return hashlib.sha256(json.dumps(chain, sort_keys=True).encode()).hexdigest()[:8]


def differences(recorded: dict[str, str] | None, current: dict[str, str]) -> list[str]:
    """`key a -> b` for each entry that changed; ["unrecorded"] for a number from before
    toolchains were recorded."""
    if not recorded:
        return ["unrecorded"]
    return [
        f"{key} {recorded.get(key, '-')} -> {current.get(key, '-')}"
        for key in sorted(set(recorded) | set(current))
        if recorded.get(key) != current.get(key)
    ]
