"""What an admission layer hands the engine when it admits a job: how many pods, and where they may go.

Kueue (v0.19) records an admission in the Workload's ``status.admission``
(``apis/kueue/v1beta2``): one ``podSetAssignments`` entry per pod set, with its
``name``, ``flavors`` (resource -> ResourceFlavor), ``count`` and, under
Topology Aware Scheduling, its ``topologyAssignment``
(:class:`gangkit.kueue.objects.Admission` mirrors it). The job integration then
starts the job from it (``pkg/podset/podset.go``, ``FromAssignment``): per pod
set a ``PodSetInfo`` whose ``Count`` is the assignment's count (the pod set's
own when it has none: partial admission admits fewer) and whose
``NodeSelector`` holds every assigned flavor's ``spec.nodeLabels``. Under TAS
the topology ungater (``pkg/controller/tas/topology_ungater.go``) then copies
each pod's domain labels into that pod's own node selector.

:class:`Admitted` is that hand-over, one frozen value per admission on the
engine's job (``JobState.admitted``), read by name: the engine makes the pods
(:meth:`Admitted.count`) and adds the labels to their node selector
(:meth:`Admitted.labels`); nothing else carries them. Simplified: tolerations,
annotations and the scheduling gate of ``PodSetInfo`` are not modelled.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Admitted"]


@dataclass(frozen=True, slots=True)
class Admitted:
    """One admission of one job, as the engine reads it (see the module docstring)."""

    #: the job's pod set name -> pods admitted (``PodSetInfo.Count``); a pod set not named keeps its own count
    counts: dict
    #: the job's pod set name -> labels added to the node selector of each of its pods (``PodSetInfo.NodeSelector``:
    #: the assigned flavors' node labels); a pod set without any is not named
    node_selector: dict
    #: pod index in the job -> labels for that pod alone, over its pod set's (Kueue TAS: the flavor's and its topology
    #: domain's, as the topology ungater sets them); None when no pod has any
    pod_node_selector: dict | None = None

    def count(self, pod_set) -> int:
        """How many pods of ``pod_set`` (a :class:`~gangkit.model.jobs.PodSet` of the job) are admitted."""
        return self.counts.get(pod_set.name, pod_set.count)

    def total(self) -> int:
        """Pods admitted over the pod sets named in :attr:`counts`."""
        return sum(self.counts.values())

    def labels(self, pod) -> dict | None:
        """The labels the admission adds to ``pod``'s node selector: its own (TAS), else its pod set's, else None."""
        per_pod = self.pod_node_selector
        return (per_pod and per_pod.get(pod.index)) or self.node_selector.get(pod.pod_set.name)
