"""Kueue as an admission layer of a simulated stack (``kueue+pod``, ``kueue+gang``).

Kueue's job integration keeps a job *suspended* (no pods) until its
Workload gets a quota reservation; then it injects the flavor's node labels
into the pod template and unsuspends the job, and the placement layer (the
pod-by-pod scheduler or a gang scheduler) places the pods on nodes. Quota
admitted is not placed: a workload may hold quota while its pods wait for
nodes. A preempted workload is suspended again: its pods are deleted, it
releases its quota and queues again with its original creation time.

Jobs map to Workloads as Kueue's batch/v1 Job integration does: one pod set
per gangkit pod set with its count and per-pod requests, the queue name from
the job's queue (``kueue.x-k8s.io/queue-name``), the job's priority, its
submission time as creation time, and (Topology-Aware Scheduling) the
topology request its pod template's annotations make.

With TAS, the layer shows Kueue the ready nodes and what pods outside TAS
use on them before each cycle (:meth:`KueueLayer.observe_topology`), and an
admitted pod set's topology assignment reaches its pods as Kueue's topology
ungater gives it (``pkg/controller/tas/topology_ungater.go``): each pod, by
rank (its index in the pod set, as a batch/v1 Job's completion index), gets
a nodeSelector for its domain's level labels (``kubernetes.io/hostname``
alone when the topology ends with it). Kueue creates such pods with the
``kueue.x-k8s.io/topology`` scheduling gate and ungates them with the
selector; gangkit creates them with the selector (no gate is modelled).
"""

from __future__ import annotations

from gangkit.engine.sockets import AdmissionLayer
from gangkit.kueue.metrics import KueueMetrics
from gangkit.kueue.objects import (
    DEFAULT_POD_SET,
    GPU,
    Admission,
    ClusterQueue,
    FlavorQuotas,
    KueueSetup,
    LocalQueue,
    PodSetSpec,
    Quota,
    ResourceFlavor,
    ResourceGroup,
    Workload,
)
from gangkit.kueue.pods_ready import PODS_READY_TIMEOUT, REQUEUING_LIMIT_EXCEEDED, on_timeout, pods_ready
from gangkit.kueue.scheduler import Kueue
from gangkit.model.jobs import BATCH_JOB, DEPLOYMENT, POD
from gangkit.model.reasons import Reason

#: The job integrations whose Workload has one pod set named ``main`` (Kueue v0.19 ``kueue.DefaultPodSetName``:
#: the batch/v1 Job's, a lone Pod's and so a Deployment's pods); the others name theirs by role (a JobSet's
#: replicatedJobs, a PyTorchJob's replica types), as gangkit's pod sets are named already.
MAIN_POD_SET = (BATCH_JOB, POD, DEPLOYMENT)


def workload_for(js, known: dict | None = None, topology: dict | None = None) -> Workload:
    """The Workload Kueue's job integration would create for a gangkit job.

    Its pod sets are the job's, in order, named as the integration names them (:data:`MAIN_POD_SET`);
    the layer maps them back to the job's by position (:meth:`KueueLayer._apply_flavors`).

    ``known`` keeps the (immutable) pod set of the Workload per gangkit pod set, so that the
    jobs of a trace, which repeat a few pod sets, share them. ``topology``: the setup's
    topology requests, per (job key, pod set name) (``KueueSetup.topology_requests``).
    """
    spec = js.spec
    pod_sets = []
    main = len(spec.pod_sets) == 1 and spec.framework in MAIN_POD_SET
    for ps in spec.pod_sets:
        request = topology.get((spec.key, ps.name)) if topology else None
        key = (ps, main) if request is None else (ps, main, request)
        pss = known.get(key) if known is not None else None
        if pss is None:
            requests = {GPU: ps.gpus, "cpu": int(round(ps.cpu * 1000)), "memory": ps.memory}
            pss = PodSetSpec(DEFAULT_POD_SET if main else ps.name, ps.count, {r: v for r, v in requests.items() if v},
                             min_count=ps.min_count, node_selector=ps.node_selector, topology=request)
            if known is not None:
                if len(known) >= 4096:  # many distinct pod sets: keep the memory bounded
                    known.clear()
                known[key] = pss
        pod_sets.append(pss)
    wl = Workload(spec.name, spec.namespace or "default", spec.queue, pod_sets, priority=spec.priority, created=float(spec.submit_time))
    wl.job = js
    return wl


def managed(spec) -> bool:
    """Does Kueue manage this job? Not when its manifest leaves it out (``Job.kueue_managed``: no queue name,
    Kueue's rule), and never a Volcano Job (``controller="volcano"``): Kueue v0.19 has job integrations for
    batch/v1 Jobs, JobSets, the Kubeflow and MPI operators' kinds, TrainJobs, Ray, AppWrappers, LeaderWorkerSets,
    Pods, Deployments and StatefulSets (``pkg/controller/jobs``), none for ``batch.volcano.sh``."""
    return spec.kueue_managed and spec.controller != "volcano"


def default_objects(scenario, gpus: int | None = None) -> KueueSetup:
    """One ResourceFlavor and one ClusterQueue covering every resource the jobs ask for, one LocalQueue per job queue.

    What a scenario runs with under a ``kueue+`` stack when it has no Kueue
    objects of its own. The ClusterQueue ``cluster-queue`` has one resource
    group and one flavor, ``default-flavor``:

    - ``nvidia.com/gpu``: all the cluster's GPUs (``gpus`` overrides it: a
      node supplier may add nodes beyond the cluster's), the quota the
      lessons are about;
    - ``cpu`` and ``memory``, covered only when some job asks for them: a
      quota that never binds before the nodes do, the larger of the nodes'
      total allocatable (where they give it) and what all the jobs ask for
      together (so nodes a supplier adds never outgrow it). Kueue admits no
      workload asking for a resource its ClusterQueue does not cover
      ("resource cpu unavailable in ClusterQueue"), so a GPU-only queue would
      keep such jobs pending for ever.

    Requests are counted as Kueue counts them: CPU in millicores, memory in bytes.
    """
    from gangkit.model.quantity import MAX_QUANTITY  # (here: this hunk keeps to this function)

    gpus = sum(n.gpus for n in scenario.nodes) if gpus is None else gpus
    quotas = {GPU: Quota(gpus)}
    asked = {"cpu": 0, "memory": 0}
    for j in scenario.jobs:
        for ps in j.pod_sets:
            asked["cpu"] += ps.count * int(round(ps.cpu * 1000))
            asked["memory"] += ps.count * ps.memory
    nodes = {"cpu": sum(int(round(n.cpu * 1000)) for n in scenario.nodes if n.cpu is not None),
             "memory": sum(n.memory for n in scenario.nodes if n.memory is not None)}
    for resource in ("cpu", "memory"):
        if asked[resource]:
            quotas[resource] = Quota(min(max(nodes[resource], asked[resource]), MAX_QUANTITY))
    cq = ClusterQueue("cluster-queue", [ResourceGroup(tuple(quotas), (FlavorQuotas("default-flavor", quotas),))])
    lqs = sorted({(j.namespace or "default", j.queue) for j in scenario.jobs})
    return KueueSetup([ResourceFlavor("default-flavor")], [cq], [LocalQueue(q, ns, cq.name) for ns, q in lqs])


def default_setup(scenario, gpus: int | None = None) -> Kueue:
    """A fresh Kueue of :func:`default_objects`."""
    return Kueue.from_setup(default_objects(scenario, gpus))


class KueueLayer(AdmissionLayer):
    """The ``kueue`` admission layer: quota reservation for whole workloads, in Kueue's cycles."""

    name = "quota"

    def __init__(self, kueue: Kueue):
        self.kueue = kueue
        self.workloads: dict[int, Workload] = {}
        self._pod_set_specs: dict = {}  # gangkit PodSet -> the Workload's PodSetSpec (see workload_for)
        self.recorder = KueueMetrics(kueue)
        self.admission_checks = False  # set by an admission check layer behind this one (ProvisioningRequest)
        self._unmanaged: list = []  # jobs Kueue does not manage, submitted since the last cycle

    @property
    def waits_for_ready_pods(self) -> bool:
        """Only waitForPodsReady with ``blockAdmission`` (nothing is admitted while an admitted workload's pods
        are not all ready) and an admission check behind this layer make a cycle look at bound pods. Without
        them, a cycle after a job's last bind finds the quota and the queues as the cycle before left them:
        waitForPodsReady alone reads the pods in its timer (:meth:`_watch`), never in a cycle."""
        config = self.kueue.config
        return bool((config.wait_for_pods_ready and config.block_admission) or self.admission_checks)

    def metrics(self) -> dict:
        """Kueue's metrics for this run (see :mod:`gangkit.kueue.metrics`)."""
        return self.recorder.frames()

    def submit(self, js, now: float) -> None:
        if not managed(js.spec):  # Kueue does not manage it: handed on at the next cycle, past every quota
            self._unmanaged.append(js)
            return
        wl = workload_for(js, self._pod_set_specs, self.kueue.topology_requests)
        self.workloads[js.index] = wl
        self.kueue.submit(wl)
        self.recorder.sample(now)

    def resume(self, sim, js, now: float) -> None:
        """A job a live cluster's snapshot shows admitted: its Workload holds the quota ``status.admission`` says.

        Kueue counts an admitted Workload's usage whatever the quota is now (a
        quota lowered after admission does not evict it: Kueue's cache adds it,
        ``pkg/cache``). Without a Workload in the snapshot, the reservation is
        worked out from the pods: the ClusterQueue of the job's LocalQueue and, per
        pod set and resource, the first flavor of that resource's group whose node
        labels the node of the pod set's first bound pod carries (the flavor Kueue
        must have assigned for the pod to run there).
        """
        if not managed(js.spec):
            return
        wl = workload_for(js, self._pod_set_specs, self.kueue.topology_requests)
        self.workloads[js.index] = wl
        admission = self._admission(sim, js, wl)
        self.kueue.admit_existing(wl, admission, now)
        self._apply_flavors(wl)
        self.recorder.sample(now)  # (no admission wait row: it was admitted before the snapshot)
        if self.kueue.config.wait_for_pods_ready and not self.admission_checks and js.spec.snapshot.bound < len(
                js.spec.snapshot.nodes):
            self._watch(sim, wl, now)  # simplified: the PodsReady timeout counts from the snapshot

    def _admission(self, sim, js, wl: Workload) -> Admission:
        from gangkit.model.errors import problem

        snap = js.spec.snapshot
        obj = f"Job {js.spec.key}"
        kueue = self.kueue
        if snap.admission is not None:
            cq_name = snap.admission.cluster_queue
        else:
            lq = kueue.local_queues.get((wl.namespace or "default", wl.queue_name))
            if lq is None:
                raise problem(obj, "snapshot", f"it runs, but LocalQueue {wl.queue_name} doesn't exist in namespace "
                                               f"{wl.namespace or 'default'} and the input has no Workload for it")
            cq_name = lq.cluster_queue
        cq = kueue.cluster_queues.get(cq_name)
        if cq is None:
            where = "inactive" if cq_name in kueue.inactive else "not in the input"
            raise problem(obj, "snapshot.admission", f"its Workload is admitted to ClusterQueue {cq_name}, which is {where}")
        flavors: dict[str, dict[str, str]] = {}
        counts: dict[str, int] = {}
        usage: dict[tuple[str, str], int] = {}
        first_pod = 0
        for i, pss in enumerate(wl.pod_sets):
            count = pss.count if snap.admission is None else snap.admission.counts[i]
            node = next((n for n in snap.nodes[first_pod:first_pod + count] if n is not None), None)
            first_pod += count
            labels = dict(sim.capacity.by_name[node].node.labels) if node is not None else None
            assigned = {} if snap.admission is None else dict(snap.admission.flavors[i])
            for res in pss.requests:
                rg = cq.group_for(res)
                names = [fq.flavor for fq in rg.flavors] if rg is not None else []
                if res in assigned:
                    if assigned[res] not in names:
                        raise problem(obj, "snapshot.admission", f"ClusterQueue {cq.name} has no flavor "
                                      f"{assigned[res]!r} for {res}")
                    continue
                if not names:
                    raise problem(obj, "snapshot.admission", f"resource {res} unavailable in ClusterQueue {cq.name}")
                chosen = next((f for f in names if labels is None or all(
                    labels.get(k) == v for k, v in kueue.flavors[f].node_labels)), None)
                if chosen is None:
                    raise problem(obj, "snapshot.nodes", f"its pods run on node {node}, whose labels match no flavor "
                                  f"of ClusterQueue {cq.name} for {res} ({', '.join(names)}); add its Workload, with "
                                  "status.admission, to the input")
                assigned[res] = chosen
            tas = sorted(f for f in set(assigned.values()) if kueue.flavors[f].topology_name is not None)
            if tas:
                raise problem(obj, "snapshot", f"its pod set {pss.name} holds the TAS flavor {tas[0]}: resuming a "
                              "topology-aware workload from a live cluster's snapshot is not modelled yet")
            flavors[pss.name], counts[pss.name] = assigned, count
            for res, v in pss.requests.items():
                fr = (assigned[res], res)
                usage[fr] = usage.get(fr, 0) + v * count
        return Admission(cq.name, flavors, counts, usage)

    def cycle(self, sim, now: float):
        admitted: list = self._unmanaged
        self._unmanaged = []
        config = self.kueue.config
        if config.wait_for_pods_ready and config.block_admission and self._someone_not_ready():
            return admitted  # blockAdmission: nothing is admitted while an admitted workload is not ready
        if self.kueue.tas is not None:
            self.observe_topology(sim)
        while True:
            r = self.kueue.cycle(now)
            for victim, reason, by in r.preempted:
                why = Reason("quota", "Preempted", f"preempted by {by.key} ({reason})", {"reason": reason})
                js = victim.job
                self.recorder.preemption(by.cluster_queue, reason)
                self.recorder.eviction(victim.cluster_queue, "Preempted")
                if js in admitted:  # admitted earlier in this instant, not yet handed on: it never left
                    admitted.remove(js)
                elif js is not None:
                    if js.layer not in ("", "placement"):
                        sim.charge_wait(js, now)  # waiting in a later admission layer (a check): count it before it moves
                    sim.evict(js, why, to_admission=0)
                sim.record_event("preempted", js, layer="quota", detail=reason)
            for wl in r.admitted:
                self._apply_flavors(wl)
                self.recorder.admitted(wl, now)
                admitted.append(wl.job)
                if config.wait_for_pods_ready and not self.admission_checks:
                    self._watch(sim, wl, now)
            if (not r.changed or (config.wait_for_pods_ready and config.block_admission and r.admitted) or self.idle()
                    or not self.kueue.has_heads()):
                # (idle: nothing is left pending; without a head, parked or not, one more cycle would change nothing)
                self.recorder.sample(now)
                return admitted

    def idle(self) -> bool:
        """A cycle now would admit nothing and change nothing (the engine then skips it): no
        workload is pending, in a ClusterQueue or without one.

        A skipped cycle leaves Kueue's clock (``Kueue.now``) behind. It is read only for
        workloads evicted or parked, and whatever evicts or parks one moves the clock first
        (a cycle, or the PodsReady timer); while one is parked, Kueue is not idle.
        """
        kueue = self.kueue
        if kueue.orphans or self._unmanaged:
            return False
        for q in kueue.queues.values():  # a loop, not any(): asked at every turn of cycle's loop
            if q.members:
                return False
        return True

    def checks_ready(self, sim, wl: Workload, now: float) -> None:
        """Every admission check of ``wl`` is Ready: the workload is Admitted, and waitForPodsReady counts from now."""
        if self.kueue.config.wait_for_pods_ready:
            self._watch(sim, wl, now)

    def _someone_not_ready(self) -> bool:
        return any(not pods_ready(wl) for per_cq in self.kueue.admitted.values() for wl in per_cq.values()
                   if wl.job is not None)

    def _watch(self, sim, wl: Workload, now: float) -> None:
        """Check at admission + timeout whether the workload's pods are all ready."""
        admitted_at = wl.quota_reserved_at

        def check(t: float) -> None:
            if wl.admission is None or wl.quota_reserved_at != admitted_at or wl.finished or pods_ready(wl):
                return
            config = self.kueue.config
            self.kueue.now = max(self.kueue.now, t)
            action, requeue_at = on_timeout(config, wl, t)
            js = wl.job
            if action == "deactivate":
                why = Reason("quota", REQUEUING_LIMIT_EXCEEDED, f"pods not ready within {config.pods_ready_timeout:g} s, "
                             f"{wl.requeue_count} requeues used up (backoffLimitCount {config.backoff_limit_count})")
                if js.placing:
                    sim.evict(js, why, to_admission=0)
                self.kueue.deactivate(wl, why.message)
                sim.deactivate(js, why)
                return
            why = Reason("quota", PODS_READY_TIMEOUT, f"{PODS_READY_TIMEOUT}: pods not ready within {config.pods_ready_timeout:g} s; "
                         f"requeue #{wl.requeue_count} after {requeue_at - t:g} s backoff", {"requeue_at": requeue_at})
            sim.evict(js, why, to_admission=0)
            self.recorder.eviction(wl.admission.cluster_queue, PODS_READY_TIMEOUT)
            order = t if config.requeuing_timestamp == "Eviction" else None
            self.kueue.evict(wl, PODS_READY_TIMEOUT, requeue_at=requeue_at, order_time=order)
            self.recorder.sample(t)
            sim.call_at(requeue_at, lambda t2: (self.kueue.backoff_expired(wl, t2), sim.request_cycle()))

        sim.call_at(now + self.kueue.config.pods_ready_timeout, check)

    def observe_topology(self, sim) -> None:
        """Show Kueue's TAS cache the ready nodes and what pods outside TAS request on each (bound pods of jobs
        whose Workload holds no topology assignment: Kueue's non-TAS usage); where room grew, Kueue retries."""
        tas_jobs = {wl.job for per_cq in self.kueue.admitted.values() for wl in per_cq.values() if wl.admission.topology}
        view = []
        for st in sim.capacity.nodes:
            if not st.ready:
                continue
            gpus = cpu = memory = 0
            for p in st.pods:
                if p.job not in tas_jobs:
                    gpus, cpu, memory = gpus + p.pod_set.gpus, cpu + p.pod_set.cpu, memory + p.pod_set.memory
            view.append((st.node, {GPU: gpus, "cpu": int(round(cpu * 1000)), "memory": memory}))
        grew = self.kueue.tas.observe(view)
        if grew:
            self.kueue.topology_changed(grew)

    def _apply_flavors(self, wl: Workload) -> None:
        """Kueue starts the job as its admission says: per pod set of the job (the Workload's pod sets are the job's,
        in order) the count admitted and the assigned flavors' node labels, and under TAS each pod's domain labels
        (:meth:`gangkit.kueue.objects.Admission.handover`)."""
        wl.job.admitted = wl.admission.handover(wl.pod_sets, wl.job.spec.pod_sets, self.kueue.flavors)

    def release(self, js, now: float) -> None:
        wl = self.workloads.pop(js.index, None)  # a finished job's Workload is forgotten: memory follows the live jobs
        if wl is not None and not wl.finished:
            self.kueue.finish(wl)
            self.recorder.sample(now)

    def pending_reason(self, js) -> Reason | None:
        wl = self.workloads.get(js.index)
        if wl is None or wl.admission is not None:
            return None
        state, message, cause = self.kueue.pending_explained(wl)
        code = "Inadmissible" if state == "inadmissible" else "Pending"
        return Reason("quota", code, message or "waiting for a scheduling cycle",
                      {"state": state, "cluster_queue": wl.cluster_queue}, cause=cause)
