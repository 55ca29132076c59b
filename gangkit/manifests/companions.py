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
  0 s); ``podGroupRejectPercentage`` is not modelled. The ``NodeResourcesFit``
  plugin's ``scoringStrategy`` sets the run's node scoring
  (:func:`scoring_settings`); the other plugins, their weights, and profiles
  beyond the scoring they agree on are not modelled, each named in a warning.

Kinds that are no one's (a ``DaemonSet``, a typo) stay errors: the
directory board (:mod:`gangkit.manifests.kinds`) lists what gangkit reads.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from gangkit.kueue.tas.manifests import UNNAMED_TOPOLOGY
from gangkit.model.reading import ManifestObject, Reader, new_object, short
from gangkit.model.scenario import RATIO_RESOURCES, RunSettings

__all__ = ["COMPANIONS", "CoschedulingArgs", "apply_scoring", "coscheduling_args", "coscheduling_manifest",
           "read_object", "scoring_settings"]

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
    **{(f"kueue.x-k8s.io/{v}", "Topology"): UNNAMED_TOPOLOGY for v in ("v1beta2", "v1beta1")},
    **{(f"kueue.x-k8s.io/{v}", kind):
       "MultiKueue dispatches workloads to other clusters; gangkit simulates one cluster"
       for v in ("v1beta2", "v1beta1") for kind in ("MultiKueueConfig", "MultiKueueCluster")},
    **{(f"resource.k8s.io/{v}", kind):
       "Dynamic Resource Allocation (resource.k8s.io, GA in Kubernetes 1.34) is not modelled: gangkit counts GPUs "
       "as the extended resource nvidia.com/gpu of Nodes and pod requests, so devices a pod claims through a "
       "ResourceClaim or ResourceClaimTemplate are not counted (give the pods an nvidia.com/gpu limit to simulate them)"
       for v in ("v1",) for kind in ("ResourceClaimTemplate", "ResourceClaim", "DeviceClass", "ResourceSlice")},
    ("kubescheduler.config.k8s.io/v1", "KubeSchedulerConfiguration"):
        "gangkit reads only the Coscheduling plugin's permitWaitingTimeSeconds and podGroupBackoffSeconds and "
        "NodeResourcesFit's scoringStrategy (the run's scoring); profiles, other plugins and their weights are not "
        "modelled",
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


# ------------------------------------------------------------------ NodeResourcesFit's scoring strategy
#: NodeResourcesFit's scoringStrategy.type values (kube-scheduler 1.35, pkg/scheduler/apis/config/types_pluginargs.go)
SCORING_TYPES = ("LeastAllocated", "MostAllocated", "RequestedToCapacityRatio")
#: the score plugins of the default profile and their weights (pkg/scheduler/apis/config/v1/default_plugins.go)
DEFAULT_SCORE_WEIGHTS = {"TaintToleration": 3, "NodeAffinity": 2, "NodeResourcesFit": 1, "PodTopologySpread": 2,
                         "InterPodAffinity": 2, "NodeResourcesBalancedAllocation": 1, "ImageLocality": 1}
_EXTENSION_POINTS = ("multiPoint", "score", "preScore")


def scoring_settings(r: Reader, objects: list[ManifestObject]) -> dict[str, Any]:
    """The run settings that NodeResourcesFit's ``scoringStrategy`` sets ({}: no configuration gives one).

    kube-scheduler 1.35's ``NodeResourcesFitArgs.scoringStrategy``
    (``pkg/scheduler/apis/config/v1/defaults.go`` fills a missing or empty
    ``resources`` with ``cpu`` and ``memory``, and a weight of 0 or none with
    1; validation wants a known ``type``, weights 1..100 and, for
    ``RequestedToCapacityRatio``, a shape). How each type maps:

    - ``LeastAllocated`` -> ``scoring="default-profile"`` with its resources
      (``scoring_resources``): exact, in kube-scheduler's integer arithmetic,
      with NodeResourcesBalancedAllocation as the default profile runs it
      (:mod:`gangkit.engine.default_profile`). With ``nvidia.com/gpu`` alone
      this spreads pods by free GPUs.
    - ``MostAllocated`` -> ``scoring="MostAllocated"``, gangkit's packing on
      every modelled resource in exact fractions: resources, weights and
      BalancedAllocation are not applied (a warning says so).
    - ``RequestedToCapacityRatio`` -> the same scoring, shape and resources
      (:mod:`gangkit.engine.ratio`); BalancedAllocation is not added (a
      warning says so).

    Resources other than ``nvidia.com/gpu``, ``cpu`` and ``memory`` are left
    out with a warning. gangkit applies one scoring to every pod: profiles
    that give different strategies are an error. Plugin weights, disabled
    plugins and the arguments of NodeResourcesBalancedAllocation are not
    modelled and are named in a warning.
    """
    found: list[tuple[str, str, dict]] = []  # (object label, field, settings)
    for o in objects:
        profiles = o.doc.get("profiles")
        if not isinstance(profiles, list):
            continue  # (coscheduling_args reports a profiles field that is not a list)
        if len(profiles) > 1:
            r.notes.append(f"{o.label}: {len(profiles)} profiles; gangkit scores nodes one way for every pod, "
                           "whichever profile (schedulerName) would place it")
        for i, profile in enumerate(profiles):
            if not isinstance(profile, Mapping):
                continue
            _plugin_notes(r, o.label, f"profiles[{i}].plugins", profile.get("plugins"))
            configs = profile.get("pluginConfig")
            for k, config in enumerate(configs if isinstance(configs, list) else []):
                if not isinstance(config, Mapping):
                    continue
                where = f"profiles[{i}].pluginConfig[{k}].args"
                if config.get("name") == "NodeResourcesBalancedAllocation" and config.get("args"):
                    r.notes.append(f"{o.label} {where} (NodeResourcesBalancedAllocation) is not modelled: gangkit's "
                                   "default-profile balances cpu and memory, the plugin's defaults")
                if config.get("name") != "NodeResourcesFit":
                    continue
                args = r.mapping(config.get("args"), o.label, where)
                for key in args:
                    if key in ("ignoredResources", "ignoredResourceGroups"):
                        r.notes.append(f"{o.label} {where}.{key} is not modelled: gangkit's nodes have only "
                                       "nvidia.com/gpu, cpu and memory")
                    elif key != "scoringStrategy":
                        r.unknown.append(f"{o.label}: {where}.{key}")
                if "scoringStrategy" in args:
                    settings = _strategy(r, o.label, f"{where}.scoringStrategy", args["scoringStrategy"])
                    if settings is not None:
                        found.append((o.label, f"{where}.scoringStrategy", settings))
    if not found:
        return {}
    label, where, first = found[0]
    for other_label, other_where, settings in found[1:]:
        if settings != first:
            r.error(other_label, other_where, f"a scoring strategy that differs from {label} {where}; gangkit "
                    "scores nodes one way for every pod")
            return {}
    return first


def apply_scoring(r: Reader, configs: list[ManifestObject], simulations: list[ManifestObject],
                  settings: RunSettings) -> RunSettings:
    """``settings`` with the scoring of the KubeSchedulerConfigurations (:func:`scoring_settings`).

    A Simulation that names its own ``spec.scoring`` must name the same one: two different scorings for one
    run are an error naming both.
    """
    scoring = scoring_settings(r, configs)
    if not scoring:
        return settings
    for o in simulations:
        spec = o.doc.get("spec")
        given = spec.get("scoring") if isinstance(spec, Mapping) else None
        if given is not None and given != scoring["scoring"]:
            r.error(o.label, "spec.scoring", f"expected {scoring['scoring']!r}, the scoring the "
                    f"KubeSchedulerConfiguration's NodeResourcesFit scoringStrategy sets, got {given!r}; give it "
                    "in one place")
            return settings
    return replace(settings, **scoring)


def _plugin_notes(r: Reader, obj: str, where: str, plugins: Any) -> None:
    """A warning for each score plugin whose weight differs from the default profile's, or that is disabled."""
    if not isinstance(plugins, Mapping):
        return
    for point in _EXTENSION_POINTS:
        entry = plugins.get(point)
        if not isinstance(entry, Mapping):
            continue
        for kind in ("enabled", "disabled"):
            items = entry.get(kind)
            for j, p in enumerate(items if isinstance(items, list) else []):
                name = p.get("name") if isinstance(p, Mapping) else None
                if name not in DEFAULT_SCORE_WEIGHTS and name != "*":
                    continue
                here = f"{where}.{point}.{kind}[{j}]"
                if kind == "disabled":
                    r.notes.append(f"{obj} {here} disables {name} ({point}); gangkit's scoring does not model that")
                elif isinstance(p, Mapping) and p.get("weight") not in (None, 0, DEFAULT_SCORE_WEIGHTS[name]):
                    r.notes.append(f"{obj} {here}.weight {p.get('weight')!r} for {name} is not modelled (gangkit "
                                   f"weighs the default profile's plugins as kube-scheduler does by default)")


def _strategy(r: Reader, obj: str, where: str, value: Any) -> dict[str, Any] | None:
    """One ``scoringStrategy`` -> RunSettings fields (scoring, scoring_resources, scoring_shape), or None."""
    strategy = r.mapping(value, obj, where)
    for key in strategy:
        if key not in ("type", "resources", "requestedToCapacityRatio"):
            r.unknown.append(f"{obj}: {where}.{key}")
    kind = strategy.get("type")
    if kind not in SCORING_TYPES:
        r.error(obj, f"{where}.type", f"expected one of {', '.join(SCORING_TYPES)}, got {kind!r}")
        return None
    resources = _resources(r, obj, f"{where}.resources", strategy.get("resources"))
    if resources is None:
        return None
    out: dict[str, Any] = {"scoring_resources": resources}
    if kind == "LeastAllocated":
        out["scoring"] = "default-profile"
    elif kind == "MostAllocated":
        out = {"scoring": "MostAllocated"}  # (its resources are not applied: see the warning)
        r.notes.append(f"{obj} {where}: type MostAllocated is simulated by gangkit's MostAllocated, the mean share "
                       "used of every resource the nodes model, in exact fractions; its resources and weights, the "
                       "100m/200 MiB of pods without requests and NodeResourcesBalancedAllocation are not applied")
    else:
        out["scoring"] = "RequestedToCapacityRatio"
        ratio = strategy.get("requestedToCapacityRatio")
        points = ratio.get("shape") if isinstance(ratio, Mapping) else None
        if not isinstance(points, list) or not points:
            r.error(obj, f"{where}.requestedToCapacityRatio.shape",
                    f"expected a list of {{utilization, score}} points for type RequestedToCapacityRatio, got {points!r}")
            return None
        out["scoring_shape"] = tuple((p.get("utilization"), p.get("score")) if isinstance(p, Mapping) else (p,)
                                     for p in points)
        r.notes.append(f"{obj} {where}: NodeResourcesBalancedAllocation is not added to the RequestedToCapacityRatio "
                       "score, and pods without requests count as asking for none (kube-scheduler: 100m, 200 MiB)")
    if kind != "RequestedToCapacityRatio" and "requestedToCapacityRatio" in strategy:
        r.notes.append(f"{obj} {where}.requestedToCapacityRatio is not used by type {kind}")
    fields = {"scoring_shape": f"{where}.requestedToCapacityRatio.shape", "scoring_resources": f"{where}.resources"}
    problems = [p for p in RunSettings(**out).problems() if p.field in fields]
    for p in problems:
        r.error(obj, fields[p.field], p.message)
    return None if problems else out


def _resources(r: Reader, obj: str, where: str, value: Any) -> tuple | None:
    """``resources`` -> ((name, weight), ...): kube-scheduler's defaults for none, weight 0 or none -> 1;
    resources gangkit does not model are left out with a warning."""
    if value is None or value == []:
        return (("cpu", 1), ("memory", 1))
    if not isinstance(value, list):
        r.error(obj, where, f"expected a list of {{name, weight}}, got {short(value)}")
        return None
    out, left_out = [], []
    for j, item in enumerate(value):
        if not isinstance(item, Mapping) or not isinstance(item.get("name"), str):
            r.error(obj, f"{where}[{j}]", f"expected {{name, weight}} with a resource name, got {short(item)}")
            return None
        weight = item.get("weight", 0)
        weight = r.whole(weight, obj, f"{where}[{j}].weight", 0, 100)
        if weight is None:
            return None
        if item["name"] not in RATIO_RESOURCES:
            left_out.append(item["name"])
            continue
        out.append((item["name"], weight or 1))
    if left_out:
        r.notes.append(f"{obj} {where}: {', '.join(left_out)} left out of the scoring (gangkit's nodes have only "
                       f"{', '.join(RATIO_RESOURCES)})")
    if not out:
        r.error(obj, where, f"expected at least one of {', '.join(RATIO_RESOURCES)} (gangkit scores no other resource)")
        return None
    return tuple(out)
