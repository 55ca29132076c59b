"""When Volcano's sessions happen: on the grid of its period, counted from the scheduler's start.

Volcano v1.15.1 ``pkg/scheduler/scheduler.go``: ``Run`` starts ``wait.Until(pc.runOnce, pc.schedulePeriod,
stopCh)``, which runs a session at once and then one every ``--schedule-period`` (1 s by default,
``cmd/scheduler/app/options/options.go``). gangkit starts the scheduler at t=0 and takes a session to
last no time, so sessions happen at t = 0, p, 2p, ... and a job can be bound only at one of those
times. Sessions with nothing to do are skipped: the engine jumps to the grid point after the next
change, so a long quiet stretch costs no session.
"""

from __future__ import annotations

import pytest

import gangkit as gk
from gangkit import Stack, job, nodes
from gangkit.engine import lean
from gangkit.model.precision import next_boundary
from gangkit.model.scenario import DAY
from gangkit.stacks import build_stack
from gangkit.volcano.scheduler import VolcanoGang

GRID = {
    # name: (session period in s, or None for the default; submit time; when the job is bound)
    "a job submitted at 1e-7 s waits for the session at 600 s (period 600 s)": (600.0, 1e-7, 600.0),
    "a job submitted exactly on a grid point (1200 s) is bound in that session": (600.0, 1200.0, 1200.0),
    "a job submitted 1e-7 s after a grid point waits for the next one": (600.0, 600.0 + 1e-7, 1200.0),
    "a job submitted at 0 is bound in the scheduler's first session, at 0": (600.0, 0.0, 0.0),
    "with the default period (1 s) a job submitted at 1e-7 s is bound at 1 s": (None, 1e-7, 1.0),
    "with the default period a job submitted at 2.5 s is bound at 3 s": (None, 2.5, 3.0),
}


ENGINES = {
    "the general engine": dict(record="full"),
    "the lean engine of one-pod jobs (jobs level, finite horizon)": dict(record="jobs", horizon=DAY),
}


@pytest.mark.parametrize("engine", ENGINES, ids=list(ENGINES))
@pytest.mark.parametrize("case", GRID, ids=list(GRID))
def test_a_job_is_bound_at_the_first_session_on_the_grid_at_or_after_its_submission(case, engine):
    period, submit, bound = GRID[case]
    settings = dict(ENGINES[engine], **({} if period is None else {"session_period": period}))
    sc = gk.Scenario(nodes(1, gpus=8), [job("a", gpus=8, run_time=100, submit_time=submit)])
    ready = sc.with_settings(stack="gang", **settings)
    assert lean.applies(ready, build_stack("gang", ready.settings, ready)) == (engine != "the general engine")
    r = gk.simulate(sc, stack="gang", **settings)
    assert r.jobs.start_s.tolist() == [bound]
    assert r.jobs.finish_s.tolist() == [bound + 100]


def test_a_job_that_frees_gpus_off_the_grid_lets_the_next_one_in_at_the_following_session():
    """a runs 0-100 s on the only 8 GPUs; b, waiting since 0, gets them in the session at 600 s, not at 100 s."""
    sc = gk.Scenario(nodes(1, gpus=8), [job("a", gpus=8, run_time=100), job("b", gpus=8, run_time=100)])
    r = gk.simulate(sc, stack="gang", record="full", session_period=600.0)
    assert dict(zip(r.jobs.job, r.jobs.start_s)) == {"a": 0.0, "b": 600.0}


class CountingVolcano(VolcanoGang):
    """Volcano's gang placement that counts the sessions the engine asks it for."""

    def __init__(self, **kw):
        super().__init__(**kw)
        self.sessions: list[float] = []

    def cycle(self, sim, now):
        self.sessions.append(now)
        super().cycle(sim, now)


QUIET = {
    # name: (period, submit times of one-GPU jobs of 10 s, the sessions expected)
    "two jobs a million seconds apart cost three sessions (a bind, a finish, a bind), not a million": (
        1.0, [0.5, 1e6 + 0.5], [1.0, 11.0, 1e6 + 1]),
    "a job at 1e-7 s under a 600 s period: one session, at 600 s (the run ends with its finish)": (
        600.0, [1e-7], [600.0]),
}


@pytest.mark.parametrize("case", QUIET, ids=list(QUIET))
def test_sessions_happen_only_after_changes_and_only_on_the_grid(case):
    period, submits, expected = QUIET[case]
    layer = CountingVolcano(period=period)
    sc = gk.Scenario(nodes(1, gpus=1), [job(f"j{i}", run_time=10, submit_time=t) for i, t in enumerate(submits)])
    gk.simulate(sc, stack=Stack(layer, name="gang"), record="full")
    assert layer.sessions == expected
    assert all(next_boundary(t, period) == t for t in layer.sessions)


BOUNDARIES = {
    # name: (now, period, the next session)
    "just after the scheduler's start, however long the period": (1e-7, 600.0, 600.0),
    "a rounding step past a grid point is on it": (0.30000000000000004, 0.1, 0.30000000000000004),
    "a tenth of a microsecond past a grid point is not": (600.0000001, 600.0, 1200.0),
    "on a grid point": (1200.0, 600.0, 1200.0),
    "no period: now": (7.5, 0.0, 7.5),
}


@pytest.mark.parametrize("case", BOUNDARIES, ids=list(BOUNDARIES))
def test_next_boundary(case):
    now, period, expected = BOUNDARIES[case]
    assert next_boundary(now, period) == expected
