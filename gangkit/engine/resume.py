"""Resuming a job from a live cluster's snapshot: the engine puts it back where the snapshot shows it.

A run from a snapshot (:mod:`gangkit.manifests.snapshot`, :mod:`gangkit.model.snapshot`)
starts from the middle of the film: some jobs hold quota, some pods are bound to
nodes and have run for a while. At time 0, before the first scheduling cycle, each
such job goes through every layer of the stack at once, each layer taking it up as
admitted or placed (``resume`` in :mod:`gangkit.engine.sockets`), and its pods are
bound to the nodes they were on. A job that was only waiting is submitted as usual.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from gangkit.engine.sockets import AdmissionLayer, PlacementLayer
from gangkit.engine.state import JobState, PodState
from gangkit.model.errors import problem

__all__ = ["SNAPSHOT_SEQ", "created_before", "resume_job"]

#: pods of a live cluster's snapshot queue before every pod made in the run: in its creation order, from -2**40
SNAPSHOT_SEQ = 2 ** 40


def resume_job(sim: Any, js: JobState, now: float) -> bool:
    """A job a live cluster's snapshot shows admitted or running takes up where it was (time 0), in ``sim``
    (the :class:`~gangkit.engine.simulation.Simulation`).

    Each admission layer takes it as admitted (:meth:`AdmissionLayer.resume`:
    Kueue reserves its quota as ``status.admission`` says); its pods are made and
    those the snapshot shows bound are bound to the same nodes, with the run time
    their containers have left (:class:`~gangkit.model.snapshot.JobSnapshot`);
    then the placement layer takes it up (:meth:`PlacementLayer.resume`: pods
    still Pending are queued). Returns False for a job with nothing to resume
    (no admission, no pod bound): it is submitted as any other.
    """
    snap = js.spec.snapshot
    if snap.admission is None and not snap.bound:
        return False
    for layer in sim.stack.admission:
        resume = getattr(layer, "resume", None)
        if resume is None:
            AdmissionLayer.resume(layer, sim, js, now)
        else:
            resume(sim, js, now)
    js.layer, js.layer_enter = "placement", now
    js.placing = True
    js.seq = sim._job_seq
    sim._job_seq += 1
    run_time = float(js.spec.run_time)
    i = 0
    for ps in js.spec.pod_sets:
        for _ in range(ps.count if js.admitted is None else js.admitted.count(ps)):
            ran = snap.elapsed[i] if i < len(snap.elapsed) else 0.0  # an independent pod's own time left
            js.pods.append(PodState(js, i, ps, f"{js.spec.name}-{i}", remaining=max(0.0, run_time - ran)))
            i += 1
    if js.admitted is not None and js.admitted.node_selector:  # the flavor's node labels, as _to_placement adds them
        for p in js.pods:
            labels = js.admitted.node_selector.get(p.pod_set.name)
            if labels:
                merged = dict(p.pod_set.node_selector)
                merged.update(labels)
                p.pod_set = dataclasses.replace(p.pod_set, node_selector=tuple(sorted(merged.items())))
    js.speed = len(js.pods) / js.spec.pod_count if js.spec.elastic else 1.0
    if snap.bound == len(js.pods):  # a sync job has progressed since its last pod started
        js.remaining = max(0.0, run_time - min(snap.elapsed)) if js.spec.progress == "sync" else run_time
    sim._create_pods([js], now)
    for p, node in zip(js.pods, snap.nodes):
        if node is None:
            continue
        st = sim.capacity.by_name[node]
        ps = p.pod_set
        if not st.fits(ps.gpus, ps.cpu, ps.memory, ()):
            raise problem(f"Job {js.spec.key}", f"snapshot.nodes[{p.index}]", f"pod {p.name} is bound to node "
                          f"{node}, which has no room left for it ({ps.gpus} GPUs, {ps.cpu:g} cores, {ps.memory} "
                          "bytes): the snapshot's pods on that node ask for more than it has")
        if not st.node.matches(ps.node_selector):
            raise problem(f"Job {js.spec.key}", f"snapshot.nodes[{p.index}]", f"pod {p.name} is bound to node "
                          f"{node}, whose labels do not match the pod's node selector {dict(ps.node_selector)}")
        sim.bind(p, st)
    placement = sim.stack.placement
    resume = getattr(placement, "resume", None)
    if resume is None:
        PlacementLayer.resume(placement, sim, js, now)
    else:
        resume(sim, js, now)
    return True


def created_before(sim: Any, jobs: list[JobState]) -> list[JobState]:
    """Pods a live cluster's snapshot shows take their place in the order they were created there
    (:attr:`~gangkit.model.snapshot.JobSnapshot.order`, before every pod made in the run); the jobs left."""
    rest = []
    for js in jobs:
        snap = js.spec.snapshot
        if snap is None or not snap.order or js.restarts:  # (pods made again after an eviction are the run's)
            rest.append(js)
            continue
        for p in js.pods:
            rank = snap.order[p.index] if p.index < len(snap.order) else None
            if p.node is None and not p.done:
                p.created = sim.env.now
            if rank is None:
                p.seq = sim._pod_seq
                sim._pod_seq += 1
            else:
                p.seq = rank - SNAPSHOT_SEQ
    return rest
