"""What a reference server and its client say to each other: a case asked for (`CaseQuery`, a
description, never code) and the answer (`Answer`: the case's reference-set entry and its files)."""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from .store import Entry

#: Op, case and dtype names: letters, digits, `_`, `.`, `-`.
NAME = r"^[A-Za-z0-9_][A-Za-z0-9_.-]*$"
#: Bounds of a user case's description (the request's bytes bound the offsets too).
MAX_SHAPE_KEYS = 16
MAX_OFFSETS = 1 << 16


class CaseQuery(BaseModel):
    """One case of an op: a built-in case by name, or a user case by shape, dtype and offsets."""

    model_config = ConfigDict(extra="forbid")

    op: str = Field(max_length=128, pattern=NAME)
    case: str | None = Field(None, max_length=256, pattern=NAME)
    shape: dict[str, Annotated[int, Field(ge=1, le=1 << 31)]] | None = Field(
        None, max_length=MAX_SHAPE_KEYS
    )
    dtype: str | None = Field(None, max_length=16, pattern=NAME)
    offsets: list[Annotated[int, Field(ge=0, le=1 << 40)]] | None = Field(
        None, max_length=MAX_OFFSETS
    )

    @model_validator(mode="after")
    def _one_case(self) -> CaseQuery:
        if (self.case is None) == (self.shape is None):
            raise ValueError("give either case (a built-in case's name) or shape and dtype")
        if self.shape is not None and self.dtype is None:
            raise ValueError("a shape needs its dtype")
        if self.case is not None and (self.dtype or self.offsets is not None):
            raise ValueError("a built-in case takes no dtype or offsets")
        return self


class Answer(BaseModel):
    entry: Entry
    files: dict[str, str]  # output name -> base64 of its .npy bytes


def one_line(error: ValidationError) -> str:
    """The first validation error as `where: what`."""
    first = error.errors()[0]
    where = ".".join(str(part) for part in first.get("loc", ()) if part != "body")
    return f"{where}: {first['msg']}" if where else str(first["msg"])
