"""Gang placement with Apache YuniKorn's placeholders (task groups, Soft and Hard styles).

YuniKorn reserves room for a gang with *placeholder pods*: stand-ins with
the same requests as the real pods, created by the scheduler itself, one per
``minMember`` of each task group. Placeholders are ordinary pods to the
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
``pkg/cache/placeholder_manager.go``; yunikorn-core application states.

Simplified (``docs/reference/yunikorn.md``): a placeholder and the real pod
that replaces it are one pod in gangkit (bound when the placeholder is
allocated; the swap takes no time); one task group per job (its pods),
with ``minMember`` = the job's gang size; no queues, quotas, preemption or
reservations of YuniKorn's core; a job with ``progress: independent`` has no
task group and is placed pod by pod.
"""

from __future__ import annotations

from dataclasses import dataclass

from gangkit.engine.sockets import Cluster, PlacementLayer
from gangkit.engine.state import JobState, PodState
from gangkit.model.errors import Problem, ScenarioError
from gangkit.model.jobs import GANG_STYLES
from gangkit.model.reasons import Reason

PLACEHOLDER_TIMEOUT = 900.0  # placeholderTimeoutInSeconds default: 15 minutes
DEFAULT_STYLE = "Soft"


@dataclass(eq=False)
class _App:
    job: JobState
    order: int
    phase: str = "Accepted"  # Accepted (placeholders being allocated), Running (swapped), Resuming (Soft fallback)
    deadline: float | None = None
    timer: int = 0


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
        self.timeouts = 0

    # -- socket --------------------------------------------------------------

    def started(self, js: JobState) -> bool:
        """Placeholders are not the job's pods: its pods start once the application runs (placeholders swapped)."""
        app = self.apps.get(js.index)
        return app is None or app.phase != "Accepted"
    def enqueue(self, jobs: list[JobState], now: float) -> None:
        for js in jobs:
            if js.index not in self.apps:
                self.apps[js.index] = _App(js, self._order, "Accepted" if js.spec.progress == "sync" else "Running")
                self._order += 1

    def requeue(self, js: JobState, now: float) -> None:
        old = self.apps.get(js.index)
        if old is not None:
            old.timer += 1
        order = old.order if old is not None else self._next_order()
        self.apps[js.index] = _App(js, order, "Accepted" if js.spec.progress == "sync" else "Running")

    def _next_order(self) -> int:
        self._order += 1
        return self._order - 1

    def forget(self, js: JobState) -> None:
        app = self.apps.pop(js.index, None)
        if app is not None:
            app.timer += 1

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

    # -- one cycle -------------------------------------------------------------
    def cycle(self, sim: Cluster, now: float) -> None:
        cap = sim.capacity
        failed: set[tuple] = set()
        unschedulable: list[PodState] = []
        for app in sorted(self.apps.values(), key=lambda a: (-a.job.priority, a.order)):
            js = app.job
            if not js.placing:
                continue
            pending = [p for p in js.pods if p.node is None and not p.done]
            for i, p in enumerate(pending):
                node = None if p.request in failed else cap.choose(*p.request)
                if node is None:
                    failed.add(p.request)
                    # an Accepted app waits for this placeholder; the rest of its placeholders wait too
                    unschedulable.extend(pending[i:] if app.phase == "Accepted" else [p])
                    if app.phase == "Accepted":
                        break
                    continue
                sim.bind(p, node)
                if app.phase != "Accepted":
                    continue
                if app.deadline is None:  # the first placeholder allocated starts the timer
                    app.deadline = now + self.timeout_of(js)
                    token = app.timer
                    sim.call_at(app.deadline, lambda t, a=app, k=token: self._timed_out(sim, a, t) if k == a.timer else None)
                if js.bound >= self.placeholders(app):
                    app.phase = "Running"  # all placeholders allocated: real pods swap in
                    app.timer += 1
        self._unschedulable = unschedulable

    def _timed_out(self, sim: Cluster, app: _App, now: float) -> None:
        """Placeholders not all allocated in time: release them; Soft falls back, Hard fails the app."""
        if app.phase != "Accepted" or not app.job.placing:
            return
        self.timeouts += 1
        js = app.job
        held = js.bound
        style = self.style_of(js)
        what = (f"{held} of {self.placeholders(app)} placeholders allocated after placeholderTimeoutInSeconds "
                f"{self.timeout_of(js):g} s; released")
        if style == "Hard":
            self.apps.pop(js.index, None)
            sim.deactivate(js, Reason("placement", "GangSchedulingFailed",
                                      f"{what}; gangSchedulingStyle Hard: the application fails",
                                      {"allocated": held, "placeholders": self.placeholders(app)}))
            return
        app.phase = "Resuming"
        sim.release(js, Reason("placement", "PlaceholderTimeout",
                               f"{what}; gangSchedulingStyle Soft: the real pods are scheduled one by one",
                               {"allocated": held, "placeholders": self.placeholders(app)}))

    # -- diagnosis ---------------------------------------------------------------
    def pending_reason(self, sim: Cluster, js: JobState) -> Reason | None:
        app = self.apps.get(js.index)
        pending = [p for p in js.pods if p.node is None and not p.done]
        if app is None or not pending:
            return None
        free = sim.capacity.free_ready_gpus
        if app.phase == "Accepted":
            k = self.placeholders(app)
            held = sum(p.pod_set.gpus for p in js.pods if p.node is not None)
            if app.deadline is None:
                return Reason("placement", "PlaceholdersPending",
                              f"0 of {k} placeholders allocated ({free} GPUs free); no timeout runs until one is",
                              {"placeholders": k, "free_gpus": free})
            return Reason("placement", "PlaceholdersPending",
                          f"{js.bound} of {k} placeholders allocated, holding {held} GPUs; released at "
                          f"t={app.deadline:g} s if not complete ({self.style_of(js)})",
                          {"allocated": js.bound, "placeholders": k, "held_gpus": held, "deadline": app.deadline})
        return Reason("placement", "Unschedulable",
                      f"{len(pending)} of {len(js.pods)} pods unschedulable ({app.phase}): {free} GPUs free",
                      {"pending": len(pending), "free_gpus": free})
