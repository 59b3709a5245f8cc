"""A study's verdict: the winner its settlement declared, how it was decided (`Outcome`), and the
interleaved re-timing behind it. The database's JSON column and the dashboard hold its JSON form
(`as_dict`, versioned); `Verdict.of` reads any stored form into the current one, version 1 (the
free dict written before the version field, its outcome in `reason` and `kept_frozen`) included."""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, model_validator

from ops.spec import Config

#: The JSON form `as_dict` writes; a stored dict without a `version` is version 1.
VERSION = 2


class Outcome(StrEnum):
    """How the settlement chose the winner."""

    BEATS_DEFAULT = "beats_default"  # a finalist beat the default beyond noise
    DEFAULT_KEPT = "default_kept"  # none did: the default stays
    DEFAULT_FAILED = "default_failed"  # the default had no time: the fastest finalist wins
    FROZEN_WON = "frozen_won"  # the config frozen already is the winner outright
    BEATS_FROZEN = "beats_frozen"  # a new winner beat the frozen config beyond noise
    FROZEN_KEPT = "frozen_kept_within_noise"  # the winner did not: the frozen config stays

    @property
    def text(self) -> str:
        return _TEXT[self]


_TEXT = {
    Outcome.BEATS_DEFAULT: "beats default",
    Outcome.DEFAULT_KEPT: "default kept",
    Outcome.DEFAULT_FAILED: "the default config failed",
    Outcome.FROZEN_WON: "the frozen config won",
    Outcome.BEATS_FROZEN: "beats the frozen config",
    Outcome.FROZEN_KEPT: "kept: within noise of the frozen config",
}


class Retimed(BaseModel):
    """One finalist of the interleaved re-timing."""

    model_config = ConfigDict(frozen=True)

    config: Config
    trial: int
    median_ms: float
    p20_ms: float | None = None
    p80_ms: float | None = None
    n: int | None = None
    paired_ratio: float | None = None  # its median over the default's, paired by round


class Verdict(BaseModel):
    """The settled verdict of one study."""

    model_config = ConfigDict(frozen=True)

    version: int = VERSION
    outcome: Outcome
    method: str
    complete_trials: int
    retimed: tuple[Retimed, ...]
    default_config: Config
    winner: Config
    winner_trial: int
    winner_median_ms: float
    default_median_ms: float | None
    speedup: float | None
    p_value: float | None  # the winner against the default
    beats_default: bool
    frozen_config: Config | None = None  # the config frozen already, where the study measured it
    frozen_gain: float | None = None  # the new winner against the frozen config
    frozen_p_value: float | None = None

    @model_validator(mode="before")
    @classmethod
    def _upgrade(cls, data: Any) -> Any:
        """A version-1 dict (no `version`) read into the current form: its outcome from `reason`
        and `kept_frozen`, the keys it shares kept as they were."""
        if not isinstance(data, dict) or "version" in data or "outcome" in data:
            return data
        old = {k: v for k, v in data.items() if k not in ("reason", "kept_frozen")}
        return {**old, "version": VERSION, "outcome": _outcome_v1(data)}

    @classmethod
    def of(cls, stored: dict[str, Any] | None) -> Verdict | None:
        """The verdict a JSON column holds (None, or a JSON null, where it holds none)."""
        return cls.model_validate(stored) if stored else None

    def as_dict(self) -> dict[str, Any]:
        """The JSON form, at the current version."""
        return self.model_dump(mode="json")

    @property
    def kept_frozen(self) -> bool:
        """The frozen config stays frozen (it won, or the new winner was within noise of it)."""
        return self.outcome in (Outcome.FROZEN_WON, Outcome.FROZEN_KEPT)

    @property
    def winner_retimed(self) -> Retimed | None:
        """The winner's numbers from the interleaved re-timing, where it was re-timed."""
        return next((r for r in self.retimed if r.config == self.winner), None)

    @property
    def winner_ms(self) -> float:
        """The winner's re-timed median, else the median it won with."""
        retimed = self.winner_retimed
        return retimed.median_ms if retimed else self.winner_median_ms

    @property
    def text(self) -> str:
        """One line for a table: whether it beats the default, and what the frozen config did."""
        if self.outcome in (Outcome.FROZEN_KEPT, Outcome.DEFAULT_FAILED):
            return self.outcome.text
        text = "beats default" if self.beats_default else "default kept"
        if self.outcome is Outcome.BEATS_FROZEN and self.frozen_gain is not None:
            p = f" (p={self.frozen_p_value:.1g})" if self.frozen_p_value is not None else ""
            text += f"; beats the frozen config by {self.frozen_gain:.1%}{p}"
        return text


def _outcome_v1(data: dict[str, Any]) -> Outcome:
    reason = data.get("reason")
    if reason == _TEXT[Outcome.DEFAULT_FAILED]:
        return Outcome.DEFAULT_FAILED
    if reason == _TEXT[Outcome.FROZEN_KEPT]:
        return Outcome.FROZEN_KEPT
    if data.get("kept_frozen"):
        return Outcome.FROZEN_WON
    if data.get("frozen_gain") is not None:
        return Outcome.BEATS_FROZEN
    return Outcome.BEATS_DEFAULT if data.get("beats_default") else Outcome.DEFAULT_KEPT
