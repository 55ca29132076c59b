"""The most a cluster can ever hold: Nodes, plus what the node suppliers may launch, for one pod shape.

Picture a removal firm asked "can your vans carry these twelve wardrobes at
once?". It counts the vans in the yard (the Nodes), then the vans it may
still hire (a Karpenter NodePool up to its ``spec.limits``, a
cluster-autoscaler node group up to ``maxSize``), the vans on a fixed lease
(a static NodePool: its nodes and no more), and how many wardrobes fit
in each kind of van: a wardrobe never goes half in one van and half in
another, as a pod never splits across nodes. :class:`Supply` answers that
question for a pod *shape* (GPUs, cores, bytes, nodeSelector):

- :meth:`Supply.most_pods`: how many such pods could be placed at once in an
  empty cluster at its largest (every Node, every NodePool filled up to its
  limits with the instance types that hold the most such pods, every static
  NodePool's nodes, every node group at ``maxSize``);
- :meth:`Supply.holds`: could a single such pod be placed at all;
- :meth:`Supply.provisioning_time`: the shortest time from an unschedulable
  pod to a ready new node that holds it, in gangkit's stage model
  (:class:`gangkit.supply.cloud.Stages`): Karpenter's batching window
  (``batchIdleDuration``) plus the stages registered, initialized and image
  pull; a static NodePool's stages alone, counted from the first job's
  submission; cluster-autoscaler's stages (its scan may come at once).

**Static NodePools** (``spec.replicas``; Karpenter v1.14,
``designs/static-capacity.md``, ``pkg/controllers/static/provisioning``):
such a pool holds exactly ``min(replicas, limits.nodes)`` nodes, launched as
the one type gangkit's Karpenter gives them (the cheapest the pool allows:
:attr:`gangkit.supply.karpenter.Karpenter.static_nodes`), and never launches
another for a pending pod. So every rule here counts those nodes and that
type only: no room for a pod its type cannot hold, no more pods than those
nodes hold, no GPUs beyond theirs (a pool of 0 nodes adds nothing). They are
launched at the run's first scheduling cycle (the first job's submission),
without a batching window and without waiting for a pod.

A new machine carries the labels gangkit's suppliers give it (a NodePool's
template labels, ``karpenter.sh/nodepool``, the instance type; a node
group's labels) and may carry any value a NodePool requirement allows (``In``
its values, ``Exists``...) or a well-known label the supplier picks (zone,
architecture, capacity type, the clouds' instance labels): :func:`may_carry`.

**NodePool limits** (``spec.limits`` on ``nvidia.com/gpu``, ``cpu`` and
``memory``, the ones gangkit enforces; Karpenter v1.14
``pkg/controllers/provisioning/scheduling/scheduler.go``,
``filterByRemainingResources``) bound the summed capacity of a pool's
nodes. An instance type whose own capacity is above one of them is never
launched by that pool, so it holds no pod here either (a 96-core type under
a ``cpu`` limit of 64: ``pod-fits-no-node`` when no other machine holds the
pod); the types left are packed within every limit
(:func:`gangkit.supply.limits.most_within`).

These are *upper* bounds on capacity (and a lower bound on time), so a gang
they cannot hold can never run. Simplified: every Node counts in full, and a
NodePool's limits count in full too (gangkit's Karpenter charges only the
nodes it launched to them; the real one charges every node of the pool, so
it holds less); several limits are each packed on their own and the
smallest bound kept; a NodePool's GPUs (:meth:`Supply.gpus_for`) are its
GPU limit in full, lowered by its ``cpu`` and ``memory`` limits when it has
any; a limit on another resource (``pods``, ``ephemeral-storage``) is not
modelled; a node group's existing nodes are not subtracted from
``maxSize``; a static pool's nodes count as empty, whoever else may use
them.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field

from gangkit.model.nodes import Node
from gangkit.model.resources import Room
from gangkit.supply.cloud import InstanceType, Stages
from gangkit.supply.karpenter import capacity, within
from gangkit.supply.limits import most_gpus, most_within

__all__ = ["Shape", "Supply", "may_carry", "per_machine", "requirement_values", "supply_of"]


@dataclass(frozen=True)
class Shape:
    """One pod's request: GPUs, cores, bytes, and its nodeSelector (sorted pairs)."""

    gpus: int
    cpu: float = 0.0
    memory: int = 0
    selector: tuple[tuple[str, str], ...] = ()

    def with_labels(self, labels: tuple[tuple[str, str], ...]) -> "Shape":
        """The same pod with more nodeSelector labels (Kueue adds a flavor's nodeLabels)."""
        merged = dict(self.selector)
        merged.update(labels)
        return Shape(self.gpus, self.cpu, self.memory, tuple(sorted(merged.items())))

    def words(self) -> str:
        parts = [f"{self.gpus} nvidia.com/gpu"]
        if self.cpu:
            parts.append(f"{self.cpu:g} cpu")
        if self.memory:
            parts.append(f"{self.memory / 2**30:g}Gi memory")
        return ", ".join(parts)


def per_machine(gpus: int, cpu: float | None, memory: int | None, shape: Shape) -> float:
    """How many pods of ``shape`` an empty machine of this room holds (``inf`` when nothing limits them)."""
    if not Room(gpus, cpu, memory).fits(shape.gpus, shape.cpu, shape.memory):
        return 0.0
    counts = [math.inf]
    if shape.gpus:
        counts.append(gpus // shape.gpus)
    if shape.cpu and cpu is not None:
        counts.append(math.floor(cpu / shape.cpu + 1e-9))
    if shape.memory and memory is not None:
        counts.append(memory // shape.memory)
    return float(min(counts))


#: Labels every new machine gets some value of, chosen by the supplier when the pod asks (Karpenter's
#: well-known labels and the clouds' instance labels): a pod selecting any value of them is not refused here.
OPEN_KEYS = ("topology.kubernetes.io/zone", "topology.kubernetes.io/region", "kubernetes.io/arch", "kubernetes.io/os",
             "karpenter.sh/capacity-type")
OPEN_PREFIXES = ("karpenter.k8s.aws/", "karpenter.azure.com/", "cloud.google.com/")
ANY_VALUE = None


def requirement_values(pool_doc) -> dict[str, frozenset | None]:
    """A NodePool's ``spec.template.spec.requirements`` as label key -> allowed values (None: any value).

    ``In`` allows its values; ``Exists``, ``NotIn`` and ``Gt``/``Lt`` allow any
    value here (an upper bound); ``DoesNotExist`` allows none.
    """
    reqs = pool_doc
    for key in ("spec", "template", "spec", "requirements"):
        reqs = reqs.get(key) if isinstance(reqs, Mapping) else None
    out: dict[str, frozenset | None] = {}
    for req in reqs if isinstance(reqs, list) else []:
        if not isinstance(req, Mapping) or not isinstance(req.get("key"), str):
            continue
        op, values = req.get("operator"), req.get("values")
        if op == "In" and isinstance(values, list):
            out[req["key"]] = frozenset(str(v) for v in values)
        elif op == "DoesNotExist":
            out[req["key"]] = frozenset()
        else:
            out[req["key"]] = ANY_VALUE
    return out


def may_carry(fixed: dict, open_values: dict, selector) -> bool:
    """Could a new machine with these fixed labels (and these requirement-chosen ones) match ``selector``?"""
    for k, v in selector:
        if k in fixed:
            if fixed[k] != v:
                return False
        elif k in open_values:
            allowed = open_values[k]
            if allowed is not ANY_VALUE and v not in allowed:
                return False
        elif not (k in OPEN_KEYS or k.startswith(OPEN_PREFIXES)):
            return False
    return True


@dataclass
class Supply:
    """The Nodes and the node suppliers of a stack's files (a supplier may be None).

    ``requirements``: per NodePool name, the labels its requirements let
    Karpenter choose (:func:`requirement_values`); gangkit's Karpenter reads
    only the instance-type requirement, the check allows them all.
    ``submissions``: the first and the last job's submission time, seconds
    (a static pool's nodes are launched at the first).
    """

    nodes: list[Node]
    karpenter: object = None  # gangkit.supply.Karpenter
    autoscaler: object = None  # gangkit.supply.ClusterAutoscaler
    requirements: dict = field(default_factory=dict)
    submissions: tuple[float, float] = (0.0, 0.0)

    @property
    def empty(self) -> bool:
        return not self.nodes and self.karpenter is None and self.autoscaler is None

    def _pool_match(self, pool, type_name: str, selector) -> bool:
        return may_carry(pool.node_labels(type_name), self.requirements.get(pool.name, {}), selector)

    @staticmethod
    def _launchable(pool, it: InstanceType) -> bool:
        """May the pool launch this type at all: is its capacity within every limit the pool sets (a static pool
        sets none that applies)?"""
        return within(capacity(it), pool.enforced)

    def _group_match(self, group, selector) -> bool:
        return may_carry(group.node_labels(), {}, selector)

    def _pool_types(self) -> list[tuple[object, InstanceType]]:
        """(pool, instance type) for every machine a NodePool may bring: a dynamic pool's allowed types, a static
        pool's one type (none when it keeps no node)."""
        k = self.karpenter
        if k is None:
            return []
        out = []
        for pool in k.nodepools:
            if pool.static:
                it, _ = self._static(pool)
                if it is not None:
                    out.append((pool, it))
            else:
                out.extend((pool, k.instance_types[t]) for t in pool.instance_types)
        return out

    def _static(self, pool) -> tuple[InstanceType | None, int]:
        """A static pool's type and node count, ``min(replicas, limits.nodes)`` (None, 0 when it keeps none)."""
        return self.karpenter.static_nodes.get(pool.name, (None, 0))

    def _groups(self) -> list:
        return [] if self.autoscaler is None else [g for g in self.autoscaler.node_groups if g.max_size > 0]

    def carries(self, labels: tuple[tuple[str, str], ...]) -> bool:
        """Does some Node, or some machine a supplier may launch, carry all these labels?"""
        return (any(n.matches(labels) for n in self.nodes)
                or any(self._pool_match(pool, it.name, labels) for pool, it in self._pool_types())
                or any(self._group_match(g, labels) for g in self._groups()))

    # -- one pod --------------------------------------------------------------------------
    def holds(self, shape: Shape) -> bool:
        """Could one pod of this shape be placed on some Node, or on a machine some supplier may launch?"""
        if any(n.matches(shape.selector) and per_machine(n.gpus, n.cpu, n.memory, shape) >= 1 for n in self.nodes):
            return True
        return self._new_machine_holds(shape) is not None

    def _new_machine_holds(self, shape: Shape) -> str | None:
        """Which supplier may launch a machine that holds one such pod (None: none)."""
        for pool, it in self._pool_types():
            if self._launchable(pool, it) and per_machine(it.gpus, it.cpu, it.memory, shape) >= 1 \
                    and self._pool_match(pool, it.name, shape.selector):
                return "karpenter"
        for g in self._groups():
            it = g.instance_type
            if per_machine(it.gpus, it.cpu, it.memory, shape) >= 1 and self._group_match(g, shape.selector):
                return "autoscaler"
        return None

    def pools_for(self, shape: Shape) -> list[str]:
        """The NodePools with an instance type that holds such a pod and may carry its labels (limits aside)."""
        return list(dict.fromkeys(pool.name for pool, it in self._pool_types()
                                  if per_machine(it.gpus, it.cpu, it.memory, shape) >= 1
                                  and self._pool_match(pool, it.name, shape.selector)))

    def groups_for(self, shape: Shape) -> list[str]:
        """The node groups whose machines hold such a pod and carry its labels."""
        return [g.name for g in self._groups() if self._group_match(g, shape.selector)
                and per_machine(g.instance_type.gpus, g.instance_type.cpu, g.instance_type.memory, shape) >= 1]

    def largest(self, shape: Shape) -> dict[str, int]:
        """The most GPUs of one Node and of one machine each supplier may launch, for the pod's labels."""
        out = {"node_gpus": max((n.gpus for n in self.nodes if n.matches(shape.selector)), default=0)}
        if self.karpenter is not None:
            out["nodepool_gpus"] = max((it.gpus for pool, it in self._pool_types() if self._launchable(pool, it)
                                        and self._pool_match(pool, it.name, shape.selector)), default=0)
        if self.autoscaler is not None:
            out["node_group_gpus"] = max((g.instance_type.gpus for g in self._groups()
                                          if self._group_match(g, shape.selector)), default=0)
        return out

    # -- many pods -----------------------------------------------------------------------
    def most_pods(self, shape: Shape) -> tuple[float, dict[str, float]]:
        """The most pods of ``shape`` placed at once, and where they would be (``nodes``, each pool and group)."""
        parts: dict[str, float] = {"nodes": self.on_nodes(shape)}
        if self.karpenter is not None:
            for pool in self.karpenter.nodepools:
                if pool.static:  # its nodes, never more
                    it, count = self._static(pool)
                    fits = it is not None and self._pool_match(pool, it.name, shape.selector)
                    parts[f"NodePool {pool.name}"] = count * per_machine(it.gpus, it.cpu, it.memory, shape) if fits else 0.0
                    continue
                options = [(capacity(it), per_machine(it.gpus, it.cpu, it.memory, shape))
                           for it in (self.karpenter.instance_types[t] for t in pool.instance_types)
                           if self._launchable(pool, it) and self._pool_match(pool, it.name, shape.selector)]
                parts[f"NodePool {pool.name}"] = most_within(pool.enforced, options)
        for g in self._groups():
            it = g.instance_type
            k = per_machine(it.gpus, it.cpu, it.memory, shape) if self._group_match(g, shape.selector) else 0.0
            parts[f"node group {g.name}"] = g.max_size * k
        return sum(parts.values()), parts

    def on_nodes(self, shape: Shape) -> float:
        """The most pods of ``shape`` the existing Nodes hold at once."""
        return sum(per_machine(n.gpus, n.cpu, n.memory, shape) for n in self.nodes if n.matches(shape.selector))

    def gpus_for(self, labels: tuple[tuple[str, str], ...]) -> float:
        """Every GPU of the Nodes and of the machines the suppliers may launch that carry these labels."""
        total: float = sum(n.gpus for n in self.nodes if n.matches(labels))
        if self.karpenter is not None:
            for pool in self.karpenter.nodepools:
                if pool.static:
                    it, count = self._static(pool)
                    if it is not None and self._pool_match(pool, it.name, labels):
                        total += count * it.gpus
                elif any(self._pool_match(pool, t, labels) for t in pool.instance_types):
                    total += self._pool_gpus(pool, labels)
        total += sum(g.max_size * g.instance_type.gpus for g in self._groups() if self._group_match(g, labels))
        return total

    def _pool_gpus(self, pool, labels: tuple[tuple[str, str], ...]) -> float:
        """The most GPUs a dynamic pool may launch with these labels: its GPU limit in full, or, when it limits
        ``cpu`` or ``memory``, the most GPUs of the types it may launch (and that carry the labels) within those
        limits, if fewer (96 cores of 8-GPU types of 96 cores: one node, 8 GPUs)."""
        types = [self.karpenter.instance_types[t] for t in pool.instance_types]
        return most_gpus(pool.enforced, [capacity(it) for it in types
                                         if self._launchable(pool, it) and self._pool_match(pool, it.name, labels)])

    # -- time -----------------------------------------------------------------------------
    def provisioning_time(self, shape: Shape) -> tuple[float, str] | None:
        """The shortest wait for a new ready node that holds ``shape``, and how it adds up (None: no supplier can).

        A static pool's nodes do not wait for the pod: they are launched at the first job's submission, so the
        wait is their stages less the time from the first to the last submission (never below 0), a bound for
        every job of the files admitted when it is submitted (admitted later, it waits less)."""
        best: tuple[float, str] | None = None
        k = self.karpenter
        holding = [pool for pool, it in self._pool_types() if self._launchable(pool, it)
                   and per_machine(it.gpus, it.cpu, it.memory, shape) >= 1 and self._pool_match(pool, it.name, shape.selector)]
        t = _stages_total(k.stages) if k is not None else None
        if t is not None and any(not pool.static for pool in holding):
            best = (k.batch_idle + t, f"Karpenter: batchIdleDuration {k.batch_idle:g} s + {_stage_words(k.stages)}")
        static = [pool.name for pool in holding if pool.static]
        if t is not None and static:
            # launched at the first submission: a job submitted later finds them that much nearer ready, and the
            # bound must hold for every job
            first, last = self.submissions
            wait = max(0.0, first + t - last)
            how = (f"Karpenter: static NodePool {', '.join(static)}, launched at the first job's submission: "
                   f"{_stage_words(k.stages)}")
            if last > first:
                how += f", less the {last - first:g} s until the last job's submission"
            if best is None or wait < best[0]:
                best = (wait, how)
        a = self.autoscaler
        if a is not None and any(per_machine(g.instance_type.gpus, g.instance_type.cpu, g.instance_type.memory, shape) >= 1
                                 and self._group_match(g, shape.selector) for g in self._groups()):
            t = _stages_total(a.stages)
            if t is not None and (best is None or t < best[0]):
                best = (t, f"cluster-autoscaler: {_stage_words(a.stages)}")
        return best


def _stages_total(stages: Stages) -> float | None:
    """Seconds from launch to a usable node; None when a stage is a random distribution (not judged)."""
    parts = (stages.registered, stages.initialized, stages.image_pull)
    if any(callable(p) for p in parts):
        return None
    return float(sum(max(0.0, float(p)) for p in parts))


def _stage_words(stages: Stages) -> str:
    text = f"registered {float(stages.registered):g} s + initialized {float(stages.initialized):g} s"
    if float(stages.image_pull):
        text += f" + image pull {float(stages.image_pull):g} s"
    return text


def supply_of(inv) -> Supply:
    """The supply an :class:`~gangkit.consistency.inventory.Inventory` describes (its Nodes, NodePools, node groups)."""
    submitted = [e.job.submit_time for e in inv.jobs if e.job is not None]
    return Supply(inv.nodes, inv.karpenter, inv.autoscaler,
                  {o.name: requirement_values(o.doc) for o in inv.of_role("NodePool")},
                  (min(submitted), max(submitted)) if submitted else (0.0, 0.0))
