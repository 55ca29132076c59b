"""Lesson 06's stories and tables: admitted gangs that wait for nodes.

Every story here starts from a cluster with no GPU node (one CPU-only node,
because a scenario needs one): GPUs come from a provisioner, Karpenter or
cluster-autoscaler, and each new node passes through its stages before a pod
can use it. The functions return plain scenarios, stacks and tables, so each
figure of the lesson can be rebuilt by calling them; all figures are
simulated, never measured on a real cluster. Stage durations are gangkit's
default assumptions (:class:`gangkit.supply.karpenter.Stages`: registered 60 s after
launch, initialized 90 s later, no image pull) unless a story sets others.

This module holds:

- :func:`from_zero`: one admitted gang and no GPU node yet; :func:`stage_breakdown`,
  :func:`job_timeline`, :func:`wait_stages` and :func:`wait_table` read where its wait
  went, node stage by node stage;
- :func:`batching` and :func:`batching_table`: Karpenter's batching window on a burst
  of small jobs (:func:`stream`);
- :func:`limit_story` and :func:`provreq_story`: a NodePool limit that provisions part
  of a gang, against a ProvisioningRequest that asks for all of it; :func:`paid_table`
  says what each paid for; :func:`standalone_story` and :func:`standalone_table`: the
  same request applied without Kueue, and pods that come for it on time or too late;
- :func:`scale_to_zero` and :func:`compare_scale_to_zero`: a gang of 10 x 8 GPUs
  and no GPU node, each gang scheduler with Karpenter behind it: what Karpenter
  sees (a Volcano Job: nothing before Inqueue), the nodes it launches and pays
  for, and what each variant holds while they boot or when a NodePool limit
  stops them short; :func:`with_job` changes one job of a scenario;
- :func:`warm_pool_story`, :func:`warm_pool` and :func:`warm_pool_table`: warm nodes
  paid for all day against waiting for new ones; :func:`provisioning_explorer` is the
  lesson's widget over them (:func:`render_warm_pool`).
"""

from __future__ import annotations

import dataclasses
import math
from functools import lru_cache

import ipywidgets as W
import pandas as pd
from matplotlib.figure import Figure

from gangkit.engine.waits import NODE_BUCKETS
from gangkit.kueue.objects import (
    GPU,
    ClusterQueue,
    FlavorQuotas,
    KueueSetup,
    LocalQueue,
    Quota,
    ResourceFlavor,
    ResourceGroup,
)
from gangkit.kueue.provisioning import AdmissionCheck, ProvisioningRequestConfig
from gangkit.lessons.explorer import Explorer
from gangkit.model.jobs import Job, PodSet, job
from gangkit.model.nodes import Node
from gangkit.model.scenario import Scenario
from gangkit.results import plots
from gangkit.simulate import simulate
from gangkit.stacks import Stack
from gangkit.supply.autoscaler import ClusterAutoscaler, NodeGroup
from gangkit.supply.cloud import InstanceType, Stages, uniform
from gangkit.supply.karpenter import Karpenter, NodePool
from gangkit.supply.provisioning_request import ProvisioningRequestSpec
from gangkit.volcano.api import VolcanoSetup
from gangkit.volcano.scheduler import VolcanoGang

G8 = InstanceType("gpu-8", 8, 8.0)  # one price unit per GPU-hour: only relative prices matter here
CPU_NODE = Node("system-0", 0)
STAGE_EVENTS = ["node_launched", "node_registered", "node_initialized", "node_image_pulled", "node_ready"]
#: A job's wait buckets (:mod:`gangkit.engine.waits`) in the order a job meets them.
WAIT_BUCKETS = ["quota", "admission_check", "placement", *NODE_BUCKETS]


def _kueue(gpus: int) -> KueueSetup:
    cq = ClusterQueue("team", [ResourceGroup((GPU,), (FlavorQuotas("gpu", {GPU: Quota(gpus)}),))])
    return KueueSetup([ResourceFlavor("gpu")], [cq], [LocalQueue("default", "default", "team")])


def karpenter(limit: int | None = None, stages: Stages | None = None, batch_idle: float = 1.0, batch_max: float = 10.0,
              consolidate_after: float | None = 300.0) -> Karpenter:
    """One NodePool ``gpu`` of 8-GPU nodes, an optional ``nvidia.com/gpu`` limit, empty nodes removed after 5 min."""
    limits = {} if limit is None else {GPU: limit}
    pool = NodePool("gpu", ["gpu-8"], limits=limits, consolidate_after=consolidate_after, budget="100%")
    return Karpenter([pool], [G8], batch_idle=batch_idle, batch_max=batch_max, stages=stages)


def from_zero(stages: Stages | None = None, limit: int | None = None, quota: int = 64) -> Scenario:
    """One gang, ``train`` (4 workers of 8 GPUs, 1 h), submitted at t=0 to a cluster without GPU nodes."""
    return Scenario([CPU_NODE], [job("train", pods=4, gpus=8, run_time=3600)], kueue=_kueue(quota),
                    karpenter=karpenter(limit, stages), name="from-zero",
                    description="no GPU node at t=0; train: 4 workers x 8 GPUs, 1 h, submitted at t=0")


def stage_breakdown(result) -> pd.DataFrame:
    """One row per node a provisioner added: when it reached each stage (from the node events), and its seconds to ready."""
    ev = result.events[result.events.event.isin(STAGE_EVENTS)]
    table = ev.pivot_table(index="node", columns="event", values="time_s", aggfunc="first")
    cols = [c for c in STAGE_EVENTS if c in table.columns]
    table = table[cols].rename(columns=lambda c: c.removeprefix("node_") + "_s")
    table["launch_to_ready_s"] = table["ready_s"] - table["launched_s"]
    table.columns.name = None
    return table


def job_timeline(result, name: str) -> pd.Series:
    """A job's path in seconds: submitted, quota reserved, pods created, first counted on a node in flight
    (its first ``nominated`` event), first and last node ready, started."""
    ev = result.events
    mine = ev[ev.job == name]
    admitted = mine[mine.event == "admitted"].time_s
    nominated = mine[mine.event == "nominated"].time_s
    ready = ev[ev.event == "node_ready"].time_s
    row = result.jobs.set_index("job").loc[name]
    return pd.Series({
        "submitted_s": row.submit_s,
        "quota_reserved_s": admitted.min() if len(admitted) else math.nan,
        "pods_created_s": admitted.max() if len(admitted) else row.submit_s,
        "nominated_s": nominated.min() if len(nominated) else math.nan,
        "first_node_ready_s": ready.min() if len(ready) else math.nan,
        "last_node_ready_s": ready.max() if len(ready) else math.nan,
        "started_s": row.start_s,
    })


def wait_stages(result, name: str) -> pd.Series:
    """Where one job's wait went: seconds per wait bucket (:mod:`gangkit.engine.waits`), in the order a job
    meets them, then the total. ``placement`` is time with no node coming for the job; the ``node_*``
    and ``image_pull`` buckets are time waiting for a node launched for it, named after the stage the
    node had not reached yet. Buckets the run's stack does not have are left out."""
    row = result.jobs.set_index("job").loc[name]
    out = {b: float(row[f"wait_{b}_s"]) for b in WAIT_BUCKETS if f"wait_{b}_s" in row.index}
    out["total"] = float(row.wait_s)
    return pd.Series(out, name=name)


def wait_table(runs: dict, name: str = "train") -> pd.DataFrame:
    """:func:`wait_stages` of job ``name`` for each run, one row per run (NaN: the stack has no such bucket)."""
    rows = {k: wait_stages(r, name) for k, r in runs.items()}
    table = pd.DataFrame(rows).T
    return table[[c for c in WAIT_BUCKETS + ["total"] if c in table.columns]]


# ----------------------------------------------------------------------- the batching window
def stream(n: int = 24, every: float = 0.5) -> list:
    """``n`` one-GPU jobs of 10 minutes, one every ``every`` seconds from t=0 (a burst of small jobs)."""
    return [job(f"s-{i:02d}", gpus=1, run_time=600, submit_time=every * i) for i in range(n)]


def batching(batch_idle: float = 1.0, batch_max: float = 10.0, n: int = 24, every: float = 0.5):
    """The stream through ``gang+karpenter`` with this batching window; returns the run."""
    sc = Scenario([CPU_NODE], stream(n, every), karpenter=karpenter(batch_idle=batch_idle, batch_max=batch_max),
                  name="burst", description=f"{n} one-GPU jobs, one every {every:g} s")
    return simulate(sc, stack="gang+karpenter")


def batching_table(windows: list[tuple[float, float]], n: int = 24, every: float = 0.5) -> pd.DataFrame:
    """For each (batchIdleDuration, batchMaxDuration): batches, nodes launched, and the jobs' waits."""
    rows = []
    for idle, most in windows:
        r = batching(idle, most, n, every)
        b = r.metrics["gangkit_karpenter_batches"]
        rows.append({"batchIdleDuration_s": idle, "batchMaxDuration_s": most, "batches": len(b),
                     "nodes_launched": int(b.nodeclaims.sum()), "first_window_closes_s": float(b.end_s.iloc[0]),
                     "mean_wait_s": r.summary()["mean_wait_s"], "max_wait_s": r.summary()["max_wait_s"]})
    return pd.DataFrame(rows).set_index(["batchIdleDuration_s", "batchMaxDuration_s"])


# ------------------------------------------------- partial provisioning against all at once
def limit_story(limit: int = 16, horizon: float = 7200.0):
    """``train`` under ``kueue+gang+karpenter`` with a NodePool limit of ``limit`` GPUs; returns the run."""
    return simulate(from_zero(limit=limit), stack="kueue+gang+karpenter", horizon=horizon)


def provreq_story(max_size: int = 2, expiry: float = 1800.0, horizon: float = 7200.0, backoff_limit_count: int = 3):
    """``train`` under ``kueue+provreq+autoscaler``: one node group of 8-GPU nodes up to ``max_size``.

    ``expiry`` is how long cluster-autoscaler keeps trying a ProvisioningRequest before marking it
    Failed (7 days in cluster-autoscaler; shortened here so that the retries fit in the lesson).
    """
    ca = ClusterAutoscaler([NodeGroup("gpu-8", G8, max_size=max_size)], provisioning_request_expiry=expiry)
    check = AdmissionCheck(config=ProvisioningRequestConfig(backoff_limit_count=backoff_limit_count))
    sc = Scenario([CPU_NODE], [job("train", pods=4, gpus=8, run_time=3600)], kueue=_kueue(64), autoscaler=ca,
                  admission_check=check, name="provreq",
                  description=f"node group gpu-8 (max {max_size} nodes); train: 4 workers x 8 GPUs")
    return simulate(sc, stack="kueue+provreq+autoscaler", horizon=horizon)


def standalone_story(pods_at: float, horizon: float = 7200.0):
    """A ProvisioningRequest for 4 pods of 8 GPUs applied at t=0 without Kueue (``pod+autoscaler``), and ``train``,
    whose 4 pods consume it (``autoscaling.x-k8s.io/consume-provisioning-request``), created at ``pods_at``."""
    ca = ClusterAutoscaler([NodeGroup("gpu-8", G8, max_size=4)])
    request = ProvisioningRequestSpec("train-capacity", (PodSet("workers", 4, 8),))
    train = Job("train", [PodSet("workers", 4, 8)], 3600.0, submit_time=pods_at,
                consume_provisioning_request="train-capacity")
    sc = Scenario([CPU_NODE], [train], autoscaler=ca, provisioning_requests=[request], name="standalone-provreq",
                  description=f"ProvisioningRequest train-capacity at t=0 (4 x 8 GPUs); train's pods at t={pods_at:g} s")
    return simulate(sc, stack="pod+autoscaler", horizon=horizon)


def standalone_table(pods_at=(60.0, 900.0, 1500.0)) -> pd.DataFrame:
    """For each time ``train``'s pods are created: when the booking ended and why, when the request's nodes were
    removed, and when ``train`` started (NaN: never, within the two hours)."""
    rows = []
    for t in pods_at:
        r = standalone_story(t)
        states = r.metric("gangkit_provisioning_requests")
        ended = states[states.state == "BookingExpired"]
        removed = r.metric("cluster_autoscaler_scaled_down_nodes_total")
        j = r.jobs.set_index("job").loc["train"]
        rows.append({"pods_created_s": t, "booking_ended_s": float(ended.time_s.iloc[0]),
                     "booking_expired_reason": ended.reason.iloc[0],
                     "nodes_removed_s": float(removed.time_s.min()) if len(removed) else float("nan"),
                     "train_start_s": j.start_s, "train_state": j.state})
    return pd.DataFrame(rows).set_index("pods_created_s")


def paid_table(runs: dict) -> pd.DataFrame:
    """What each run paid for and what came of it: nodes launched, GPU-hours of capacity, useful GPU-hours, train's fate."""
    rows = {}
    for name, r in runs.items():
        f = r.summary()
        j = r.jobs.set_index("job").loc["train"]
        launched = int((r.events.event == "node_launched").sum())
        rows[name] = {"nodes_launched": launched, "gpu_hours_paid": round(f["capacity_gpu_seconds"] / 3600, 2),
                      "gpu_hours_useful": round(f["useful_gpu_seconds"] / 3600, 2), "train_state": j.state,
                      "train_start_s": j.start_s}
    return pd.DataFrame(rows).T


# ------------------------------------- what each gang scheduler shows Karpenter at scale-to-zero

#: (label, stack, fields changed on job ``big``[, fields changed on the scenario]) for
#: :func:`compare_scale_to_zero`, in the order of the table.
SCALE_TO_ZERO_ROWS = (
    ("pod", "pod+karpenter", {}),
    ("gang", "gang+karpenter", {}),
    ("gang, Volcano Job", "gang+karpenter", {"controller": "volcano"}),
    ("gang, Volcano Job, no enqueue", "gang+karpenter", {"controller": "volcano"}, {"volcano": VolcanoSetup(enqueue=False)}),
    ("coscheduling", "coscheduling+karpenter", {}),
    ("yunikorn", "yunikorn+karpenter", {}),
    ("kube-gang", "kube-gang+karpenter", {}),
)
#: The columns of :func:`compare_scale_to_zero`.
SCALE_TO_ZERO_COLUMNS = ["pods_seen", "first_seen_s", "nodes_launched", "node_gpu_h", "held_idle_gpu_h",
                         "releases", "big_wait_s", "big_state"]


def scale_to_zero(limit: int | None = None, horizon: float = 7200.0) -> Scenario:
    """No GPU node at first; ``big``, a sync gang of 10 workers x 8 GPUs, arrives at t=0.

    Karpenter (the scenario's ``karpenter``) has one NodePool of 8-GPU
    nodes (price 1.0 per GPU-hour, an assumption), ``limit`` GPUs at most
    (None: no limit), empty nodes removed after 30 s. A new node registers
    30 to 400 s after launch (uniform, drawn from the run's seeded
    generator) and is ready 90 s later: a wide spread on purpose, so that
    the gang's nodes become ready at different times.
    """
    limits = {} if limit is None else {"nvidia.com/gpu": limit}
    pool = NodePool("gpu", ["gpu-8"], limits=limits, consolidate_after=30.0, budget="100%")
    karpenter = Karpenter([pool], [InstanceType("gpu-8", 8, 8.0)],
                          stages=Stages(registered=uniform(30.0, 400.0), initialized=90.0))
    what = "no limit" if limit is None else f"limit {limit} GPUs"
    sc = Scenario([CPU_NODE], [job("big", pods=10, gpus=8, run_time=3600)], karpenter=karpenter,
                  name="scale-to-zero", description=f"no GPU node at first; big = 10 sync workers x 8 GPUs at 0 s; "
                                                    f"Karpenter: 8-GPU nodes, {what}, ready 120-490 s after launch")
    return sc.with_settings(horizon=horizon)


def compare_scale_to_zero(scenario: Scenario | None = None, rows=SCALE_TO_ZERO_ROWS, seed: int = 0) -> pd.DataFrame:
    """One row per variant with Karpenter behind it, on :func:`scale_to_zero` (or ``scenario``):

    how many pods Karpenter saw as provisionable and when it saw the first,
    the nodes it launched, the GPU-hours of nodes paid (capacity from
    launch until the run ends: the gang finishes, or the horizon), the
    GPU-hours held idle, the releases (timeouts, rejections), and big's wait
    and end state.
    """
    scenario = scale_to_zero() if scenario is None else scenario
    out = []
    for label, stack, fields, *changes in rows:
        changed = dataclasses.replace(scenario, **changes[0]) if changes else scenario
        r = simulate(with_job(changed, "big", **fields), stack=stack, seed=seed)
        seen = r.metrics["gangkit_karpenter_pods_seen"]
        big = r.jobs.set_index("job").loc["big"]
        out.append({
            "variant": label,
            "pods_seen": len(seen),
            "first_seen_s": float(seen.time_s.min()) if len(seen) else float("nan"),
            "nodes_launched": len(r.metrics["karpenter_nodeclaims_created_total"]),
            "node_gpu_h": round(r.figures["capacity_gpu_seconds"] / 3600.0, 2),
            "held_idle_gpu_h": round(r.figures["held_idle_gpu_seconds"] / 3600.0, 2),
            "releases": int((r.events["event"] == "released").sum()),
            "big_wait_s": round(float(big["wait_s"]), 1),
            "big_state": big["state"],
        })
    return pd.DataFrame(out, columns=["variant", *SCALE_TO_ZERO_COLUMNS]).set_index("variant")


def with_job(scenario: Scenario, name: str, **fields) -> Scenario:
    """The scenario with job ``name`` changed (``controller="volcano"``, ``gang_style="Hard"``, ...)."""
    return dataclasses.replace(scenario, jobs=[dataclasses.replace(j, **fields) if j.name == name else j
                                               for j in scenario.jobs])


# ------------------------------------------------------------------ warm nodes against waiting
#: A day of gangs: submit time (h) and workers of 8 GPUs; each runs 1 h.
DAY_OF_GANGS = [(0.5, 2), (1.25, 2), (3.0, 2), (4.1, 4), (6.0, 2), (8.5, 2), (9.0, 2), (11.0, 3), (13.5, 2),
                (16.0, 2), (18.2, 4), (21.0, 2)]


def warm_pool_story(warm_nodes: int = 0, stages: Stages | None = None, consolidate_after: float = 300.0) -> Scenario:
    """A day of gangs (:data:`DAY_OF_GANGS`) on ``warm_nodes`` always-on 8-GPU nodes plus Karpenter for the rest.

    Warm nodes are paid for the whole day whether used or not; Karpenter's
    nodes are paid from launch until consolidation removes them.
    """
    nodes = [CPU_NODE] + [Node(f"warm-{i}", 8, labels={"karpenter.sh/nodepool": "warm"}, pool="warm") for i in range(warm_nodes)]
    jobs = [job(f"g{i:02d}", pods=w, gpus=8, run_time=3600, submit_time=round(h * 3600)) for i, (h, w) in enumerate(DAY_OF_GANGS)]
    tail = job("end-of-day", gpus=0, run_time=1, submit_time=24 * 3600)  # makes every run one day long
    return Scenario(nodes, jobs + [tail], karpenter=karpenter(stages=stages, consolidate_after=consolidate_after),
                    name=f"warm-{warm_nodes}", description=f"{len(jobs)} gangs over one day, {warm_nodes} warm 8-GPU nodes")


def warm_pool(warm_nodes: int = 0, stages: Stages | None = None, consolidate_after: float = 300.0):
    """:func:`warm_pool_story` under ``gang+karpenter`` (Volcano sessions of 1 s)."""
    sc = warm_pool_story(warm_nodes, stages, consolidate_after)
    return simulate(sc, stack=Stack(VolcanoGang(period=1.0), suppliers=[sc.karpenter], name="gang+karpenter"))


def warm_pool_row(result) -> dict:
    """GPU-hours paid and used, and the gangs' waits, for one run of :func:`warm_pool`."""
    f = result.summary()
    gangs = result.jobs[result.jobs.job != "end-of-day"]
    return {"gpu_hours_paid": round(f["capacity_gpu_seconds"] / 3600, 1),
            "gpu_hours_useful": round(f["useful_gpu_seconds"] / 3600, 1),
            "gpu_hours_not_ready": round(f["not_ready_gpu_seconds"] / 3600, 1),
            "mean_wait_s": round(float(gangs.wait_s.mean()), 1), "max_wait_s": float(gangs.wait_s.max()),
            "nodes_launched": int((result.events.event == "node_launched").sum())}


def warm_pool_table(warm: range | list = range(0, 5), stages: Stages | None = None, consolidate_after: float = 300.0) -> pd.DataFrame:
    """:func:`warm_pool_row` for each number of warm nodes (runs are remembered: the explorer asks again)."""
    rows = {n: _warm_pool_row(n, stages or Stages(), float(consolidate_after)) for n in warm}
    return pd.DataFrame.from_dict(rows, orient="index").rename_axis("warm_nodes")  # keeps counts as integers


@lru_cache(maxsize=64)
def _warm_pool_row(warm_nodes: int, stages: Stages, consolidate_after: float) -> dict:
    return warm_pool_row(warm_pool(warm_nodes, stages, consolidate_after))


# --------------------------------------------------------------------------- the explorer
def render_warm_pool(warm_nodes: int = 0, initialized_s: float = 90.0, image_pull_s: float = 0.0,
                     consolidate_after_s: float = 300.0) -> tuple[pd.DataFrame, Figure]:
    """What :func:`provisioning_explorer` shows: paid against waited for 0 to 4 warm nodes, and one day's GPU states."""
    stages = Stages(initialized=float(initialized_s), image_pull=float(image_pull_s))
    table = warm_pool_table(range(0, 5), stages, float(consolidate_after_s))
    fig = Figure(figsize=(8.5, 3.2))
    ax = fig.subplots(1, 1)
    plots.gpu_states(warm_pool(warm_nodes, stages, float(consolidate_after_s)), ax=ax)
    ax.set_title(f"{warm_nodes} warm nodes: what the GPUs did over the day", fontsize=9)
    fig.subplots_adjust(left=0.08, right=0.8, bottom=0.16, top=0.88)
    return table, fig


def provisioning_explorer(warm_nodes: int = 0, initialized_s: float = 90.0, image_pull_s: float = 0.0,
                          consolidate_after_s: float = 300.0) -> Explorer:
    """Lesson 06's explorer: keep warm nodes or wait for new ones; GPU-hours paid against the gangs' waits.

    Sliders for the warm (always-on) 8-GPU nodes whose GPU states are drawn,
    the GPU-initialization stage, an image pull stage, and Karpenter's
    ``consolidateAfter``. Shows :func:`warm_pool_table` and the GPU states
    of one run (:func:`gangkit.results.plots.gpu_states`).
    """
    style = {"description_width": "12em"}
    layout = W.Layout(width="30em")

    def slider(description: str, value: float, lo: float, hi: float, step: float) -> W.FloatSlider:
        return W.FloatSlider(value=value, min=lo, max=hi, step=step, description=description, continuous_update=False,
                             readout_format=".0f", style=style, layout=layout)

    controls = {
        "warm_nodes": W.IntSlider(value=warm_nodes, min=0, max=4, description="warm nodes drawn", continuous_update=False,
                                  style=style, layout=layout),
        "initialized_s": slider("GPU initialization (s)", initialized_s, 0, 600, 30),
        "image_pull_s": slider("image pull (s)", image_pull_s, 0, 900, 60),
        "consolidate_after_s": slider("consolidateAfter (s)", consolidate_after_s, 0, 3600, 300),
    }
    return Explorer("Warm nodes or waiting",
                    "twelve gangs of 2 to 4 x 8 GPUs over one day, stack gang+karpenter; rows: number of warm "
                    "nodes (simulated figures; stage durations are assumptions).",
                    controls, render_warm_pool)
