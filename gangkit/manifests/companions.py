"""Companion objects: kinds that configure something gangkit does not simulate, accepted with one warning each.

A real file rarely holds only what a simulation needs. Karpenter's NodePool
comes with the EC2NodeClass it points to, Kueue's topology-aware ClusterQueue
with its Topology, a MultiKueue set-up with the clusters it dispatches to, a
second scheduler with its KubeSchedulerConfiguration. Refusing the whole file
for such an object would stop a platform engineer at the first step, and
ignoring it silently would hide what the simulation leaves out. So each is
accepted with one warning naming the object and saying what is not modelled;
where the real system gives the object a cheap, exact effect, gangkit gives
it the same. (A Kueue Topology that a ResourceFlavor names is simulated, by
:mod:`gangkit.kueue.tas`, and its warning is taken back; one that no flavor
names keeps it.) The one read in part:

- ``KubeSchedulerConfiguration`` (``kubescheduler.config.k8s.io/v1``): the
  ``Coscheduling`` plugin's ``args`` of any profile set the coscheduling
  layer's ``permitWaitingTimeSeconds`` and ``podGroupBackoffSeconds``
  (scheduler-plugins ``apis/config`` ``CoschedulingArgs``; defaults 60 s and
  0 s); ``podGroupRejectPercentage`` and everything else are not modelled.

Kinds that are no one's (a ``DaemonSet``, a typo) stay errors: the
directory board (:mod:`gangkit.manifests.kinds`) lists what gangkit reads.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from gangkit.manifests.reader import ManifestObject, Reader, new_object, short

__all__ = ["COMPANIONS", "CoschedulingArgs", "coscheduling_args", "coscheduling_manifest", "read_object"]

#: (apiVersion, kind) -> what the object configures that gangkit does not simulate (the warning's words).
COMPANIONS: dict[tuple[str, str], str] = {
    ("karpenter.k8s.aws/v1", "EC2NodeClass"):
        "it configures the AWS side of the nodes a NodePool launches (AMI, subnets, security groups, block devices); "
        "gangkit's NodePools launch their instance types without it",
    ("karpenter.azure.com/v1beta1", "AKSNodeClass"):
        "it configures the Azure side of the nodes a NodePool launches (image family, OS disk); "
        "gangkit's NodePools launch their instance types without it",
    ("karpenter.kwok.sh/v1alpha1", "KWOKNodeClass"):
        "it configures KWOK's simulated nodes; gangkit's NodePools launch their instance types without it",
    ("karpenter.sh/v1", "NodeClaim"):
        "a NodeClaim is Karpenter's record of a node it launched or is launching; gangkit reads the Nodes "
        "themselves and launches its own NodeClaims",
    **{(f"kueue.x-k8s.io/{v}", "Topology"):
       "no ResourceFlavor names it (spec.topologyName), so it has no effect; topology-aware scheduling is "
       "simulated only for flavors that name a Topology"
       for v in ("v1beta2", "v1beta1")},
    **{(f"kueue.x-k8s.io/{v}", kind):
       "MultiKueue dispatches workloads to other clusters; gangkit simulates one cluster"
       for v in ("v1beta2", "v1beta1") for kind in ("MultiKueueConfig", "MultiKueueCluster")},
    ("kubescheduler.config.k8s.io/v1", "KubeSchedulerConfiguration"):
        "gangkit reads only the Coscheduling plugin's permitWaitingTimeSeconds and podGroupBackoffSeconds; "
        "profiles, other plugins and their weights are not modelled (NodeResourcesFit's scoringStrategy neither: "
        "the Simulation's scoring, scoringResources and requestedToCapacityRatio set it)",
}
UNNAMED = ("KubeSchedulerConfiguration",)  # a component configuration, not an API object: it has no metadata


def read_object(r: Reader, doc: Mapping, where: str, role: str) -> ManifestObject | None:
    """Accept one companion object, with a warning saying what gangkit leaves out."""
    api = doc.get("apiVersion")
    if role in UNNAMED:
        o = new_object(doc, where)
    else:
        o = r.check_object(doc, where, True)
        if o is None:
            return None
    how = "is read in part" if role in UNNAMED else "is accepted and not simulated"
    r.notes.append(f"{o.label} ({api}) {how}: {COMPANIONS[(api, doc.get('kind'))]}")
    return o


@dataclass(frozen=True)
class CoschedulingArgs:
    """The Coscheduling plugin's arguments gangkit models (scheduler-plugins ``CoschedulingArgs``)."""

    permit_waiting_time: float = 60.0  # permitWaitingTimeSeconds
    pod_group_backoff: float = 0.0  # podGroupBackoffSeconds


def coscheduling_args(r: Reader, objects: list[ManifestObject]) -> CoschedulingArgs | None:
    """The Coscheduling plugin's arguments from the input's KubeSchedulerConfigurations (None: none given).

    Every profile's ``pluginConfig`` entry named ``Coscheduling`` is read; two
    that disagree are an error (gangkit models one coscheduling layer).
    """
    found: list[tuple[str, dict]] = []
    for o in objects:
        profiles = o.doc.get("profiles")
        if profiles is not None and not isinstance(profiles, list):
            r.error(o.label, "profiles", f"expected a list of profiles, got {short(profiles)}")
            continue
        for i, profile in enumerate(profiles or []):
            configs = profile.get("pluginConfig") if isinstance(profile, Mapping) else None
            for k, config in enumerate(configs if isinstance(configs, list) else []):
                if isinstance(config, Mapping) and config.get("name") == "Coscheduling":
                    where = f"profiles[{i}].pluginConfig[{k}].args"
                    args = r.mapping(config.get("args"), o.label, where)
                    found.append((f"{o.label} {where}", _args(r, o.label, where, args)))
    if not found:
        return None
    values = {tuple(sorted(a.items())) for _, a in found}
    if len(values) > 1:
        r.error(found[1][0].split(" profiles", 1)[0], found[1][0].split(" ", 2)[-1],
                f"Coscheduling arguments differ from {found[0][0]}; gangkit models one coscheduling layer")
        return None
    return CoschedulingArgs(**found[0][1])


def _args(r: Reader, obj: str, where: str, args: dict) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, name, minimum in (("permitWaitingTimeSeconds", "permit_waiting_time", 1),
                               ("podGroupBackoffSeconds", "pod_group_backoff", 0)):
        if key in args:
            value = r.whole(args[key], obj, f"{where}.{key}", minimum)
            if value is not None:
                out[name] = float(value)
    for key in args:
        if key not in ("permitWaitingTimeSeconds", "podGroupBackoffSeconds"):
            r.unknown.append(f"{obj}: {where}.{key}")
    return out


def coscheduling_manifest(args: CoschedulingArgs) -> dict:
    """The KubeSchedulerConfiguration :func:`coscheduling_args` reads back: the Coscheduling plugin in the
    profile of scheduler-plugins' second scheduler (``scheduler-plugins-scheduler``), with its arguments."""
    return {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration", "profiles": [{
        "schedulerName": "scheduler-plugins-scheduler",
        "plugins": {"multiPoint": {"enabled": [{"name": "Coscheduling"}]},
                    "queueSort": {"enabled": [{"name": "Coscheduling"}], "disabled": [{"name": "*"}]}},
        "pluginConfig": [{"name": "Coscheduling", "args": {
            "permitWaitingTimeSeconds": int(args.permit_waiting_time),
            "podGroupBackoffSeconds": int(args.pod_group_backoff)}}],
    }]}
