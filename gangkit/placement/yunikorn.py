"""Gang placement with Apache YuniKorn's placeholders (task groups, Soft and Hard styles).

YuniKorn reserves room for a gang with *placeholder pods*: stand-ins that
ask for the task group's ``minResource`` (meant to be the real pods'
requests; see *Placeholder size* below), created by the scheduler itself, one
per ``minMember`` of each task group. Placeholders are ordinary pods to the
cluster: they take GPUs on nodes, and when they cannot be placed they are
unschedulable pods that a cluster autoscaler sees and scales up for. When
every placeholder of the application is allocated, each real pod is bound
in the spot of a placeholder of its task group (the *swap*). Think of coats
left on chairs to keep them: the chairs are taken, nobody sits, and a coat
left too long is picked up by the usher.

If the placeholders are not all allocated within
``placeholderTimeoutInSeconds`` (default 15 minutes, counted from the first
placeholder *allocated*; no allocation, no timeout), YuniKorn releases them.
What happens next is the application's ``gangSchedulingStyle``:

- ``Soft`` (default): the application falls back to normal scheduling; its
  real pods are placed one by one as room appears, with no gang guarantee
  (so a sync job may again hold part of what it needs);
- ``Hard``: the application fails (gangkit: ``Deactivated``, with the
  reason).

Applications are taken in FIFO order (priority, then submission): the YuniKorn
documentation asks for FIFO queues with gang scheduling, because any other
order lets every application reserve a part of the cluster. Within an
application, placeholders are allocated one at a time; one that does not
fit leaves the application waiting (holding the ones already allocated) and
the scheduler moves on to the next application.

What a node provisioner sees (``unschedulable()``): the placeholders.
While an application gathers, the shim sends only its placeholders to the
core (yunikorn-k8shim ``pkg/cache/application.go``: in state Reserving only
placeholder tasks are scheduled); once a second the core reports asks that
were tried and not allocated, and the shim sets their ``PodScheduled``
condition to False with reason ``Unschedulable`` "in order to trigger
auto-scaling" (yunikorn-core ``pkg/scheduler/scheduler.go``
``inspectOutstandingRequests``; yunikorn-k8shim ``pkg/cache/context.go``
``HandleContainerStateUpdate``). So placeholders are what make Karpenter
launch nodes; allocated placeholders sit on nodes and are not listed.
The timeout starts with the first placeholder *allocated*, i.e. with the
first new node ready (yunikorn-core ``application.go``: the placeholder
timer is initialised on the first placeholder allocation): nodes that come
later than ``placeholderTimeoutInSeconds`` after the first one release the
placeholders (Soft: pods one by one; Hard: the application fails).
Simplified: gangkit marks a placeholder at the cycle that failed it, not at
the core's next 1-second inspection.

Sources: apache/yunikorn-site ``docs/user_guide/gang_scheduling.md`` and
``docs/design/gang_scheduling.md``; yunikorn-k8shim
``pkg/cache/placeholder_manager.go`` and ``placeholder.go``; yunikorn-core
``pkg/scheduler/objects/application.go`` (states, the swap).

**More placeholders than pods.** The shim makes ``minMember`` placeholders
whatever the number of real pods, and nothing checks one against the other;
a task group whose ``minMember`` exceeds its pods reserves room for pods
that never come. Once all are allocated the application runs, each real
pod swaps in for one, and the rest stay allocated until they are released
(YuniKorn releases unused placeholders at the placeholder timeout or when the
application completes). gangkit models them as placeholders of their own
(the pods' size) and releases the surplus at the swap: the job runs as in
YuniKorn, but the surplus is held only while the gang gathers. Those beyond
the job's pods hold their room without being bound (a bound placeholder per
pod would start the job), so their GPUs are not counted as held idle.

**Placeholder size.** A placeholder asks for its task group's
``minResource`` (yunikorn-k8shim ``pkg/cache/placeholder.go``: its requests
and limits are ``minResource``), not for what the real pods ask;
``Job.placeholder_request`` is that size (``None``: the pods' own). At the
swap the core compares each real pod with a placeholder of its task group
(yunikorn-core ``pkg/scheduler/objects/application.go``,
``tryPlaceholderAllocate``, in v1.8.0 and on master of 2026-07):

- the real pod asks for no more than the placeholder, in every resource:
  it takes the placeholder's node, and the placeholder's surplus is
  released with it (the placeholders held more than the pods use, until
  the swap);
- the real pod asks for more of any resource: the placeholder is released
  ("cancel placeholder: resource incompatible", termination type
  ``TIMEOUT``, and an event "allocation resources ... are not matching
  placeholder"); all placeholders of a task group are the same size, so
  every one that is left goes. Neither style applies: the application
  went Running when its last placeholder was allocated, and Soft and Hard
  act only on a timeout before that (``timeoutPlaceholderProcessing``). The
  real pods are scheduled normally, one by one, with no gang guarantee
  (``canReplace`` is false once no placeholder is left).

Pods are compared in creation order: the ones before the first pod that
does not fit take placeholders, the rest are scheduled normally. So a task
group whose ``minResource`` forgot ``nvidia.com/gpu`` reserves nothing that
matters: its placeholders fit anywhere and are released at the swap.

Simplified (``docs/reference/yunikorn.md``): a placeholder the size of its
real pods is that pod in gangkit (bound when the placeholder is allocated;
the swap takes no time). A placeholder of another size is a pod of its own
(``tg-<job>-<group>-<k>``, of the job but not one of its pods); the last of
them is never bound, because the swap (and a failed swap's release) happens
in the cycle that allocates it. One task group per job (its pods), with
``minMember`` = the job's gang size and the first pod's node selector; no
queues, quotas, preemption or reservations of YuniKorn's core; a job with
``progress: independent`` has no task group and is placed pod by pod.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from gangkit.engine.sockets import Cluster, PlacementLayer
from gangkit.engine.state import JobState, NodeState, PodState
from gangkit.model.errors import Problem, ScenarioError
from gangkit.model.jobs import GANG_STYLES, PodSet
from gangkit.model.precision import TOLERANCE
from gangkit.model.quantity import format_cpu, format_memory
from gangkit.model.reasons import Reason

PLACEHOLDER_TIMEOUT = 900.0  # placeholderTimeoutInSeconds default: 15 minutes
DEFAULT_STYLE = "Soft"


def placeholder_shape(js: JobState) -> tuple | None:
    """One placeholder's request, as a pod's ``(gpus, cpu, memory, node selector)``; None when the placeholders
    are the job's pods themselves (no ``placeholder_request``, or one equal to every pod's request)."""
    r = js.spec.placeholder_request
    if r is None or not js.pods:
        return None
    size = (int(r.gpus), float(r.cpu), int(r.memory))
    if all(p.pod_set.gpus == size[0] and p.pod_set.cpu == size[1] and p.pod_set.memory == size[2] for p in js.pods):
        return None
    return (*size, js.pods[0].pod_set.node_selector)


def fits_placeholder(request: tuple, shape: tuple) -> bool:
    """The swap's rule: the real pod asks for no more than the placeholder of any resource.

    yunikorn-core ``tryPlaceholderAllocate``: ``delta = placeholder - real``;
    a negative value in any resource cancels the placeholder.

    >>> fits_placeholder((1, 4.0, 0, ()), (2, 4.0, 0, ())), fits_placeholder((1, 4.0, 0, ()), (2, 2.0, 0, ()))
    (True, False)
    """
    return request[0] <= shape[0] and request[1] <= shape[1] + TOLERANCE and request[2] <= shape[2]


def size_text(gpus: int, cpu: float, memory: int) -> str:
    """A request in Kubernetes' words: ``nvidia.com/gpu 2, cpu 500m, memory 16Gi`` (what is 0 is left out)."""
    parts = [f"nvidia.com/gpu {gpus}"] if gpus else []
    parts += [f"cpu {format_cpu(cpu)}"] if cpu else []
    parts += [f"memory {format_memory(memory)}"] if memory else []
    return ", ".join(parts) or "nothing"


@dataclass(eq=False)
class _Placeholder:
    """One placeholder pod of a task group whose size is not its pods' own (``tg-<job>-<group>-<k>``)."""

    pod: PodState  # of the placeholder's own request, a pod of the job but not one of ``job.pods``
    node: NodeState | None = None  # where it is allocated
    held: bool = False  # allocated by taking its room, not bound (placeholders beyond the job's pods)


@dataclass(eq=False)
class _App:
    job: JobState
    order: int
    phase: str = "Accepted"  # Accepted (placeholders being allocated), Running (swapped), Resuming (Soft fallback)
    deadline: float | None = None
    timer: int = 0
    shape: tuple | None = None  # one placeholder's request; None: the placeholders are the pods
    slots: list[_Placeholder] = field(default_factory=list)  # the placeholders, with a shape


class YuniKorn(PlacementLayer):
    """The ``yunikorn`` placement layer."""

    name = "placement"
    period = 0.0

    def __init__(self, placeholder_timeout: float = PLACEHOLDER_TIMEOUT, style: str = DEFAULT_STYLE):
        problems = []
        if isinstance(placeholder_timeout, bool) or not isinstance(placeholder_timeout, (int, float)) or not placeholder_timeout > 0:
            problems.append(Problem("YuniKorn", "placeholder_timeout", f"expected seconds > 0, got {placeholder_timeout!r}"))
        if style not in GANG_STYLES:
            problems.append(Problem("YuniKorn", "style", f"expected one of {', '.join(GANG_STYLES)}, got {style!r}"))
        if problems:
            raise ScenarioError(problems)
        self.placeholder_timeout = float(placeholder_timeout)
        self.style = style
        self.apps: dict[int, _App] = {}
        self._order = 0
        self._unschedulable: list[PodState] = []
        self._sim: Cluster | None = None  # the cluster of the first cycle: what placeholders hold goes back to it
        self.timeouts = 0
        self.swaps_failed = 0  # applications whose placeholders were cancelled at the swap (a pod larger than them)

    # -- socket --------------------------------------------------------------

    def started(self, js: JobState) -> bool:
        """Placeholders are not the job's pods: its pods start once the application runs (placeholders swapped)."""
        app = self.apps.get(js.index)
        return app is None or app.phase != "Accepted"
    def enqueue(self, jobs: list[JobState], now: float) -> None:
        for js in jobs:
            if js.index not in self.apps:
                self.apps[js.index] = self._new_app(js, self._order)
                self._order += 1

    def requeue(self, js: JobState, now: float) -> None:
        old = self.apps.get(js.index)
        if old is not None:
            old.timer += 1
            self._drop_placeholders(old)
        order = old.order if old is not None else self._next_order()
        self.apps[js.index] = self._new_app(js, order)

    def _next_order(self) -> int:
        self._order += 1
        return self._order - 1

    @staticmethod
    def _new_app(js: JobState, order: int) -> _App:
        """A sync job's application waits for its placeholders (pods of their own, when their size is not the pods')."""
        app = _App(js, order, "Accepted" if js.spec.progress == "sync" else "Running")
        # pods still bound (a restart of some pods, a snapshot): the placeholders are the pods, as for any task group
        bound = any(p.node is not None for p in js.pods)
        app.shape = placeholder_shape(js) if app.phase == "Accepted" and not bound else None
        if app.shape is None and app.phase == "Accepted" and not bound and js.gang_size > len(js.pods):
            # minMember above the pods: placeholders beyond the pods exist, so they are pods of their own
            first = js.pods[0].pod_set
            app.shape = (first.gpus, first.cpu, first.memory, first.node_selector)
        if app.shape is not None:
            g, c, m, selector = app.shape
            first = js.pods[0]
            # the placeholders keep the pods' one-per-node rule among themselves (gangkit's simplification of
            # a task group's affinity, which YuniKorn puts on its placeholders)
            ps = PodSet(first.pod_set.name, 1, g, c, m, selector, one_per_node=first.pod_set.one_per_node)
            app.slots = [_Placeholder(PodState(js, k, ps, f"tg-{js.spec.name}-{ps.name}-{k}", created=first.created,
                                               seq=first.seq)) for k in range(js.gang_size)]
        return app

    def forget(self, js: JobState) -> None:
        app = self.apps.pop(js.index, None)
        if app is not None:
            app.timer += 1
            self._drop_placeholders(app)

    def unschedulable(self) -> list[PodState]:
        """Placeholders and real pods that found no node in the last cycle (an autoscaler scales up for them)."""
        return [p for p in self._unschedulable if p.node is None and not p.done and p.job.placing]

    def timeout_of(self, js: JobState) -> float:
        return self.placeholder_timeout if js.spec.placeholder_timeout is None else float(js.spec.placeholder_timeout)

    def style_of(self, js: JobState) -> str:
        return js.spec.gang_style or self.style

    @staticmethod
    def placeholders(app: _App) -> int:
        """Placeholders of the task group: its minMember."""
        return app.job.gang_size

    @staticmethod
    def allocated(app: _App) -> int:
        """Placeholders of the application allocated now."""
        return sum(1 for ph in app.slots if ph.node is not None) if app.shape is not None else app.job.bound

    # -- one cycle -------------------------------------------------------------
    def cycle(self, sim: Cluster, now: float) -> None:
        self._sim = sim
        cap = sim.capacity
        failed: set[tuple] = set()
        unschedulable: list[PodState] = []
        for app in sorted(self.apps.values(), key=lambda a: (-a.job.priority, a.order)):
            js = app.job
            if not js.placing:
                continue
            if app.shape is not None and app.phase == "Accepted":
                self._gather(sim, app, now, failed, unschedulable)
                if app.phase == "Accepted":
                    continue  # swapped in this cycle: its other pods are placed below, one by one
            pending = [p for p in js.pods if p.node is None and not p.done]
            for i, p in enumerate(pending):
                node = None if p.request in failed else cap.choose_for(p)
                if node is None:
                    if not p.pod_set.one_per_node:  # a one-per-node pod's failure is its own job's
                        failed.add(p.request)
                    # an Accepted app waits for this placeholder; the rest of its placeholders wait too
                    unschedulable.extend(pending[i:] if app.phase == "Accepted" else [p])
                    if app.phase == "Accepted":
                        break
                    continue
                sim.bind(p, node)
                if app.phase != "Accepted":
                    continue
                self._first_allocated(sim, app, now)
                if js.bound >= self.placeholders(app):
                    app.phase = "Running"  # all placeholders allocated: real pods swap in
                    app.timer += 1
        self._unschedulable = unschedulable

    def _first_allocated(self, sim: Cluster, app: _App, now: float) -> None:
        """The first placeholder allocated starts the timer (placeholderTimeoutInSeconds)."""
        if app.deadline is None:
            app.deadline = now + self.timeout_of(app.job)
            token = app.timer
            sim.call_at(app.deadline, lambda t, a=app, k=token: self._timed_out(sim, a, t) if k == a.timer else None)

    def _gather(self, sim: Cluster, app: _App, now: float, failed: set, unschedulable: list) -> None:
        """Allocate placeholder pods of their own size one at a time, and swap the real pods in once all are.

        A placeholder is bound as a pod of the job (its GPUs held idle); the
        last one is only given its node, since the swap follows at once.
        """
        cap = sim.capacity
        shape = app.shape
        for k, ph in enumerate(app.slots):
            if ph.node is not None:
                continue
            apart = ph.pod.pod_set.one_per_node
            if apart:
                node = cap.choose_avoiding(shape, {q.node for q in app.slots if q.node is not None})
            else:
                node = None if shape in failed else cap.choose(*shape)
            if node is None:
                if not apart:  # a one-per-node placeholder's failure is its own application's
                    failed.add(shape)
                unschedulable.extend(q.pod for q in app.slots[k:] if q.node is None)
                return
            if k < len(app.slots) - 1 and app.job.bound + 1 < len(app.job.pods):
                sim.bind(ph.pod, node)
            elif k < len(app.slots) - 1:  # a bound placeholder per pod of the job would start it: hold the room
                cap.take(node, *shape[:3])
                ph.held = True
            ph.node = node
            self._first_allocated(sim, app, now)
        app.timer += 1  # all placeholders allocated: the application runs once they are swapped (in _swap)
        self._swap(sim, app)

    def _swap(self, sim: Cluster, app: _App) -> None:
        """Each real pod takes a placeholder's node, in creation order, until one asks for more than they hold.

        A pod that fits takes the node of a placeholder (its surplus is
        released with it); from the first pod that does not, every placeholder
        left is cancelled and the pods are scheduled normally (yunikorn-core
        ``tryPlaceholderAllocate``). A pod whose node selector matches no
        placeholder's node uses one up and is scheduled normally (the core's
        fallback: another node, releasing the placeholder).
        """
        js = app.job
        shape = app.shape
        nodes = [ph.node for ph in app.slots]
        moves, used, larger = [], 0, None
        for p in [p for p in js.pods if p.node is None and not p.done]:
            if used == len(app.slots):
                break
            if not fits_placeholder(p.request, shape):
                larger = p
                break
            used += 1
            node = next((n for n in nodes if n.node.matches(p.pod_set.node_selector)), None)
            if node is not None:
                nodes.remove(node)
                moves.append((p, node))
            else:
                nodes.pop()
        k = len(app.slots)
        if larger is None:
            message = f"{used} of {k} placeholders replaced by the real pods at the swap"
        else:
            self.swaps_failed += 1
            g, c, m, _ = shape
            message = (f"{used} of {k} placeholders replaced by the real pods at the swap; pod {larger.name} asks for "
                       f"{size_text(*larger.request[:3])}, more than a placeholder's minResource ({size_text(g, c, m)}): "
                       f"the core cancels the other {k - used} ('cancel placeholder: resource incompatible', "
                       f"termination type TIMEOUT) and the pods left are scheduled one by one, with no gang guarantee")
        self._drop_placeholders(app, Reason("placement", "PlaceholderTimeout", message, {"replaced": used, "placeholders": k}),
                                always=True)
        # Running only now: the placeholders go first, while the job has not started (more placeholders than
        # pods may all be bound by then)
        app.phase = "Running"
        for p, node in moves:
            sim.bind(p, node)

    def _drop_placeholders(self, app: _App, reason: Reason | None = None, always: bool = False) -> None:
        """The application's placeholder pods go (released to the cluster); ``always``: say so even if none is bound.

        Without ``reason`` the job was evicted or ended: the core counts every
        placeholder removal but a replacement as timed out.
        """
        bound = [ph.pod for ph in app.slots if ph.pod.node is not None]
        for ph in app.slots:
            if ph.held:
                self._sim.capacity.give(ph.node, *app.shape[:3])
                ph.held = False
            ph.node = None
            ph.pod.done = True  # no longer waits: a supplier does not see it again
        if bound or always:
            reason = reason or Reason("placement", "PlaceholderTimeout",
                                      f"{len(bound)} placeholder pods released with the application's pods",
                                      {"released": len(bound)})
            self._sim.release(app.job, reason, pods=bound)

    def _timed_out(self, sim: Cluster, app: _App, now: float) -> None:
        """Placeholders not all allocated in time: release them; Soft falls back, Hard fails the app."""
        if app.phase != "Accepted" or not app.job.placing:
            return
        self.timeouts += 1
        js = app.job
        held = self.allocated(app)
        style = self.style_of(js)
        what = (f"{held} of {self.placeholders(app)} placeholders allocated after placeholderTimeoutInSeconds "
                f"{self.timeout_of(js):g} s; released")
        numbers = {"allocated": held, "placeholders": self.placeholders(app)}
        if style == "Hard":
            self.apps.pop(js.index, None)
            reason = Reason("placement", "GangSchedulingFailed", f"{what}; gangSchedulingStyle Hard: the application fails",
                            numbers)
            self._drop_placeholders(app, reason)
            sim.deactivate(js, reason)
            return
        app.phase = "Resuming"
        reason = Reason("placement", "PlaceholderTimeout",
                        f"{what}; gangSchedulingStyle Soft: the real pods are scheduled one by one", numbers)
        if app.shape is None:
            sim.release(js, reason)  # the placeholders are the job's pods
        else:
            self._drop_placeholders(app, reason, always=True)

    # -- diagnosis ---------------------------------------------------------------
    def pending_reason(self, sim: Cluster, js: JobState) -> Reason | None:
        app = self.apps.get(js.index)
        pending = [p for p in js.pods if p.node is None and not p.done]
        if app is None or not pending:
            return None
        free = sim.capacity.free_ready_gpus
        if app.phase == "Accepted":
            k = self.placeholders(app)
            allocated = self.allocated(app)
            if app.shape is None:
                held = sum(p.pod_set.gpus for p in js.pods if p.node is not None)
            else:
                held = allocated * app.shape[0]
            if app.deadline is None:
                return Reason("placement", "PlaceholdersPending",
                              f"0 of {k} placeholders allocated ({free} GPUs free); no timeout runs until one is",
                              {"placeholders": k, "free_gpus": free})
            return Reason("placement", "PlaceholdersPending",
                          f"{allocated} of {k} placeholders allocated, holding {held} GPUs; released at "
                          f"t={app.deadline:g} s if not complete ({self.style_of(js)})",
                          {"allocated": allocated, "placeholders": k, "held_gpus": held, "deadline": app.deadline})
        return Reason("placement", "Unschedulable",
                      f"{len(pending)} of {len(js.pods)} pods unschedulable ({app.phase}): {free} GPUs free",
                      {"pending": len(pending), "free_gpus": free})
