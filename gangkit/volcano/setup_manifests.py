"""Volcano's scheduler configuration: the ``volcano-scheduler.conf`` of its ConfigMap, read into a VolcanoSetup.

Volcano's scheduler takes its actions and its plugin tiers from one file,
which its Helm chart puts in the ConfigMap ``volcano-scheduler-configmap``
under the key ``volcano-scheduler.conf`` (Volcano v1.15.1
``installer/helm/chart/volcano/config/volcano-scheduler.conf``, parsed by
``UnmarshalSchedulerConf`` in ``pkg/scheduler/util.go``)::

    actions: "enqueue, allocate, backfill"
    tiers:
    - plugins:
      - name: priority
      - name: gang
      - name: conformance
    - plugins:
      - name: overcommit
      - name: drf
      - name: predicates
      - name: proportion
      - name: nodeorder
      - name: binpack

What gangkit takes from it, into :class:`~gangkit.volcano.api.VolcanoSetup`:

- ``actions``: ``enqueue`` present or not (``VolcanoSetup.enqueue``). An
  action Volcano does not register is refused, as Volcano refuses the file
  ("failed to find Action"). ``allocate`` is always run; ``preempt`` and
  ``reclaim`` (and their ``gang`` forms) run only with the run setting
  ``preemption``, ``backfill`` only with ``ordering: volcano-backfill``: a
  note says so when the file and the settings disagree;
- the ``overcommit`` plugin: listed or not (``VolcanoSetup.overcommit``:
  without it enqueue does not compare with the cluster's idle room), and its
  argument ``overcommit-factor`` (below 1 Volcano logs a warning and keeps
  its default, 1.2; gangkit refuses it);
- the ``sla`` plugin: its argument ``sla-waiting-time`` and whether it sits in
  a tier before the ``gang`` plugin's (:class:`~gangkit.volcano.plugins.sla.SlaPlugin`,
  ``first_tier``; a vote in the gang plugin's tier or a later one is
  overruled by gang's Reject, ``framework/session_plugins.go``).

Every other plugin is noted: ``priority``, ``gang``, ``conformance``, ``drf``,
``predicates`` and ``proportion`` are what gangkit always runs (without
``proportion`` Volcano would not share queues by weight, without ``drf`` it
would not order a queue's ready jobs by their dominant share; gangkit still
does both, and says so); ``nodeorder`` and ``binpack`` score nodes, which gangkit leaves
to the run setting ``scoring`` (``binpack`` with ``nvidia.com/gpu`` among its
``binpack.resources`` packs GPUs: ``scoring: MostAllocated``); the rest are
not modelled. Other ConfigMaps are read by nobody in Volcano's scheduler and
are noted as not read.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import yaml

from gangkit.model.errors import ScenarioError
from gangkit.model.quantity import format_duration, parse_duration
from gangkit.model.reading import ManifestObject, Reader, short
from gangkit.volcano.api import DEFAULT_OVERCOMMIT_FACTOR, VolcanoSetup
from gangkit.volcano.plugins.sla import SlaPlugin

CONFIG_MAP = "volcano-scheduler-configmap"  # the chart's name for it (namespace volcano-system)
CONFIG_KEY = "volcano-scheduler.conf"
#: the actions Volcano v1.15.1 registers (pkg/scheduler/actions/factory.go)
ACTIONS = ("enqueue", "allocate", "backfill", "preempt", "reclaim", "gangpreempt", "gangreclaim", "shuffle")
#: plugins gangkit always runs as Volcano's default configuration has them
ALWAYS = ("priority", "gang", "conformance", "drf", "predicates", "proportion")
SCORING = ("nodeorder", "binpack")


def read_config(r: Reader, objects: list[ManifestObject]) -> dict | None:
    """The VolcanoSetup fields the input's Volcano scheduler configuration sets (None: the input has none).

    ``objects`` are the input's ConfigMaps; the one holding ``volcano-scheduler.conf`` is read, the others
    are noted as not read.
    """
    found = [o for o in objects if isinstance(o.doc.get("data"), Mapping) and CONFIG_KEY in o.doc["data"]]
    for o in objects:
        if o not in found:
            r.notes.append(f"{o.label}: not read (gangkit reads only Volcano's scheduler configuration, "
                           f"a ConfigMap with the key {CONFIG_KEY})")
    if not found:
        return None
    if len(found) > 1:
        r.error(found[1].label, f"data.{CONFIG_KEY}", f"expected one Volcano scheduler configuration in the input, "
                                                     f"found another in {found[0].label}")
        return None
    o = found[0]
    text = o.doc["data"][CONFIG_KEY]
    where = f"data.{CONFIG_KEY}"
    if not isinstance(text, str):
        r.error(o.label, where, f"expected the configuration as a string (a YAML document), got {short(text)}")
        return None
    try:
        conf = yaml.safe_load(text)
    except yaml.YAMLError as e:
        r.error(o.label, where, f"expected YAML, which Volcano's scheduler could parse: {str(e).splitlines()[0]}")
        return None
    if not isinstance(conf, Mapping):
        r.error(o.label, where, f"expected a mapping with actions and tiers, got {short(conf)}")
        return None
    out = _actions(r, o.label, where, conf.get("actions"))
    tiers = conf.get("tiers", [])
    if not isinstance(tiers, list) or any(not isinstance(t, Mapping) for t in tiers):
        r.error(o.label, f"{where}: tiers", "expected a list of tiers, each a mapping with plugins")
        return out
    plugins = []  # (tier index, plugin mapping)
    for i, tier in enumerate(tiers):
        listed = tier.get("plugins", [])
        if not isinstance(listed, list) or any(not isinstance(p, Mapping) or not isinstance(p.get("name"), str)
                                               for p in listed):
            r.error(o.label, f"{where}: tiers[{i}].plugins", "expected a list of plugins, each with a name")
            return out
        plugins.extend((i, p) for p in listed)
    names = {p["name"]: i for i, p in plugins}
    for i, p in plugins:
        name, args, at = p["name"], p.get("arguments") or {}, f"{where}: tiers[{i}] plugin {p['name']}"
        if not isinstance(args, Mapping):
            r.error(o.label, f"{at}: arguments", f"expected a mapping, got {short(args)}")
            continue
        if name == "overcommit":
            factor = args.get("overcommit-factor", DEFAULT_OVERCOMMIT_FACTOR)
            if isinstance(factor, bool) or not isinstance(factor, (int, float)) or not math.isfinite(factor) \
                    or factor < 1:
                r.error(o.label, f"{at}: arguments.overcommit-factor",
                        f"expected a number >= 1 (Volcano ignores a smaller one and keeps 1.2), got {short(factor)}")
            else:
                out["overcommit_factor"] = float(factor)
        elif name == "sla":
            wait = _sla_waiting_time(r, o.label, f"{at}: arguments.sla-waiting-time", args)
            out["sla"] = SlaPlugin(waiting_time=wait, first_tier="gang" not in names or i < names["gang"])
        elif name in SCORING:
            packs = name == "binpack" and "nvidia.com/gpu" in str(args.get("binpack.resources", ""))
            r.notes.append(f"{o.label}: plugin {name} scores nodes; gangkit scores them by the run setting scoring"
                           + (" (binpack weighs nvidia.com/gpu here: scoring MostAllocated models it)" if packs else ""))
        elif name not in ALWAYS:
            r.notes.append(f"{o.label}: plugin {name} is not modelled")
    if "overcommit" not in names:
        out["overcommit"] = False  # enqueue then does not compare with the cluster's idle room
    if "proportion" not in names:
        r.notes.append(f"{o.label}: without the proportion plugin Volcano does not share queues by weight; "
                       "gangkit still does")
    if "drf" not in names:
        r.notes.append(f"{o.label}: without the drf plugin Volcano does not order a queue's jobs by their dominant "
                       "share; gangkit still does")
    return out


def _actions(r: Reader, obj: str, where: str, value: Any) -> dict:
    if not isinstance(value, str) or not value.strip():
        r.error(obj, f"{where}: actions", f'expected a comma-separated list such as "enqueue, allocate, backfill", '
                                          f"got {short(value)}")
        return {}
    actions = [a.strip() for a in value.split(",")]
    unknown = [a for a in actions if a not in ACTIONS]
    if unknown:
        r.error(obj, f"{where}: actions", f"expected actions Volcano registers ({', '.join(ACTIONS)}); "
                                          f"failed to find Action {unknown[0]!r}")
        return {}
    if "allocate" not in actions:
        r.notes.append(f"{obj}: actions without allocate place nothing in Volcano; gangkit's gang layer allocates")
    evicting = [a for a in actions if a in ("preempt", "reclaim", "gangpreempt", "gangreclaim")]
    if evicting:
        r.notes.append(f"{obj}: actions {', '.join(evicting)} run in gangkit with the run setting preemption "
                       "(Simulation spec.preemption: true) only")
    if "backfill" in actions:
        r.notes.append(f"{obj}: action backfill (best-effort pods) runs in gangkit with ordering volcano-backfill only")
    if "shuffle" in actions:
        r.notes.append(f"{obj}: action shuffle is not modelled")
    return {"enqueue": "enqueue" in actions}


def _sla_waiting_time(r: Reader, obj: str, where: str, args: Mapping) -> float | None:
    return go_waiting_time(r, obj, where, args["sla-waiting-time"]) if "sla-waiting-time" in args else None


def go_waiting_time(r: Reader, obj: str, where: str, value: Any) -> float | None:
    """An ``sla-waiting-time`` in seconds, parsed as Go's ``time.ParseDuration`` would take it (a unit is
    required, and only a duration above zero counts); else one error and None (Volcano logs it and ignores it)."""
    text = value.strip() if isinstance(value, str) else ""
    try:
        seconds = parse_duration(text, obj=obj, field=where) if text and text[-1].isalpha() else None
    except ScenarioError:
        seconds = None
    if seconds is None or seconds <= 0:
        r.error(obj, where, f"expected a Go duration above zero, such as 30m or 1h30m (Volcano's sla plugin "
                            f"ignores any other), got {short(value)}")
        return None
    return seconds


def config_manifest(setup: VolcanoSetup | None) -> dict | None:
    """The ConfigMap that gives Volcano's scheduler this setup's actions and plugins (None: the defaults do)."""
    if setup is None or (setup.enqueue and setup.sla is None and setup.overcommit
                         and setup.overcommit_factor == DEFAULT_OVERCOMMIT_FACTOR):
        return None
    first = [{"name": "priority"}, {"name": "gang"}, {"name": "conformance"}]
    second = [{"name": "drf"}, {"name": "predicates"}, {"name": "proportion"}, {"name": "nodeorder"}]
    if setup.overcommit:
        factor = {"arguments": {"overcommit-factor": setup.overcommit_factor}}
        second.insert(0, {"name": "overcommit"} | (factor if setup.overcommit_factor != DEFAULT_OVERCOMMIT_FACTOR else {}))
    tiers = [{"plugins": first}, {"plugins": second}]
    if setup.sla is not None:
        sla: dict[str, Any] = {"name": "sla"}
        if setup.sla.waiting_time is not None:
            sla["arguments"] = {"sla-waiting-time": format_duration(setup.sla.waiting_time)}
        if setup.sla.first_tier:
            tiers.insert(0, {"plugins": [sla]})
        else:
            first.append(sla)
    conf = {"actions": "enqueue, allocate, backfill" if setup.enqueue else "allocate, backfill", "tiers": tiers}
    return {"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": CONFIG_MAP, "namespace": "volcano-system"},
            "data": {CONFIG_KEY: yaml.safe_dump(conf, sort_keys=False)}}
