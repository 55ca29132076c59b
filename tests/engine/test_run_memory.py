"""A ``summary`` run frees each job as it ends: no reference cycle keeps it for the collector.

At the ``summary`` level the engine drops a job's state once the job has
ended (``Simulation._retire``), so a run's memory follows the jobs in the
system, not all the jobs so far. A reference cycle defeats that: Python
frees cyclic garbage only in a collector pass, and during a run those passes
are spaced far apart (``gangkit.simulate.fewer_collections``), so a cycle
per job kept every ended job alive; at 1M jobs (benchmark case b) that was a
few hundred MiB. Each case runs with the collector off, keeps the
simulation itself alive, then asks the collector what it would free.
"""

from __future__ import annotations

import collections
import dataclasses
import gc

import pytest

from gangkit import simulate
from gangkit.engine.simulation import Simulation
from gangkit.workloads import scenarios

PER_JOB_TYPES = ("JobState", "PodState", "Group", "Workload", "cell", "function")


def _mixed(**job_fields):
    sc = scenarios.mixed(n_jobs=300, n_nodes=6, load=0.9, seed=4)
    if job_fields:
        sc = dataclasses.replace(sc, jobs=[dataclasses.replace(j, **job_fields) for j in sc.jobs])
    return sc


CASES = [  # (stack, job fields: per-job settings that take their own code paths)
    ("pod", {}),
    ("gang", {}),
    ("kueue+gang", {}),
    ("kueue+pod", {}),
    ("coscheduling", {"schedule_timeout": 30.0}),  # Permit deadlines (gangkit.placement.permit)
    ("kueue+coscheduling", {"schedule_timeout": 30.0}),
    ("kube-gang", {}),
    ("yunikorn", {"placeholder_timeout": 60.0}),
    ("gang+karpenter", {}),
    ("kueue+gang+karpenter", {}),
    ("pod", {"rendezvous_timeout": 120.0}),  # restart churn (gangkit.engine.churn)
]


@pytest.mark.parametrize(("stack", "fields"), CASES, ids=[f"{s}-{'-'.join(f) or 'plain'}" for s, f in CASES])
def test_a_summary_run_leaves_no_cycles_per_job(monkeypatch, stack, fields):
    sc = _mixed(**fields)
    held = []
    run = Simulation.run

    def keep(self, until=None):
        held.append(self)  # the simulation stays reachable: only what the run dropped can be garbage
        return run(self, until)

    monkeypatch.setattr(Simulation, "run", keep)
    gc.collect()
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        res = simulate(sc, stack=stack, record="summary", horizon=1e9, engine="general")
        gc.set_debug(gc.DEBUG_SAVEALL)
        gc.collect()
        left = collections.Counter(type(o).__name__ for o in gc.garbage)
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        if was_enabled:
            gc.enable()
    assert held and res.summary()["jobs_total"] == 300
    per_job = {t: left[t] for t in PER_JOB_TYPES if left[t]}
    assert not per_job, f"{stack}: objects the collector would free (a cycle per job?): {per_job}"
