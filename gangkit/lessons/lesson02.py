"""Lesson 02's stories: gang admission, what a waiting gang holds, and the order gangs go in.

Gang admission starts a job's workers together or not at all. The gang
variants differ in what a gang holds while it waits (nothing, or part of
the cluster for a while); the placement ordering decides who waits behind
a big gang.

The contended story: two nodes of 4 GPUs. Job ``long`` takes a whole node
(4 GPUs) for an hour. Ten seconds later job ``big`` arrives, a sync gang of
6 workers of one GPU: it cannot start before ``long`` ends, since only 4
GPUs are free. From t=60 s a stream of one-GPU jobs (``small-00``,
``small-01``, ...) arrives every 200 s, each running 15 minutes. While
``big`` waits, what does it hold, and who gets the free node?

- pod by pod (``pod``): 4 of big's workers take node-1 and hold it until
  ``long`` ends; the small jobs queue behind;
- Volcano (``gang``): big waits holding nothing; the small jobs use node-1,
  and may still be there when ``long`` ends (big waits longer);
- coscheduling: 4 workers wait at Permit, the 5th finds no node, and with 2
  of 6 missing (33 %, above the 10 % threshold) the group is rejected at
  once: like Volcano here;
- YuniKorn: 4 placeholders hold node-1; after 15 minutes they time out and
  (``Soft``) the real pods take node-1 again, one by one: like pod by pod;
- kube-gang (1.35): 4 workers hold node-1 for 5 minutes, are rejected,
  small jobs slip in, and big grabs what it can again at each chance;
- kube-gang 1.36: the PodGroup scheduling cycle finds room for 4 of 6 and
  binds nothing: like Volcano here.

This module holds:

- :func:`contended` and :func:`compare`: the story through a list of stacks
  (:data:`VARIANTS`), one row per stack; :func:`plot_compare` draws the two
  numbers that matter side by side; :func:`with_big` changes job ``big``;
- :func:`compare_orderings`: a ``mixed`` stream under ``gang`` with ordering
  ``strict`` and ``skip`` (head-of-line blocking, and the big gangs' waits);
  :func:`gang_explorer` is the lesson's widget over it
  (:func:`render_orderings`).

All figures are simulated by gangkit, never measured on a real cluster.
"""

from __future__ import annotations

import dataclasses
from functools import lru_cache

import ipywidgets as W
import pandas as pd
from matplotlib.figure import Figure

from gangkit.lessons.explorer import Explorer
from gangkit.model.jobs import job as make_job
from gangkit.model.nodes import nodes as make_nodes
from gangkit.model.scenario import Scenario
from gangkit.results import plots
from gangkit.simulate import simulate
from gangkit.workloads.scenarios import mixed

#: The stacks the lesson compares, in the order of the table; ``kube-gang 1.36`` is the kube-gang stack with the
#: run setting ``kube_gang_release="1.36"`` (the PodGroup scheduling cycle), ``kube-gang`` is 1.35's.
VARIANTS = ("pod", "gang", "coscheduling", "yunikorn", "kube-gang", "kube-gang 1.36")


def variant(name: str) -> tuple[str, dict]:
    """A row name of :data:`VARIANTS` -> (stack, run settings): ``"kube-gang 1.36"`` -> ``("kube-gang",
    {"kube_gang_release": "1.36"})``."""
    stack, _, release = name.partition(" ")
    return stack, ({"kube_gang_release": release} if release else {})
#: The columns of :func:`compare`.
COLUMNS = ["held_idle_gpu_s", "big_wait_s", "big_state", "small_mean_wait_s", "releases", "makespan_s"]


def contended(n_small: int = 20, **big) -> Scenario:
    """The lesson's workload; ``big`` takes extra :class:`~gangkit.model.jobs.Job` fields (e.g. ``gang_style``)."""
    jobs = [make_job("long", pods=1, gpus=4, run_time=3600),
            make_job("big", pods=6, gpus=1, run_time=600, submit_time=10, **big)]
    jobs += [make_job(f"small-{i:02d}", pods=1, gpus=1, run_time=900, submit_time=60 + 200 * i) for i in range(n_small)]
    return Scenario(make_nodes(2, gpus=4), jobs, name="contended",
                    description=f"2 nodes x 4 GPUs; long (4 GPUs, 1 h) at 0 s; big = 6 sync workers x 1 GPU at 10 s; "
                                f"{n_small} one-GPU jobs of 15 min every 200 s from 60 s")


def compare(scenario: Scenario | None = None, stacks=VARIANTS) -> pd.DataFrame:
    """One row per stack: GPU-seconds held idle, big's wait and end state, the small jobs' mean wait,
    how many times capacity was released by a timeout or rejection, and the makespan."""
    scenario = contended() if scenario is None else scenario
    rows = []
    for stack in stacks:
        name, settings = variant(stack)
        r = simulate(scenario, stack=name, **settings)
        jobs = r.jobs.set_index("job")
        small = jobs[jobs.index.str.startswith("small-")]
        rows.append({
            "stack": stack,
            "held_idle_gpu_s": r.figures["held_idle_gpu_seconds"],
            "big_wait_s": float(jobs.loc["big", "wait_s"]),
            "big_state": jobs.loc["big", "state"],
            "small_mean_wait_s": round(float(small["wait_s"].mean()), 1) if len(small) else 0.0,
            "releases": int((r.events["event"] == "released").sum()),
            "makespan_s": r.figures["makespan_s"],
        })
    return pd.DataFrame(rows, columns=["stack", *COLUMNS]).set_index("stack")


def with_big(scenario: Scenario, **fields) -> Scenario:
    """The scenario with job ``big`` changed (``placeholder_timeout=600, gang_style="Hard"``, ...)."""
    return dataclasses.replace(scenario, jobs=[dataclasses.replace(j, **fields) if j.name == "big" else j
                                               for j in scenario.jobs])


def plot_compare(table: pd.DataFrame, axes=None):
    """Two bar charts: GPU-hours held idle, and big's wait in minutes, per stack."""
    import matplotlib.pyplot as plt

    if axes is None:
        _, axes = plt.subplots(1, 2, figsize=(10, 3.4))
    names = list(table.index)
    axes[0].bar(names, table["held_idle_gpu_s"] / 3600.0, color="#D55E00")
    axes[0].set_ylabel("GPU-hours held idle")
    axes[0].set_title("What a waiting gang holds")
    axes[1].bar(names, table["big_wait_s"] / 60.0, color="#0072B2")
    axes[1].set_ylabel("minutes")
    axes[1].set_title("How long the big gang waits")
    for ax in axes:
        ax.tick_params(axis="x", rotation=20)
    return axes


# -- strict or skip: the ordering explorer -------------------------------------------------------------

#: The columns of :func:`compare_orderings`.
ORDERING_COLUMNS = [
    "mean_wait_s", "p95_wait_s", "max_wait_s", "mean_wait_largest_s", "effective_utilization", "held_idle_gpu_seconds",
    "jobs_finished", "makespan_s",
]


@lru_cache(maxsize=16)
def _run_orderings(seed: int, load: float, n_jobs: int, n_nodes: int) -> dict:
    """Both orderings on one stream (cached: the explorer's toggle only redraws; results stay inside this module)."""
    sc = mixed(n_jobs=n_jobs, n_nodes=n_nodes, load=load, seed=seed)
    return {ordering: simulate(sc, stack="gang", ordering=ordering) for ordering in ("skip", "strict")}


def _ordering_row(result) -> dict:
    f = result.summary()
    jobs = result.jobs
    largest = jobs.loc[jobs["gpus"] == jobs["gpus"].max(), "wait_s"]
    row = {k: f[k] for k in ORDERING_COLUMNS if k in f}
    row["mean_wait_largest_s"] = round(float(largest.mean()), 3) if len(largest) else 0.0
    return {k: row[k] for k in ORDERING_COLUMNS}


def _ordering_table(results: dict) -> pd.DataFrame:
    return pd.DataFrame([_ordering_row(r) for r in results.values()], index=pd.Index(list(results), name="ordering"))


def compare_orderings(seed: int = 0, load: float = 0.9, n_jobs: int = 300, n_nodes: int = 32) -> pd.DataFrame:
    """A small ``mixed`` stream under ``gang`` with ordering ``skip`` and ``strict``: one row per ordering.

    ``mean_wait_largest_s`` is the mean wait of the jobs that ask for the
    most GPUs in the stream (the big gangs that strict ordering protects).
    """
    return _ordering_table(_run_orderings(seed, load, n_jobs, n_nodes))


def render_orderings(ordering: str = "skip", seed: int = 0, load: float = 0.9, n_jobs: int = 300,
                     n_nodes: int = 32) -> tuple[pd.DataFrame, Figure]:
    """What :func:`gang_explorer` shows: the ordering table, both wait ECDFs, one run's GPU states."""
    results = _run_orderings(seed, load, n_jobs, n_nodes)
    fig = Figure(figsize=(8.5, 6.4))
    top, bottom = fig.subplots(2, 1)
    longest = max(float(r.jobs["wait_s"].max()) for r in results.values())
    unit = plots.time_unit(longest)[0]
    for name, r in results.items():
        plots.wait_distribution(r, ax=top, unit=unit, label=f"ordering {name}")
    arrivals_end = float(results[ordering].jobs["submit_s"].max())
    plots.gpu_states(results[ordering], ax=bottom, until=arrivals_end if arrivals_end > 0 else None)
    bottom.set_title(f"What the GPUs were doing while jobs arrived: ordering {ordering}")
    fig.subplots_adjust(left=0.1, right=0.84, bottom=0.08, top=0.94, hspace=0.45)
    return _ordering_table(results), fig


def gang_explorer(ordering: str = "skip", seed: int = 0, load: float = 0.9, n_jobs: int = 300,
                  n_nodes: int = 32) -> Explorer:
    """Lesson 02's explorer: strict versus skip ordering under ``gang`` on a small ``mixed`` stream.

    A seed slider picks the stream, a load slider its offered load; the
    toggle picks whose GPU states are drawn. Shows :func:`compare_orderings`
    and the waits of both orderings.
    """
    style = {"description_width": "7em"}
    layout = W.Layout(width="26em")
    controls = {
        "ordering": W.ToggleButtons(options=["skip", "strict"], value=ordering, description="GPU states of",
                                    style=style),
        "seed": W.IntSlider(value=seed, min=0, max=9, description="seed", continuous_update=False, style=style,
                            layout=layout),
        "load": W.FloatSlider(value=load, min=0.5, max=1.5, step=0.1, description="offered load",
                              continuous_update=False, readout_format=".1f", style=style, layout=layout),
    }

    def render(ordering: str, seed: int, load: float):
        # the slider's 0.9 may be 0.9000000000000001: round so that the table equals compare_orderings(load=0.9)
        return render_orderings(ordering=ordering, seed=seed, load=round(load, 2), n_jobs=n_jobs, n_nodes=n_nodes)

    return Explorer("Gang ordering explorer",
                    f"mixed stream of {n_jobs} jobs on {n_nodes} nodes x 8 GPUs, stack gang "
                    "(simulated figures).",
                    controls, render)


# -- jobs that arrive apart: when pod by pod interleaves them ------------------------------------------

#: The arrival gaps (seconds) and the instants the filler frees its GPUs (seconds) :func:`interleaving` tries.
INTERLEAVING_GAPS = (10, 30, 60, 150, 300)
INTERLEAVING_FREE_AT = (100, 200, 300) + tuple(range(345, 676, 30))


def two_gangs_apart(gap: float, free_at: float) -> Scenario:
    """5 nodes of 1 GPU. Filler ``F`` (3 pods) holds 3 GPUs until ``free_at``; gang ``A`` (4 workers of 1 GPU)
    arrives at 1 s and binds 2 of its workers; gang ``B`` (the same) arrives ``gap`` seconds later and binds none."""
    jobs = [make_job("F", pods=3, gpus=1, run_time=free_at),
            make_job("A", pods=4, gpus=1, run_time=600, submit_time=1),
            make_job("B", pods=4, gpus=1, run_time=600, submit_time=1 + gap)]
    return Scenario(make_nodes(5, gpus=1), jobs, name="two-gangs-apart",
                    description=f"5 nodes x 1 GPU; F (3 GPUs) until {free_at:g} s; gangs A at 1 s and B at "
                                f"{1 + gap:g} s, 4 workers x 1 GPU each")


@lru_cache(maxsize=4)
def _interleaving(gaps: tuple, free_at: tuple) -> pd.DataFrame:
    rows = []
    for gap in gaps:
        arrived = 1 + gap  # B's arrival: an end time before it says nothing of the two gangs' order
        tried = sorted({t for t in free_at if t > arrived} | ({arrived + 15} if arrived + 15 < 330 else set()))
        dead = {t: bool(simulate(two_gangs_apart(gap, t), stack="pod", record="jobs").summary()["deadlock"])
                for t in tried}
        before = [t for t in tried if t < 330]
        after = [t for t in tried if t >= 330]
        rows.append({
            "arrival_gap_s": gap,
            "deadlock_share_before_330_s": round(sum(dead[t] for t in before) / len(before), 2) if before else float("nan"),
            "deadlock_share_after_330_s": round(sum(dead[t] for t in after) / len(after), 2) if after else float("nan"),
            "deadlocked_when_freed_at_s": ", ".join(f"{t:g}" for t in tried if dead[t]) or "-",
        })
    return pd.DataFrame(rows).set_index("arrival_gap_s")


def interleaving(gaps=INTERLEAVING_GAPS, free_at=INTERLEAVING_FREE_AT) -> pd.DataFrame:
    """Do two gangs that arrive ``gap`` seconds apart deadlock under ``pod``? One row per gap.

    :func:`two_gangs_apart` is simulated once for each gap and each instant
    the filler frees its 3 GPUs that comes after B's arrival (``free_at``, and
    15 s after B arrives when that is before A's first flush at 330 s). Whoever's pods come first in kube-scheduler's
    queue at that instant takes the 3 GPUs: A completes (no deadlock), or B
    binds 3 of 4 while A holds 2 (deadlock). A's and B's waiting pods are
    ordered by their queue timestamp, refreshed at each failed attempt; the
    only attempts here are the 5-minute flush's (a pod unschedulable for more
    than 300 s is retried at the next 30-s tick, and fails again). Before A's
    first flush (330 s) A always goes first; after, B goes first whenever A's
    pods were retried more recently than B's, a share of about the gap
    rounded down to 30 s, out of each 330 s. Deterministic; a few seconds.
    """
    return _interleaving(tuple(gaps), tuple(free_at)).copy()
