"""Gang jobs derived from single pods by a stated, seeded rule (an *invented* gang mix).

The Alibaba openb trace (:mod:`gangkit.workloads.alibaba`) has single pods, not gangs: nothing in it
says which pods must start together. :func:`derive_gangs` groups its one-pod jobs into gangs by a rule
the caller names and a seed; the gangs are about the rule as much as about the trace.
"""

from __future__ import annotations

from gangkit.model.errors import Problem, ScenarioError
from gangkit.model.jobs import Job, PodSet

__all__ = ["derive_gangs"]


def derive_gangs(
    jobs: list[Job],
    rule: str = "consecutive",
    *,
    sizes: tuple[int, ...] = (2, 4, 8),
    window: float = 60.0,
    seed: int = 0,
) -> list[Job]:
    """Group one-pod jobs (Alibaba openb) into gang jobs by a stated, seeded rule.

    **The trace does not say which pods belong together; this rule invents
    it.** A result built on derived gangs is about the rule as much as about
    the trace: say which rule and seed you used.

    Rule ``"consecutive"`` (the only one): take the jobs in submit order
    (ties by name). Each new group draws a target size from ``sizes`` with a
    ``random.Random(seed)``. The next pod joins the open group when it has
    exactly the same request (GPUs, CPU, memory, node selector), was
    submitted within ``window`` seconds of the group's first pod, and the
    group is below its target size; otherwise the group closes and the pod
    opens a new one. A group of ``n > 1`` pods becomes one sync Job
    ``gang-<first pod>`` of ``n`` identical pods with ``min_member = n``,
    submitted with its first pod, running as long as its longest member
    (a sync job ends with its last worker), labels of the first pod plus
    ``derived-gang-size``. Groups of one, jobs with several pods and
    0-GPU pods are returned unchanged. Same jobs, rule and seed: same gangs.
    """
    import random

    if rule != "consecutive":
        raise ScenarioError([Problem("derive_gangs", "rule", f"expected 'consecutive', got {rule!r}")])
    if not sizes or any(not isinstance(k, int) or k < 1 for k in sizes):
        raise ScenarioError([Problem("derive_gangs", "sizes", f"expected whole numbers >= 1, got {sizes!r}")])
    if not (isinstance(window, (int, float)) and window >= 0):
        raise ScenarioError([Problem("derive_gangs", "window", f"expected seconds >= 0, got {window!r}")])
    rng = random.Random(seed)
    out: list[Job] = []
    group: list[Job] = []
    target = 0

    def close() -> None:
        if len(group) == 1:
            out.append(group[0])
        elif group:
            first, n = group[0], len(group)
            ps = first.pod_sets[0]
            out.append(Job(
                name=f"gang-{first.name}",
                pod_sets=[PodSet(ps.name, n, ps.gpus, ps.cpu, ps.memory, ps.node_selector)],
                run_time=max(j.run_time for j in group),
                submit_time=first.submit_time,
                priority=first.priority,
                queue=first.queue,
                progress="sync",
                min_member=n,
                namespace=first.namespace,
                labels={**first.labels, "derived-gang-size": str(n)},
            ))
        group.clear()

    for j in sorted(jobs, key=lambda j: (j.submit_time, j.name)):
        if j.pod_count != 1 or len(j.pod_sets) != 1 or j.gpus == 0:
            close()
            out.append(j)
            continue
        if (group and len(group) < target and j.pod_sets[0].request == group[0].pod_sets[0].request
                and j.submit_time - group[0].submit_time <= window):
            group.append(j)
            continue
        close()
        group.append(j)
        target = rng.choice(sizes)
    close()
    return out
