"""Helpers the test modules share (import them: ``from conftest import case, check_times``).

Tests here are tables of named cases, as in Kueue's ``pkg/scheduler`` tests: a name that reads
like the rule, the state before, the input, the expected outcome. :func:`case` makes one row;
the rest build inputs and read outcomes the same way in every module.

Data that does not ship with the repository (the real schemas, traces and upstream manifests)
sits in a ``shared`` folder beside it; every test finds it with :func:`shared_path`, and the
tests that need it skip, saying why, when it is absent (a learner's clone has none).
"""

from __future__ import annotations

import copy
import math
import os
from pathlib import Path

import pandas as pd
import pytest

import gangkit as gk
from gangkit.volcano import VolcanoSetup

#: The environment variable that moves the ``shared`` folder: a path, or empty for "absent" (CI runs once so).
SHARED_ENV = "GANGKIT_SHARED"


def shared_path(*parts: str) -> Path:
    """A path in the ``shared`` data folder: ``../shared`` beside the repository, or the folder ``GANGKIT_SHARED`` names.

    ``GANGKIT_SHARED=""`` hides it, as in a clone without it: the path
    returned then exists nowhere (its name says why), so every test that
    needs the data skips with its reason.
    """
    value = os.environ.get(SHARED_ENV)
    repo_parent = Path(__file__).resolve().parents[2]
    if value == "":
        return repo_parent.joinpath(f"shared (hidden: {SHARED_ENV} is empty)", *parts)
    return (Path(value) if value else repo_parent / "shared").joinpath(*parts)


def run_cli(argv: list[str], capsys) -> tuple[int, str, str]:
    """Run the ``gangkit`` command line in this process: its exit status, stdout and stderr (argparse's exits too)."""
    from gangkit.cli.main import main

    try:
        status = main(argv)
    except SystemExit as exit_:
        status = exit_.code
    out, err = capsys.readouterr()
    return status, out, err


def case(id: str, *values, xfail: str | None = None):
    """One row of a case table: its name (the test id) and its values; ``xfail`` marks a known gap, strictly."""
    marks = [pytest.mark.xfail(strict=True, reason=xfail)] if xfail else []
    return pytest.param(*values, id=id, marks=marks)


def edit(doc, path: str, value):
    """A copy of ``doc`` with the value at a dotted path (``spec.template.spec.containers.0.image``) set or appended."""
    doc = copy.deepcopy(doc)
    keys = path.split(".")
    here = doc
    for k in keys[:-1]:
        here = here[int(k)] if isinstance(here, list) else here.setdefault(k, {})
    if isinstance(here, list) and int(keys[-1]) == len(here):
        here.append(value)
    elif isinstance(here, list):
        here[int(keys[-1])] = value
    else:
        here[keys[-1]] = value
    return doc


def run_with_queues(node_list, jobs, queues=(), **settings) -> gk.Result:
    """Simulate ``jobs`` on ``node_list`` with these Volcano Queues, under ``gang`` unless ``stack`` says otherwise."""
    settings.setdefault("stack", "gang")
    return gk.simulate(gk.Scenario(node_list, jobs, volcano=VolcanoSetup(list(queues))), **settings)


def by_job(result: gk.Result):
    """The jobs table indexed by job name."""
    return result.jobs.set_index("job")


def check_times(result: gk.Result, expected: dict, reasons: dict | None = None) -> None:
    """Each job's (start, finish, state) is as expected (NaN for never), and its reason has the expected code."""
    t = by_job(result)
    for name, (start, finish, state) in expected.items():
        row = t.loc[name]
        assert row["state"] == state, f"{name}: {row['state']} ({row['reason']})"
        for col, want in (("start_s", start), ("finish_s", finish)):
            got = row[col]
            assert (math.isnan(want) and math.isnan(got)) or got == pytest.approx(want), f"{name}.{col}: {got} != {want}"
    for name, code in (reasons or {}).items():
        assert f"] {code}:" in t.loc[name, "reason"], t.loc[name, "reason"]


def start_finish(result: gk.Result) -> dict:
    """{job: (start, finish, state)}, for comparing whole runs exactly."""
    return {r.job: (r.start_s, r.finish_s, r.state) for r in result.jobs.itertuples()}


def same_start_finish(a: dict, b: dict) -> bool:
    """Two :func:`start_finish` tables are equal, NaN equal to NaN."""
    return a.keys() == b.keys() and all(
        all((x == y) or (isinstance(x, float) and math.isnan(x) and math.isnan(y)) for x, y in zip(a[k], b[k])) for k in a)


#: Every table of a Result, in the order the equality checks report them.
RESULT_TABLES = ("jobs", "events", "pods", "timeline", "holders", "nodes")


def assert_same_result(a: gk.Result, b: gk.Result, metrics: bool = True) -> None:
    """Two runs agree to the last bit: their figures, every table and (unless ``metrics`` is False) every metric."""
    assert a.summary() == b.summary()
    for table in RESULT_TABLES:
        pd.testing.assert_frame_equal(getattr(a, table), getattr(b, table), check_exact=True, obj=table)
    assert a.metrics.keys() == b.metrics.keys()
    if metrics:
        for name in a.metrics:
            pd.testing.assert_frame_equal(a.metrics[name], b.metrics[name], check_exact=True, obj=name)
