"""``gangkit check --simulate``: run the stack, and turn what went wrong in the run into findings.

Picture a fire drill after the inspection of the plans: the plans may all
agree and the building still jam at one door. The check builds the
scenario exactly as ``gangkit run`` does (:func:`gangkit.manifests.load_manifests`)
and runs it (:func:`gangkit.simulate`) through:

1. the stack given with ``--stack``; else
2. the ``Simulation`` object's ``spec.stack`` (what ``gangkit run`` uses); else
3. the stack the files' layers imply (:func:`implied_stack`): ``kueue+`` in
   front when they hold a ClusterQueue, the gang layer whose objects the
   Jobs use most (Volcano, Coscheduling, YuniKorn, the Workload API; none:
   ``pod``), ``+karpenter`` behind when they hold a NodePool, and
   ``kueue+provreq+autoscaler`` for a ClusterQueue with a ProvisioningRequest
   check and a ClusterAutoscaler.

From the result (:class:`gangkit.results.result.Result`) come findings with
the run's own numbers: a deadlock (who holds which GPUs, waiting for what),
a stall, each job never admitted (Kueue's reason) or never started (the
placement layer's reason), and each job an admission layer admitted before
its nodes existed, with the seconds it then waited for them (the node wait
buckets of :mod:`gangkit.engine.waits`). A job that a static error finding
already names is not reported again from the run.
"""

from __future__ import annotations

import math
import warnings
from collections import Counter

from gangkit.consistency.findings import ERROR, Finding
from gangkit.consistency.inventory import Inventory
from gangkit.engine.waits import NODE_BUCKETS
from gangkit.model.reading import GangkitInputWarning
from gangkit.model.scenario import Scenario
from gangkit.stacks import STACKS

__all__ = ["implied_stack", "run_findings"]

SUMMARY_FIGURES = ("deadlock", "stalled", "jobs_total", "jobs_finished", "jobs_deadlocked", "jobs_waiting_at_end",
                   "jobs_running_at_end", "jobs_deactivated", "jobs_rejected", "mean_wait_s", "max_wait_s", "makespan_s")


def _t(seconds: float) -> str:
    """Seconds for a sentence: whole seconds without an exponent (2592000, not 2.592e+06)."""
    return str(int(seconds)) if float(seconds).is_integer() else f"{seconds:.1f}"


def implied_stack(inv: Inventory) -> str:
    """The stack the files' layers imply (see the module docstring)."""
    kueue = bool(inv.kueue.cluster_queues)
    if kueue and inv.autoscaler is not None and inv.kueue.admission_checks:
        return "kueue+provreq+autoscaler"
    used = Counter(e.gang.layer for e in inv.jobs if e.gang is not None and not e.gang.missing)
    present = {"gang": bool(inv.of_role("Queue") or inv.of_role("VolcanoJob") or inv.of_role("PodGroup")),
               "coscheduling": bool(inv.of_role("CoschedulingPodGroup")), "yunikorn": used["yunikorn"] > 0,
               "kube-gang": bool(inv.of_role("KubeWorkload") or inv.of_role("KubePodGroup"))}
    layer_of = {"volcano": "gang", "coscheduling": "coscheduling", "yunikorn": "yunikorn", "kube-gang": "kube-gang"}
    ranked = sorted(present, key=lambda p: (-sum(n for layer, n in used.items() if layer_of[layer] == p),
                                            list(present).index(p)))
    placement = next((p for p in ranked if present[p]), "pod")
    name = ("kueue+" if kueue else "") + placement + ("+karpenter" if inv.of_role("NodePool") else "")
    return name if name in STACKS else ("kueue+" if kueue else "") + placement


def _names(inv: Inventory, scenario: Scenario) -> dict[str, str]:
    """Each simulated job's key -> how findings name it."""
    by_key = {}
    for e in inv.jobs:
        key = f"{e.obj.namespace}/{e.obj.name}" if e.obj.namespace else e.obj.name
        by_key.setdefault(key, e.name)
    return {j.key: by_key.get(j.key, f"Job {j.key} (from a WorkloadGenerator)") for j in scenario.jobs}


def run_findings(inv: Inventory, scenario: Scenario, stack: str, named: set[str]) -> tuple[list[Finding], dict]:
    """Simulate ``scenario`` through ``stack``: the run's findings, and the figures for the report's summary.

    ``named``: jobs a static error finding names already (not reported again).
    """
    from gangkit.simulate import simulate

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", GangkitInputWarning)
        result = simulate(scenario, stack=stack)
    figures = result.summary()
    names = _names(inv, scenario)
    jobs = result.jobs
    out: list[Finding] = []
    covered: set[str] = set(named)
    if result.deadlock:
        holders = list(result.holders.itertuples())
        who = [names.get(h.job, h.job) for h in holders]
        covered.update(who)
        out.append(Finding(
            "run-deadlocked", tuple(who),
            f"the run ({stack}) deadlocked at t={_t(figures['deadlock_at_s'])} s: "
            + "; ".join(f"{names.get(h.job, h.job)} holds {h.gpus_held} GPUs on {h.nodes} and waits for {h.waiting_pods}"
                        for h in holders) + ".",
            "place each gang all or nothing (a gang layer, e.g. --stack gang), or make the gangs fit the nodes",
            (), {"deadlock_at_s": figures["deadlock_at_s"], "gpus_held": {names.get(h.job, h.job): int(h.gpus_held)
                                                                         for h in holders}}))
    waiting = jobs[jobs["state"] == "WaitingAtEnd"] if len(jobs) else jobs
    if figures.get("stalled") and len(waiting):
        who = [names.get(j, j) for j in waiting["job"]]
        covered.update(who)
        reasons = Counter(str(r) for r in waiting["reason"] if r)
        out.append(Finding(
            "run-stalled", tuple(who),
            f"the run ({stack}) stalled: no job started or finished in its last {_t(scenario.settings.stall_window)} s "
            f"(it ended at t={_t(figures['makespan_s'])} s) while {len(who)} job(s) waited"
            + (f"; most often: {reasons.most_common(1)[0][0]}" if reasons else "") + ".",
            "look at the reason: a timeout that cannot be met, or a gang that can never fit, repeats for ever",
            (), {"makespan_s": figures["makespan_s"], "waiting_jobs": len(who)}))
    out.extend(_per_job(result, names, covered, stack))
    summary = {"stack": stack, **{k: figures[k] for k in SUMMARY_FIGURES if k in figures}}
    return out, summary


def _per_job(result, names: dict[str, str], covered: set[str], stack: str) -> list[Finding]:
    jobs = result.jobs
    if not len(jobs):
        return []
    node_cols = [f"wait_{b}_s" for b in NODE_BUCKETS if f"wait_{b}_s" in jobs.columns]
    admission_cols = [c for c in ("wait_quota_s", "wait_admission_check_s") if c in jobs.columns]
    out = []
    for row in jobs.to_dict("records"):
        name = names.get(row["job"], row["job"])
        reason = str(row.get("reason") or "")
        if name in covered or "NotSubmitted" in reason:
            continue
        never = row["state"] in ("WaitingAtEnd", "Deactivated", "Rejected") and math.isnan(row["start_s"])
        if never:
            in_admission = reason.startswith(("[quota]", "[admission_check]"))
            code = "run-never-admitted" if in_admission else "run-never-started"
            wait = row["wait_s"]
            waited = "" if isinstance(wait, float) and math.isnan(wait) else f" after waiting {_t(wait)} s"
            out.append(Finding(
                code, (name,),
                f"{name} never {'got past its admission layer' if in_admission else 'started'} in the run ({stack}): "
                f"{row['state']}{waited}" + (f"; {reason}" if reason else "") + ".",
                "read the reason: it names the layer and what it waits for",
                (), {"state": row["state"], "wait_s": None if waited == "" else wait}))
            continue
        node_wait = sum(row[c] for c in node_cols if not math.isnan(row[c]))
        if admission_cols and not math.isnan(row["start_s"]) and node_wait > 0:
            admitted = row["submit_s"] + sum(row[c] for c in admission_cols if not math.isnan(row[c]))
            parts = ", ".join(f"{c[5:-2]} {_t(row[c])} s" for c in node_cols if row[c])
            out.append(Finding(
                "run-waited-for-nodes", (name,),
                f"{name} was admitted at t={_t(admitted)} s and then waited {_t(node_wait)} s for nodes ({parts}) before "
                f"it started at t={_t(row['start_s'])} s, holding its quota meanwhile.",
                "size the quota to the nodes there are, or keep warm nodes for the queue",
                (), {"admitted_s": admitted, "node_wait_s": node_wait, "start_s": row["start_s"]}))
    return out


def static_errors(findings: list[Finding]) -> set[str]:
    """The objects static error findings name (the run does not report them again)."""
    return {o for f in findings if f.severity == ERROR for o in f.objects}
