"""A reference set on disk: upstream's outputs of an op's cases, saved on one machine (a GPU) and
read as verify's second reference on another (an NPU).

Layout: `<dir>/<op>/manifest.json` and `<dir>/<op>/<case>/<output>.npy`. A `.npy` file is numpy's
own format, read with `allow_pickle=False`, so a file can hold numbers and nothing that runs;
bfloat16, which numpy lacks, is stored as its raw 16-bit patterns and named in the manifest. The
manifest names, per case, the inputs' hash (the other machine regenerates the inputs and must get
the same bytes), upstream's repository, commit and file hash, the device, the versions, the
command, the date, and each file's sha256: a file that does not match is refused.
"""

from __future__ import annotations

import hashlib
import io
import re
import sys
from datetime import UTC, datetime
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
import torch
from pydantic import BaseModel, ValidationError

from core.errors import UserError
from core.files import write_files
from ops.spec import Case, OpSpec, Tensors

from ..backends import Backend
from ..measure.environment import environment

FORMAT = 1
MANIFEST = "manifest.json"
#: Names that become file and folder names: no separators, no `..`.
SAFE_NAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,255}$")
#: Dtypes numpy cannot hold, stored as raw bits of this integer type.
_RAW_BITS = {torch.bfloat16: torch.int16}


class OutputFile(BaseModel):
    dtype: str  # the torch dtype's name, e.g. "bfloat16"
    shape: list[int]
    sha256: str  # of the .npy file's bytes


class UpstreamPin(BaseModel):
    repo: str
    commit: str
    file: str
    sha256: str

    @classmethod
    def of(cls, spec: OpSpec) -> UpstreamPin:
        source = spec.upstream.source
        return cls(
            repo=source.repo,
            commit=source.commit,
            file=source.provenance_path(spec.upstream.file),
            sha256=spec.upstream.sha256,
        )


class Entry(BaseModel):
    """Upstream's outputs of one case, where and how they were made."""

    op: str
    case: str
    kind: str
    dtype: str
    shape: dict[str, int]
    offsets: list[int] | None = None
    inputs_sha256: str
    upstream: UpstreamPin
    #: Output name -> its file `<case>/<output>.npy`; the outputs upstream cannot produce for the
    #: case are absent (verify takes torch in the case dtype for them, as it does live).
    outputs: dict[str, OutputFile]
    soc: str
    device: str
    versions: dict[str, Any]
    command: str
    saved_at: datetime
    #: The reference server's URL where the outputs came from one (`--references URL`).
    served_by: str | None = None

    def label(self) -> str:
        """Where the second reference came from, for verify's `reference` column."""
        how = f"served by {self.served_by}" if self.served_by else f"saved {self.saved_at:%Y-%m-%d}"
        return f"on {self.soc}, {how}"


class Manifest(BaseModel):
    format: int = FORMAT
    op: str
    cases: dict[str, Entry] = {}


def file_name(case: str, output: str) -> str:
    return f"{case}/{output}.npy"


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def inputs_sha256(inputs: Tensors) -> str:
    """One hash over the inputs' names, dtypes, shapes and bytes (on the CPU)."""
    digest = hashlib.sha256()
    for name in sorted(inputs):
        tensor = inputs[name].detach().cpu().contiguous()
        digest.update(f"{name}:{tensor.dtype}:{list(tensor.shape)};".encode())
        digest.update(tensor.reshape(-1).view(torch.uint8).numpy().tobytes())
    return digest.hexdigest()


def encode(tensor: torch.Tensor) -> bytes:
    """The tensor as `.npy` bytes (bfloat16 as its raw bits)."""
    tensor = tensor.detach().cpu().contiguous()
    raw = _RAW_BITS.get(tensor.dtype)
    array = (tensor.view(raw) if raw else tensor).numpy()
    stream = io.BytesIO()
    np.save(stream, array, allow_pickle=False)
    return stream.getvalue()


def decode(data: bytes, described: OutputFile) -> torch.Tensor:
    """The tensor of `.npy` bytes, checked against its manifest line; ValueError where not."""
    array = np.load(io.BytesIO(data), allow_pickle=False)
    dtype = getattr(torch, described.dtype, None)
    if not isinstance(dtype, torch.dtype):
        raise ValueError(f"unknown dtype {described.dtype!r}")
    tensor = torch.from_numpy(array.copy())
    if dtype in _RAW_BITS:
        tensor = tensor.view(dtype)
    if tensor.dtype != dtype or list(tensor.shape) != described.shape:
        raise ValueError(f"holds {tensor.dtype} {list(tensor.shape)}, not {described}")
    return tensor


@cache
def versions_of(backend: Backend) -> dict[str, Any]:
    """The environment of a backend, read once a process (it asks git and the driver)."""
    return environment(backend)


def capture(
    spec: OpSpec, case: Case, inputs_hash: str, outputs: Tensors, backend: Backend
) -> tuple[Entry, dict[str, bytes]]:
    """The entry of a case and its files' bytes (output name -> `.npy` bytes); `inputs_hash`:
    `inputs_sha256` of the inputs upstream ran on."""
    files = {name: encode(tensor) for name, tensor in outputs.items()}
    entry = Entry(
        op=spec.name,
        case=case.name,
        kind=case.kind,
        dtype=case.dtype,
        shape=case.shape,
        offsets=list(case.offsets) if case.offsets is not None else None,
        inputs_sha256=inputs_hash,
        upstream=UpstreamPin.of(spec),
        outputs={
            name: OutputFile(
                dtype=str(t.dtype).removeprefix("torch."),
                shape=list(t.shape),
                sha256=sha256(files[name]),
            )
            for name, t in outputs.items()
        },  # fmt: skip
        soc=backend.soc,
        device=backend.device_name,
        versions=versions_of(backend),
        command=" ".join(["autotune", *sys.argv[1:]]),
        saved_at=datetime.now(UTC),
    )
    return entry, files


def _manifest(folder: Path, op: str) -> Manifest:
    """The op's manifest in `folder`, or an empty one where there is none."""
    path = folder / MANIFEST
    if not path.exists():
        return Manifest(op=op)
    try:
        manifest = Manifest.model_validate_json(path.read_bytes())
    except (OSError, ValidationError) as exc:
        first = exc.errors()[0]["msg"] if isinstance(exc, ValidationError) else exc
        raise UserError(f"{path} is not a reference manifest: {first}") from None
    if manifest.op != op or manifest.format != FORMAT:
        raise UserError(f"{path} is not a format-{FORMAT} manifest of {op}")
    return manifest


def write_set(root: Path, captured: list[tuple[Entry, dict[str, bytes]]]) -> None:
    """Add the cases to the set in `root` (one op's earlier cases of the same name replaced), as
    one step: every file and manifest, or nothing."""
    texts: dict[Path, str | bytes] = {}
    manifests: dict[str, Manifest] = {}
    for entry, files in captured:
        for name in (entry.op, entry.case, *files):
            if not SAFE_NAME.match(name):
                raise UserError(f"{entry.op} {entry.case}: {name!r} cannot name a file")
        folder = root / entry.op
        manifest = manifests.get(entry.op) or _manifest(folder, entry.op)
        manifests[entry.op] = manifest
        manifest.cases[entry.case] = entry
        texts |= {folder / file_name(entry.case, n): data for n, data in files.items()}
    for op, manifest in manifests.items():
        texts[root / op / MANIFEST] = manifest.model_dump_json(indent=1) + "\n"
    write_files(texts)


class ReferenceSet:
    """A set on disk, read case by case; each refusal is one line naming the case."""

    def __init__(self, root: Path) -> None:
        if not root.is_dir():
            raise UserError(f"--references {root}: no such folder")
        self.root = root
        self._manifests: dict[str, Manifest] = {}

    def entry(self, spec: OpSpec, case: Case) -> Entry:
        if spec.name not in self._manifests:
            self._manifests[spec.name] = _manifest(self.root / spec.name, spec.name)
        entry = self._manifests[spec.name].cases.get(case.name)
        if entry is None:
            raise UserError(f"{spec.name} {case.name}: no reference saved in {self.root}")
        if (entry.op, entry.case) != (spec.name, case.name):
            raise UserError(f"{spec.name} {case.name}: its manifest entry names another case")
        if entry.upstream != UpstreamPin.of(spec):
            raise UserError(
                f"{spec.name} {case.name}: the reference was saved from {entry.upstream.repo} "
                f"{entry.upstream.commit[:12]} {entry.upstream.file} (sha256 "
                f"{entry.upstream.sha256[:12]}), which is not the upstream this checkout pins"
            )
        return entry

    def check(self, spec: OpSpec, case: Case, inputs: Tensors) -> Entry:
        """The case's entry, once its inputs and files are those it was saved with."""
        entry = self.entry(spec, case)
        here = inputs_sha256(inputs)
        if here != entry.inputs_sha256:
            raise UserError(
                f"{spec.name} {case.name}: the inputs' hash differs from the saved reference's "
                f"({here[:12]} here, {entry.inputs_sha256[:12]} on {entry.soc}): the inputs are "
                "not regenerated the same here"
            )
        self._files(entry)
        return entry

    def outputs(self, spec: OpSpec, case: Case, inputs: Tensors) -> tuple[Tensors, Entry]:
        """Upstream's saved outputs of the case, and its entry."""
        entry = self.check(spec, case, inputs)
        return self._files(entry), entry

    def _files(self, entry: Entry) -> Tensors:
        found = {}
        for name, described in entry.outputs.items():
            path = self.root / entry.op / file_name(entry.case, name)
            where = f"{entry.op} {entry.case}: {path}"
            if not SAFE_NAME.match(name):
                raise UserError(f"{entry.op} {entry.case}: {name!r} cannot name a file")
            try:
                data = path.read_bytes()
            except OSError as exc:
                raise UserError(f"{where} cannot be read ({exc.strerror})") from None
            if sha256(data) != described.sha256:
                raise UserError(f"{where} does not match the manifest (sha256 differs)")
            try:
                found[name] = decode(data, described)
            except ValueError as exc:
                raise UserError(f"{where} is not the manifest's tensor: {exc}") from None
        return found
