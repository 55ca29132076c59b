"""Which scenario a command names: a built-in one, or a YAML file of manifests (``gangkit run``, ``gangkit export``)."""

from __future__ import annotations

from pathlib import Path

from gangkit.model.errors import Problem, ScenarioError
from gangkit.model.scenario import did_you_mean

__all__ = ["load_scenario"]


def load_scenario(spec: str, seed: int | None):
    """The built-in scenario ``spec`` names (with ``seed``), or the scenario of the YAML file at ``spec``."""
    from gangkit.workloads import scenarios

    if spec in scenarios.NAMES:
        return scenarios.load(spec, seed=seed)
    path = Path(spec)
    if path.suffix in (".yaml", ".yml", ".json") or path.exists():
        if not path.exists():
            raise ScenarioError([Problem(f"Scenario file {spec}", "", "not found")])
        from gangkit.manifests.load import load_file

        return load_file(path)
    hint = did_you_mean(spec, scenarios.NAMES)
    raise ScenarioError([Problem(f"Scenario {spec}", "", "unknown built-in scenario; " + (hint or (
        f"expected one of {', '.join(scenarios.NAMES)} or a YAML file")))])
