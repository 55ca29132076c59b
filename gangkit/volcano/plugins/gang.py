"""When a Volcano gang is *ready*: enough pods, and enough of each role.

A string quartet can rehearse with four players, but not with four
violinists: each part must be there. A PodGroup says how many pods make the
gang (``minMember``) and may say how many of each role (``minTaskMember``,
a Volcano Job task's ``minAvailable``): a job with a master and workers is
ready only when the master *and* enough workers are placed.

The gang plugin's JobReadyFn (Volcano ``pkg/scheduler/plugins/gang``,
``JobInfo.IsReady`` and ``CheckTaskReady`` in ``pkg/scheduler/api/job_info.go``):
ready when placed pods >= ``minMember`` and, for every role with a minimum,
placed pods of that role >= its minimum. Volcano skips the per-role check
when ``minMember`` is below the sum of the role minimums; so does gangkit.
Pods of a role are the pods of one :class:`~gangkit.model.jobs.PodSet`.

The plugin's JobValidFn (:func:`job_valid`) comes first: a job with fewer pods
than ``minMember`` is never allocated, whatever the free room.
"""

from __future__ import annotations

from collections import Counter
from typing import Iterable

from gangkit.engine.state import JobState, PodState
from gangkit.model.reasons import Reason


def role_minimums(js: JobState) -> dict[str, int]:
    """Role -> minTaskMember, or nothing when the per-role check does not apply."""
    mins = js.spec_role_minimums  # the spec's, kept on the job: gang_ready asks for them several times per session
    if mins is None:
        mins = js.spec_role_minimums = {ps.name: ps.min_member for ps in js.spec.pod_sets if ps.min_member is not None}
    if not mins or js.gang_size < sum(mins.values()):
        return {}
    return mins


def ready_pods(js: JobState) -> int:
    """Pods that count towards the gang: bound or already finished (Volcano's ReadyTaskNum counts Succeeded)."""
    return js.bound + js.pods_done


def gang_ready(js: JobState, extra: Iterable[PodState] = ()) -> bool:
    """Would the job be ready with its bound (or finished) pods plus ``extra`` ones placed?"""
    if type(extra) is not list:
        extra = list(extra)
    if js.bound + js.pods_done + len(extra) < js.gang_size:  # ready_pods(js), inline: asked twice per placed job
        return False
    if js.spec_role_minimums == {}:  # no role has a minimum (role_minimums keeps that on the job)
        return True
    mins = role_minimums(js)
    if not mins:
        return True
    placed = Counter(p.pod_set.name for p in js.pods if p.node is not None or p.done)
    placed.update(p.pod_set.name for p in extra)
    return all(placed[role] >= m for role, m in mins.items())


def job_valid(js: JobState) -> Reason | None:
    """The gang plugin's JobValidFn: None when the job is valid, else why allocate skips it.

    Volcano v1.15.1 ``pkg/scheduler/plugins/gang/gang.go``: a job is invalid
    when its valid tasks (``JobInfo.ValidTaskNum``: its pods Pending, allocated
    or Succeeded, i.e. every pod that exists here) are fewer than the
    PodGroup's ``minMember`` (reason ``NotEnoughTasks``, message "Not enough
    valid tasks for gang-scheduling, valid: N, min: M"); the allocate action
    skips an invalid job in every session, so its pods stay Pending (the
    reason is only in the scheduler's log; the PodGroup gets the gang
    plugin's usual "tasks in gang unschedulable" condition at session
    close). Only a
    PodGroup whose ``minMember`` exceeds the job's pods gets here in gangkit:
    nothing checks a PodGroup against its pods (a Volcano Job's own
    ``minAvailable`` is refused above its replicas by Volcano's webhook). A
    job that Kueue's partial admission shrank is measured against the pods
    it has (:attr:`~gangkit.engine.state.JobState.gang_size`), a
    simplification kept from before.
    """
    k, n = js.gang_size, len(js.pods)
    if n >= k:
        return None
    return Reason("placement", "NotEnoughPods",
                  f"{js.spec.gang_label()} has minMember {k} but only {n} pods; Volcano's gang plugin finds the job "
                  f"invalid (NotEnoughTasks: \"Not enough valid tasks for gang-scheduling, valid: {n}, min: {k}\") and "
                  f"allocate skips it in every session", {"min_member": k, "pods": n})
