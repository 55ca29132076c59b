"""Lesson 03's stories: teams with GPU budgets in a cohort, under Kueue's queue and quota layer.

Picture a company whose GPU machines are shared by teams. Each team has a
budget (a ClusterQueue with a ``nominalQuota`` of GPUs); the budgets sit in
one cohort, so a team that is idle lends its GPUs to a busy one. A
``borrowingLimit`` caps what a team may borrow; a ``lendingLimit`` caps what
it lends, so the rest stays its own whatever the others do. When a lender
comes back, ``reclaimWithinCohort`` decides whether it waits for the
borrowers to finish or preempts them. Inside one team,
``withinClusterQueue`` decides whether an urgent job may preempt a less
important one, and the ``queueingStrategy`` whether a big job that does not
fit yet blocks the small ones behind it (``StrictFIFO``) or steps aside
(``BestEffortFIFO``).

This module holds:

- the stories as plain :class:`gangkit.Scenario` objects, two or three lines
  each in the lesson (:func:`two_teams`, :func:`fifo_story`,
  :func:`priority_story`, :func:`lending_story`, :func:`fair_story`, ...), built from
  :func:`team_queue`, :func:`team_job` and :func:`kueue_setup`; :func:`kueue_manifests` shows
  a story as the manifests a real cluster takes;
- a run read back as tables: who was admitted when and who was preempted
  why, from its events (:func:`admission_log`, :func:`preemptions`,
  :func:`job_table`); how much quota each team held over time, from its
  Kueue metrics (:func:`quota_usage`), which :func:`plot_quota` draws on one Axes for the
  explorer (the lesson's per-ClusterQueue picture of reserved, borrowed and lent quota, with the
  cohort tree, is :func:`gangkit.plots.quota`, for any ``kueue+`` run);
- the lesson's explorer, :func:`quota_explorer`, whose figures come from the
  plain function :func:`explore_quota`.

Every team's LocalQueue is named after the team and lives in the
namespace of the same name, so job ``a-1`` of team ``team-a`` is the
workload ``team-a/a-1``. All figures are simulated by gangkit, never
measured on a real cluster.
"""

from __future__ import annotations

import dataclasses
import math
from functools import lru_cache

import ipywidgets as W
import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from gangkit.kueue.objects import (
    GPU,
    HOSTNAME,
    ClusterQueue,
    FlavorQuotas,
    KueueConfig,
    KueueSetup,
    LocalQueue,
    Preemption,
    Quota,
    ResourceFlavor,
    ResourceGroup,
    Topology,
)
from gangkit.lessons.explorer import Explorer
from gangkit.manifests.dump import dump_manifests, select_documents
from gangkit.model.jobs import Job
from gangkit.model.jobs import job as make_job
from gangkit.model.nodes import nodes as make_nodes
from gangkit.model.scenario import Scenario
from gangkit.simulate import simulate
from gangkit.workloads.scenarios import load as load_scenario

#: The one ResourceFlavor of the lesson's clusters (every node is of this kind).
FLAVOR = "a100"
#: GPUs per node in the lesson's clusters.
NODE_GPUS = 8
#: The cohort every team's ClusterQueue joins.
COHORT = "research"
#: The columns of :func:`explore_quota`.
QUOTA_COLUMNS = ["team", "gpus", "submit_s", "first_admitted_s", "start_s", "wait_s", "evicted", "finish_s"]
#: Values a limit slider of the explorer offers (``None``: no limit).
LIMITS = (None, 0, 4, 8, 12, 16)
#: :func:`lending_story`: when team B's jobs arrive (s), and team B's nominalQuota.
LENDING_B_ARRIVAL_S = 600.0
LENDING_B_NOMINAL = 12


# ------------------------------------------------------------------------------------ building blocks
def team_queue(name: str, nominal: int, *, borrowing_limit: int | None = None, lending_limit: int | None = None,
               cohort: str | None = COHORT, strategy: str = "BestEffortFIFO", reclaim: str = "Never",
               within: str = "Never") -> ClusterQueue:
    """A team's ClusterQueue: ``nominal`` GPUs of flavor :data:`FLAVOR`, in ``cohort``.

    ``borrowing_limit`` and ``lending_limit`` are Kueue's per-resource
    ``borrowingLimit`` and ``lendingLimit`` (``None``: no limit);
    ``strategy`` the ``queueingStrategy``; ``reclaim`` and ``within`` the
    ``preemption.reclaimWithinCohort`` and ``preemption.withinClusterQueue``
    policies (Kueue's defaults: ``Never``).
    """
    quota = Quota(nominal, borrowing_limit, lending_limit)
    return ClusterQueue(name, [ResourceGroup((GPU,), (FlavorQuotas(FLAVOR, {GPU: quota}),))], cohort=cohort,
                        queueing_strategy=strategy,
                        preemption=Preemption(within_cluster_queue=within, reclaim_within_cohort=reclaim))


def kueue_setup(queues: list[ClusterQueue], config: KueueConfig | None = None) -> KueueSetup:
    """The Kueue objects for ``queues``: one ResourceFlavor, and one LocalQueue per team (same name, own namespace)."""
    return KueueSetup([ResourceFlavor(FLAVOR)], list(queues), [LocalQueue(q.name, q.name, q.name) for q in queues],
                      config=config or KueueConfig())


def team_job(team: str, name: str, gpus: int, *, pods: int = 1, run_time: float = 3600.0, submit_time: float = 0.0,
             priority: int = 0) -> Job:
    """A sync job of ``pods`` workers sharing ``gpus`` GPUs equally, sent to ``team``'s LocalQueue."""
    if pods < 1 or gpus % pods:
        raise ValueError(f"job {name}: {gpus} GPUs cannot be shared equally by {pods} workers")
    return make_job(name, pods=pods, gpus=gpus // pods, run_time=run_time, submit_time=submit_time,
                    priority=priority, queue=team, namespace=team)


def _cluster(n_nodes: int) -> list:
    return make_nodes(n_nodes, gpus=NODE_GPUS)


# ------------------------------------------------------------------------------------ the stories
def two_teams(a_nominal: int = 8, b_nominal: int = 8, *, a_borrowing_limit: int | None = None,
              b_lending_limit: int | None = None, reclaim: str = "Never",
              config: KueueConfig | None = None) -> Scenario:
    """Section 2's story: team A is busy while team B is idle, then team B comes back.

    Two nodes of 8 GPUs. Team A submits four 2-worker jobs of 4 GPUs
    (``a-1`` ... ``a-4``, one hour each) at t=0, 10, 20 and 30 s. Team B
    submits ``b-1`` (2 workers, 8 GPUs, 30 min) at t=900 s and ``b-2`` (4 GPUs,
    30 min) at t=1200 s. Both teams use ``reclaim`` as their
    ``reclaimWithinCohort`` policy.
    """
    queues = [team_queue("team-a", a_nominal, borrowing_limit=a_borrowing_limit, reclaim=reclaim),
              team_queue("team-b", b_nominal, lending_limit=b_lending_limit, reclaim=reclaim)]
    jobs = [team_job("team-a", f"a-{i + 1}", 4, pods=2, run_time=3600, submit_time=10 * i) for i in range(4)]
    jobs += [team_job("team-b", "b-1", 8, pods=2, run_time=1800, submit_time=900),
             team_job("team-b", "b-2", 4, pods=2, run_time=1800, submit_time=1200)]
    limits = []
    if a_borrowing_limit is not None:
        limits.append(f"A borrowingLimit {a_borrowing_limit}")
    if b_lending_limit is not None:
        limits.append(f"B lendingLimit {b_lending_limit}")
    extra = f", {', '.join(limits)}" if limits else ""
    return Scenario(_cluster(2), jobs, kueue=kueue_setup(queues, config), name="two-teams",
                    description=f"2 nodes x 8 GPUs; team A {a_nominal} GPUs, team B {b_nominal} GPUs in cohort "
                                f"{COHORT}{extra}, reclaimWithinCohort {reclaim}")


def fifo_story(strategy: str = "StrictFIFO") -> Scenario:
    """Section 3's story: a big job that does not fit yet, and a small one behind it, in one team's queue.

    One team with 8 GPUs on two 8-GPU nodes (no cohort: it cannot borrow).
    ``warm`` (4 GPUs) runs from t=0 for an hour; ``big`` (2 workers, 8 GPUs)
    arrives at t=60 s and cannot fit until ``warm`` finishes; ``small``
    (2 GPUs, 10 min) arrives at t=120 s.
    """
    queues = [team_queue("team-a", 8, cohort=None, strategy=strategy)]
    jobs = [team_job("team-a", "warm", 4, run_time=3600),
            team_job("team-a", "big", 8, pods=2, run_time=1800, submit_time=60),
            team_job("team-a", "small", 2, run_time=600, submit_time=120)]
    return Scenario(_cluster(2), jobs, kueue=kueue_setup(queues), name=f"fifo-{strategy}",
                    description=f"one team, 8 GPUs, queueingStrategy {strategy}")


def priority_story(within: str = "LowerPriority") -> Scenario:
    """Going-further section 10's story: an urgent job arrives while two sweeps fill the team's quota.

    One team with 16 GPUs on two 8-GPU nodes. ``sweep-1`` (t=0) and
    ``sweep-2`` (t=300 s) take 8 GPUs each for two hours, priority 0;
    ``urgent`` (2 workers, 8 GPUs, 30 min, priority 100) arrives at t=900 s.
    ``within`` is the team's ``withinClusterQueue`` policy.
    """
    queues = [team_queue("team-a", 16, cohort=None, within=within)]
    jobs = [team_job("team-a", "sweep-1", 8, run_time=7200),
            team_job("team-a", "sweep-2", 8, run_time=7200, submit_time=300),
            team_job("team-a", "urgent", 8, pods=2, run_time=1800, submit_time=900, priority=100)]
    return Scenario(_cluster(2), jobs, kueue=kueue_setup(queues), name=f"priority-{within}",
                    description=f"one team, 16 GPUs, withinClusterQueue {within}")


def fragmented_story(config: KueueConfig | None = None, *, with_s: bool = False) -> Scenario:
    """Section 4's story: quota sees 6 free GPUs, the nodes hold them as 2 + 4.

    Two nodes of 4 GPUs, one team whose quota is the cluster's 8 GPUs. ``P``
    (one pod of 2 GPUs) runs from t=0 for 20 min; ``G`` (2 workers of 3
    GPUs) arrives at t=60 s. Quota has room for G (8 - 2 = 6), but no node
    has 3 free GPUs twice: one has 2, the other 4. ``config`` defaults to
    waitForPodsReady off, to see the bare layers. ``with_s`` adds ``S`` (one
    pod of 4 GPUs, 10 min) at t=100 s, which finds the quota full.
    """
    queues = [team_queue("team-a", 8, cohort=None)]
    jobs = [team_job("team-a", "P", 2, run_time=1200),
            team_job("team-a", "G", 6, pods=2, run_time=600, submit_time=60)]
    if with_s:
        jobs.append(team_job("team-a", "S", 4, run_time=600, submit_time=100))
    setup = kueue_setup(queues, config or KueueConfig(wait_for_pods_ready=False))
    return Scenario(make_nodes(2, gpus=4), jobs, kueue=setup, name="fragmented",
                    description="2 nodes x 4 GPUs; quota 8 GPUs; P = 1 x 2 GPUs; G = 2 workers x 3 GPUs at t=60 s"
                                + ("; S = 1 x 4 GPUs at t=100 s" if with_s else ""))


#: The node label of the fragmented story's rack (both nodes stand in one rack).
RACK_LABEL = "cloud.provider.com/topology-rack"


def with_topology(scenario: Scenario, topology: str = "dc") -> Scenario:
    """``scenario`` with Kueue's Topology-Aware Scheduling: every node labelled with its pool, its rack and its
    hostname, a ``Topology`` of the last two, and the flavor naming it (``spec.topologyName``, its nodes chosen
    by the pool label). The flavor is each
    ClusterQueue's only one, so every pod set is topology-aware without an annotation (Kueue's implied TAS,
    :mod:`gangkit.kueue.tas`)."""
    pool = ("node-pool", "gpu")  # Kueue's webhook wants a TAS flavor to name its nodes by a label
    nodes = [dataclasses.replace(n, labels={**dict(n.labels), pool[0]: pool[1], RACK_LABEL: "rack-1", HOSTNAME: n.name})
             for n in scenario.nodes]
    flavors = [dataclasses.replace(f, node_labels=(*f.node_labels, pool), topology_name=topology)
               for f in scenario.kueue.flavors]
    setup = dataclasses.replace(scenario.kueue, topologies=[Topology(topology, (RACK_LABEL, HOSTNAME))], flavors=flavors)
    return dataclasses.replace(scenario, nodes=nodes, kueue=setup, name=f"{scenario.name}-tas",
                               description=scenario.description + "; Kueue TAS: one rack, node by node")


def quota_for(scenario: Scenario | str, gpus: int, config: KueueConfig | None = None) -> Scenario:
    """``scenario`` (or a built-in scenario by name) with one ClusterQueue of ``gpus`` GPUs for all its jobs."""
    if isinstance(scenario, str):
        scenario = load_scenario(scenario)
    queue = team_queue("cluster-queue", gpus, cohort=None)
    lqs = sorted({(j.namespace or "default", j.queue) for j in scenario.jobs})
    setup = KueueSetup([ResourceFlavor(FLAVOR)], [queue], [LocalQueue(q, ns, queue.name) for ns, q in lqs],
                       config=config or KueueConfig())
    return dataclasses.replace(scenario, kueue=setup, name=f"{scenario.name}, quota {gpus}")


def lending_story(b_lending_limit: int | None, b_nominal: int = LENDING_B_NOMINAL, a_nominal: int = 4) -> Scenario:
    """Exercise 3.1's story: team A floods the cohort at t=0; team B's own jobs arrive at t=600 s.

    Two nodes of 8 GPUs; team A's quota is ``a_nominal`` GPUs, team B's
    ``b_nominal`` with ``lendingLimit`` ``b_lending_limit``; nobody preempts
    (``reclaimWithinCohort: Never``). Team A sends sixteen 1-GPU jobs (two
    hours each) at t=0; team B sends ``b_nominal`` 1-GPU jobs at t=600 s. The GPUs
    team B gets at t=600 s are the quota no borrower could take from it.
    """
    queues = [team_queue("team-a", a_nominal), team_queue("team-b", b_nominal, lending_limit=b_lending_limit)]
    jobs = [team_job("team-a", f"a-{i + 1:02d}", 1, run_time=7200) for i in range(16)]
    jobs += [team_job("team-b", f"b-{i + 1:02d}", 1, run_time=1800, submit_time=LENDING_B_ARRIVAL_S)
             for i in range(b_nominal)]
    return Scenario(_cluster(2), jobs, kueue=kueue_setup(queues), name="lending",
                    description=f"team A {a_nominal} GPUs floods at t=0; team B {b_nominal} GPUs, lendingLimit "
                                f"{b_lending_limit}, comes at t=600 s")


def gpus_admitted_at(result, team: str, t: float) -> int:
    """GPUs of ``team``'s workloads that Kueue admitted at the instant ``t``."""
    ev = result.events
    gpus = dict(zip(result.jobs["job"], result.jobs["gpus"]))
    rows = ev[(ev["event"] == "admitted") & (ev["time_s"] == t) & ev["job"].str.startswith(f"{team}/")]
    return int(sum(gpus[j] for j in rows["job"]))


def reclaim_puzzle() -> Scenario:
    """Exercise 3.2's story: team B reclaims 6 GPUs from team A, which borrowed them in three pieces.

    Two nodes of 8 GPUs; teams A and B have 8 GPUs each, ``reclaimWithinCohort:
    Any``. Team A runs ``a-1`` (8 GPUs, t=0), ``a-2`` (4 GPUs, t=100 s) and
    ``a-3`` (2 GPUs, t=200 s), all priority 0. At t=600 s team B submits
    ``b-1``, one pod of 6 GPUs.
    """
    queues = [team_queue("team-a", 8, reclaim="Any"), team_queue("team-b", 8, reclaim="Any")]
    jobs = [team_job("team-a", "a-1", 8, run_time=7200),
            team_job("team-a", "a-2", 4, run_time=7200, submit_time=100),
            team_job("team-a", "a-3", 2, run_time=7200, submit_time=200),
            team_job("team-b", "b-1", 6, run_time=1800, submit_time=600)]
    return Scenario(_cluster(2), jobs, kueue=kueue_setup(queues), name="reclaim-puzzle",
                    description="team A borrows 6 GPUs as a-1 (8), a-2 (4), a-3 (2); team B reclaims 6 at t=600 s")


def starvation_story(strategy: str = "StrictFIFO") -> Scenario:
    """Exercise 3.3's story: a stream of small jobs and one big job in one team's queue.

    One team with 8 GPUs on two 8-GPU nodes (no cohort). A 2-GPU job
    (15 min) arrives every 5 minutes from t=0 to t=3300 s (``s-01`` ...
    ``s-12``); ``big`` (2 workers, 8 GPUs, 30 min) arrives at t=150 s.
    """
    queues = [team_queue("team-a", 8, cohort=None, strategy=strategy)]
    jobs = [team_job("team-a", f"s-{i + 1:02d}", 2, run_time=900, submit_time=300 * i) for i in range(12)]
    jobs.append(team_job("team-a", "big", 8, pods=2, run_time=1800, submit_time=150))
    return Scenario(_cluster(2), jobs, kueue=kueue_setup(queues), name=f"starvation-{strategy}",
                    description=f"one team, 8 GPUs, {strategy}; a 2-GPU job every 5 min, one 8-GPU job at t=150 s")


def fair_story(fair_sharing: bool = False) -> Scenario:
    """Going-further section 13's story: two busy teams and an idle one, in one cohort.

    Three nodes of 8 GPUs; teams A, B and C have 8 GPUs each and
    ``reclaimWithinCohort: Any``. Team C submits nothing, so its 8 GPUs are
    there to borrow. Team A submits four one-pod jobs of 4 GPUs (one hour
    each) at t=0, 10, 20 and 30 s; team B four more at t=600 to 630 s.
    ``fair_sharing`` turns on Kueue's fair sharing (the Configuration's
    ``fairSharing``, with both preemption strategies): who gets C's GPUs is
    then decided by the teams' shares, not by who came first.
    """
    queues = [team_queue(t, 8, reclaim="Any") for t in ("team-a", "team-b", "team-c")]
    jobs = [team_job("team-a", f"a-{i + 1}", 4, submit_time=10 * i) for i in range(4)]
    jobs += [team_job("team-b", f"b-{i + 1}", 4, submit_time=600 + 10 * i) for i in range(4)]
    config = KueueConfig(fair_sharing=fair_sharing)
    return Scenario(_cluster(3), jobs, kueue=kueue_setup(queues, config), name="fair-sharing" if fair_sharing else "no-fair-sharing",
                    description=f"3 nodes x 8 GPUs; teams A, B, C 8 GPUs each in cohort {COHORT}, C idle; "
                                f"A: 4 x 4 GPUs at t=0-30 s, B: 4 x 4 GPUs at t=600-630 s; "
                                f"fair sharing {'on' if fair_sharing else 'off'}")


def kueue_manifests(scenario: Scenario, jobs: int = 1) -> str:
    """The Kueue objects of ``scenario`` and its first ``jobs`` Jobs, as the manifests a real cluster takes.

    Written by :func:`gangkit.dump_manifests` (Kueue ``v1beta2``); ``gangkit run`` reads the full
    file back into the same scenario. The Jobs' ``gangkit/...`` annotations are gangkit's own
    (run time, progress) and mean nothing to a real cluster.
    """
    text = dump_manifests(scenario)
    kueue = select_documents(text, ("ResourceFlavor", "Cohort", "ClusterQueue", "LocalQueue"))
    job_docs = select_documents(text, ("Job",)).split("\n---\n")[:jobs] if jobs else []
    return kueue + ("---\n" + "\n---\n".join(d.strip() for d in job_docs) + "\n" if job_docs else "")


# ------------------------------------------------------------------------------------ reading a run
def team_of(scenario: Scenario) -> dict[str, str]:
    """Job key -> the ClusterQueue its LocalQueue points to."""
    setup = scenario.kueue
    lq = {(q.namespace, q.name): q.cluster_queue for q in setup.local_queues}
    return {j.key: lq.get((j.namespace or "default", j.queue), "") for j in scenario.jobs}


def admission_log(result, scenario: Scenario) -> pd.DataFrame:
    """What happened to each workload, in time order: submitted, admitted, preempted (why), started, finished.

    ``admitted`` is Kueue's quota reservation for the whole workload;
    ``started`` is when all its pods run. For a preemption, ``detail`` is
    Kueue's reason (``InCohortReclamation``, ``InClusterQueue``, ...) and
    ``by`` the workload that caused it.
    """
    team = team_of(scenario)
    ev = result.events
    words = {"submitted": "submitted", "admitted": "admitted", "preempted": "preempted", "job_started": "started",
             "finished": "finished", "evicted": "evicted", "deactivated": "deactivated"}
    rows = []
    by: dict[tuple, str] = {}
    for e in ev.itertuples():
        if e.event == "evicted" and e.detail.startswith("preempted by "):
            by[(e.time_s, e.job)] = e.detail[len("preempted by "):].split(" (")[0]
    for e in ev.itertuples():
        if e.event not in words:
            continue
        if e.event == "evicted" and (e.time_s, e.job) in by:
            continue  # the 'preempted' row says it, with Kueue's reason
        detail = e.detail if e.event in ("preempted", "evicted", "deactivated") else ""
        rows.append({"time_s": float(e.time_s), "job": e.job, "team": team.get(e.job, ""), "event": words[e.event],
                     "detail": detail, "by": by.get((e.time_s, e.job), "")})
    return pd.DataFrame(rows, columns=["time_s", "job", "team", "event", "detail", "by"])


def preemptions(result, scenario: Scenario) -> pd.DataFrame:
    """One row per preemption: when, the victim, its team, Kueue's reason, and the preemptor."""
    log = admission_log(result, scenario)
    rows = log[log["event"] == "preempted"]
    return rows[["time_s", "job", "team", "detail", "by"]].rename(columns={"job": "victim", "detail": "reason"}) \
        .reset_index(drop=True)


def job_table(result, scenario: Scenario) -> pd.DataFrame:
    """One row per workload: team, GPUs, submitted, first admitted, started, waited, times evicted, finished.

    ``first_admitted_s`` is Kueue's first quota reservation; ``start_s`` the
    first start (all pods running); ``wait_s`` runs from submission to it (a
    workload that never started waits until the end of the run).
    ``evicted`` counts the times Kueue took the workload's quota back:
    preemptions, and waitForPodsReady timeouts.
    """
    team = team_of(scenario)
    ev = result.events
    first_admitted = ev[ev["event"] == "admitted"].groupby("job")["time_s"].min()
    lost = ev[ev["event"] == "preempted"].groupby("job").size()
    out = []
    for j in result.jobs.itertuples():
        out.append({"job": j.job, "team": team.get(j.job, ""), "gpus": int(j.gpus), "submit_s": float(j.submit_s),
                    "first_admitted_s": float(first_admitted.get(j.job, math.nan)), "start_s": float(j.start_s),
                    "wait_s": float(j.wait_s), "evicted": int(lost.get(j.job, 0)) + _other_evictions(ev, j.job),
                    "finish_s": float(j.finish_s)})
    return pd.DataFrame(out, columns=["job"] + QUOTA_COLUMNS).set_index("job")


def _other_evictions(ev: pd.DataFrame, job: str) -> int:
    """Evictions that are not preemptions (a preemption has its own 'preempted' row): waitForPodsReady's."""
    rows = ev[(ev["event"] == "evicted") & (ev["job"] == job)]
    return int((~rows["detail"].str.startswith("preempted by ")).sum())


def quota_usage(result, scenario: Scenario) -> pd.DataFrame:
    """GPUs of quota each ClusterQueue holds over time, one column per team.

    Read from ``result.metrics["kueue_cluster_queue_resource_reservation"]``
    (gangkit's version of Kueue's metric of that name): the last value of
    each instant, one row per instant at which something changed, plus the
    end of the run; each row holds until the next.
    """
    teams = [q.name for q in scenario.kueue.cluster_queues]
    m = result.metrics["kueue_cluster_queue_resource_reservation"]
    m = m[(m["resource"] == GPU) & m["cluster_queue"].isin(teams)]
    table = (m.assign(time_s=m["time_s"].astype(float))
              .groupby(["time_s", "cluster_queue"], sort=True)["reserved"].last()
              .unstack("cluster_queue").reindex(columns=teams).ffill().fillna(0).astype(int))
    table = table.loc[(table.diff().abs().sum(axis=1) != 0) | (table.index == table.index.min())]
    out = table.reset_index()
    out.columns.name = None
    end = float(result.figures["makespan_s"])
    if out.empty or float(out["time_s"].iloc[0]) > 0:
        out = pd.concat([pd.DataFrame([{"time_s": 0.0, **{t: 0 for t in teams}}]), out], ignore_index=True)
    if float(out["time_s"].iloc[-1]) < end:
        out = pd.concat([out, pd.DataFrame([{"time_s": end, **out.iloc[-1][teams].to_dict()}])], ignore_index=True)
    return out.astype({"time_s": float, **{t: int for t in teams}})


def queues_table(scenario: Scenario) -> pd.DataFrame:
    """Each ClusterQueue's GPU quota and policies, one row per team (None: not set)."""
    rows = []
    for q in scenario.kueue.cluster_queues:
        quota = q.resource_groups[0].flavors[0].resources[GPU]
        rows.append({"cluster_queue": q.name, "cohort": q.cohort, "nominalQuota": quota.nominal,
                     "borrowingLimit": quota.borrowing_limit, "lendingLimit": quota.lending_limit,
                     "queueingStrategy": q.queueing_strategy,
                     "withinClusterQueue": q.preemption.within_cluster_queue,
                     "reclaimWithinCohort": q.preemption.reclaim_within_cohort})
    return pd.DataFrame(rows, dtype=object).set_index("cluster_queue")


def workloads_table(scenario: Scenario) -> pd.DataFrame:
    """The scenario's jobs as Kueue sees them: team, workers, GPUs, priority, submission, run time."""
    team = team_of(scenario)
    rows = [{"workload": j.key, "team": team[j.key], "workers": j.pod_count, "gpus": j.gpus, "priority": j.priority,
             "submit_s": float(j.submit_time), "run_time_s": float(j.run_time)} for j in scenario.jobs]
    return pd.DataFrame(rows).set_index("workload")


def reasons_at(scenario: Scenario | str, stack: str, t: float) -> pd.DataFrame:
    """Where each job stands at time ``t`` (the run cut there), and the reason a waiting one gives.

    The reason names its layer (``[quota]`` or ``[placement]``), a code and the numbers.
    """
    r = simulate(scenario, stack=stack, horizon=t)
    return r.jobs[["job", "state", "reason"]].set_index("job")


# ------------------------------------------------------------------------------------ pictures
#: One colour per team, in ClusterQueue order.
TEAM_COLOURS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd")


def plot_quota(result, scenario: Scenario, ax=None, *, title: str | None = None, until: float | None = None):
    """Quota held by each team over time (solid steps), each team's nominalQuota (dashed), on one Axes.

    Where a team's line runs above its dashed line, it is borrowing from
    the cohort; the shaded band is the part borrowed. Returns the Axes.
    The explorer's compact picture; :func:`gangkit.plots.quota` draws one
    panel per ClusterQueue with what each lends as well, and the cohort tree.
    """
    if ax is None:
        import matplotlib.pyplot as plt

        _, ax = plt.subplots(figsize=(8, 3.2))
    usage = quota_usage(result, scenario)
    end = float(usage["time_s"].iloc[-1]) if until is None else float(until)
    unit, per = ("min", 60.0) if end <= 4 * 3600 else ("h", 3600.0)
    t = usage["time_s"].to_numpy(dtype=float) / per
    for i, q in enumerate(scenario.kueue.cluster_queues):
        colour = TEAM_COLOURS[i % len(TEAM_COLOURS)]
        nominal = q.resource_groups[0].flavors[0].resources[GPU].nominal
        v = usage[q.name].to_numpy(dtype=float)
        ax.step(t, v, where="post", color=colour, linewidth=2, label=f"{q.name}: quota held")
        ax.axhline(nominal, color=colour, linestyle="--", linewidth=1, label=f"{q.name}: nominalQuota {nominal}")
        above = v > nominal
        # with step="post" a value holds until the next row: shade to the row that ends each borrowing stretch
        shade = above | np.r_[False, above[:-1]]
        ax.fill_between(t, nominal, np.maximum(v, nominal), where=shade, step="post", color=colour, alpha=0.2,
                        linewidth=0)
    ax.set_xlim(0, end / per if end > 0 else 1)
    top = max(float(usage[[q.name for q in scenario.kueue.cluster_queues]].to_numpy().max()),
              max(q.resource_groups[0].flavors[0].resources[GPU].nominal for q in scenario.kueue.cluster_queues))
    ax.set_ylim(0, top * 1.15 + 0.5)
    ax.set_xlabel(f"simulated time ({'minutes' if unit == 'min' else 'hours'})")
    ax.set_ylabel("GPUs of quota")
    ax.set_title(title or f"Quota held per team: {scenario.description}", fontsize=10)
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8, frameon=False)
    return ax


# ------------------------------------------------------------------------------------ the explorer
@lru_cache(maxsize=64)
def _run_two_teams(a_nominal: int, b_nominal: int, a_borrowing_limit, b_lending_limit, reclaim: str):
    sc = two_teams(a_nominal, b_nominal, a_borrowing_limit=a_borrowing_limit, b_lending_limit=b_lending_limit,
                   reclaim=reclaim)
    return sc, simulate(sc, stack="kueue+gang")


def explore_quota(a_nominal: int = 8, b_nominal: int = 8, a_borrowing_limit: int | None = None,
                  b_lending_limit: int | None = None, reclaim: str = "Never") -> pd.DataFrame:
    """Simulate :func:`two_teams` under ``kueue+gang`` with these quotas; one row per workload.

    The columns are :data:`QUOTA_COLUMNS`: team, GPUs, when it was
    submitted, first admitted (quota reserved) and started, how long it
    waited, how many times it was evicted (preempted, or timed out by
    waitForPodsReady), and when it finished (NaN if it did not). A copy: changing it changes nothing cached.
    """
    sc, r = _run_two_teams(a_nominal, b_nominal, a_borrowing_limit, b_lending_limit, reclaim)
    return job_table(r, sc).copy()


def render_quota(a_nominal: int = 8, b_nominal: int = 8, a_borrowing_limit: int | None = None,
                 b_lending_limit: int | None = None, reclaim: str = "Never"):
    """What :func:`quota_explorer` shows: :func:`explore_quota`'s table and the quota each team held (a Figure)."""
    sc, r = _run_two_teams(a_nominal, b_nominal, a_borrowing_limit, b_lending_limit, reclaim)
    fig = Figure(figsize=(9, 3.4))
    ax = fig.subplots()
    plot_quota(r, sc, ax=ax, title="Quota held per team (simulated)")
    fig.subplots_adjust(left=0.08, right=0.7, bottom=0.16, top=0.9)
    return job_table(r, sc).copy(), fig


def limit_label(value: int | None) -> str:
    """A limit as the explorer's slider shows it: ``"none"`` for no limit, else the number."""
    return "none" if value is None else str(int(value))


def limit_value(label: str) -> int | None:
    """The inverse of :func:`limit_label`."""
    return None if label == "none" else int(label)


def quota_explorer(a_nominal: int = 8, b_nominal: int = 8, a_borrowing_limit: int | None = None,
                   b_lending_limit: int | None = None, reclaim: str = "Never"):
    """Lesson 03's explorer: move the teams' quotas and limits, watch admissions and waits change.

    Sliders for each team's nominalQuota and for team A's borrowingLimit and
    team B's lendingLimit ("none" is no limit), and a toggle for both teams'
    reclaimWithinCohort policy. Shows :func:`explore_quota` and
    :func:`plot_quota` for the run of :func:`two_teams` under ``kueue+gang``.
    """
    style = {"description_width": "13em"}
    layout = W.Layout(width="32em")

    def nominal(description: str, value: int) -> W.IntSlider:
        return W.IntSlider(value=value, min=0, max=16, step=4, description=description, continuous_update=False,
                           style=style, layout=layout)

    def limit(description: str, value) -> W.SelectionSlider:
        # ipywidgets reads a None value as "nothing selected": the slider carries the labels, render() converts
        return W.SelectionSlider(options=[limit_label(v) for v in LIMITS], value=limit_label(value),
                                 description=description, continuous_update=False, style=style, layout=layout)

    def render(a_nominal, b_nominal, a_borrowing_limit, b_lending_limit, reclaim):
        return render_quota(a_nominal, b_nominal, limit_value(a_borrowing_limit), limit_value(b_lending_limit), reclaim)

    controls = {
        "a_nominal": nominal("team A nominalQuota", a_nominal),
        "b_nominal": nominal("team B nominalQuota", b_nominal),
        "a_borrowing_limit": limit("team A borrowingLimit", a_borrowing_limit),
        "b_lending_limit": limit("team B lendingLimit", b_lending_limit),
        "reclaim": W.ToggleButtons(options=["Never", "Any"], value=reclaim, description="reclaimWithinCohort",
                                   style=style),
    }
    return Explorer("Quota explorer",
                    "two teams in one cohort on 2 nodes x 8 GPUs, stack kueue+gang: team A sends four 4-GPU jobs "
                    "at t=0, team B an 8-GPU job at t=900 s and a 4-GPU job at t=1200 s (simulated figures).",
                    controls, render)
