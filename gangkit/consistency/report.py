"""What ``gangkit check`` hands back: the findings of a stack, for people (text) and for programs (JSON).

Picture the inspector's report pinned to the site office door: the things
that stop the building first (errors), then the things that will make it
work badly (warnings), one paragraph each, every paragraph naming the
objects, the fields, the numbers and what to do. :class:`Report` holds the
findings (sorted: errors first, in catalogue order), the files, the reader's
notes and, with ``--simulate``, what the run did.

``--json`` prints exactly one object, a stable contract::

    {"findings": [{"code": "...", "severity": "error" | "warning", "objects": ["Kind ns/name", ...],
                   "fields": [{"object": "Kind ns/name", "field": "spec...."}], "numbers": {...},
                   "message": "...", "hint": "..."}, ...],
     "summary": {"files": [...], "objects": N, "findings": N, "errors": N, "warnings": N,
                 "exit_status": 0 | 1, "simulation": null | {"stack": "...", "stack_from": "...", "ran": true, ...}}}

Exit status: 0 when nothing is wrong, or only warnings; 1 with at least one
error (with ``--strict``, with any finding); 2 for input gangkit cannot
read (printed on stderr as ``gangkit run`` prints it, not here).
"""

from __future__ import annotations

import json
import math
import textwrap
from dataclasses import dataclass, field
from typing import Any

from gangkit.consistency.findings import ERROR, SEVERITIES, WARNING, Finding

__all__ = ["Report", "format_json", "format_text"]

WIDTH = 100


@dataclass
class Report:
    """The findings of one check, what it read, and the run's figures (``--simulate``)."""

    files: list[str]
    objects: int
    findings: list[Finding]
    simulation: dict | None = None
    notes: list[str] = field(default_factory=list)  # the reader's warnings (also emitted as GangkitInputWarning)

    def count(self, severity: str) -> int:
        return sum(1 for f in self.findings if f.severity == severity)

    def exit_status(self, strict: bool = False) -> int:
        """1 with an error (with ``strict``: with any finding), else 0."""
        if self.count(ERROR) or (strict and self.findings):
            return 1
        return 0

    def to_dict(self, strict: bool = False) -> dict[str, Any]:
        return {
            "findings": [_clean(f.to_dict()) for f in self.findings],
            "summary": {"files": list(self.files), "objects": self.objects, "findings": len(self.findings),
                        "errors": self.count(ERROR), "warnings": self.count(WARNING),
                        "exit_status": self.exit_status(strict), "simulation": _clean(self.simulation)},
        }


def _clean(x: Any) -> Any:
    """JSON-safe data: numpy scalars as Python numbers, infinite or missing numbers as null."""
    if isinstance(x, dict):
        return {str(k): _clean(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_clean(v) for v in x]
    if hasattr(x, "item") and not isinstance(x, (str, bytes)):
        x = x.item()
    if isinstance(x, float):
        if not math.isfinite(x):
            return None
        return int(x) if x.is_integer() else x
    return x


def format_json(report: Report, strict: bool = False) -> str:
    return json.dumps(report.to_dict(strict))


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


def format_text(report: Report) -> str:
    """Findings grouped by severity, one paragraph each, wrapped for a terminal."""
    errors, warns = report.count(ERROR), report.count(WARNING)
    head = (f"gangkit check: {_plural(len(report.files), 'file')}, {_plural(report.objects, 'object')}: "
            + (f"{_plural(len(report.findings), 'finding')} ({_plural(errors, 'error')}, {_plural(warns, 'warning')})"
               if report.findings else "no findings"))
    lines = [head]
    for severity in SEVERITIES:
        group = [f for f in report.findings if f.severity == severity]
        if not group:
            continue
        lines += ["", f"{severity}s"]
        for f in group:
            lines.append("")
            lines += textwrap.wrap(f"{f.code}: {', '.join(f.objects)}", WIDTH, break_on_hyphens=False, initial_indent="  ",
                                   subsequent_indent="    ")
            lines += textwrap.wrap(f.message, WIDTH, break_on_hyphens=False, initial_indent="    ", subsequent_indent="    ")
            if f.fields:
                lines += textwrap.wrap("fields: " + "; ".join(f"{o} {p}" for o, p in f.fields), WIDTH,
                                       initial_indent="    ", subsequent_indent="      ")
            lines += textwrap.wrap(f"fix: {f.hint}", WIDTH, break_on_hyphens=False, initial_indent="    ", subsequent_indent="      ")
    sim = report.simulation
    if sim is not None:
        lines.append("")
        if not sim.get("ran"):
            lines += textwrap.wrap(f"simulation: not run ({sim.get('skipped', '')})", WIDTH, break_on_hyphens=False, subsequent_indent="  ")
        else:
            lines += textwrap.wrap(
                f"simulation: stack {sim['stack']} (from {sim['stack_from']}): "
                f"{sim['jobs_finished']} of {sim['jobs_total']} jobs finished, deadlock {'yes' if sim['deadlock'] else 'no'}, "
                f"stalled {'yes' if sim['stalled'] else 'no'}, run ended at t={sim['makespan_s']:.0f} s", WIDTH,
                subsequent_indent="  ")
    return "\n".join(lines)
