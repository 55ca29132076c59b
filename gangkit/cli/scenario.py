"""Which scenario a command names: a built-in one, or YAML files of manifests (``gangkit run``, ``gangkit export``)."""

from __future__ import annotations

import re
from pathlib import Path

from gangkit.model.errors import Problem, ScenarioError
from gangkit.model.scenario import did_you_mean

__all__ = ["load_scenario", "node_manifests"]

NODES = re.compile(r"^(\d+)x(\d+)(?:,cpu=([^,]+))?(?:,memory=([^,]+))?$")
NODES_FORM = "COUNTxGPUS[,cpu=CORES][,memory=BYTES], for example 4x8 or 2x8,cpu=96,memory=1Ti"


def load_scenario(specs: str | list[str], seed: int | None, nodes: str | None = None, snapshot_time: str | None = None):
    """The built-in scenario ``specs`` names (with ``seed``), or the scenario of the YAML files in ``specs``.

    Several files are read together (the queues in one, the jobs in another, as Kueue's examples
    are written); ``nodes`` (``--nodes 4x8``) adds that many Nodes to them.
    """
    from gangkit.workloads import scenarios

    specs = [specs] if isinstance(specs, str) else list(specs)
    if len(specs) == 1 and specs[0] in scenarios.NAMES:
        if nodes is not None:
            raise ScenarioError([Problem(f"Scenario {specs[0]}", "--nodes", "a built-in scenario has its own nodes; "
                                         "--nodes adds nodes to YAML files")])
        return scenarios.load(specs[0], seed=seed)
    paths = []
    for spec in specs:
        path = Path(spec)
        if path.suffix in (".yaml", ".yml", ".json") or path.exists():
            if not path.exists():
                raise ScenarioError([Problem(f"Scenario file {spec}", "", "not found")])
            paths.append(path)
            continue
        if spec in scenarios.NAMES:
            raise ScenarioError([Problem(f"Scenario {spec}", "", "a built-in scenario runs alone, not with files")])
        hint = did_you_mean(spec, scenarios.NAMES)
        raise ScenarioError([Problem(f"Scenario {spec}", "", "unknown built-in scenario; " + (hint or (
            f"expected one of {', '.join(scenarios.NAMES)} or a YAML file")))])
    from gangkit.manifests.load import load_files
    from gangkit.manifests.snapshot import time_option

    at = time_option(snapshot_time) if snapshot_time is not None else None
    return load_files(paths, extra=node_manifests(nodes) if nodes is not None else (), snapshot_time=at)


def node_manifests(spec: str) -> list[dict]:
    """The Nodes ``--nodes`` describes: ``4x8`` is four Nodes (``node-0``...) of 8 GPUs each, CPU and memory unlimited."""
    m = NODES.match(spec.strip())
    if m is None or int(m.group(1)) < 1:
        raise ScenarioError([Problem("--nodes", "", f"expected {NODES_FORM}, got {spec!r}")])
    count, gpus, cpu, memory = int(m.group(1)), m.group(2), m.group(3), m.group(4)
    if count > 10_000:
        raise ScenarioError([Problem("--nodes", "", f"expected at most 10,000 nodes, got {count:,}")])
    allocatable = {"nvidia.com/gpu": gpus} | ({"cpu": cpu} if cpu else {}) | ({"memory": memory} if memory else {})
    return [{"apiVersion": "v1", "kind": "Node", "metadata": {"name": f"node-{i}"}, "status": {"allocatable": dict(allocatable)}}
            for i in range(count)]
