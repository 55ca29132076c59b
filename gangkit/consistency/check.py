"""``gangkit check``: every inconsistency between the layers of a stack's manifests, before anything runs.

Picture the inspection itself: read every plan (:func:`gangkit.consistency.inventory.read_stack`,
with gangkit's one reader), hand the plans to each inspector in turn (one
module per pair of layers, :data:`RULES`), collect what they found, and
pin up the report (:mod:`gangkit.consistency.report`).

Bad input is refused as ``gangkit run`` refuses it: one
:class:`~gangkit.model.errors.ScenarioError` listing every problem, each
naming the object and the field. Only the problems that a finding stands
for are not errors here: a Job whose ``priorityClassName`` names a class
that is not in the files is an input error to ``gangkit run``, and a
finding (``priority-class-missing``) to ``gangkit check``. The reader's
warnings (fields gangkit does not read, simplifications) are emitted as
:class:`~gangkit.model.reading.GangkitInputWarning`, except the ones a
finding already says.

>>> from gangkit import check_manifests
>>> [f.code for f in check_manifests("examples/two-gangs-deadlock.yaml")]  # doctest: +SKIP
['gang-scheduler-mismatch']
"""

from __future__ import annotations

import dataclasses
import os
import warnings
from pathlib import Path

from gangkit.consistency import capability, capacity, flavors, gangs, quota, references, schedulers, timeouts
from gangkit.consistency.findings import Finding
from gangkit.consistency.inventory import Inventory, Source, read_stack
from gangkit.consistency.report import Report
from gangkit.consistency.simulation import implied_stack, run_findings, static_errors
from gangkit.model.errors import ScenarioError
from gangkit.model.reading import GangkitInputWarning, looks_like_path

__all__ = ["RULES", "check", "check_manifests"]

#: The inspectors, one module per pair of layers, in the order their findings are looked for.
RULES = (references, schedulers, gangs, quota, capability, capacity, flavors, timeouts)

#: Findings that say what a reader warning says (the warning is then not repeated).
SUPERSEDES_NOTES = ("kueue-cluster-queue-missing", "kueue-cluster-queue-selects-no-namespace", "kueue-local-queue-missing")


def check_manifests(sources: Source, *, simulate: bool = False, stack: str | None = None) -> list[Finding]:
    """Every finding for a stack's manifests: a path, YAML text, a dict, a list of dicts, or a list of paths.

    Raises :class:`~gangkit.model.errors.ScenarioError` for input gangkit
    cannot read. With ``simulate``, the stack also runs (``stack``, else the
    files' Simulation, else the stack their layers imply) and what went wrong
    in the run is added.
    """
    return check(sources, simulate=simulate, stack=stack).findings


def check(sources: Source, *, simulate: bool = False, stack: str | None = None) -> Report:
    """The whole :class:`Report`: the findings, what was read, the reader's notes, the run's figures."""
    inv = read_stack(sources)
    found = _found(inv)
    explained = set().union(*(f.explains for f in found)) if found else set()
    left = [p for p in inv.problems if (p.obj, p.field) not in explained]
    if left:
        raise ScenarioError(left)
    notes = [n for n in inv.warnings if not _superseded(n, found)]
    for note in notes:
        warnings.warn(note, GangkitInputWarning, stacklevel=2)
    simulation = None
    if simulate:
        simulation = _simulate(sources, inv, found, explained, stack)
    findings = sorted((_displayed(inv, f) for f in found), key=Finding.sort_key)
    return Report(inv.files, len(inv.objects), findings, simulation, notes)


def _found(inv: Inventory) -> list[Finding]:
    out: list[Finding] = []
    for rule in RULES:
        out.extend(rule.findings(inv))
    return out


def _displayed(inv: Inventory, f: Finding) -> Finding:
    """The finding with its fields' objects named as the findings name objects (``Kind namespace/name``)."""
    return dataclasses.replace(f, fields=tuple((inv.display_of(o), p) for o, p in f.fields))


def _superseded(note: str, found: list[Finding]) -> bool:
    for f in found:
        if f.code in SUPERSEDES_NOTES:
            for label, _ in f.fields:
                if note.startswith((f"{label}:", f"{label} has no")):
                    return True
    return False


def _simulate(sources: Source, inv: Inventory, found: list[Finding], explained: set, stack: str | None) -> dict:
    """Build the scenario as ``gangkit run`` does and run it; the run's findings join ``found``."""
    from gangkit.manifests.load import load_file, load_manifests

    if stack is not None:
        name, source = stack, "--stack"
    elif inv.has_simulation:
        name, source = inv.settings.stack, "the Simulation object"
    else:
        name, source = implied_stack(inv), "the files' layers"
    single = sources if isinstance(sources, (str, os.PathLike)) else None
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", GangkitInputWarning)
            if single is not None and (isinstance(single, os.PathLike) or looks_like_path(single)):
                scenario = load_file(Path(single))
            else:
                scenario = load_manifests(inv.docs, name=Path(inv.files[0]).stem if len(inv.files) == 1 else "stack")
    except ScenarioError as e:
        left = [p for p in e.problems if (p.obj, p.field) not in explained]
        if left:
            raise ScenarioError(left) from None
        return {"stack": name, "stack_from": source, "ran": False,
                "skipped": "gangkit's run refuses the stack for the error findings above"}
    more, figures = run_findings(inv, scenario, name, static_errors(found))
    found.extend(more)
    return {"stack_from": source, "ran": True, **figures}
