"""gangkit's ``Simulation`` kind (``gangkit/v1alpha1``): how to run the scenario, read and written back.

One object per input (:func:`one_simulation`) holds the run settings a learner
would otherwise pass to ``simulate(...)`` or on the command line (which
override it)::

    apiVersion: gangkit/v1alpha1
    kind: Simulation
    metadata:
      name: two-teams
      annotations: {gangkit/description: "two teams share 16 GPUs"}
    spec: {stack: kueue+gang, ordering: fifo, horizon: 24h, seed: 1}

:func:`read_simulation` turns its spec into :class:`~gangkit.model.scenario.RunSettings`
(each camelCase field to its setting, durations as Go durations, kube-scheduler's
``scoringResources`` and ``requestedToCapacityRatio.shape`` under the names of its
NodeResourcesFit ``scoringStrategy``), and :func:`simulation_manifest` writes the
settings back. RunSettings checks the values; a problem is reported at the spec's
field. Its metadata and unknown fields are checked with the core kinds
(:mod:`gangkit.manifests.core`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from gangkit.manifests.core import DESCRIPTION
from gangkit.model.quantity import format_duration
from gangkit.model.reading import ManifestObject, Reader
from gangkit.model.scenario import RunSettings, Scenario

__all__ = ["SIMULATION_API", "one_simulation", "read_simulation", "simulation_manifest"]

SIMULATION_API = "gangkit/v1alpha1"
_SIMULATION_FIELDS = {  # spec key -> RunSettings field
    "stack": "stack", "ordering": "ordering", "scoring": "scoring", "preemption": "preemption",
    "sessionPeriod": "session_period", "seed": "seed", "horizon": "horizon", "record": "record",
    "estimateFactor": "estimate_factor", "kubeGangRelease": "kube_gang_release",
}


def one_simulation(r: Reader, objects: list[ManifestObject]) -> None:
    """An input describes one run: at most one Simulation."""
    simulations = [o for o in objects if o.kind == "Simulation"]
    for o in simulations[1:]:
        r.error(o.label, "kind", f"expected at most one Simulation; {simulations[0].label} comes first")


def read_simulation(r: Reader, objects: list[ManifestObject], default_name: str) -> tuple[RunSettings, str, str]:
    """gangkit's ``Simulation`` kind -> :class:`RunSettings`, the scenario name and description."""
    if not objects:
        return RunSettings(), default_name, ""
    o = objects[0]
    obj = o.label
    meta = r.mapping(o.doc.get("metadata"), obj, "metadata")
    description = r.strings(meta.get("annotations"), obj, "metadata.annotations").get(DESCRIPTION, "")
    spec = r.mapping(o.doc.get("spec"), obj, "spec")
    kw: dict[str, Any] = {}
    for key, attr in _SIMULATION_FIELDS.items():
        if key not in spec:
            continue
        value, where = spec[key], f"spec.{key}"
        if key in ("sessionPeriod", "horizon"):
            value = r.duration(value, obj, where)
        elif key == "preemption" and not isinstance(value, bool):
            r.error(obj, where, f"expected true or false, got {value!r}")
            value = None
        elif key == "seed":
            value = r.whole(value, obj, where, 0)
        elif key == "estimateFactor":
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                r.error(obj, where, f"expected a number >= 1, got {value!r}")
                value = None
        elif key not in ("preemption", "seed") and not isinstance(value, str):
            r.error(obj, where, f"expected a string, got {value!r}")
            value = None
        if value is not None:
            kw[attr] = value
    kw.update(_ratio_fields(r, spec, obj))
    settings = RunSettings(**kw)
    camel = {v: k for k, v in _SIMULATION_FIELDS.items()}
    camel.update(scoring_shape="requestedToCapacityRatio.shape", scoring_resources="scoringResources")
    for p in settings.problems():
        r.error(obj, f"spec.{camel.get(p.field, p.field)}", p.message)
    return settings, o.name, description


def _ratio_fields(r: Reader, spec: Mapping, obj: str) -> dict[str, Any]:
    """``scoringResources`` and ``requestedToCapacityRatio.shape`` (the names of kube-scheduler's
    NodeResourcesFit ``scoringStrategy``) -> ``scoring_resources``, ``scoring_shape``; RunSettings checks them."""
    out: dict[str, Any] = {}
    if "scoringResources" in spec:
        items = spec["scoringResources"]
        if not isinstance(items, list):
            r.error(obj, "spec.scoringResources", f"expected a list of {{name, weight}}, got {items!r}")
        else:
            out["scoring_resources"] = tuple((i.get("name"), i.get("weight", 1)) if isinstance(i, Mapping) else (i,)
                                             for i in items)
    ratio = spec.get("requestedToCapacityRatio")
    if ratio is not None:
        points = ratio.get("shape") if isinstance(ratio, Mapping) else None
        if not isinstance(points, list):
            r.error(obj, "spec.requestedToCapacityRatio.shape", f"expected a list of {{utilization, score}}, got {ratio!r}")
        else:
            out["scoring_shape"] = tuple((p.get("utilization"), p.get("score")) if isinstance(p, Mapping) else (p,)
                                         for p in points)
    return out


def simulation_manifest(scenario: Scenario) -> dict:
    """gangkit's Simulation: the run settings, the scenario name and its description."""
    s = scenario.settings
    meta: dict[str, Any] = {"name": scenario.name}
    if scenario.description:
        meta["annotations"] = {DESCRIPTION: scenario.description}
    spec = {
        "stack": s.stack, "ordering": s.ordering, "scoring": s.scoring, "preemption": s.preemption,
        "sessionPeriod": format_duration(s.session_period), "seed": s.seed,
        "horizon": format_duration(s.horizon), "record": s.record,
    }
    if s.estimate_factor != 1.0:
        spec["estimateFactor"] = s.estimate_factor
    if s.kube_gang_release != RunSettings.kube_gang_release:
        spec["kubeGangRelease"] = s.kube_gang_release
    if s.scoring == "default-profile" and s.scoring_resources != RunSettings.scoring_resources:
        spec["scoringResources"] = [{"name": n, "weight": w} for n, w in s.scoring_resources]
    if s.scoring == "RequestedToCapacityRatio":
        spec["scoringResources"] = [{"name": n, "weight": w} for n, w in s.scoring_resources]
        spec["requestedToCapacityRatio"] = {"shape": [{"utilization": u, "score": v} for u, v in s.scoring_shape]}
    return {"apiVersion": SIMULATION_API, "kind": "Simulation", "metadata": meta, "spec": spec}
