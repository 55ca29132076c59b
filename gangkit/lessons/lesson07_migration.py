"""Lesson 07's migration: what each wrong choice does, the manifests before and after, what ``gangkit check`` finds.

A migration to gang admission adds settings (a gang size, a quota, an admission timeout, a second queue,
a NodePool limit, an instance type, a ProvisioningRequest), and each fails in its own way when it is
chosen wrong. :data:`MISTAKES` lists them, each with the stack it runs under and the right choice;
:func:`mistake_scenario` builds the small scenario that shows one, :func:`mistake_table` runs them all
(the job's fate, evictions, GPU-hours held idle, the diagnosis), :func:`signals` names the real metric
that shows each (as the project exports it) and :func:`eviction_cycle` follows the waitForPodsReady
mistake event by event. :func:`migration_manifests` writes one training job before (a plain
``batch/v1`` Job) and after, in each gang scheduler's form; :func:`check_table` is what
``gangkit check`` finds in the stack files of ``examples/migration/`` before anything runs.
The decision experiment (does a gang layer pay at all?) is :mod:`gangkit.lessons.lesson07`.
All figures are simulated by gangkit, never measured on a real cluster.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import pandas as pd

from gangkit.kueue.objects import (
    GPU,
    ClusterQueue,
    FlavorQuotas,
    KueueConfig,
    KueueSetup,
    LocalQueue,
    Quota,
    ResourceFlavor,
    ResourceGroup,
)
from gangkit.kueue.provisioning import AdmissionCheck, ProvisioningRequestConfig
from gangkit.lessons import lesson06
from gangkit.manifests.dump import dump_manifests, select_documents
from gangkit.model.jobs import JOBSET, job
from gangkit.model.nodes import nodes
from gangkit.model.resources import Resources
from gangkit.model.scenario import Scenario
from gangkit.simulate import simulate
from gangkit.supply.autoscaler import ClusterAutoscaler, NodeGroup
from gangkit.volcano.api import Queue, VolcanoSetup


# ------------------------------------------------------------------ what a wrong choice does
def team_kueue(quota: int, config: KueueConfig | None = None) -> KueueSetup:
    """One ClusterQueue ``team`` with ``quota`` GPUs, its LocalQueue ``default``, and Kueue settings ``config``."""
    cq = ClusterQueue("team", [ResourceGroup((GPU,), (FlavorQuotas("gpu", {GPU: Quota(quota)}),))])
    return KueueSetup([ResourceFlavor("gpu")], [cq], [LocalQueue("default", "default", "team")],
                      config=config or KueueConfig())


def _train(**extra):
    return job("train", pods=4, gpus=8, run_time=3600, **extra)


#: Each wrong choice a migration can make: (what was chosen, the stack it runs under, the right choice).
MISTAKES: dict[str, tuple[str, str]] = {
    "minMember below what the job needs": ("gang", "minMember = all workers of a synchronous job"),
    "quota smaller than the gang": ("kueue+gang", "nominalQuota (plus what may be borrowed) at least the gang"),
    "waitForPodsReady shorter than node start": ("kueue+gang+karpenter",
                                                  "timeout longer than the nodes' launch-to-ready time"),
    "Volcano queue smaller than Kueue's quota": ("kueue+gang", "one layer owns the quota; the other has no cap"),
    "NodePool limit below the gang": ("kueue+gang+karpenter", "NodePool limits at least the largest gang"),
    "pod larger than any instance type": ("kueue+gang+karpenter", "an instance type that holds one whole pod"),
    "ProvisioningRequest that cannot hold the gang": ("kueue+provreq+autoscaler",
                                                      "a node group whose max size holds the whole gang"),
}


def mistake_scenario(mistake: str) -> Scenario:
    """The small scenario that shows ``mistake`` (a key of :data:`MISTAKES`)."""
    if mistake == "minMember below what the job needs":
        jobs = [job("C", pods=2, gpus=1, run_time=300)]
        jobs += [job(name, pods=4, gpus=1, run_time=600, min_member=2, submit_time=t) for name, t in (("A", 1), ("B", 2))]
        return Scenario(nodes(4, gpus=1), jobs, name="min-member-too-small",
                        description="4 nodes x 1 GPU; C: 2 pods for 300 s; then A and B: 4 synchronous workers "
                                    "x 1 GPU each, minMember 2")
    if mistake == "quota smaller than the gang":
        return Scenario(nodes(4, gpus=8), [_train()], kueue=team_kueue(16), name="quota-too-small",
                        description="4 nodes x 8 GPUs; ClusterQueue team: 16 GPUs; train: 4 workers x 8 GPUs")
    if mistake == "waitForPodsReady shorter than node start":
        sc = lesson06.from_zero()
        sc.kueue = team_kueue(64, KueueConfig(pods_ready_timeout=120.0, backoff_limit_count=3))
        sc.karpenter = lesson06.karpenter(consolidate_after=0.0)  # Karpenter v1's default consolidateAfter: 0s
        sc.name, sc.description = "pods-ready-too-short", ("no GPU node at t=0; Karpenter nodes ready 150 s after "
                                                           "launch, consolidateAfter 0s; waitForPodsReady timeout "
                                                           "120 s, backoffLimitCount 3")
        return sc
    if mistake == "Volcano queue smaller than Kueue's quota":
        volcano = VolcanoSetup([Queue("default", capability=Resources(16, 0.0, 0))])
        return Scenario(nodes(4, gpus=8), [_train()], kueue=team_kueue(32), volcano=volcano, name="two-quotas",
                        description="4 nodes x 8 GPUs; ClusterQueue team: 32 GPUs; Volcano queue default: "
                                    "capability 16 GPUs; train: 4 workers x 8 GPUs")
    if mistake == "NodePool limit below the gang":
        sc = lesson06.from_zero(limit=16)
        sc.name = "nodepool-limit"
        return sc
    if mistake == "pod larger than any instance type":
        sc = Scenario(lesson06.from_zero().nodes, [job("train", pods=2, gpus=16, run_time=3600)],
                      kueue=team_kueue(64), karpenter=lesson06.karpenter(), name="pod-too-big",
                      description="no GPU node at t=0; instance types of 8 GPUs; train: 2 workers x 16 GPUs")
        return sc
    if mistake == "ProvisioningRequest that cannot hold the gang":
        ca = ClusterAutoscaler([NodeGroup("gpu-8", lesson06.G8, max_size=2)], provisioning_request_expiry=1800.0)
        check = AdmissionCheck(config=ProvisioningRequestConfig(backoff_limit_count=3))
        return Scenario(lesson06.from_zero().nodes, [_train()], kueue=team_kueue(64), autoscaler=ca, admission_check=check,
                        name="provreq-too-small", description="no GPU node at t=0; node group gpu-8 of at most 2 "
                        "nodes x 8 GPUs; train: 4 workers x 8 GPUs")
    raise ValueError(f"unknown mistake {mistake!r}; expected one of {', '.join(MISTAKES)}")


#: How long each mistake's scenario runs (simulated seconds).
MISTAKE_HORIZON = 7200.0


@lru_cache(maxsize=16)
def mistake_run(mistake: str):
    """:func:`mistake_scenario` under its stack, for :data:`MISTAKE_HORIZON` seconds."""
    return simulate(mistake_scenario(mistake), stack=MISTAKES[mistake][0], horizon=MISTAKE_HORIZON)


def _evictions(result) -> int:
    ev = result.events
    return int((ev["event"] == "evicted").sum()) if not ev.empty else 0


def mistake_table(at: float = 3000.0) -> pd.DataFrame:
    """Each mistake: its stack, the first job's fate, evictions, GPU-hours held idle, and the diagnosis at ``at``."""
    rows = []
    for mistake, (stack, fix) in MISTAKES.items():
        r = mistake_run(mistake)
        s = r.summary()
        table = r.diagnose(at=at).table
        waiting = table[table["code"] != "Finished"]
        diag = (waiting if not waiting.empty else table).iloc[-1]  # the job the mistake is about
        outcome = ("deadlock" if s["deadlock"] else "finished" if s["jobs_finished"] == s["jobs_total"]
                   else "deactivated" if s["jobs_deactivated"] else "never started" if s["useful_gpu_seconds"] == 0
                   else "waiting")
        launched = int((r.events["event"] == "node_launched").sum()) if not r.events.empty else 0
        rows.append({"mistake": mistake, "stack": stack, "outcome": outcome, "evictions": _evictions(r),
                     "nodes_launched": launched,
                     "held_idle_gpu_h": round(s["held_idle_gpu_seconds"] / 3600.0, 2),
                     "layer": diag["layer"], "code": diag["code"], "fix": fix})
    return pd.DataFrame(rows).set_index("mistake")


# ------------------------------------------------------------------ manifests before and after
#: The forms one training job takes, as gangkit writes them: the job's gang settings per target, whether
#: Kueue's queue and quota objects come with it, and the stack that runs it (which decides the pods'
#: ``schedulerName`` and the form of a gang that is only a size: :mod:`gangkit.manifests.dump`).
MIGRATION_TARGETS: dict[str, tuple[dict, bool, str]] = {
    "default scheduler": ({}, False, "pod"),
    "Kueue + Volcano PodGroup": ({"min_member": 4}, True, "kueue+gang"),
    "Volcano Job": ({"controller": "volcano"}, False, "gang"),
    "scheduler-plugins PodGroup": ({"schedule_timeout": 60.0}, False, "coscheduling"),
    "YuniKorn task group": ({"placeholder_timeout": 60.0}, False, "yunikorn"),
    "Kubernetes Workload": ({"min_member": 4}, False, "kube-gang"),
    "Kueue + JobSet": ({"framework": JOBSET}, True, "kueue+pod"),
}


def migration_manifests(before: bool = False, target: str | None = None) -> str:
    """One training job (4 workers x 8 GPUs) as manifests, in the form of ``target`` (a key of :data:`MIGRATION_TARGETS`).

    ``before=True`` is the plain batch/v1 Job for the default scheduler; without a target, the
    default after-form is Kueue in front of a Volcano PodGroup.
    """
    target = "default scheduler" if before else (target or "Kueue + Volcano PodGroup")
    if target not in MIGRATION_TARGETS:
        raise ValueError(f"unknown target {target!r}; expected one of {', '.join(MIGRATION_TARGETS)}")
    fields, queued, stack = MIGRATION_TARGETS[target]
    sc = Scenario(nodes(1, gpus=8), [_train(**fields)], kueue=team_kueue(32) if queued else None,
                  name=target.lower().replace(" ", "-").replace("+", "and"))
    return dump_manifests(sc.with_settings(stack=stack))


def migration_table() -> pd.DataFrame:
    """Per target: the objects gangkit writes for the job (kind and apiVersion), and where the gang size sits."""
    import yaml

    where = {"default scheduler": "nowhere: every pod on its own",
             "Kueue + Volcano PodGroup": "PodGroup spec.minMember",
             "Volcano Job": "Volcano Job spec.minAvailable",
             "scheduler-plugins PodGroup": "PodGroup spec.minMember (+ scheduleTimeoutSeconds)",
             "YuniKorn task group": "pod annotation yunikorn.apache.org/task-groups: minMember",
             "Kubernetes Workload": "Workload spec.podGroups[].policy.gang.minCount",
             "Kueue + JobSet": "nowhere: Kueue admits the JobSet's Workload whole, then pod by pod"}
    rows = []
    for target in MIGRATION_TARGETS:
        docs = [d for d in yaml.safe_load_all(migration_manifests(target=target)) if d]
        objects = [f"{d['kind']} ({d['apiVersion']})" for d in docs if d["kind"] not in ("Node", "Simulation")]
        rows.append({"target": target, "objects": ", ".join(objects), "gang size": where[target]})
    return pd.DataFrame(rows).set_index("target")



# ------------------------------------------------------------------ evidence: the metric that shows each mistake, the eviction cycle
def _last(result, name: str, column: str = "value", **labels):
    t = result.metric(name)
    for key, value in labels.items():
        t = t[t[key] == value]
    return t[column].iloc[-1] if len(t) else 0


def signals() -> pd.DataFrame:
    """For each mistake: the real metric (name as the project exports it) that shows it in the run, and its value.

    Read from gangkit's copies of those metrics (:meth:`gangkit.Result.metric`). Where no layer's
    metric shows the failure, the row says so and gives gangkit's own figure instead.
    """
    rows = []
    for mistake in MISTAKES:
        r = mistake_run(mistake)
        if mistake == "minMember below what the job needs":
            rows.append((mistake, "Volcano", "volcano_unschedule_job_count", int(_last(r, "volcano_unschedule_job_count")),
                         "0: Volcano sees nothing wrong; only the GPUs' own utilization shows it "
                         f"(gangkit: {r.summary()['held_idle_gpu_seconds'] / 3600:.2f} GPU-hours held idle)"))
        elif mistake == "quota smaller than the gang":
            rows.append((mistake, "Kueue", "kueue_pending_workloads{status=inadmissible}",
                         int(_last(r, "kueue_pending_workloads", "inadmissible")), "1 workload parked for good"))
        elif mistake == "waitForPodsReady shorter than node start":
            ev = r.metric("kueue_evicted_workloads_total")
            rows.append((mistake, "Kueue", "kueue_evicted_workloads_total{reason=PodsReadyTimeout}",
                         int(ev["count"].sum()), "evictions while nodes boot"))
            rows.append((mistake, "Karpenter", "karpenter_nodeclaims_created_total",
                         int(_last(r, "karpenter_nodeclaims_created_total")), "nodes launched for nothing"))
        elif mistake == "Volcano queue smaller than Kueue's quota":
            rows.append((mistake, "Volcano", "volcano_unschedule_job_count",
                         int(r.metric("volcano_unschedule_job_count")["value"].max()), "Kueue admitted it; Volcano does not place it"))
        elif mistake == "NodePool limit below the gang":
            rows.append((mistake, "Karpenter", "karpenter_nodepools_usage / karpenter_nodepools_limit",
                         f"{int(r.metric('karpenter_nodepools_usage')['value'].max())} / "
                         f"{int(_last(r, 'karpenter_nodepools_limit'))}", "the pool is at its limit"))
        elif mistake == "ProvisioningRequest that cannot hold the gang":
            ev = r.metric("kueue_evicted_workloads_total")
            rows.append((mistake, "Kueue", "kueue_evicted_workloads_total{reason=AdmissionCheck}",
                         int(ev.loc[ev["reason"] == "AdmissionCheck", "count"].sum()),
                         "the check failed each attempt: the ProvisioningRequest's reason is "
                         f"{r.metric('gangkit_provisioning_requests')['reason'].iloc[-1]}"))
        else:
            rows.append((mistake, "Karpenter", "karpenter_nodeclaims_created_total",
                         int(_last(r, "karpenter_nodeclaims_created_total")),
                         "no node launched: no instance type holds one pod"))
    return pd.DataFrame(rows, columns=["mistake", "layer", "metric", "value", "what it says"]).set_index("mistake")


def eviction_cycle(until: float = 900.0) -> pd.DataFrame:
    """The waitForPodsReady mistake's events up to ``until``: admissions, evictions and the nodes they launch and lose."""
    ev = mistake_run("waitForPodsReady shorter than node start").events
    keep = ev[ev["event"].isin(["admitted", "evicted", "deactivated", "node_launched", "node_ready", "node_removed"])
              & (ev["time_s"] <= until)]
    out = keep.groupby(["time_s", "event"], sort=False).agg(nodes=("node", lambda s: sum(1 for n in s if n)),
                                                               detail=("detail", "first")).reset_index()
    return out.set_index("time_s")


def manifest_docs(text: str, kinds=("ResourceFlavor", "ClusterQueue", "LocalQueue", "Job", "PodGroup")) -> str:
    """Only the documents of ``kinds`` from a multi-document YAML text (:func:`gangkit.manifests.dump.select_documents`)."""
    return select_documents(text, kinds)


# ------------------------------------------------------------------ gangkit check, before anything runs
#: The stack files of ``examples/migration/`` (in the source checkout): the clean stack, then one file per mistake.
MIGRATION_FILES: dict[str, str] = {
    "after.yaml": "none: the clean stack",
    "min-member-too-small.yaml": "minMember below what the job needs",
    "quota-too-small.yaml": "quota smaller than the gang",
    "pods-ready-too-short.yaml": "waitForPodsReady shorter than node start",
    "two-quotas.yaml": "Volcano queue smaller than Kueue's quota",
    "nodepool-limit.yaml": "NodePool limit below the gang",
    "pod-too-big.yaml": "pod larger than any instance type",
}


def migration_examples() -> Path:
    """The folder ``examples/migration`` of the source checkout, where lesson 07's stack files are."""
    folder = Path(__file__).resolve().parents[2] / "examples" / "migration"
    if not folder.is_dir():
        raise FileNotFoundError(f"lesson 07's stack files are not at {folder}: they ship with the source checkout "
                                "(clone the repository and install it with pip install -e .)")
    return folder


def check_table() -> pd.DataFrame:
    """For each file of :data:`MIGRATION_FILES`: what ``gangkit check`` finds before running, and what ``--simulate`` adds."""
    from gangkit.consistency import check_manifests

    rows = []
    for name, mistake in MIGRATION_FILES.items():
        path = migration_examples() / name
        before = check_manifests(path)
        after = check_manifests(path, simulate=True)
        static = {(f.code, f.severity) for f in before}
        added = sorted(f"{f.code} ({f.severity})" for f in after if (f.code, f.severity) not in static)
        rows.append({"file": name, "mistake": mistake,
                     "found before running": ", ".join(sorted(f"{c} ({s})" for c, s in static)) or "nothing",
                     "--simulate adds": ", ".join(added) or "nothing"})
    return pd.DataFrame(rows).set_index("file")
