"""The claim board of a study: which process measures which config in which budget slot.

A config is claimed in the database before it is measured, so processes on any number of hosts
share a study without measuring a config twice or overrunning the budget. A claim records its
owner (host, pid and the process's start time, against pid reuse). A claim of a process of this
host that no longer exists is re-queued at once; a claim of another host once its heartbeat is
older than the stale time. The run of a process found dead is marked as such.
"""

from __future__ import annotations

import os
import socket
from dataclasses import dataclass
from datetime import datetime, timedelta

import psutil
from sqlalchemy import delete, func, select, update
from sqlalchemy.exc import IntegrityError

from storage import Claim, Database, Run
from storage.models import utcnow

#: Two start times of one process read apart by more than this are two processes.
_START_TIME_TOLERANCE_S = 1.0


@dataclass(frozen=True)
class Owner:
    host: str
    pid: int
    started: float  # the process's start time, seconds since the epoch

    @classmethod
    def this_process(cls) -> Owner:
        return cls(socket.gethostname(), os.getpid(), psutil.Process().create_time())

    def describe(self) -> str:
        return f"{self.host}:{self.pid}"


def process_exists(pid: int, started: float | None) -> bool:
    """Whether the process `pid` of this host that started at `started` still runs."""
    try:
        process = psutil.Process(pid)
        if process.status() == psutil.STATUS_ZOMBIE:
            return False
        created = process.create_time()
    except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
        return False
    return started is None or abs(created - started) <= _START_TIME_TOLERANCE_S


def bury_dead_runs(db: Database, owner: Owner) -> int:
    """Mark as died the runs of this host still recorded as running whose process is gone."""
    with db.sessions() as session:
        running = session.scalars(
            select(Run).where(Run.status == "running", Run.host == owner.host)
        ).all()
        dead = [r.id for r in running if r.pid is None or not process_exists(r.pid, r.pid_started)]
        if dead:
            session.execute(
                update(Run)
                .where(Run.id.in_(dead), Run.status == "running")
                .values(status="died", finished_at=utcnow())
                .execution_options(synchronize_session=False)
            )
            session.commit()
        return len(dead)


@dataclass(frozen=True)
class DeadClaim:
    """A running claim whose owner is gone, removed from the board."""

    config_key: str
    trial_number: int | None
    worker: str
    reason: str


class ClaimBoard:
    """Claims, heartbeats and re-queues of one study."""

    def __init__(
        self,
        db: Database,
        study_id: int,
        budget: int,
        run_id: int | None,
        owner: Owner | None = None,
    ) -> None:
        self.db, self.study_id, self.budget, self.run_id = db, study_id, budget, run_id
        self.owner = owner or Owner.this_process()
        self.in_flight: set[int] = set()  # claim ids this process is measuring

    def used_slots(self) -> int:
        with self.db.sessions() as session:
            used = select(func.count()).where(
                Claim.study_id == self.study_id, Claim.slot.is_not(None)
            )
            return session.scalar(used) or 0

    def claimed_keys(self) -> set[str]:
        with self.db.sessions() as session:
            return set(
                session.scalars(select(Claim.config_key).where(Claim.study_id == self.study_id))
            )

    def others_running(self) -> int:
        """Claims of this study being measured by other processes."""
        with self.db.sessions() as session:
            running = select(Claim.id).where(
                Claim.study_id == self.study_id, Claim.state == "running"
            )
            return len(set(session.scalars(running)) - self.in_flight)

    def claim(self, key: str, *, counted: bool = True, state: str = "running") -> int | None:
        """Take the config `key` (and a budget slot if counted); None if it is taken or the
        budget is spent."""
        for _ in range(50):
            with self.db.sessions() as session:
                taken = select(Claim.id).where(
                    Claim.study_id == self.study_id, Claim.config_key == key
                )
                if session.scalar(taken):
                    return None
                slot = None
                if counted:  # the lowest free slot: slots freed by re-queued claims are reused
                    used = set(
                        session.scalars(
                            select(Claim.slot).where(
                                Claim.study_id == self.study_id, Claim.slot.is_not(None)
                            )
                        )
                    )
                    slot = next((i for i in range(self.budget) if i not in used), None)
                    if slot is None:
                        return None
                claim = Claim(
                    study_id=self.study_id,
                    config_key=key,
                    slot=slot,
                    state=state,
                    worker=self.owner.describe(),
                    host=self.owner.host,
                    pid=self.owner.pid,
                    pid_started=self.owner.started,
                    run_id=self.run_id,
                )
                session.add(claim)
                try:
                    session.commit()
                    if state == "running":
                        self.in_flight.add(claim.id)
                    return claim.id
                except IntegrityError:  # someone took this config or this slot meanwhile
                    session.rollback()
        raise RuntimeError("could not claim a budget slot after 50 attempts")

    def _death(self, claim: Claim, cutoff: datetime) -> str | None:
        """Why the owner of a running claim counts as dead; None while it may live."""
        if claim.id in self.in_flight:
            return None
        if claim.host == self.owner.host and claim.pid is not None:
            if not process_exists(claim.pid, claim.pid_started):
                return f"process {claim.worker} no longer exists"
            return None
        if claim.heartbeat_at < cutoff:
            return f"worker {claim.worker} stopped sending heartbeats"
        return None

    def remove_dead(self, stale_after_s: float) -> list[DeadClaim]:
        """Take the running claims of dead owners off the board (each once, whoever finds it)
        and mark their runs as died."""
        cutoff = utcnow() - timedelta(seconds=stale_after_s)
        removed = []
        with self.db.sessions() as session:
            running = list(
                session.scalars(
                    select(Claim).where(Claim.study_id == self.study_id, Claim.state == "running")
                )
            )
            for claim in running:
                reason = self._death(claim, cutoff)
                if reason is None:
                    continue
                deleted = session.execute(
                    delete(Claim)
                    .where(Claim.id == claim.id, Claim.heartbeat_at == claim.heartbeat_at)
                    .execution_options(synchronize_session=False)
                )
                if deleted.rowcount == 1 and claim.run_id is not None:
                    session.execute(
                        update(Run)
                        .where(Run.id == claim.run_id, Run.status == "running")
                        .values(status="died", finished_at=claim.heartbeat_at)
                        .execution_options(synchronize_session=False)
                    )
                session.commit()
                if deleted.rowcount == 1:  # else another process re-queued it first, or it beat
                    removed.append(
                        DeadClaim(claim.config_key, claim.trial_number, claim.worker, reason)
                    )
        return removed

    def live_workers(self, stale_after_s: float) -> set[str]:
        """The processes (host:pid) that may be working on this study now: the owners of its
        running claims that may live (a process of this host that exists, another host's with
        a heartbeat fresher than the stale time), and the live processes of this host whose run
        claimed any of its configs (one that measured and now settles, for instance)."""
        cutoff = utcnow() - timedelta(seconds=stale_after_s)
        with self.db.sessions() as session:
            claims = list(session.scalars(select(Claim).where(Claim.study_id == self.study_id)))
            run_ids = {c.run_id for c in claims if c.run_id is not None}
            runs = session.scalars(
                select(Run).where(
                    Run.id.in_(run_ids), Run.status == "running", Run.host == self.owner.host
                )
            ).all()
        live = {c.worker for c in claims if c.state == "running" and self._death(c, cutoff) is None}
        return live | {
            f"{r.host}:{r.pid}"
            for r in runs
            if r.pid is not None and process_exists(r.pid, r.pid_started)
        }

    def beat(self) -> None:
        """Refresh the heartbeat of this process's claims in flight."""
        claims = list(self.in_flight.copy())
        if not claims:
            return
        with self.db.sessions() as session:
            session.execute(update(Claim).where(Claim.id.in_(claims)).values(heartbeat_at=utcnow()))
            session.commit()

    def finish(self, claim_id: int, state: str, trial_number: int | None) -> None:
        if state != "running":
            self.in_flight.discard(claim_id)
        with self.db.sessions() as session:
            claim = session.get(Claim, claim_id)
            if claim is not None:
                claim.state, claim.trial_number, claim.heartbeat_at = state, trial_number, utcnow()
                session.commit()

    def release(self, claim_id: int) -> None:
        self.in_flight.discard(claim_id)
        with self.db.sessions() as session:
            claim = session.get(Claim, claim_id)
            if claim is not None:
                session.delete(claim)
                session.commit()
