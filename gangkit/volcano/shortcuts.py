"""Volcano's fast paths: gangkit's exact shortcuts in the gang layer, not Volcano's.

Volcano's own steps are told where they live (:mod:`gangkit.volcano.actions.allocate`,
:mod:`gangkit.volcano.scheduler`, :mod:`gangkit.volcano.cache`); this module says
what each shortcut of :class:`gangkit.model.fast_paths.FastPaths` saves there and
why the result stays the same to the last bit (``tests/engine/test_fast_paths.py`` runs
every case with all of them, with none and with each one alone). Each is
marked in one line where it hooks in (``# fast path: <name>``).

**skip_clean_sessions** (the scheduler): a session that can only repeat the last
one is skipped (:meth:`gangkit.volcano.scheduler.VolcanoGang.clean` gives the
conditions). **keep_shapes** and **count_lines** (the cache): a job's shape is
kept until its pods may change, and the lines of waiting PodGroups are counted
as jobs come and go rather than scanned per session (:mod:`gangkit.volcano.cache`).
**reservation_shortcuts** (easy- and conservative-backfill): the reservation
book's memos per shape and its cheap tests before the search
(:mod:`gangkit.volcano.reservations`).

**skip_repeated_failures** (allocate): a shape's head whose trial failed is not
tried again while the free room has not grown since
(``FreeCapacity.grow_version``), no queue figures apply (``ssn.attrs`` is
None), the node sizes keep a trial's give-back exact
(``FreeCapacity.exact_amounts``) and the shape is monotone (:func:`gangkit.volcano.cache.monotone`):
such a trial can only fail again, and a failed trial leaves nothing behind,
so the result is the same. Without it every head is tried, as Volcano
does.

**remember_shortfall** needs no monotone shape: :func:`~gangkit.volcano.actions.allocate.place_gang` refuses a job
before any trial when its smallest waiting pods, as many as the gang still
needs, ask for more GPUs than are free. That refusal reads the free GPU count
alone, so the figure is kept for the job (``JobCache.shortfall``) and, while
the job heads its line unchanged, its next visits compare the free GPUs with
the figure instead of gathering its pods again (without it,
:func:`~gangkit.volcano.actions.allocate.place_gang` is asked every time). Both stay exact with pods of a
one-per-node pod set (``PodSet.one_per_node``): their shapes are never
monotone, so the first shortcut leaves them alone, and the rule only takes
nodes away, so too few free GPUs still means no trial can succeed.

**keep_trials**: a trial that makes the gang ready is committed, and its pods are
bound with the resources the trial took, rather than given
back and taken again, when the give-back is exact
(:func:`gangkit.volcano.session.keeps_exactly`): both leave every free amount
the same to the last bit, and neither changes ``grow_version``.

**count_fits**: a gang that still needs two pods or more, whose waiting pods are
identical and ask for GPUs alone, is refused without a trial when the nodes
could take fewer of them than it needs
(:func:`too_few_fit`; :meth:`gangkit.engine.capacity.FreeCapacity.pods_that_fit`
counts ``free // gpus`` over the nodes). The free GPUs may be enough in total
and still be split between nodes: the trial would place that many pods
wherever ``choose`` put them, fail, and give back exactly what it took. (A
gang that needs one pod more is left to its trial: one ``choose`` that finds
no node costs no more than the count.)

**direct_commit**: when a kept trial (keep_trials) is for a job whose readiness is
a count of pods (no role minimums) and no queue figures apply, the turn, the
gang check and the commit are one pass
(:func:`trial_and_commit`): the same nodes in the same order, the same
binds, without going through :func:`~gangkit.volcano.session.trial`'s
general loop (queue figures, role counts).

The first four refuse only a job that is not yet ready (one whose turn
needs ``need`` pods at once): they stay exact with turns that stop at
readiness and go on past a pod that fits nowhere, since they show that no
``need`` of the job's waiting pods can be placed at all.
"""

from __future__ import annotations

from gangkit.engine.state import JobState, PodState
from gangkit.volcano.session import Session, Worksheet, give_back


def too_few_fit(cap, waiting: list[PodState], need: int) -> bool:
    """count_fits: the waiting pods are identical GPU-only pods and the nodes could take fewer than ``need``."""
    return _uniform_gpu_pods(cap, waiting) and cap.pods_that_fit(waiting[0].pod_set.gpus, need) < need


def trial_and_commit(ssn: Session, js: JobState, ws: Worksheet) -> int | None:
    """direct_commit: :func:`~gangkit.volcano.session.trial` with ``keep`` and the worksheet, the gang check
    and :meth:`~gangkit.volcano.session.Session.commit` in one pass, for a job whose readiness is a count of
    pods (no role minimums) and no queue figures: the pods go where ``trial`` would put them, in the same
    order, the turn stops when ``need`` are placed, and then they are bound with what they took, else given
    back."""
    cap = ssn.sim.capacity
    need = ws.need
    pods, i, failed = ws.pods, ws.at, ws.failed
    n = len(pods)
    placed = []
    while i < n:
        p = pods[i]
        i += 1
        ps = p.pod_set
        if ps.name in failed:
            continue
        node = cap.choose(*ps.request) if not ps.one_per_node else cap.choose_for(p, placed)
        if node is None:
            failed.add(ps.name)
            if ws.go_on(placed):
                continue
            break
        cap.take(node, ps.gpus, ps.cpu, ps.memory)
        placed.append((p, node))
        if len(placed) >= need:
            break  # JobReady
    ws.at = i
    if not placed or len(placed) < need:
        give_back(cap, placed)
        return None
    ssn.commit(js, placed, True, ws)
    return len(placed)


def _uniform_gpu_pods(cap, pods: list[PodState]) -> bool:
    """count_fits applies: pods that all ask for the same GPUs (one or more) and nothing else (no CPU, memory,
    node selector or one-per-node rule), on nodes scored through the GPU index and whose give-backs are exact.

    A trial of such pods places them while some node has the GPUs free and gives back exactly what it took, so
    when :meth:`~gangkit.engine.capacity.FreeCapacity.pods_that_fit` is below the gang's need, the trial's
    outcome (too few pods placed, the free room and its ``grow_version`` as they were) is known without it.
    """
    if cap.ratio or not cap.exact_amounts or not pods:  # (volcano-backfill leaves the best-effort pods out)
        return False
    first = pods[0].pod_set
    g = first.gpus
    if g < 1:
        return False
    for p in pods:
        ps = p.pod_set
        if ps.gpus != g or ps.cpu or ps.memory or ps.node_selector or ps.one_per_node:
            return False
    return True
