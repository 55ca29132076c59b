"""What the snapshot itself says about a new workload, before any sampling.

Submitted at the snapshot time, a new workload meets the cluster as the dump shows it. After the events
of time 0 (one run, with sample 0's run times: a job older than the default run time would otherwise end
at time 0) gangkit reads, per new workload:

- why it waits *now*: the diagnosis (:func:`gangkit.results.diagnosis.diagnose_job`), a code and message;
- whether it can *never* start (:data:`NEVER_CODES`: a pod larger than any node and than anything a node
  supplier can launch, the engine's ``Rejected``; a ClusterQueue whose quota can never hold it,
  ``QuotaTooSmall``), so that it is reported at once, without sampling;
- for a pod no node takes now, kube-scheduler's Filter verdict per node group
  (:func:`gangkit.analysis.predict.filters.node_filters`);
- its place in its ClusterQueue's queue, as Kueue's visibility API reports it (:func:`queue_positions`).

A node row names its pod set as the workload's own status does: where Kueue manages the workload, by the name of
the Workload's pod set (``main`` for a batch/v1 Job, Kueue v0.19 ``DefaultPodSetName``: the name in Kueue's
message), else by gangkit's name for it (``workers`` for a batch Job's pods) (:func:`pod_set_names`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from gangkit.analysis.predict.filters import node_filters, node_marks

#: the diagnosis codes that mean "never": no node could ever hold a pod; no quota could ever hold the workload
NEVER_CODES = ("Rejected", "QuotaTooSmall")


@dataclass(frozen=True)
class NewWorkload:
    """A workload of the workload files, as the scenario holds it: its position in ``scenario.jobs``, its key
    (``namespace/name``), the kind of its manifest and every toleration its pod templates carry."""

    index: int
    key: str
    kind: str
    tolerations: list[dict] = field(default_factory=list)


@dataclass
class AtSnapshot:
    """Per new workload's key: its diagnosis (``code``, ``message``), its node rows and queue position; and the
    keys of those that can never start."""

    reasons: dict[str, dict]
    nodes: dict[str, list[dict]]
    positions: dict[str, int]
    never: set[str]


def read_snapshot(scenario, first_sample, new: list[NewWorkload], dump_docs: list[dict]) -> AtSnapshot:
    """The snapshot after the events of time 0, in the run of ``first_sample`` (the scenario with sample 0's run
    times): each new workload's diagnosis, whether it can never start, and its filter rows if it has not started."""
    from gangkit.results.diagnosis import diagnose_job
    from gangkit.simulate import replay

    sim = replay(first_sample, 0.0)
    states = {js.spec.key: js for js in sim.all_jobs()}
    marks = node_marks(dump_docs)
    at = AtSnapshot({}, {}, queue_positions(scenario, [w.index for w in new]), set())
    for w in new:
        js = states[w.key]
        d = diagnose_job(sim, js, 0.0)
        at.reasons[w.key] = {"code": d.code, "message": d.message}
        if d.code in NEVER_CODES:
            at.never.add(w.key)
        rows: list[dict] = []
        if js.started_at is None:
            for ps, name in zip(scenario.jobs[w.index].pod_sets, pod_set_names(scenario, js)):
                rows.extend({**row, "pod_set": name} for row in node_filters(sim.capacity.nodes, ps, w.tolerations, marks))
        at.nodes[w.key] = rows
    return at


def pod_set_names(scenario, js) -> list[str]:
    """The names of a job's pod sets, in order, as its status names them: the pod sets of the Workload Kueue's job
    integration creates for it where Kueue is in the stack and manages the job
    (:func:`gangkit.kueue.layer.workload_for`: ``main`` for the one pod set of a batch/v1 Job), else gangkit's."""
    if "kueue" in scenario.settings.stack:
        from gangkit.kueue.layer import managed, workload_for

        if managed(js.spec):
            return [pss.name for pss in workload_for(js).pod_sets]
    return [ps.name for ps in js.spec.pod_sets]


def queue_positions(scenario, new_idx: list[int]) -> dict[str, int]:
    """Kueue's ``positionInClusterQueue`` (visibility API, ``PendingWorkload``; from 0) of each new workload at the
    snapshot: among the ClusterQueue's pending workloads (those without a reservation), ordered as Kueue's queue
    orders them, by priority (highest first), then by creation (the dump's waiting jobs, then the new ones in the
    order of their files). None for a workload Kueue does not manage (or a stack without Kueue)."""
    if "kueue" not in scenario.settings.stack or scenario.kueue is None:
        return {}
    lqs = {(lq.namespace, lq.name): lq.cluster_queue for lq in scenario.kueue.local_queues}

    def cq_of(j) -> str | None:
        if not j.kueue_managed:
            return None
        if j.snapshot is not None and j.snapshot.admission is not None:
            return None  # admitted: not pending
        return lqs.get((j.namespace or "default", j.queue))

    pending: dict[str, list[tuple]] = {}
    for k, j in enumerate(scenario.jobs):
        if j.snapshot is not None and (j.snapshot.admission is not None or j.snapshot.bound):
            continue
        cq = cq_of(j)
        if cq is not None:
            pending.setdefault(cq, []).append((-j.priority, k, j.key))
    out = {}
    for items in pending.values():
        for pos, (_, _, key) in enumerate(sorted(items)):
            out[key] = pos
    return {scenario.jobs[k].key: out[scenario.jobs[k].key] for k in new_idx if scenario.jobs[k].key in out}


def dump_time(scenario) -> str | None:
    """The dump's time (RFC 3339): the scenario's ``snapshot_time`` if it has one, else from the warning the reader
    leaves (``read as a snapshot taken at ...``); None when the files are no dump."""
    at = getattr(scenario, "snapshot_time", None)
    if at is not None:
        return str(at)
    marker = "read as a snapshot taken at "
    for w in scenario.warnings:
        text = str(w)
        if marker in text:
            return text.split(marker, 1)[1].split(" ", 1)[0]
    return None
