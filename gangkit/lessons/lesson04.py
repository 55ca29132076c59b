"""Lesson 04's experiments: one-GPU jobs and whole-node gangs, placement orderings, the stability limit.

Picture a car park with four rows of eight spaces. Most visitors come by car
(one space), some by coach (a whole row). If the attendant lets cars in as
long as any space is free (``skip``), a coach waits until a whole row happens
to be empty, which may take all day: the coach *starves*. If the attendant
keeps the arrival order (``strict``), a coach at the head of the line makes
every car behind it wait too, while the spaces that free up one by one in
its chosen row stay empty: the car park turns cars away long before it is
full. How far before is the *multiserver-job stability limit*, which this
lesson finds by experiment.

Everything here is a plain function over :mod:`gangkit.workloads.generators`,
:mod:`gangkit.results.waiting` and :mod:`gangkit.analysis.sweep`:

- :func:`mix_stream` and :func:`mix` build the workload: Poisson arrivals,
  one-GPU jobs and whole-node (8-GPU) sync gangs, exponential run times
  (mean 30 minutes), on 4 nodes of 8 GPUs;
- :func:`run` simulates it under an ordering (cached, so the lesson, its
  widget and the checks share runs);
- :data:`SWEEP_GRIDS` and :func:`sweep_table` are the load sweep whose
  results are committed in ``gangkit/data/lesson04_sweep.csv`` (made by
  ``python tools/make_lesson04_data.py``; a test re-runs part of it);
  :func:`sweep_data` reads it, or with ``live=True`` runs a part of it live;
- :func:`verdicts` judges each ordering and load over its seeds: stable only
  if the carried utilization matches the offered load within its confidence
  band and the queue does not grow; :func:`stability_limit` reads the
  stability limit off the verdicts, and :func:`window_study` shows why the
  runs are 8000 jobs long;
- :func:`packing_rows` and :func:`packing_table` are the same story with pods
  spread over the nodes or packed onto the fullest (committed in
  ``gangkit/data/lesson04_packing.csv``): packing leaves whole nodes free
  more often, so the whole-node gangs starve far less;
- :func:`sla_table` is Volcano's sla plugin on a busy mix: where the plugin
  sits in the scheduler's tiers, and whether a gang is one pod or several,
  decide whether it shortens the gangs' wait at all;
- :func:`saturated` measures the throughput of a *saturated* system (every
  job submitted at once, so the queue never runs dry): the utilization a
  policy sustains when work is never lacking, which is where it stops
  being stable (the saturated-system argument used for multiserver-job
  queues, e.g. by Grosof, Harchol-Balter and Scheller-Wolf);
- :func:`wait_explorer` is the lesson's widget: an ordering, a load and a
  seed; it shows :func:`render_waits`, the waits per size class and the
  queue and GPUs over time.

All figures are simulated, not measured on a real cluster.
"""

from __future__ import annotations

import dataclasses
import io
from functools import lru_cache
from pathlib import Path

import ipywidgets as W
import pandas as pd
from matplotlib.figure import Figure

from gangkit.analysis.sweep import points, scenario_for, sweep
from gangkit.lessons.explorer import Explorer
from gangkit.model.errors import Problem, ScenarioError
from gangkit.model.nodes import nodes
from gangkit.model.scenario import Scenario
from gangkit.results import plots, waiting
from gangkit.simulate import simulate
from gangkit.volcano.api import VolcanoSetup
from gangkit.volcano.plugins.sla import SlaPlugin
from gangkit.workloads.generators import Exponential, JobClass, Poisson, Stream

#: The cluster: nodes x GPUs per node.
N_NODES, GPUS_PER_NODE = 4, 8
#: Mean run time of every job (seconds), exponential.
MEAN_RUN_TIME_S = 1800.0
#: Share of jobs (by count) that are whole-node gangs, in the lesson's mix.
NODE_SHARE = 0.1
#: The orderings the lesson runs live (the placement layer's ``ordering``).
ORDERINGS = ("strict", "skip")
#: The backfilling orderings, too slow to run inside the lesson: they come from the committed sweep.
BACKFILL_ORDERINGS = ("easy-backfill", "conservative-backfill", "largest-first", "volcano-backfill")
#: The committed sweep (see tools/make_lesson04_data.py).
SWEEP_DATA = Path(__file__).resolve().parents[1] / "data" / "lesson04_sweep.csv"


def mix_stream(node_share: float = NODE_SHARE, n_jobs: int = 1000, seed: int = 0, rate: float = 1.0) -> Stream:
    """One-GPU jobs and whole-node gangs (1 pod of 8 GPUs, sync) at ``rate`` jobs per second."""
    classes = (JobClass("one-gpu", round(1.0 - node_share, 10), 1, 1, run_time=Exponential(MEAN_RUN_TIME_S)),
               JobClass("whole-node", node_share, 1, GPUS_PER_NODE, run_time=Exponential(MEAN_RUN_TIME_S)))
    return Stream(Poisson(rate), classes, n_jobs=n_jobs, seed=seed, name=f"mix-{node_share:g}")


def mix(load: float, node_share: float = NODE_SHARE, n_jobs: int = 1000, seed: int = 0) -> Scenario:
    """The mix at offered ``load`` (a fraction of the cluster's 32 GPUs) on 4 nodes of 8 GPUs."""
    probe = mix_stream(node_share, n_jobs, seed)
    stream = dataclasses.replace(probe, arrivals=Poisson(probe.rate_for_load(load, N_NODES * GPUS_PER_NODE)))
    return stream.scenario(nodes(N_NODES, gpus=GPUS_PER_NODE))


def run(ordering: str, load: float, node_share: float = NODE_SHARE, n_jobs: int = 1000, seed: int = 0,
        scoring: str = "LeastAllocated"):
    """The mix simulated under stack ``gang`` with this placement ordering (cached; do not modify the result).

    ``scoring`` is how a pod's node is chosen among those with room: ``LeastAllocated`` spreads pods
    (the most free node), ``MostAllocated`` packs them (the fullest node that still has room).
    """
    return _run(ordering, float(load), float(node_share), int(n_jobs), int(seed), scoring)


@lru_cache(maxsize=32)
def _run(ordering: str, load: float, node_share: float, n_jobs: int, seed: int, scoring: str = "LeastAllocated"):
    return simulate(mix(load, node_share, n_jobs, seed), stack="gang", ordering=ordering, record="jobs",
                    scoring=scoring)


#: The starvation story's run: the mix at load 0.6, 1000 jobs, seed 0.
STORY = {"load": 0.6, "n_jobs": 1000, "seed": 0}
#: The story's gang waits under every ordering (see tools/make_lesson04_data.py).
STORY_DATA = Path(__file__).resolve().parents[1] / "data" / "lesson04_story.csv"


def story_table(orderings=None) -> pd.DataFrame:
    """The wait of every whole-node gang of the story's run, under each ordering (longest first)."""
    frames = []
    for ordering in orderings or (*ORDERINGS, *BACKFILL_ORDERINGS):
        g = gang_waits(run(ordering, STORY["load"], NODE_SHARE, STORY["n_jobs"], STORY["seed"]))
        frames.append(g.assign(ordering=ordering)[["ordering", "job", "submit_s", "wait_s", "censored"]])
    return pd.concat(frames, ignore_index=True)


def story_data() -> pd.DataFrame:
    """The committed :func:`story_table` (``gangkit/data/lesson04_story.csv``)."""
    return pd.read_csv(STORY_DATA, comment="#")


def gang_waits(result) -> pd.DataFrame:
    """The whole-node gangs of a run, longest wait first: job, submit time, wait, censored."""
    w = waiting.job_waits(result)
    gangs = w[w["gpus"] == GPUS_PER_NODE][["job", "submit_s", "wait_s", "censored"]]
    return gangs.sort_values(["wait_s", "job"], ascending=[False, True]).reset_index(drop=True)


# ------------------------------------------------------------------- spread or pack
#: Node scoring: spread pods over nodes, or pack them. kube-scheduler's NodeResourcesFit has both
#: strategies (LeastAllocated is its default); Volcano's nodeorder plugin with its default weights
#: spreads (leastrequested), its binpack plugin packs GPUs once binpack.resources names nvidia.com/gpu
#: (docs/reference/simulator.md, "Node scoring").
SCORINGS = ("LeastAllocated", "MostAllocated")
#: The packing experiment: the story's load and length, both orderings, under both scorings, these seeds.
PACKING = {"load": 0.6, "n_jobs": 1000, "seeds": (0, 1, 2, 3, 4)}
#: Its committed rows (see tools/make_lesson04_data.py): too many runs for the lesson's time budget.
PACKING_DATA = Path(__file__).resolve().parents[1] / "data" / "lesson04_packing.csv"


def packing_rows(seeds=None, orderings=None) -> pd.DataFrame:
    """One row per (scoring, ordering, seed): the worst wait of a whole-node gang and the mean wait of all jobs."""
    rows = []
    for scoring in SCORINGS:
        for ordering in orderings or ORDERINGS:
            for seed in seeds if seeds is not None else PACKING["seeds"]:
                r = run(ordering, PACKING["load"], NODE_SHARE, PACKING["n_jobs"], seed, scoring)
                rows.append((scoring, ordering, seed, waiting.starvation(r)["starvation_wait_s"],
                             r.figures["mean_wait_s"]))
    return pd.DataFrame(rows, columns=["scoring", "ordering", "seed", "worst_gang_wait_s", "mean_wait_s"])


def packing_data() -> pd.DataFrame:
    """The committed :func:`packing_rows` (``gangkit/data/lesson04_packing.csv``)."""
    return pd.read_csv(PACKING_DATA, comment="#")


def packing_table(rows: pd.DataFrame, confidence: float = 0.95) -> pd.DataFrame:
    """Mean over seeds and the half-width of its ``confidence`` interval (Student t), per scoring and ordering.

    Minutes, rounded: one row per (scoring, ordering), the columns ``worst gang wait`` and ``mean wait``
    as "mean ± half-width".
    """
    out = []
    for (scoring, ordering), g in rows.groupby(["scoring", "ordering"], sort=False):
        n = len(g)
        t = waiting.t_quantile(0.5 + confidence / 2, n - 1) if n > 1 else float("nan")
        cells = []
        for col in ("worst_gang_wait_s", "mean_wait_s"):
            v = g[col] / 60.0
            half = t * v.std(ddof=1) / n ** 0.5
            cells.append(f"{v.mean():.0f} ± {half:.0f}")
        out.append((scoring, ordering, n, *cells))
    return pd.DataFrame(out, columns=["scoring", "ordering", "seeds", "worst gang wait (min)", "mean wait (min)"])


# ----------------------------------------------------------------- Volcano's sla plugin
#: The sla experiment: a busy cluster, the gangs' ``sla-waiting-time`` (seconds), ordering skip.
SLA = {"load": 0.8, "n_jobs": 1000, "seed": 0, "waiting_time": 1800.0}
#: Where the sla plugin sits: not configured, after gang in its tier (Volcano's design page), in a tier before gang's.
SLA_PLACEMENTS = (("no sla plugin", None), ("after gang, same tier", SlaPlugin()),
                  ("tier before gang", SlaPlugin(first_tier=True)))


def with_sla(scenario: Scenario, waiting_time: float, pods_per_gang: int = 1) -> Scenario:
    """The mix with every whole-node gang annotated ``sla-waiting-time`` and made of ``pods_per_gang`` pods
    (of ``8 / pods_per_gang`` GPUs each: the same 8 GPUs, in one pod or spread over several)."""
    gpus = GPUS_PER_NODE // pods_per_gang
    jobs = [dataclasses.replace(j, pod_sets=[dataclasses.replace(j.pod_sets[0], count=pods_per_gang, gpus=gpus)],
                                sla_waiting_time=float(waiting_time))
            if j.pod_sets[0].gpus * j.pod_sets[0].count == GPUS_PER_NODE else j for j in scenario.jobs]
    return dataclasses.replace(scenario, jobs=jobs)


def sla_table(load: float = SLA["load"], seed: int = SLA["seed"], waiting_time: float = SLA["waiting_time"],
              n_jobs: int = SLA["n_jobs"]) -> pd.DataFrame:
    """Under ``skip``, for gangs of one 8-GPU pod and of eight 1-GPU pods, each placement of the sla plugin:
    the gangs' worst and mean wait and the one-GPU jobs' mean wait, in minutes."""
    rows = []
    for pods, label in ((1, "1 pod x 8 GPUs"), (GPUS_PER_NODE, f"{GPUS_PER_NODE} pods x 1 GPU")):
        story = with_sla(mix(load, NODE_SHARE, n_jobs, seed), waiting_time, pods)
        for placement, plugin in SLA_PLACEMENTS:
            sc = dataclasses.replace(story, volcano=None if plugin is None else VolcanoSetup(sla=plugin))
            w = waiting.job_waits(simulate(sc, stack="gang", ordering="skip", record="jobs"))
            gangs, small = w[w["gpus"] == GPUS_PER_NODE], w[w["gpus"] == 1]
            rows.append((label, placement, round(gangs.wait_s.max() / 60), round(gangs.wait_s.mean() / 60),
                         round(small.wait_s.mean() / 60, 1)))
    return pd.DataFrame(rows, columns=["gang", "sla plugin", "worst gang wait (min)", "mean gang wait (min)",
                                       "one-GPU mean wait (min)"])


# --------------------------------------------------------------------------- the sweep
#: Jobs per run of the sweep. Half of the arrival period is warm-up, the other half the window the
#: verdict reads (:func:`gangkit.results.waiting.stability`); at 8000 jobs the window is about 130
#: simulated hours at load 0.8. 2000 jobs were too few: a run near the limit still drained the
#: backlog of its warm-up in the window (:data:`WINDOW_GRID` measures it).
SWEEP_N_JOBS = 8000
#: The load sweep of the committed data file: every combination of each of these grids
#: (strict and skip finely, to find the stability limit; the slower backfilling orderings coarsely;
#: then :data:`WINDOW_GRID`).
SWEEP_GRIDS = (
    {"ordering": list(ORDERINGS), "load": [0.4, 0.5, 0.55, 0.6, 0.65, 0.7, 0.75, 0.8, 0.85, 0.9, 1.0, 1.1],
     "seed": [0, 1, 2, 3, 4], "n_jobs": [SWEEP_N_JOBS]},
    {"ordering": list(BACKFILL_ORDERINGS), "load": [0.6, 0.7, 0.8, 0.9, 1.0], "seed": [0, 1, 2, 3],
     "n_jobs": [SWEEP_N_JOBS]},
    {"ordering": list(ORDERINGS), "load": [0.8], "seed": [0, 1, 2, 3, 4], "n_jobs": [2000, 4000, 16000]},
)
#: The first grid, strict and skip (kept under this name for the lesson's text).
SWEEP_GRID = SWEEP_GRIDS[0]
#: The part of the sweep the lesson can run live (``sweep_data(live=True)``): strict and skip near their
#: stability limits, 30 runs.
LIVE_GRID = {"ordering": list(ORDERINGS), "load": [0.7, 0.75, 0.8], "seed": [0, 1, 2, 3, 4], "n_jobs": [SWEEP_N_JOBS]}
#: How long a run must be: strict and skip at load 0.8 with shorter and longer streams than the
#: sweep's (with the sweep's own 8000-job rows, the window study of the lesson).
WINDOW_GRID = SWEEP_GRIDS[2]
#: The columns the data file keeps.
SWEEP_COLUMNS = [
    "scenario", "ordering", "load", "seed", "n_jobs", "stability", "queue_slope_per_h", "queue_slope_low_per_h",
    "queue_slope_high_per_h", "window_offered_load", "window_effective_utilization", "window_idle_while_waiting", "effective_utilization",
    "mean_wait_s", "p95_wait_s", "max_wait_s", "mean_bounded_slowdown", "censored",
    "mean_wait_s[1]", "p95_wait_s[1]", "max_wait_s[1]",
    "mean_wait_s[2-8]", "p95_wait_s[2-8]", "max_wait_s[2-8]", "starvation_wait_s",
]


def sweep_grid(grids=None) -> list[dict]:
    """The points of :data:`SWEEP_GRIDS` (or of ``grids``, dicts of lists) with the mix as the scenario,
    ready for :func:`gangkit.analysis.sweep`."""
    stream = mix_stream()
    out = []
    for grid in grids if grids is not None else SWEEP_GRIDS:
        out.extend({"scenario": stream, **p} for p in points(grid))
    return out


def window_offered_load(load: float, seed: int, n_jobs: int, stream: Stream | None = None) -> float:
    """The load the stability window of a sweep run was actually offered: the GPU-seconds of the jobs
    submitted in it (the second half of the arrival period, as :func:`gangkit.results.waiting.stability`
    cuts it) over the window's GPU capacity. A property of the stream alone, no simulation; a seed's
    random arrivals and run times make it differ from the nominal ``load`` by a few percent. ``stream``:
    the workload (default :func:`mix_stream`, the lesson's mix)."""
    sc = scenario_for({"scenario": stream or mix_stream(), "load": load, "seed": seed, "n_jobs": n_jobs})
    submit = [j.submit_time for j in sc.jobs]
    first, last = min(submit), max(submit)
    a, b = first + (last - first) / 2, last
    if not b > a:
        return float("nan")
    work = sum(j.run_time * sum(ps.gpus * ps.count for ps in j.pod_sets) for j in sc.jobs if a <= j.submit_time < b)
    return round(work / (N_NODES * GPUS_PER_NODE * (b - a)), 4)


def sweep_table(grids=None, **kwargs) -> pd.DataFrame:
    """Run the sweep (:func:`gangkit.analysis.sweep`), add :func:`window_offered_load`, keep :data:`SWEEP_COLUMNS`."""
    table = sweep(sweep_grid(grids), **kwargs)
    table["window_offered_load"] = [window_offered_load(lo, se, n) for lo, se, n in
                                    zip(table["load"], table["seed"], table["n_jobs"])]
    return table[SWEEP_COLUMNS]


#: The columns that name a run of the sweep (one row each).
SWEEP_KEYS = ["ordering", "load", "seed", "n_jobs"]


def sweep_data(live: bool = False, grids=None, workers: int | None = None) -> pd.DataFrame:
    """The sweep's rows: the committed file's (``gangkit/data/lesson04_sweep.csv``), or, with
    ``live=True``, the points of ``grids`` (default: :data:`LIVE_GRID`, 30 runs of ``strict`` and
    ``skip``) simulated here and now in ``workers`` processes, in place of the file's rows with the
    same :data:`SWEEP_KEYS` (points the file lacks come last). The other rows still come from the file:
    the whole grid takes many minutes (the backfilling orderings' 80 runs nearly all of it). A live row
    goes through the file's CSV form, so a live table of the file's grid equals the file's, dtypes included."""
    committed = pd.read_csv(SWEEP_DATA, comment="#")
    if not live:
        return committed
    grids = [LIVE_GRID] if grids is None else list(grids)
    for i, grid in enumerate(grids):
        missing = [k for k in SWEEP_KEYS if not isinstance(grid, dict) or k not in grid]
        if missing:
            raise ScenarioError([Problem("lesson04.sweep_data", f"grids[{i}]",
                                         f"expected a dict naming {', '.join(SWEEP_KEYS)} (the file's keys), "
                                         f"missing {', '.join(missing)}")])
    fresh = sweep_table(grids, workers=workers)
    fresh = pd.read_csv(io.StringIO(fresh.to_csv(index=False)))
    old, new = committed.set_index(SWEEP_KEYS), fresh.set_index(SWEEP_KEYS)
    order = list(old.index) + [k for k in new.index if k not in old.index]
    rows = pd.concat([old.drop(index=new.index, errors="ignore"), new]).loc[order]
    return rows.reset_index()[list(committed.columns)]


def main_rows(data: pd.DataFrame) -> pd.DataFrame:
    """The sweep's own rows, those of :data:`SWEEP_N_JOBS` jobs (not the window study's shorter and longer runs)."""
    return data[data["n_jobs"] == SWEEP_N_JOBS]


def by_load(data: pd.DataFrame, column: str, orderings=None) -> pd.DataFrame:
    """``column`` averaged over seeds: one row per load, one column per ordering (NaN where not run)."""
    table = data.pivot_table(index="load", columns="ordering", values=column, aggfunc="mean")
    wanted = orderings or [o for o in (*ORDERINGS, *BACKFILL_ORDERINGS) if o in table.columns]
    return table[list(wanted)]


def unstable_share(data: pd.DataFrame, orderings=None) -> pd.DataFrame:
    """The share of seeds whose run reads ``unstable`` (the queue-slope test alone), per load and ordering."""
    flagged = data.assign(unstable=(data["stability"] == "unstable").astype(float))
    return by_load(flagged, "unstable", orderings)


# --------------------------------------------------------------------------- the verdict
#: A stable verdict needs the band of carried minus offered utilization no wider than this on each side
#: (half the sweep's finest load step, 0.05: narrower, and neighbouring loads are told apart).
PRECISION = 0.025
#: The verdicts of :func:`verdicts`, in the order they are tried.
VERDICTS = ("unstable", "not stationary", "undecided", "stable")


def _band(values: pd.Series, confidence: float) -> tuple[float, float]:
    """Mean over seeds and the half-width of its ``confidence`` interval (Student t; NaN for one seed)."""
    n = len(values)
    if n < 2:
        return float(values.mean()), float("nan")
    t = waiting.t_quantile(0.5 + confidence / 2, n - 1)
    return float(values.mean()), t * float(values.std(ddof=1)) / n ** 0.5


def verdicts(data: pd.DataFrame, confidence: float = 0.95, precision: float = PRECISION,
             stream: Stream | None = None) -> pd.DataFrame:
    """Is each (ordering, load) stable? One row each, judged over its seeds.

    A run is stationary and keeps up only if, in its window (the second half of the arrivals, as
    :func:`gangkit.results.waiting.stability` cuts it), the GPUs carry what arrives: the *carried*
    utilization (``window_effective_utilization``) matches the load the window was offered
    (``window_offered_load``: the nominal load as this seed's random stream realised it), and the
    queue does not grow. By conservation of work, carried minus offered is the backlog of work
    worked off over the window (per GPU and unit of time): below 0 the backlog grows, above 0 the
    window is still working off a backlog from before it. Over the seeds, with ``confidence``
    intervals (Student t) of the mean of carried minus offered (the *excess*) and of the queue slope:

    - ``unstable``: the excess band lies below 0 (work arrives faster than it is done), or the
      slope band lies above 0 (the queue of jobs grows), or the nominal load is at least the
      capacity bound 1 (nothing carries more than every GPU);
    - ``not stationary``: the excess band lies above 0: the window drains a backlog of its warm-up,
      so the runs are too short to judge;
    - ``undecided``: the excess band holds 0 but is wider than ``precision`` on either side (more
      seeds or longer runs needed);
    - ``stable``: the excess band holds 0 and is no wider than ``precision``, and the slope band
      does not lie above 0.

    A queue that shrinks is not used as evidence (its slope in jobs is small and noisy; a backlog
    being worked off shows as a positive excess). Two tests at ``confidence`` each: a stable point
    reads otherwise now and then, and a point just past its limit may need longer runs to show it.
    The columns ``carried`` and ``offered`` are means over the seeds. A table of :func:`gangkit.sweep`
    lacks ``window_offered_load``: it is computed from ``stream`` (default :func:`mix_stream`), which
    must be the stream the sweep ran.
    """
    if "window_offered_load" not in data.columns:
        data = data.assign(window_offered_load=[window_offered_load(lo, se, n, stream) for lo, se, n in
                                                zip(data["load"], data["seed"], data["n_jobs"])])
    rows = []
    for (ordering, load), g in data.groupby(["ordering", "load"], sort=False):
        excess, e_half = _band(g["window_effective_utilization"] - g["window_offered_load"], confidence)
        slope, s_half = _band(g["queue_slope_per_h"], confidence)
        if load >= naive_bound() or excess + e_half < 0 or slope - s_half > 0:
            verdict = "unstable"
        elif excess - e_half > 0:
            verdict = "not stationary"
        elif not e_half <= precision:
            verdict = "undecided"
        else:
            verdict = "stable"
        rows.append((ordering, load, len(g), round(float(g["window_offered_load"].mean()), 4),
                     round(float(g["window_effective_utilization"].mean()), 4), round(excess, 4), round(e_half, 4),
                     round(slope, 3), round(s_half, 3), verdict))
    out = pd.DataFrame(rows, columns=["ordering", "load", "seeds", "offered", "carried", "excess", "excess ±",
                                      "queue slope (jobs/h)", "slope ±", "verdict"])
    order = {o: i for i, o in enumerate((*ORDERINGS, *BACKFILL_ORDERINGS))}
    return out.sort_values(["ordering", "load"], key=lambda c: c.map(order) if c.name == "ordering" else c,
                           kind="stable").reset_index(drop=True)


def stability_limit(table: pd.DataFrame, ordering: str) -> tuple[float, float]:
    """From :func:`verdicts`: (the highest load up to which every load of the sweep reads ``stable``, the
    next load of the sweep). The ordering's stability limit lies between them; NaN where there is none."""
    rows = table[table["ordering"] == ordering].sort_values("load")
    last, nxt = float("nan"), float("nan")
    for load, verdict in zip(rows["load"], rows["verdict"]):
        if verdict != "stable":
            nxt = float(load)
            break
        last = float(load)
    return last, nxt


#: The loads every ordering of the sweep ran, for the lesson's one table.
SUMMARY_LOADS = (0.6, 0.8, 0.9, 1.0)


def sweep_summary(data: pd.DataFrame, loads=SUMMARY_LOADS, seeds=(0, 1, 2, 3)) -> pd.DataFrame:
    """One readable table of the sweep: per load and ordering, the waits (hours), the load offered to the
    window and the utilization carried in it, the half-width of the 95% band of their difference, and the
    verdict of :func:`verdicts` (over ``seeds``, which every ordering ran; the 8000-job runs only).
    """
    common = main_rows(data)
    common = common[common["seed"].isin(list(seeds)) & common["load"].isin(list(loads))]
    columns = {"mean_wait_s[1]": "one-GPU mean wait (h)", "mean_wait_s[2-8]": "gang mean wait (h)",
               "max_wait_s[2-8]": "gang longest wait (h)"}
    g = common.groupby(["load", "ordering"], sort=False)
    out = pd.DataFrame({label: g[col].mean() / 3600.0 for col, label in columns.items()})
    v = verdicts(common).set_index(["load", "ordering"])
    out["offered"] = v["offered"]
    out["carried"] = v["carried"]
    out["excess ±"] = v["excess ±"]
    out["verdict"] = v["verdict"]
    order = [o for o in (*ORDERINGS, *BACKFILL_ORDERINGS) if o in set(common["ordering"])]
    out = out.reindex(pd.MultiIndex.from_product([list(loads), order], names=["load", "ordering"]))
    return out.round({**{label: 2 for label in columns.values()}, "offered": 3, "carried": 3, "excess ±": 3})


def window_study(data: pd.DataFrame) -> pd.DataFrame:
    """:data:`WINDOW_GRID`'s question: how the verdict at its load moves with the jobs per run (seeds 0-4)."""
    grid = WINDOW_GRID
    rows = data[data["ordering"].isin(grid["ordering"]) & data["load"].isin(grid["load"])
                & data["seed"].isin(grid["seed"])]
    parts = []
    for n_jobs, g in rows.groupby("n_jobs"):
        parts.append(verdicts(g).assign(n_jobs=n_jobs))
    out = pd.concat(parts, ignore_index=True)
    out = out[["ordering", "load", "n_jobs", "seeds", "offered", "carried", "excess", "excess ±",
               "queue slope (jobs/h)", "slope ±", "verdict"]]
    order = {o: i for i, o in enumerate(ORDERINGS)}
    return out.sort_values(["ordering", "n_jobs"], key=lambda c: c.map(order) if c.name == "ordering" else c,
                           kind="stable").reset_index(drop=True)


def first_unstable_load(data: pd.DataFrame, ordering: str, share: float = 0.5) -> float:
    """The lowest load from which on more than ``share`` of the seeds read unstable (queue slope alone) at
    every higher load. The queue-slope test alone misses a run whose window drains a backlog: the lesson
    uses :func:`verdicts` and :func:`stability_limit` instead."""
    s = unstable_share(data)[ordering].dropna()
    loads = list(s.index)
    for i, load in enumerate(loads):
        if all(s[x] > share for x in loads[i:]):
            return float(load)
    return float("nan")


# --------------------------------------------------------------------------- the saturated system
def saturated(ordering: str, node_share: float = NODE_SHARE, n_jobs: int = 1000, seed: int = 0,
              fraction: float = 0.8) -> dict:
    """The utilization an ordering sustains when the queue never runs dry.

    All ``n_jobs`` jobs of the mix are submitted at t=0, in their stream
    order. The figures are measured from t=0 until ``fraction`` of the jobs
    have started (later, the queue is short and the run drains), so there is
    always a backlog. Returns the effective utilization over that window and
    the share of capacity left free while jobs waited (cached).
    """
    return dict(_saturated(ordering, float(node_share), int(n_jobs), int(seed), float(fraction)))


@lru_cache(maxsize=32)
def _saturated(ordering: str, node_share: float, n_jobs: int, seed: int, fraction: float) -> tuple:
    jobs = [dataclasses.replace(j, submit_time=0.0) for j in mix_stream(node_share, n_jobs, seed).jobs()]
    sc = Scenario(nodes(N_NODES, gpus=GPUS_PER_NODE), jobs, name=f"saturated mix-{node_share:g}")
    r = simulate(sc, stack="gang", ordering=ordering, record="jobs")
    starts = r.jobs["start_s"].dropna().sort_values().to_numpy()
    end = float(starts[int(fraction * n_jobs) - 1])
    u = waiting.utilization(r, 0.0, end)
    return (("ordering", ordering), ("node_share", node_share), ("window_end_s", round(end, 3)),
            ("effective_utilization", u["effective_utilization"]),
            ("idle_while_waiting", waiting.idle_while_waiting(r, 0.0, end)))


def saturated_band(ordering: str, node_share: float = NODE_SHARE, n_jobs: int = 2000, seeds=range(5),
                   confidence: float = 0.95) -> dict:
    """:func:`saturated` over several seeds: the mean effective utilization and its ``confidence`` interval.

    One seed's saturated run is one sample of the limit; the band (Student t over the seeds) says how far
    another sample could fall, so that the estimate can be set beside the sweep's verdicts.
    """
    values = pd.Series([saturated(ordering, node_share, n_jobs, s)["effective_utilization"] for s in seeds])
    mean, half = _band(values, confidence)
    return {"ordering": ordering, "node_share": float(node_share), "seeds": len(values),
            "effective_utilization": round(mean, 4), "band": round(half, 4),
            "low": round(float(values.min()), 4), "high": round(float(values.max()), 4)}


def naive_bound() -> float:
    """The capacity bound: the offered GPU demand must stay below the cluster's GPUs, load < 1."""
    return 1.0


# --------------------------------------------------------------------------- the explorer
def render_waits(ordering: str = "strict", load: float = 0.6, seed: int = 0, n_jobs: int = 1000) -> tuple[pd.DataFrame, Figure]:
    """What :func:`wait_explorer` shows: waits per size class, and the queue and GPUs over time."""
    r = run(ordering, load, NODE_SHARE, n_jobs, seed)
    table = waiting.wait_table(r)[["jobs", "censored", "mean_wait_s", "p95_wait_s", "max_wait_s", "mean_bounded_slowdown"]]
    st = waiting.stability(r)
    u = waiting.utilization(r, st.window_start_s, st.window_end_s)
    fig = Figure(figsize=(8.5, 6.0))
    top, bottom = fig.subplots(2, 1, sharex=True)
    tl = r.timeline
    end = float(r.jobs["submit_s"].max())
    _, per, words = plots.time_unit(end)
    keep = tl["time_s"] <= end
    top.step(tl["time_s"][keep] / per, tl["waiting_jobs"][keep], where="post", color="#444444", linewidth=0.8)
    top.axvspan(st.window_start_s / per, st.window_end_s / per, color="#f4a261", alpha=0.2,
                label=f"window: queue slope {st.slope_per_h:.2f} jobs/h [{st.low_per_h:.2f}, {st.high_per_h:.2f}]")
    top.set_ylabel("waiting jobs")
    top.legend(loc="upper left", fontsize=8)
    top.set_title(f"ordering {ordering}, offered load {load:g}: carried in the window "
                  f"{u['effective_utilization']:.2f} (one seed; the verdict takes several)", fontsize=10)
    plots.gpu_states(r, ax=bottom, until=end)
    # the plot's own title names the scenario (its stream's internal name); say what the mix is instead
    bottom.set_title(f"What the GPUs were doing: {1 - NODE_SHARE:.0%} one-GPU jobs, {NODE_SHARE:.0%} whole-node gangs "
                     f"(ordering {ordering})", fontsize=10)
    bottom.set_xlabel(f"simulated time ({words})")
    fig.subplots_adjust(left=0.1, right=0.84, bottom=0.09, top=0.94, hspace=0.25)
    return table, fig


def wait_explorer(ordering: str = "strict", load: float = 0.6, seed: int = 0, n_jobs: int = 1000) -> Explorer:
    """Lesson 04's explorer: pick an ordering, a load and a seed; see waits per class, the queue and the GPUs.

    Runs :func:`run` (the mix of one-GPU jobs and whole-node gangs, stack
    ``gang``) and shows :func:`render_waits`.
    """
    style = {"description_width": "7em"}
    layout = W.Layout(width="26em")
    controls = {
        # a dropdown, not toggle buttons: six buttons of one width cut 'conservative-backfill' short
        "ordering": W.Dropdown(options=[*ORDERINGS, *BACKFILL_ORDERINGS], value=ordering,
                               description="ordering", style=style, layout=layout),
        "load": W.FloatSlider(value=load, min=0.4, max=1.2, step=0.05, description="offered load",
                              continuous_update=False, readout_format=".2f", style=style, layout=layout),
        "seed": W.IntSlider(value=seed, min=0, max=4, description="seed", continuous_update=False, style=style,
                            layout=layout),
    }

    def render(ordering: str, load: float, seed: int):
        return render_waits(ordering, round(load, 2), seed, n_jobs)

    return Explorer("Waiting explorer",
                    f"{n_jobs} jobs, 90% one-GPU and 10% whole-node gangs, on {N_NODES} nodes x "
                    f"{GPUS_PER_NODE} GPUs, "
                    "stack gang (simulated figures).", controls, render)
