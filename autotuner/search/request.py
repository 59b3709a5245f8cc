"""What `autotune run` was asked: one frozen value the command line builds and the runner takes."""

from __future__ import annotations

from dataclasses import KW_ONLY, dataclass

from core.errors import UserError
from ops.spec import Case

from ..backends import BackendSpec, spec_here
from ..cases.options import NO_REQUEST, CaseRequest
from ..settings import STANDARD, Effort
from .sampler import STRATEGIES


@dataclass(frozen=True)
class RunRequest:
    """Every (kernel, case) study of `op` on `soc` (None: the first device found) to run.

    `kernels` and `cases` are names (None: all); `trials` a count per study or a share in (0, 1]
    of the feasible configs; `case_request` the cases asked by shape or cases file, kept as the
    op's user cases; `extra` cases tuned but not kept (a benchmark's held-out shapes).
    `only_stale`: only the pairs whose frozen config on this soc is stale. `timer`: a name of
    `backends.TIMERS`, None for the soc's default. `effort`: the level's polish and re-timing
    (its budget is `trials`, which the command line takes from it unless given).
    """

    op: str
    soc: str | None
    _: KW_ONLY
    db_url: str
    trials: int | float = 48
    kernels: list[str] | None = None
    cases: list[str] | None = None
    seed: int = 0
    timeout_s: float = 300.0
    restart: bool = False
    force: bool = False
    sampler: str = "local"
    only_stale: bool = False
    npu_mode: str = "simd"
    npu_options: tuple[str, ...] = ()
    timer: str | None = None
    effort: Effort = STANDARD
    case_request: CaseRequest = NO_REQUEST
    extra: tuple[Case, ...] = ()

    def __post_init__(self) -> None:
        trials = self.trials
        if not (trials > 0 if isinstance(trials, int) else 0 < trials <= 1):
            raise UserError(
                "--trials must be a positive number of trials per study or a share in "
                f"(0%, 100%], not {trials}"
            )
        if self.sampler not in STRATEGIES:
            raise UserError(
                f"unknown --sampler {self.sampler!r}; use one of {', '.join(STRATEGIES)}"
            )
        if not self.timeout_s > 0:
            raise UserError(
                f"--timeout must be a positive number of seconds, not {self.timeout_s:g}"
            )

    def backend_spec(self) -> BackendSpec:
        """The backend the run and its workers open (the soc found here where none was named)."""
        return spec_here(self.soc, self.npu_mode, self.npu_options, self.timer)
