"""Settings from the environment (prefix AUTOTUNE_) with documented defaults: every knob of the
engine, the service and the search's named effort levels, in one place."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import Literal

from pydantic import ByteSize, Field, ValidationError
from pydantic_settings import BaseSettings, SettingsConfigDict

from core.errors import UserError


@dataclass(frozen=True)
class Effort:
    """The search settings of one named effort level (after pytorch/helion's
    `helion/autotuner/effort_profile.py`): `autotune run --effort LEVEL` or AUTOTUNE_EFFORT, and
    an explicit `--trials` overrides its budget."""

    #: Measured configs per study: a number, or a float in (0, 1], that share of the feasible ones.
    trials: int | float
    #: The last trials of the budget go to the winner's neighbours first (`sampler.polish_trials`).
    polish: bool
    #: The best few trials re-timed against the default before a winner is declared...
    finals: int
    #: ...in this many interleaved rounds of at least this many timed calls each.
    retime_rounds: int
    retime_reps: int


#: The effort levels; `standard` is what `autotune run` did before there were levels.
EFFORTS: dict[str, Effort] = {
    "quick": Effort(trials=16, polish=False, finals=2, retime_rounds=3, retime_reps=10),
    "standard": Effort(trials=48, polish=True, finals=3, retime_rounds=5, retime_reps=20),
    "thorough": Effort(trials=128, polish=True, finals=5, retime_rounds=7, retime_reps=30),
}
STANDARD = EFFORTS["standard"]
EffortName = Literal["quick", "standard", "thorough"]


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="AUTOTUNE_", extra="ignore")

    #: Database of studies, trials, baselines and frozen versions (SQLAlchemy URL).
    db: str = "sqlite:///autotune.db"
    #: Dual-reference precision level for `autotune verify` (CANN L0/L1/L2 ratio limits).
    precision_level: Literal["L0", "L1", "L2"] = "L0"
    #: A tuning process refreshes the claims of the configs it measures this often (seconds)...
    heartbeat_s: float = 10.0
    #: ...and other processes re-queue a claim whose heartbeat is older than this (seconds).
    stale_after_s: float = 120.0
    #: Bearer token the service's writing endpoints (an import upload) require; unset: they are off.
    api_token: str | None = None
    #: Largest import upload the service reads (bytes); a larger one is answered with 413.
    import_max_bytes: int = 8 * 1024 * 1024
    #: The GPU whose upstream times are the GPU baseline (e.g. H200); unset: the newest GPU row.
    gpu_soc: str | None = None
    #: How much faster than the default (and the config frozen before) a study's winner must be,
    #: re-timed interleaved, besides a one-sided Mann-Whitney p < 0.01. 1% keeps noise from
    #: churning configs; a deep-tuning round that must close a gap to upstream smaller than that
    #: (e.g. 0.6%, `autotune report`'s "slower") lowers it for its re-tune.
    min_gain: float = Field(0.01, ge=0.0, lt=1.0)
    #: Relative slow-down `autotune check` calls a regression when it is also significant.
    check_threshold: float = 0.05
    #: `autotune check` calls the device contended (shared with another process) when references
    #: of dissimilar durations moved apart by more than this share since baseline time: quiet
    #: H200 checks stay within about 1% of their baselines (issue 27).
    check_contention_noise: float = 0.03  # calibration probes too (measure.device_load)
    #: `autotune baseline` stops a part's interleaved rounds (at least 3 of its 5) once the
    #: medians of every source's rounds lie within this share of each other; unset: 5 rounds.
    baseline_round_spread: float | None = Field(0.02, ge=0.0)
    #: Processes `autotune baseline` first runs every call in once, untimed, on the same device,
    #: so Triton's compiles (the port's configs, every config upstream's autotune times) happen
    #: in parallel and land in Triton's cache before the timing process needs them; 0: none.
    baseline_warm_jobs: int = Field(8, ge=0)
    #: Processes `autotune verify` starts per device unless `--jobs` says otherwise: a case spends
    #: most of its time on the host (compiles, the float64 CPU golden), so while one process
    #: compiles or computes its golden, another uses the device. Capped by the host's CPU cores.
    verify_jobs_per_device: int = 4
    #: Where an optuna-dashboard on the same database answers (e.g. http://127.0.0.1:8080), for
    #: the study pages' links; `autotune serve --optuna-dashboard PORT` sets it for its own.
    optuna_dashboard_url: str | None = None
    #: Bearer token `autotune reference-server` requires, and `verify --references URL` sends;
    #: unset: the server answers anyone who reaches it (bind it to a trusted network).
    reference_token: str | None = None
    #: The largest request a reference server reads (bytes): a case's shape, dtype and offsets.
    reference_max_request_bytes: int = Field(64 * 1024, ge=1024)
    #: The most output bytes (the `.npy` files of one case) a reference server sends in one
    #: answer; a larger case is refused with 422. An accuracy case's are kilobytes.
    reference_max_output_bytes: int = Field(256 * 1024 * 1024, ge=1024)
    #: Requests a reference server holds at once (one runs upstream, the others wait); more are
    #: answered 429 and the client retries.
    reference_max_requests: int = Field(4, ge=1)
    #: Seconds `verify --references URL` waits for one answer (upstream compiles on a cold GPU)...
    reference_timeout_s: float = Field(300.0, gt=0)
    #: ...and the attempts it makes per case when the connection drops or the server is busy.
    reference_attempts: int = Field(4, ge=1)
    #: The most host or device memory one user case may take (e.g. 8GB, 512MiB), below what the
    #: machine has: `run --shape`, `verify --shape`, `--cases-file` and capture refuse a larger
    #: case before anything is written or allocated. Unset: what the machine has free.
    max_case_bytes: ByteSize | None = Field(None, gt=0)
    #: The search's effort level (`EFFORTS`) where `autotune run --effort` is not given.
    effort: EffortName = "standard"
    #: Compile workers `autotune run` starts beside its timing worker on a device; unset: half
    #: the host's CPU cores, 1 to 6.
    compile_workers: int | None = Field(None, ge=1)
    #: The project commit a run's environment records where the tree was copied without its .git
    #: (a device run); unset: `git rev-parse HEAD` of the checkout.
    project_commit: str | None = None
    #: 1: a command's error comes out with its traceback, not as one line.
    debug: bool = False


@cache
def settings() -> Settings:
    """The settings, or a UserError naming the first environment variable that is wrong."""
    try:
        return Settings()
    except ValidationError as exc:
        error = exc.errors()[0]
        name = f"AUTOTUNE_{str(error['loc'][0]).upper()}" if error["loc"] else "AUTOTUNE_*"
        raise UserError(f"{name}={error.get('input')!r}: {error['msg']}") from None
