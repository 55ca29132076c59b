"""Lesson 08's workload: three days of the Alibaba openb trace, three tenants, a few static G3 nodes.

:func:`capstone_workload` reads the committed slice of the trace (``gangkit/data/capstone_pods.csv`` and
``capstone_nodes.csv``) with :func:`gangkit.load_alibaba_openb`, gives each pod a tenant by its QoS class
(:data:`QOS_TENANT`, the lesson's rule: the trace names no teams), derives each tenant's gangs by a seeded
rule (:func:`gangkit.derive_gangs`: the trace has single pods only) and keeps the first
:data:`STATIC_NODES` nodes; :mod:`gangkit.lessons.lesson08`'s docstring gives every mapping rule and why.
:func:`stretch` makes it harder (a burst, a flood, a node down) to test a design's robustness.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

import numpy as np
import pandas as pd

from gangkit.model.errors import Problem, ScenarioError
from gangkit.model.jobs import Job
from gangkit.model.nodes import Node
from gangkit.workloads.traces import TraceLoad, derive_gangs, load_alibaba_openb

__all__ = [
    "DATA", "HORIZON_S", "NODES_CSV", "PODS_CSV", "QOS_TENANT", "STATIC_NODES", "STRETCHES", "TENANTS", "WINDOW_S",
    "CapstoneWorkload", "capstone_workload", "default_workload", "stretch",
]

DATA = Path(__file__).resolve().parents[1] / "data"
#: The committed slice of the trace's pod list, and its G3 nodes (``gangkit/data/CAPSTONE_TRACE.md``).
PODS_CSV = DATA / "capstone_pods.csv"
NODES_CSV = DATA / "capstone_nodes.csv"

#: The tenants, in the order every table lists them.
TENANTS = ("production", "research", "batch")
#: The lesson's rule: the trace's ``qos`` column -> tenant.
QOS_TENANT = {"LS": "production", "Burstable": "research", "Guaranteed": "research", "BE": "batch"}
#: Static nodes: the first G3 nodes of the trace's node list.
STATIC_NODES = 2
#: The slice's arrivals span three days; the run goes on 12 h more so that queues can drain.
WINDOW_S = 3 * 86400.0
HORIZON_S = WINDOW_S + 12 * 3600.0


@dataclass
class CapstoneWorkload:
    """The capstone's cluster and jobs: static nodes, each tenant's jobs, the arrival window and the horizon.

    Every job is sent to the LocalQueue named after its tenant, in the namespace
    of that name (job ``openb-pod-6375`` of ``research`` is the workload
    ``research/openb-pod-6375``). ``load`` is the trace loader's report
    (print it: rows mapped, changed, dropped, and why).
    """

    nodes: list[Node]
    jobs: list[Job]
    window_s: float = WINDOW_S
    horizon_s: float = HORIZON_S
    load: TraceLoad | None = field(default=None, repr=False)
    description: str = ""

    def tenant_of(self) -> dict[str, str]:
        """Job key (``namespace/name``) -> tenant."""
        return {j.key: j.namespace for j in self.jobs}

    def table(self) -> pd.DataFrame:
        """One row per tenant: jobs, gangs among them, pods, GPUs asked, GPU-hours of work, the largest pod."""
        rows = []
        for t in TENANTS:
            mine = [j for j in self.jobs if j.namespace == t]
            rows.append({"tenant": t, "jobs": len(mine), "gangs": sum(j.pod_count > 1 for j in mine),
                         "pods": sum(j.pod_count for j in mine), "gpus": sum(j.gpus for j in mine),
                         "gpu_hours": round(sum(j.gpus * j.run_time for j in mine) / 3600.0, 1),
                         "largest_pod_gpus": max((ps.gpus for j in mine for ps in j.pod_sets), default=0),
                         "median_run_s": float(np.median([j.run_time for j in mine])) if mine else math.nan})
        return pd.DataFrame(rows).set_index("tenant")


def capstone_workload(static_nodes: int = STATIC_NODES, *, gang_seed: int = 0, pods_csv=PODS_CSV,
                      nodes_csv=NODES_CSV) -> CapstoneWorkload:
    """The capstone's world, from the committed trace slice (:mod:`gangkit.lessons.lesson08`'s docstring: every mapping rule).

    ``static_nodes``: how many of the G3 nodes (in the node list's order) the
    cluster has before any provisioner adds one. ``gang_seed``: the seed of
    :func:`gangkit.derive_gangs` (same seed, same gangs).
    """
    if isinstance(static_nodes, bool) or not isinstance(static_nodes, int) or static_nodes < 1:
        raise ScenarioError([Problem("capstone_workload", "static_nodes", f"expected a whole number >= 1, got {static_nodes!r}")])
    load = load_alibaba_openb(pods_csv, nodes_csv)
    if static_nodes > len(load.nodes):
        raise ScenarioError([Problem("capstone_workload", "static_nodes",
                                     f"expected at most {len(load.nodes)} (the G3 nodes of the node list), got {static_nodes}")])
    jobs: list[Job] = []
    for tenant in TENANTS:
        mine = [dataclasses.replace(j, queue=tenant, namespace=tenant) for j in load.jobs
                if QOS_TENANT.get(j.labels.get("qos")) == tenant]
        jobs += derive_gangs(mine, seed=gang_seed)
    jobs.sort(key=lambda j: (j.submit_time, j.key))
    nodes = list(load.nodes[:static_nodes])
    gpus = sum(n.gpus for n in nodes)
    return CapstoneWorkload(nodes, jobs, load=load,
                            description=f"Alibaba openb, 3 days ({len(jobs)} jobs of 3 tenants); "
                                        f"{static_nodes} G3 nodes ({gpus} GPUs)")


#: The kinds of :func:`stretch`, and what each does.
STRETCHES = {
    "batch-flood": "batch sends all its pods of the slice's second day at once, at the start of that day",
    "production-burst": "production sends every pod of the slice's second day twice (a copy named <pod>-again, 1 s later)",
    "node-down": "one static node fewer for the whole run",
}


def stretch(kind: str = "production-burst", workload: CapstoneWorkload | None = None) -> CapstoneWorkload:
    """A harder variant of the workload (:data:`STRETCHES`), to test a design's robustness."""
    if kind not in STRETCHES:
        raise ScenarioError([Problem("stretch", "kind", f"expected one of {', '.join(STRETCHES)}, got {kind!r}")])
    base = workload or default_workload()
    if kind == "node-down":
        if len(base.nodes) < 2:
            raise ScenarioError([Problem("stretch", "workload", "expected at least 2 static nodes to take one away")])
        return dataclasses.replace(base, nodes=base.nodes[:-1],
                                   description=f"{base.description}; stretch: one static node down")
    day = 86400.0
    on_day_2 = [j for j in base.jobs if day <= j.submit_time < 2 * day]
    if kind == "batch-flood":
        moved = {j.key for j in on_day_2 if j.namespace == "batch"}
        jobs = [dataclasses.replace(j, submit_time=day) if j.key in moved else j for j in base.jobs]
        what = f"batch's {len(moved)} jobs of day 2 all at t = 1 d"
    else:
        copies = [dataclasses.replace(j, name=f"{j.name}-again", submit_time=j.submit_time + 1.0)
                  for j in on_day_2 if j.namespace == "production"]
        jobs = base.jobs + copies
        what = f"production's day 2 sent twice (+{len(copies)} jobs)"
    jobs = sorted(jobs, key=lambda j: (j.submit_time, j.key))
    return dataclasses.replace(base, jobs=jobs, description=f"{base.description}; stretch: {what}")


@lru_cache(maxsize=1)
def default_workload() -> CapstoneWorkload:
    """:func:`capstone_workload` with its defaults, read once (a design without a workload runs on it)."""
    return capstone_workload()
