"""Lesson 08, the capstone: three tenants of a real GPU cluster, their goals, and a layered design that meets them.

Picture the platform team of a shared GPU cluster on a Monday morning. Three
tenants send work: ``production`` (latency-sensitive pods that must start at
once and must not be killed), ``research`` (a few large, long pods, some of
which need a whole 8-GPU machine), and ``batch`` (many short best-effort
pods). Each has stated goals; the cluster as a whole must not sit idle. The
team has the layers of the course to work with: Kueue ClusterQueues (quota,
borrowing and lending in a cohort, preemption), a gang layer, Karpenter
behind it for more nodes, and Kueue's ``waitForPodsReady``. The learner fills
in a :class:`Design`, runs it on three days of a real trace, and reads the
score: one row per goal, met or not, and why.

**The workload** (:func:`capstone_workload`) is three days of the Alibaba GPU
cluster trace 2023 ("openb"), committed as ``gangkit/data/capstone_pods.csv``
and ``capstone_nodes.csv`` (``gangkit/data/CAPSTONE_TRACE.md`` says where they
come from, under which licence, and how they were cut). It is read with
:func:`gangkit.load_alibaba_openb` and its defaults:

- *fractional GPUs are rounded up*: a pod asking for 0.46 of a GPU gets a
  whole one, as on a cluster whose device plugin hands out whole
  ``nvidia.com/gpu`` (no GPU sharing); the trace's cluster shared GPUs, so
  this over-states the demand of those pods;
- *CPU and memory requests are kept*: nodes enforce them, and every
  ClusterQueue of a :class:`Design` covers ``nvidia.com/gpu``, ``cpu`` and
  ``memory`` in one resource group. A ClusterQueue that does not cover a
  resource a pod requests admits nothing (Kueue's flavor assigner finds no
  flavor for it). Only GPUs are rationed: each ClusterQueue's CPU and memory
  quota is what the cluster can hold at its largest (static nodes plus the
  NodePool limit, at a G3 node's 16 cores and 96 GiB per GPU), so quota never
  binds on them;
- *tenants come from the trace's QoS column* (:data:`QOS_TENANT`): ``LS``
  (latency-sensitive) is ``production``, ``Burstable`` and ``Guaranteed``
  are ``research``, ``BE`` (best-effort) is ``batch``. The trace names no
  users or teams; this mapping is the lesson's rule;
- *gangs are derived, not read*: the trace has single pods only. Each
  tenant's pods go through :func:`gangkit.derive_gangs` with its defaults
  (consecutive identical requests within 60 s, target sizes 2, 4 or 8 drawn
  with ``random.Random(gang_seed)``), so a gang never mixes tenants. The gang
  mix is invented by that rule;
- *the cluster* is the first :data:`STATIC_NODES` G3 nodes of the trace's node
  list (8 GPUs, 128 cores, 768 GiB each), a documented subset: the pod list
  is a small sample of its cluster (about 8,000 pods of a 6,212-GPU
  cluster), so it is replayed on a cluster sized to the sample's load.
  Karpenter, when the design has a NodePool, adds G3 nodes.

**The goals** (:data:`GOALS`) and **the score** (:func:`score`) use gangkit's
own figures: waits from :func:`gangkit.job_waits` (submission to the start of
all pods; a job that never starts counts to the end of the run), evictions
from the jobs table's ``restarts``, effective utilization from
:func:`gangkit.utilization` over the arrival window, and the run's deadlock
flag. :data:`NAIVE` (one queue for everyone, pod by pod, no NodePool) misses
several; :data:`REFERENCE` and the :data:`ALTERNATIVES` meet them all;
:func:`compare_designs` puts designs side by side, :func:`stretch` makes the
workload harder (a burst, a flood, a node down), and :func:`capstone_explorer`
is the lesson's widget.

Kueue semantics are gangkit's model of Kueue v0.19 (``gangkit.kueue``), the
gang layers and Karpenter those of ``gangkit.placement``, ``gangkit.volcano`` and
``gangkit.supply.karpenter``. All figures are simulated, never measured on a
real cluster.

The workload is built in :mod:`gangkit.lessons.lesson08_workload`, the
:class:`Design` in :mod:`gangkit.lessons.lesson08_design`; every name is
importable from here, as the lesson's notebook does.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import ipywidgets as W
import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from gangkit.lessons.explorer import Explorer
from gangkit.lessons.lesson08_design import COHORT, FLAVOR, G3, SCORINGS, Design, QueueDesign
from gangkit.lessons.lesson08_workload import (
    DATA,
    HORIZON_S,
    NODES_CSV,
    PODS_CSV,
    QOS_TENANT,
    STATIC_NODES,
    STRETCHES,
    TENANTS,
    WINDOW_S,
    CapstoneWorkload,
    capstone_workload,
    default_workload,
    stretch,
)
from gangkit.manifests.dump import dump_manifests
from gangkit.model.errors import Problem, ScenarioError
from gangkit.results import plots
from gangkit.results.waiting import job_waits, utilization
from gangkit.simulate import simulate

__all__ = [
    "ALTERNATIVES", "COHORT", "CapstoneWorkload", "DATA", "Design", "FLAVOR", "G3", "GOALS", "Goal", "HORIZON_S",
    "MEASURES", "NAIVE", "NODES_CSV", "PODS_CSV", "QOS_TENANT", "QueueDesign", "REFERENCE", "SCORE_COLUMNS",
    "SCORINGS", "STATIC_NODES", "STRETCHES", "TENANTS", "WINDOW_S", "capstone_explorer", "capstone_workload",
    "check_designs", "compare_designs", "default_workload", "design_manifests", "evaluate", "explored_design",
    "goals_table", "measure", "render_capstone", "run", "score", "stretch", "tenant_of_jobs",
]


# ------------------------------------------------------------------------------------------- goals and score
@dataclass(frozen=True)
class Goal:
    """One stated goal: whose, what is measured, the target, which way is good, and the sentence that states it."""

    tenant: str  # a tenant, or "cluster"
    goal: str  # the measure: "p95 wait", "max wait", "evictions", "effective utilization", "deadlocked jobs"
    target: float
    at_most: bool  # True: measured <= target meets the goal; False: measured >= target
    unit: str
    text: str


#: Each tenant's goals, and the cluster's: the lesson's statement of service levels.
GOALS: tuple[Goal, ...] = (
    Goal("production", "p95 wait", 600.0, True, "s", "95% of production's jobs start within 10 min of submission"),
    Goal("production", "evictions", 0.0, True, "evictions",
         "no production workload is ever evicted (preempted, or timed out by waitForPodsReady)"),
    Goal("research", "max wait", 1800.0, True, "s", "every research job starts within 30 min, whole-node pods included"),
    Goal("batch", "p95 wait", 1800.0, True, "s", "95% of batch's jobs start within 30 min"),
    Goal("cluster", "effective utilization", 0.53, False, "",
         "over the three days of arrivals, at least 53% of the GPU capacity (static and added nodes) does useful work"),
    Goal("cluster", "deadlocked jobs", 0.0, True, "jobs", "no job ends deadlocked (holding GPUs it cannot use)"),
)
SCORE_COLUMNS = ["tenant", "goal", "target", "measured", "measured_h", "met", "reason"]
MEASURES = ("p95 wait", "max wait", "evictions", "effective utilization", "deadlocked jobs")


def goals_table(goals: tuple[Goal, ...] = GOALS) -> pd.DataFrame:
    """The goals as the lesson states them: tenant, goal, target, and the sentence."""
    return pd.DataFrame([{"tenant": g.tenant, "goal": g.goal, "target": g.target, "statement": g.text} for g in goals])


def tenant_of_jobs(jobs: pd.DataFrame) -> pd.Series:
    """Each row's tenant: the namespace of its ``job`` key (``production/openb-pod-6375`` -> ``production``)."""
    return jobs["job"].astype(str).str.split("/", n=1).str[0]


def measure(result, goal: Goal, window_s: float = WINDOW_S) -> tuple[float, str]:
    """The measured value of ``goal`` in ``result``, and the numbers behind it (for a reason line).

    - ``p95 wait`` and ``max wait``: over the tenant's jobs, the waits of
      :func:`gangkit.job_waits` (submission to the start of all pods; a job
      that never started counts until the end of the run, a lower bound);
      numpy's default percentile, as :func:`gangkit.wait_table`;
    - ``evictions``: the sum of the tenant's ``restarts`` in ``result.jobs``
      (every eviction: Kueue preemptions and waitForPodsReady timeouts);
    - ``effective utilization``: :func:`gangkit.utilization` over ``[0, window_s]``;
    - ``deadlocked jobs``: jobs whose terminal state is ``Deadlocked``.
    """
    if goal.goal not in MEASURES:
        raise ScenarioError([Problem(f"Goal {goal.tenant} {goal.goal}", "goal", f"expected one of {', '.join(MEASURES)}")])
    jobs = result.jobs
    if goal.goal == "effective utilization":
        u = utilization(result, 0.0, window_s)
        return float(u["effective_utilization"]), (f"allocated {u['allocated_utilization']:.4f} over the first "
                                                    f"{window_s / 3600:g} h")
    if goal.goal == "deadlocked jobs":
        n = int((jobs["state"] == "Deadlocked").sum())
        return float(n), f"the run {'ended in a deadlock' if result.deadlock else 'did not deadlock'}"
    mine = jobs[tenant_of_jobs(jobs) == goal.tenant]
    if goal.goal == "evictions":
        hit = int((mine["restarts"] > 0).sum())
        return float(mine["restarts"].sum()), f"{hit} of {len(mine)} jobs evicted at least once"
    waits = job_waits(result)
    waits = waits[(tenant_of_jobs(waits) == goal.tenant) & ~waits["rejected"]]
    w = waits["wait_s"].to_numpy(dtype=float)
    if len(w) == 0:
        return 0.0, "no jobs"
    value = float(np.percentile(w, 95)) if goal.goal == "p95 wait" else float(w.max())
    detail = f"{int((w > goal.target).sum())} of {len(w)} jobs waited longer than {goal.target:g} s, the longest {w.max():g} s"
    never = int(waits["censored"].sum())
    if never:
        detail += f"; {never} never started (counted to the end of the run)"
    return round(value, 3), detail


def score(result, design: Design | None = None, goals: tuple[Goal, ...] = GOALS, window_s: float = WINDOW_S) -> pd.DataFrame:
    """One row per goal: tenant, goal, target, measured value, met, and a one-line reason when missed.

    ``measured`` is in the goal's unit (seconds for a wait); ``measured_h`` gives a wait in hours too
    (two decimals; empty for the other goals), and a missed wait goal's reason gives its seconds in
    hours as well, so that 231815 s reads as 64.39 h. ``result`` is a run of :meth:`Design.scenario` recorded at level ``jobs``
    or ``full``; ``design``, if given, adds to a missed goal's reason what in
    the design decides it. Same design and seed, same score.
    """
    rows = []
    for g in goals:
        value, detail = measure(result, g, window_s)
        met = value <= g.target if g.at_most else value >= g.target
        reason = ""
        if not met:
            unit = " s" if g.unit == "s" else ""
            hours = f" ({value / 3600:.2f} h)" if g.unit == "s" else ""
            reason = (f"{g.tenant} {g.goal} is {_fmt(value)}{unit}{hours}, {'above' if g.at_most else 'below'} the "
                      f"target {_fmt(g.target)}{unit}: {detail}")
            hint = _hint(g, design) if design is not None else ""
            if hint:
                reason += f" ({hint})"
        rows.append({"tenant": g.tenant, "goal": g.goal, "target": g.target, "measured": value,
                     "measured_h": round(value / 3600, 2) if g.unit == "s" else "", "met": bool(met),
                     "reason": reason})
    return pd.DataFrame(rows, columns=SCORE_COLUMNS)


def _fmt(x: float) -> str:
    return f"{x:.4f}".rstrip("0") if 0 < abs(x) < 1 else f"{x:g}"


def _quota_words(design: Design, tenant: str) -> str:
    cq = design.queue_of(tenant)
    if cq is None:
        return "no Kueue: nothing reserves GPUs for it"
    q = design.queues[cq]
    return (f"its ClusterQueue {cq}: nominalQuota {q.nominal}, borrowingLimit "
            f"{'none' if q.borrowing_limit is None else q.borrowing_limit}")


def _hint(goal: Goal, design: Design) -> str:
    """What in ``design`` decides ``goal``: a pointer, not a fix."""
    if goal.goal == "p95 wait":
        return _quota_words(design, goal.tenant)
    if goal.tenant == "research":
        if not design.pool_limit:
            return "no NodePool: an 8-GPU pod needs a whole empty node, and the static nodes are rarely empty"
        return f"NodePool limit {design.pool_limit} GPUs: nodes that other pods keep busy count against it"
    if goal.goal == "evictions":
        timeout = f"waitForPodsReady after {design.pods_ready_timeout:g} s" if design.wait_for_pods_ready else ""
        return "evictions are Kueue preemptions" + (f" and {timeout}" if timeout else "")
    if goal.goal == "effective utilization":
        words = f"scoring {design.scoring}"
        if design.pool_limit:
            words += f", NodePool limit {design.pool_limit} GPUs, consolidateAfter {design.consolidate_after:g} s"
        return words
    if goal.goal == "deadlocked jobs" and design.placement == "pod":
        return "placement 'pod' binds a gang's pods one by one"
    return ""


def run(design: Design, workload: CapstoneWorkload | None = None, seed: int = 0):
    """Simulate ``design`` on ``workload`` (default: :func:`capstone_workload`); returns the Result."""
    return simulate(design.scenario(workload), seed=seed)


def evaluate(design: Design, workload: CapstoneWorkload | None = None, seed: int = 0) -> pd.DataFrame:
    """:func:`score` of one run of ``design`` on ``workload``."""
    workload = workload or default_workload()
    return score(run(design, workload, seed), design, window_s=workload.window_s)


def compare_designs(designs: dict[str, Design] | list[Design], workload: CapstoneWorkload | None = None,
                    seed: int = 0) -> pd.DataFrame:
    """Several designs side by side on one workload.

    One row per goal (index: tenant, goal, target) and two columns per design,
    ``(name, "measured")`` and ``(name, "met")``; a last row ``("all", "goals
    met", <number of goals>)`` holds how many each met and whether it met all.
    """
    if isinstance(designs, (list, tuple)):
        designs = {d.name: d for d in designs}
    workload = workload or default_workload()
    parts = {label: evaluate(d, workload, seed).set_index(["tenant", "goal", "target"])[["measured", "met"]]
             for label, d in designs.items()}
    table = pd.concat(parts, axis=1)
    total = {}
    for label, part in parts.items():
        total[(label, "measured")] = float(part["met"].sum())
        total[(label, "met")] = bool(part["met"].all())
    index = pd.MultiIndex.from_tuples([("all", "goals met", float(len(table)))], names=table.index.names)
    return pd.concat([table, pd.DataFrame([total], index=index)[table.columns]])


# ------------------------------------------------------------------------------------------- before a run
def design_manifests(design: Design, workload: CapstoneWorkload | None = None) -> str:
    """The design's whole stack on ``workload`` as the manifests a cluster takes (:func:`gangkit.dump_manifests`).

    Nodes, Kueue's objects, the NodePool and gangkit's Karpenter kind, every
    Job with its gang in the placement layer's form and ``schedulerName``, one
    Simulation: ``gangkit check`` and ``gangkit run`` read the file as it is.
    """
    return dump_manifests(design.scenario(workload))


def check_designs(designs: dict[str, Design] | list[Design], workload: CapstoneWorkload | None = None) -> pd.DataFrame:
    """What ``gangkit check`` finds in each design's manifests before any run: one row per design and rule.

    Columns: how many findings of the rule (one per set of objects) and the first
    finding's fix; a design with no finding has one row, rule ``-``. Every rule's
    severity and source: ``docs/reference/check.md``.
    """
    from gangkit.consistency import check_manifests

    if isinstance(designs, (list, tuple)):
        designs = {d.name: d for d in designs}
    rows = []
    for label, d in designs.items():
        by_rule: dict[str, list] = {}
        for f in check_manifests(design_manifests(d, workload)):
            by_rule.setdefault(f.code, []).append(f)
        for code, found in by_rule.items():
            rows.append({"design": label, "rule": code, "findings": len(found), "fix": found[0].hint})
        if not by_rule:
            rows.append({"design": label, "rule": "-", "findings": 0, "fix": "-"})
    return pd.DataFrame(rows).set_index(["design", "rule"])


# ------------------------------------------------------------------------------------------- designs
#: Everything in one queue, pod by pod, no NodePool: the static GPUs, first come first served.
NAIVE = Design(queues={"cluster-queue": QueueDesign(8 * STATIC_NODES)},
               tenant_queues={t: "cluster-queue" for t in TENANTS}, cohort=None, placement="pod", name="naive")

#: A worked design that meets every goal. Production's quota covers its own peaks and reclaims what others
#: borrowed; research keeps 8 of its 16 GPUs for itself (lendingLimit 8) and gets whole nodes from the NodePool;
#: batch lives mostly on borrowed quota; pods are packed (MostAllocated) so that added nodes empty and go.
REFERENCE = Design(
    queues={"production": QueueDesign(16, reclaim_within_cohort="Any"),
            "research": QueueDesign(16, lending_limit=8, reclaim_within_cohort="Any"),
            "batch": QueueDesign(4)},
    placement="gang", scoring="MostAllocated", pool_limit=24, name="reference")

#: Other designs that meet every goal on the three days, each in its own way.
ALTERNATIVES: dict[str, Design] = {
    "one queue with priorities": Design(
        queues={"shared": QueueDesign(32, within_cluster_queue="LowerPriority")},
        tenant_queues={t: "shared" for t in TENANTS}, cohort=None, priorities={"production": 100, "research": 50},
        placement="coscheduling", scoring="MostAllocated", pool_limit=16, name="one queue with priorities"),
    "small quotas, wide lending": Design(
        queues={"production": QueueDesign(8, reclaim_within_cohort="Any"),
                "research": QueueDesign(16, lending_limit=8, reclaim_within_cohort="Any"),
                "batch": QueueDesign(8)},
        placement="gang", scoring="MostAllocated", pool_limit=16, name="small quotas, wide lending"),
    "autoscaler only": Design(placement="pod", scoring="MostAllocated", pool_limit=16, name="autoscaler only"),
}


# ------------------------------------------------------------------------------------------- the explorer
def explored_design(production: int = 16, research: int = 16, batch: int = 4, research_lending: str = "8",
                    pool_limit: int = 24, placement: str = "gang", scoring: str = "MostAllocated",
                    reclaim: str = "Any") -> Design:
    """The design :func:`capstone_explorer`'s controls describe: REFERENCE's shape with these numbers.

    Three ClusterQueues in one cohort; ``reclaim`` is production's and
    research's ``reclaimWithinCohort`` (batch never reclaims);
    ``research_lending`` is research's lendingLimit (``"none"``: no limit;
    capped at its nominalQuota).
    """
    lend = None if research_lending == "none" else min(int(research_lending), int(research))
    queues = {"production": QueueDesign(int(production), reclaim_within_cohort=reclaim),
              "research": QueueDesign(int(research), lending_limit=lend, reclaim_within_cohort=reclaim),
              "batch": QueueDesign(int(batch))}
    return Design(queues=queues, placement=placement, scoring=scoring, pool_limit=int(pool_limit), name="explored")


@lru_cache(maxsize=32)
def _explored_run(*values):
    d = explored_design(*values)
    return d, run(d)


def render_capstone(production: int = 16, research: int = 16, batch: int = 4, research_lending: str = "8",
                    pool_limit: int = 24, placement: str = "gang", scoring: str = "MostAllocated",
                    reclaim: str = "Any") -> tuple[pd.DataFrame, Figure]:
    """What :func:`capstone_explorer` shows: the score of :func:`explored_design`, and what the GPUs did."""
    d, r = _explored_run(int(production), int(research), int(batch), str(research_lending), int(pool_limit),
                         placement, scoring, reclaim)
    fig = Figure(figsize=(9, 3.2))
    ax = fig.subplots()
    plots.gpu_states(r, ax=ax)
    ax.set_title(f"stack {d.stack()}, scoring {d.scoring}: what the GPUs did (simulated)", fontsize=9)
    fig.subplots_adjust(left=0.08, right=0.8, bottom=0.16, top=0.88)
    return score(r, d).set_index(["tenant", "goal"]), fig


def capstone_explorer(production: int = 16, research: int = 16, batch: int = 4, research_lending: str = "8",
                      pool_limit: int = 24, placement: str = "gang", scoring: str = "MostAllocated",
                      reclaim: str = "Any") -> Explorer:
    """Lesson 08's explorer: each tenant's nominalQuota, research's lendingLimit, the NodePool limit, the
    placement layer, kube-scheduler's scoring and the reclaim policy; shows :func:`score` and
    :func:`gangkit.results.plots.gpu_states` of the run (defaults: :data:`REFERENCE`)."""
    style = {"description_width": "14em"}
    layout = W.Layout(width="32em")

    def quota(description: str, value: int) -> W.IntSlider:
        return W.IntSlider(value=value, min=0, max=32, step=4, description=description, continuous_update=False,
                           style=style, layout=layout)

    controls = {
        "production": quota("production nominalQuota", production),
        "research": quota("research nominalQuota", research),
        "batch": quota("batch nominalQuota", batch),
        "research_lending": W.SelectionSlider(options=["0", "4", "8", "16", "none"], value=research_lending,
                                              description="research lendingLimit", continuous_update=False,
                                              style=style, layout=layout),
        "pool_limit": W.IntSlider(value=pool_limit, min=0, max=48, step=8, description="NodePool limit (GPUs)",
                                  continuous_update=False, style=style, layout=layout),
        "placement": W.ToggleButtons(options=["pod", "gang", "coscheduling"], value=placement, description="placement",
                                     style=style),
        "scoring": W.ToggleButtons(options=list(SCORINGS), value=scoring, description="scoring", style=style),
        "reclaim": W.ToggleButtons(options=["Never", "Any"], value=reclaim,
                                   description="reclaimWithinCohort", style=style),
    }
    return Explorer("Capstone explorer",
                    f"three days of the Alibaba openb trace, three tenants on {STATIC_NODES} G3 nodes "
                    f"({8 * STATIC_NODES} GPUs) plus a NodePool of G3 nodes; batch never reclaims (simulated figures).",
                    controls, render_capstone)
