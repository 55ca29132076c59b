"""Sweeps: many runs described as data, spread over processes or a Dask cluster, one table out.

Picture a lab notebook with a plan written before the experiment: "for each
policy, for loads 0.5 to 1.2, for seeds 0 to 4, run the mix and write down the
waits". The plan is the *grid*, plain data (names and numbers, never a
function), so it can be printed, stored, checked before anything runs, and
sent to other processes or machines::

    import gangkit as gk
    table = gk.sweep({"scenario": ["mixed"], "ordering": ["strict", "skip"],
                      "load": [0.7, 0.9, 1.1], "seed": [0, 1], "n_jobs": [500], "n_nodes": [16]})

A grid is either a dict of lists (every combination: the Cartesian product,
in the order the keys and values are written; a single value counts as a
one-element list) or a list of dicts (exactly these points). The keys are
:data:`GRID_KEYS`:

- ``scenario``: a built-in scenario name (:data:`gangkit.workloads.scenarios.NAMES`),
  or a workload generator as plain data (what
  :func:`gangkit.workloads.generators.stream_from_dict` reads, or a
  :class:`~gangkit.workloads.generators.Stream` value);
- ``stack``, ``ordering``, ``horizon``: run settings (``ordering`` is any
  placement ordering the simulator knows, so adding a policy is a grid change);
- ``load``: the offered load as a fraction of the cluster's GPUs (``mixed``
  and generators only; for a generator it sets the arrival rate);
- ``seed``: the stream's seed and the run's seed;
- ``n_jobs``, ``n_nodes``, ``gpus_per_node``: the stream's length and the
  cluster (generators run on ``n_nodes`` identical nodes, default 4 x 8 GPUs).

Each point is simulated at recording level ``jobs`` and summarised by
:func:`gangkit.results.waiting.metrics`; the result is one pandas DataFrame with one
row per point, in grid order whatever order the runs finished in: the grid's
columns first (a generator shows as its ``name``), then the metrics.

Where the runs go: by default a ``concurrent.futures.ProcessPoolExecutor``
with one process per CPU; ``workers=1`` runs them one after another in this
process; ``client=`` (a ``dask.distributed.Client``) sends them to a Dask
cluster (install the ``dask`` extra). Every run is deterministic, so all
three give the same table. A progress bar (``tqdm.auto``) is shown when the
session is interactive, never when the environment variable
``GANGKIT_NO_PROGRESS`` is set (continuous integration sets it).
"""

from __future__ import annotations

import dataclasses
import itertools
import os
import sys
from collections.abc import Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor

import pandas as pd

from gangkit.model.errors import Problem, ScenarioError
from gangkit.model.nodes import nodes as make_nodes
from gangkit.model.scenario import RunSettings
from gangkit.results import waiting
from gangkit.simulate import simulate
from gangkit.stacks import STACKS
from gangkit.workloads.generators import Stream, stream_from_dict
from gangkit.workloads.scenarios import NAMES as SCENARIO_NAMES
from gangkit.workloads.scenarios import load as load_scenario

#: The keys a grid may use, in the order the table shows them.
GRID_KEYS = ("scenario", "stack", "ordering", "load", "seed", "n_jobs", "n_nodes", "gpus_per_node", "horizon")
#: Keys that only a stream (``mixed`` or a generator) can vary.
STREAM_KEYS = ("load", "n_jobs", "n_nodes", "gpus_per_node")
#: A generator runs on this cluster unless the grid says otherwise.
DEFAULT_NODES, DEFAULT_GPUS_PER_NODE = 4, 8

_OBJ = "sweep grid"


# --------------------------------------------------------------------------- the grid
def points(grid) -> list[dict]:
    """The grid's points, in order, each a dict of grid keys; every problem raised at once."""
    if isinstance(grid, Mapping):
        keys = list(grid)
        _check_keys(keys, "")
        values = []
        for k in keys:
            v = grid[k]
            if isinstance(v, (list, tuple)):
                if len(v) == 0:
                    raise ScenarioError([Problem(_OBJ, k, "expected at least one value, got an empty list")])
                values.append(list(v))
            else:
                values.append([v])
        pts = [dict(zip(keys, combo)) for combo in itertools.product(*values)]
    elif isinstance(grid, Sequence) and not isinstance(grid, (str, bytes)):
        pts = []
        for i, p in enumerate(grid):
            if not isinstance(p, Mapping):
                raise ScenarioError([Problem(_OBJ, f"[{i}]", f"expected a dict of grid keys, got {p!r}")])
            _check_keys(list(p), f"[{i}].")
            pts.append(dict(p))
        if not pts:
            raise ScenarioError([Problem(_OBJ, "", "expected at least one point")])
    else:
        raise ScenarioError([Problem(_OBJ, "", "expected a dict of lists (every combination) or a list of dicts "
                                               f"(these points), got {type(grid).__name__}")])
    problems: list[Problem] = []
    for i, p in enumerate(pts):
        problems.extend(_point_problems(p, i))
    if problems:
        raise ScenarioError(problems[:20])
    return pts


def _check_keys(keys: list, prefix: str) -> None:
    if callable(keys) or any(not isinstance(k, str) for k in keys):
        raise ScenarioError([Problem(_OBJ, prefix, "expected text keys")])
    bad = [k for k in keys if k not in GRID_KEYS]
    if bad:
        raise ScenarioError([Problem(_OBJ, f"{prefix}{k}", f"unknown grid key; expected some of {', '.join(GRID_KEYS)}")
                             for k in bad])


def _point_problems(p: dict, i: int) -> list[Problem]:
    where = f"point {i}"
    out = []
    for k, v in p.items():
        if callable(v) and not isinstance(v, Stream):
            out.append(Problem(_OBJ, f"{where}.{k}", f"expected data (a name or a number), got the callable {v!r}"))
    if out:
        return out
    sc = p.get("scenario", "mixed")
    if isinstance(sc, str):
        if sc not in SCENARIO_NAMES:
            out.append(Problem(_OBJ, f"{where}.scenario", f"unknown scenario {sc!r}; expected one of "
                                                          f"{', '.join(SCENARIO_NAMES)}, or a generator as data"))
        elif sc != "mixed":
            out.extend(Problem(_OBJ, f"{where}.{k}", f"scenario {sc!r} is a fixed story; only 'mixed' and "
                                                     "generators take a load, n_jobs, n_nodes or gpus_per_node")
                       for k in STREAM_KEYS if k in p)
    elif isinstance(sc, Mapping):
        try:
            stream_from_dict(dict(sc))
        except ScenarioError as e:
            out.extend(Problem(_OBJ, f"{where}.scenario", str(x)) for x in e.problems)
    elif not isinstance(sc, Stream):
        out.append(Problem(_OBJ, f"{where}.scenario", f"expected a scenario name or a generator as data, got {sc!r}"))
    if "stack" in p and p["stack"] not in STACKS:
        out.append(Problem(_OBJ, f"{where}.stack", f"expected one of {', '.join(STACKS)}, got {p['stack']!r}"))
    settings = {k: p[k] for k in ("ordering", "horizon", "seed") if k in p}
    try:
        out.extend(Problem(_OBJ, f"{where}.{x.field}", x.message) for x in RunSettings(**settings).problems())
    except TypeError as e:  # pragma: no cover - keys are checked above
        out.append(Problem(_OBJ, where, str(e)))
    for k in ("n_jobs", "n_nodes", "gpus_per_node"):
        if k in p and (isinstance(p[k], bool) or not isinstance(p[k], int) or p[k] < 1):
            out.append(Problem(_OBJ, f"{where}.{k}", f"expected a whole number >= 1, got {p[k]!r}"))
    if "load" in p and (isinstance(p["load"], bool) or not isinstance(p["load"], (int, float)) or not p["load"] > 0):
        out.append(Problem(_OBJ, f"{where}.load", f"expected a load > 0 (a fraction of the cluster's GPUs), got {p['load']!r}"))
    return out


# --------------------------------------------------------------------------- one point
def scenario_for(point: dict):
    """The :class:`~gangkit.Scenario` one grid point describes (its run settings not yet applied)."""
    sc = point.get("scenario", "mixed")
    if isinstance(sc, str):
        kwargs = {k: point[k] for k in STREAM_KEYS if k in point}
        return load_scenario(sc, seed=point.get("seed"), **kwargs)
    stream = sc if isinstance(sc, Stream) else stream_from_dict(dict(sc))
    changes = {}
    if "seed" in point:
        changes["seed"] = point["seed"]
    if "n_jobs" in point:
        changes["n_jobs"] = point["n_jobs"]
    n_nodes = point.get("n_nodes", DEFAULT_NODES)
    per_node = point.get("gpus_per_node", DEFAULT_GPUS_PER_NODE)
    if "load" in point:
        rate = stream.rate_for_load(point["load"], n_nodes * per_node)
        changes["arrivals"] = dataclasses.replace(stream.arrivals, rate=rate)
    if changes:
        stream = dataclasses.replace(stream, **changes)
    return stream.scenario(make_nodes(n_nodes, gpus=per_node))


def label(point: dict) -> dict:
    """The grid columns of a point's row (a generator shows as its name)."""
    row = dict(point)
    sc = row.get("scenario", "mixed")
    if isinstance(sc, Stream):
        row["scenario"] = sc.name
    elif isinstance(sc, Mapping):
        row["scenario"] = sc.get("name", "stream")
    return row


def run_point(point: dict, tau: float = waiting.TAU_S) -> dict:
    """Simulate one grid point and return its row: the grid columns, then :func:`gangkit.results.waiting.metrics`."""
    settings = {k: point[k] for k in ("stack", "ordering", "seed", "horizon") if k in point}
    result = simulate(scenario_for(point), record="jobs", **settings)
    row = label(point)
    row.setdefault("stack", result.stack)
    row.setdefault("ordering", result.ordering)
    row.update(waiting.metrics(result, tau=tau))
    return row


# --------------------------------------------------------------------------- many points
def _show_progress(progress: bool | None) -> bool:
    if os.environ.get("GANGKIT_NO_PROGRESS"):
        return False
    if progress is not None:
        return bool(progress)
    return "ipykernel" in sys.modules or sys.stderr.isatty()


def _bar(total: int, show: bool):
    if not show:
        return None
    from tqdm.auto import tqdm

    return tqdm(total=total, desc="sweep", unit="run")


def sweep(grid, *, workers: int | None = None, client=None, progress: bool | None = None,
          tau: float = waiting.TAU_S) -> pd.DataFrame:
    """Run every point of ``grid`` and return one row per point, in grid order (see the module docstring).

    ``workers``: processes to use (default: one per CPU, at most one per
    point); ``1`` runs in this process. ``client``: a
    ``dask.distributed.Client`` to run the points on instead. ``progress``:
    force the progress bar on or off (``GANGKIT_NO_PROGRESS`` always turns
    it off). ``tau``: bounded slowdown's threshold in seconds.
    """
    pts = points(grid)
    if workers is not None and (isinstance(workers, bool) or not isinstance(workers, int) or workers < 1):
        raise ScenarioError([Problem("sweep", "workers", f"expected a whole number >= 1, got {workers!r}")])
    bar = _bar(len(pts), _show_progress(progress))
    rows: list = [None] * len(pts)
    try:
        if client is not None:
            from distributed import as_completed

            futures = client.map(run_point, pts, [tau] * len(pts), pure=False)
            where = {f.key: i for i, f in enumerate(futures)}
            for f in as_completed(futures):
                rows[where[f.key]] = f.result()
                if bar is not None:
                    bar.update(1)
        else:
            n = min(workers or os.cpu_count() or 1, len(pts))
            if n == 1:
                for i, p in enumerate(pts):
                    rows[i] = run_point(p, tau)
                    if bar is not None:
                        bar.update(1)
            else:
                with ProcessPoolExecutor(max_workers=n) as pool:
                    for i, row in enumerate(pool.map(run_point, pts, [tau] * len(pts))):
                        rows[i] = row
                        if bar is not None:
                            bar.update(1)
    finally:
        if bar is not None:
            bar.close()
    return table(rows)


def table(rows: list[dict]) -> pd.DataFrame:
    """Rows of :func:`run_point` as one DataFrame: grid columns first, then metrics in first-seen order."""
    columns: list[str] = [k for k in GRID_KEYS if any(k in r for r in rows)]
    for r in rows:
        columns.extend(k for k in r if k not in columns)
    return pd.DataFrame(rows, columns=columns)
