"""Lesson 07's experiments: when a gang layer pays, when it does not, and what a migration can get wrong.

A gang layer answers one question for every job: *does a partial start mean anything?* For a
synchronous all-reduce training job it does not: a worker without its peers only waits, so the
job must start whole or not at all. For a batch of independent tasks, or for one-GPU jobs, a
partial start is real progress, and making such a job wait for all its pods only adds waiting.
The experiments here measure both on the same cluster and the same arrivals, then show how each
setting a migration adds (a gang size, a quota, an admission timeout, a second queue, a
NodePool limit) fails when it is chosen wrong, and which layer says so.

This module holds:

- :data:`JOB_TYPES` and :func:`job_type_stream`: the workloads, one per kind of job
  (one-GPU jobs, independent tasks, synchronous training), as seeded streams;
  :func:`decision_table` runs each under the plain pod scheduler and under Volcano's gang
  layer over several seeds; :func:`decision_runs` and :func:`with_min_member` are its parts;
- :data:`MISTAKES` and :func:`mistake_table`: each wrong choice as a small scenario, the
  stack it runs under, and what the simulation and the diagnosis show;
  :func:`mistake_scenario` builds one;
- :func:`migration_manifests` and :func:`migration_table`: the same workload before (a plain
  ``batch/v1`` Job) and after, in each gang scheduler's form, as gangkit writes them;
- :func:`signals`: the real metric that shows each mistake; :func:`check_table`: what
  ``gangkit check`` finds in the stack files of ``examples/migration/`` before anything runs;
- :func:`decision_explorer`: the lesson's widget over :func:`render_decision`.

The migration's parts (:data:`MISTAKES` to :func:`check_table`) are built in
:mod:`gangkit.lessons.lesson07_migration`; every name is importable from here, as the lesson's
notebook does.

All figures are simulated by gangkit, never measured on a real cluster.
"""

from __future__ import annotations

import dataclasses
import math
from functools import lru_cache

import ipywidgets as W
import pandas as pd
from matplotlib.figure import Figure

from gangkit.kueue.objects import (
    GPU,
    ClusterQueue,
    FlavorQuotas,
    KueueSetup,
    LocalQueue,
    Quota,
    ResourceFlavor,
    ResourceGroup,
)
from gangkit.lessons.explorer import Explorer
from gangkit.lessons.lesson07_migration import (
    MIGRATION_FILES,
    MIGRATION_TARGETS,
    MISTAKE_HORIZON,
    MISTAKES,
    check_table,
    eviction_cycle,
    manifest_docs,
    migration_examples,
    migration_manifests,
    migration_table,
    mistake_run,
    mistake_scenario,
    mistake_table,
    signals,
    team_kueue,
)
from gangkit.model.nodes import nodes
from gangkit.model.scenario import Scenario
from gangkit.results import plots
from gangkit.results.waiting import utilization
from gangkit.simulate import simulate
from gangkit.workloads.generators import Exponential, JobClass, Poisson, Stream

__all__ = [
    "DECISION_STACKS", "DECISION_VARIANTS", "ELASTIC_STACK", "ELASTIC_VARIANTS", "GPUS_PER_NODE", "HORIZON_S",
    "JOB_TYPES", "MEAN_RUN_S", "MIGRATION_FILES", "MIGRATION_TARGETS", "MISTAKES", "MISTAKE_HORIZON", "NODES",
    "check_table", "deadlock_story", "decision_explorer", "decision_run", "decision_runs", "decision_scenario",
    "decision_table", "elastic_run", "elastic_scenario", "elastic_table", "eviction_cycle", "job_type_stream",
    "manifest_docs", "migration_examples", "migration_manifests", "migration_table", "mistake_run",
    "mistake_scenario", "mistake_table", "partial_placements", "plot_decision", "render_decision", "run_figures",
    "signals", "team_kueue", "with_min_member",
]

#: The cluster of the decision experiment: 8 nodes of 8 GPUs.
NODES, GPUS_PER_NODE = 8, 8
#: Mean run time of every job in the decision experiment (exponential), seconds.
MEAN_RUN_S = 1800.0
#: How long each run of the decision experiment lasts (simulated seconds): five days. At load 0.8 or 0.9 the 300
#: jobs of a multi-pod kind arrive within about 76 hours and, where nothing deadlocks, all finish within 106 hours;
#: a job that never finishes is counted until this end (a lower bound of its turnaround).
HORIZON_S = 5 * 86400.0


def _mix(progress: str) -> tuple[JobClass, ...]:
    """Seven jobs in ten of 2 pods x 4 GPUs, three in ten of 8 pods x 8 GPUs (the whole cluster)."""
    return (JobClass("small", 0.7, pods=2, gpus_per_pod=4, progress=progress, run_time=Exponential(MEAN_RUN_S)),
            JobClass("big", 0.3, pods=8, gpus_per_pod=8, progress=progress, run_time=Exponential(MEAN_RUN_S)))


#: Each kind of job the decision test is asked about: its job classes, and whether a partial start means anything.
JOB_TYPES: dict[str, tuple[tuple[JobClass, ...], str]] = {
    "one-GPU jobs": ((JobClass("one", 1.0, pods=1, gpus_per_pod=1, progress="sync", run_time=Exponential(MEAN_RUN_S)),),
                     "a job of one pod cannot start partly"),
    "independent tasks": (_mix("independent"), "yes: each task that runs makes progress"),
    "synchronous training": (_mix("sync"), "no: a worker without its peers only waits"),
}

#: The variants the decision table compares: the default scheduler; Volcano's gang layer as most clusters add it
#: (every job in a PodGroup with ``minMember`` = all its pods); and the gang layer with ``minMember: 1`` (a PodGroup
#: that waits for nothing), as a job whose partial start means something should be set.
DECISION_VARIANTS: dict[str, tuple[str, int | None]] = {
    "pod": ("pod", None),
    "gang": ("gang", None),
    "gang, minMember 1": ("gang", 1),
}
DECISION_STACKS = ("pod", "gang")


def job_type_stream(kind: str, load: float = 0.8, n_jobs: int = 300, seed: int = 0) -> Stream:
    """The arrivals of ``kind`` (a key of :data:`JOB_TYPES`) at ``load`` of the cluster's GPUs, seeded."""
    if kind not in JOB_TYPES:
        raise ValueError(f"unknown job type {kind!r}; expected one of {', '.join(JOB_TYPES)}")
    classes = JOB_TYPES[kind][0]
    gpus = NODES * GPUS_PER_NODE
    rate = Stream(Poisson(1.0), classes, n_jobs=n_jobs, seed=seed).rate_for_load(load, gpus)
    return Stream(Poisson(rate), classes, n_jobs=n_jobs, seed=seed, name=kind)


def with_min_member(scenario: Scenario, min_member: int | None) -> Scenario:
    """``scenario`` with every job's gang size set to ``min_member`` (``None``: all its pods, the default)."""
    jobs = [dataclasses.replace(j, min_member=None if min_member is None else min(min_member, j.pod_count))
            for j in scenario.jobs]
    return dataclasses.replace(scenario, jobs=jobs)


def decision_scenario(kind: str, load: float = 0.8, n_jobs: int = 300, seed: int = 0,
                      min_member: int | None = None) -> Scenario:
    """:func:`job_type_stream` on :data:`NODES` x :data:`GPUS_PER_NODE` GPUs, as a scenario."""
    stream = job_type_stream(kind, load, n_jobs, seed)
    sc = Scenario(nodes(NODES, gpus=GPUS_PER_NODE), stream.jobs(), name=f"{kind}, load {load:g}, seed {seed}",
                  description=f"{NODES} nodes x {GPUS_PER_NODE} GPUs; {n_jobs} jobs of kind {kind!r}, "
                              f"offered load {load:g}, seed {seed}")
    return sc if min_member is None else with_min_member(sc, min_member)


@lru_cache(maxsize=256)
def decision_run(kind: str, stack: str, load: float, n_jobs: int, seed: int, min_member: int | None):
    """:func:`decision_scenario` simulated under ``stack`` (remembered: the table, the explorer and the checks ask again)."""
    return simulate(decision_scenario(kind, load, n_jobs, seed, min_member), stack=stack, horizon=HORIZON_S)


def run_figures(result) -> dict:
    """A run's figures.

    ``mean_turnaround_s`` is submission to finish, over every job: for a job of independent
    tasks the time to its *first* pod says little (a scheduler that starts one task of every job
    looks fast), the time to its last task's end is what its owner waits for. A job that has not
    finished when the run ends is counted until that end (:data:`HORIZON_S` in the decision
    experiment), as :func:`gangkit.job_waits` counts a wait that never ended: the mean is then a
    lower bound, and ``never_started`` says how many jobs never had all their pods running
    (``censored`` in ``result.jobs``). Counting only the jobs that finished would keep the few
    lucky ones of a deadlocked run and drop the rest (survivorship).
    Utilization is taken while jobs arrive (t=0 to the last submission), not over the drain.
    """
    s = result.summary()
    jobs = result.jobs
    end = float(s["makespan_s"])  # the end of the run (the horizon, when jobs are left unfinished)
    finish = jobs["finish_s"].fillna(end)
    turnaround = float((finish - jobs["submit_s"]).mean()) if len(jobs) else math.nan
    last = float(jobs["submit_s"].max())
    return {"mean_turnaround_s": turnaround, "jobs_finished": int(s["jobs_finished"]),
            "never_started": int(jobs["censored"].sum()),
            "effective_utilization": utilization(result, 0.0, last)["effective_utilization"],
            "held_idle_gpu_h": s["held_idle_gpu_seconds"] / 3600.0, "stalled": bool(s["deadlock"] or s["stalled"])}


def decision_runs(kind: str, stack: str, load: float = 0.8, seeds=range(5), n_jobs: int = 300,
                  min_member: int | None = None) -> pd.DataFrame:
    """One row per seed: :func:`run_figures`'s figures (turnaround, jobs finished, utilization, held idle, stalled)."""
    rows = {seed: run_figures(decision_run(kind, stack, float(load), int(n_jobs), int(seed), min_member)) for seed in seeds}
    return pd.DataFrame.from_dict(rows, orient="index").rename_axis("seed")


def decision_table(load: float = 0.8, seeds=range(5), n_jobs: int = 300, kinds=None, variants=None) -> pd.DataFrame:
    """The decision test, measured: each kind of job under each variant of :data:`DECISION_VARIANTS`, over ``seeds``.

    Columns (means over the seeds): each run's mean turnaround of all its jobs, a job that never
    finished counted until the end of the run (:func:`run_figures`; and the lowest and highest
    seed's, to show the spread), the jobs finished, the jobs that never started (their turnaround
    is a lower bound), the effective utilization
    while jobs arrive (GPU-time that made progress over capacity), the GPU-hours held idle (bound
    to a job that does not progress); and how many seeds' runs stalled (deadlock).
    """
    out = []
    for kind in (kinds or JOB_TYPES):
        for variant in (variants or DECISION_VARIANTS):
            stack, min_member = DECISION_VARIANTS[variant]
            runs = decision_runs(kind, stack, load, seeds, n_jobs, min_member)
            turn = runs["mean_turnaround_s"]
            out.append({"job type": kind, "stack": variant, "mean_turnaround_s": round(float(turn.mean())),
                        "lowest_seed_s": round(float(turn.min())), "highest_seed_s": round(float(turn.max())),
                        "jobs_finished": round(float(runs["jobs_finished"].mean()), 1),
                        "never_started": round(float(runs["never_started"].mean()), 1),
                        "effective_utilization": round(float(runs["effective_utilization"].mean()), 3),
                        "held_idle_gpu_h": round(float(runs["held_idle_gpu_h"].mean()), 1),
                        "runs_stalled": int(runs["stalled"].sum())})
    return pd.DataFrame(out).set_index(["job type", "stack"])


# ------------------------------------------------------------------ elastic training, measured
#: How elastic training is admitted in the comparison: all workers or none; or, with Kueue's partial
#: admission (``kueue.x-k8s.io/job-min-parallelism``), at least half of them, the job then running at
#: the speed of the workers it got (elastic; gangkit: ``Job.elastic``).
ELASTIC_VARIANTS: dict[str, bool] = {"all workers or none": False, "partial admission, at least half": True}
ELASTIC_STACK = "kueue+gang"


def elastic_scenario(load: float = 0.8, n_jobs: int = 300, seed: int = 0, partial: bool = True) -> Scenario:
    """Synchronous training of section 1's mix, elastic, behind Kueue (one ClusterQueue of every GPU).

    With ``partial`` every pod set may be admitted with half its pods (``min_count``), when the
    quota does not hold it all; the job then needs ``run time x pods / admitted pods``.
    """
    sc = decision_scenario("synchronous training", load, n_jobs, seed)
    jobs = []
    for j in sc.jobs:
        sets = [dataclasses.replace(ps, min_count=max(1, ps.count // 2) if partial and ps.count > 1 else None)
                for ps in j.pod_sets]
        jobs.append(dataclasses.replace(j, pod_sets=sets, elastic=True))
    cq = ClusterQueue("cluster-queue", [ResourceGroup((GPU,), (FlavorQuotas("default-flavor",
                                                                            {GPU: Quota(NODES * GPUS_PER_NODE)}),))])
    setup = KueueSetup([ResourceFlavor("default-flavor")], [cq], [LocalQueue("default", "default", "cluster-queue")])
    return dataclasses.replace(sc, jobs=jobs, kueue=setup, name=f"elastic, {'partial' if partial else 'whole'}, "
                               f"load {load:g}, seed {seed}")


@lru_cache(maxsize=64)
def elastic_run(load: float, n_jobs: int, seed: int, partial: bool):
    """:func:`elastic_scenario` under :data:`ELASTIC_STACK` (remembered, as :func:`decision_run`)."""
    return simulate(elastic_scenario(load, n_jobs, seed, partial), stack=ELASTIC_STACK)


def elastic_table(load: float = 0.8, seeds=range(3), n_jobs: int = 300) -> pd.DataFrame:
    """Elastic training admitted whole or in part: mean turnaround, jobs started smaller, utilization (means over seeds)."""
    out = []
    for variant, partial in ELASTIC_VARIANTS.items():
        rows = []
        for seed in seeds:
            r = elastic_run(float(load), int(n_jobs), int(seed), partial)
            figures = run_figures(r)
            figures["admitted_smaller"] = _admitted_smaller(r)
            rows.append(figures)
        df = pd.DataFrame(rows)
        out.append({"elastic training": variant, "mean_turnaround_s": round(float(df["mean_turnaround_s"].mean())),
                    "jobs_admitted_smaller": round(float(df["admitted_smaller"].mean()), 1),
                    "effective_utilization": round(float(df["effective_utilization"].mean()), 3),
                    "held_idle_gpu_h": round(float(df["held_idle_gpu_h"].mean()), 1)})
    return pd.DataFrame(out).set_index("elastic training")


def _admitted_smaller(result) -> int:
    """Jobs that ran with fewer pods than they asked for: an elastic job admitted in part runs longer than its
    run time (a job that restarted is left out: its restarts lengthen it too)."""
    jobs = result.jobs.dropna(subset=["finish_s"])
    ran = jobs["finish_s"] - jobs["start_s"]
    return int(((ran > jobs["run_time_s"] * (1 + 1e-9)) & (jobs["restarts"] == 0)).sum())


# ------------------------------------------------------------------ the explorer
def render_decision(kind: str = "synchronous training", load: float = 0.8, seed: int = 0,
                    min_member: int = 0) -> tuple[pd.DataFrame, Figure]:
    """What :func:`decision_explorer` shows: one seed of ``kind`` under ``pod`` and ``gang``, side by side.

    ``min_member`` 0 means every pod (the default gang); another value sets every job's gang size.
    """
    mm = None if min_member == 0 else int(min_member)
    results = {stack: decision_run(kind, stack, float(load), 300, int(seed), mm) for stack in DECISION_STACKS}
    table = pd.DataFrame.from_dict({s: run_figures(r) for s, r in results.items()}, orient="index").rename_axis("stack")
    table["mean_turnaround_s"] = table["mean_turnaround_s"].round(0)
    table["effective_utilization"] = table["effective_utilization"].round(3)
    table["held_idle_gpu_h"] = table["held_idle_gpu_h"].round(1)
    fig = Figure(figsize=(10, 3.2))
    axes = fig.subplots(1, 2, sharey=True)
    until = max(float(r.summary()["makespan_s"]) for r in results.values())
    for ax, (stack, r) in zip(axes, results.items(), strict=True):
        plots.gpu_states(r, ax=ax, until=until)
        ax.set_title("")
        ax.set_title(f"{stack}: {kind}, load {load:g}, seed {seed}", fontsize=9, loc="left")
        if ax is axes[0] and ax.get_legend() is not None:
            ax.get_legend().remove()  # one legend, beside the right panel
    axes[1].set_ylabel("")
    fig.subplots_adjust(left=0.06, right=0.84, bottom=0.17, top=0.88, wspace=0.08)
    return table, fig


def decision_explorer(kind: str = "synchronous training", load: float = 0.8) -> Explorer:
    """Lesson 07's explorer: a kind of job, a load, a seed and a gang size; both stacks side by side."""
    style = {"description_width": "11em"}
    controls = {
        "kind": W.Dropdown(options=list(JOB_TYPES), value=kind, description="job type", style=style),
        "load": W.FloatSlider(value=load, min=0.5, max=1.0, step=0.05, description="offered load",
                              continuous_update=False, style=style),
        "seed": W.IntSlider(value=0, min=0, max=9, description="seed", continuous_update=False, style=style),
        "min_member": W.IntSlider(value=0, min=0, max=8, description="minMember (0: all)",
                                  continuous_update=False, style=style),
    }
    return Explorer("Decision explorer", "the same arrivals under the default scheduler and under Volcano's gang "
                    "layer (simulated; each setting is run once and remembered).", controls, render_decision)


# ------------------------------------------------------------------ evidence: the decision plot, partial placements, deadlock
def plot_decision(table: pd.DataFrame, ax=None):
    """:func:`decision_table` as grouped bars: mean turnaround (hours) per job type and set-up, seeds' range as whiskers.

    A set-up in which jobs never started (its turnaround counts them until the end of the run, a
    lower bound) is drawn hatched and cut at the top of the axis, which is set by the other bars;
    a note in the corner gives each such bar's mean turnaround, the jobs that never started and the
    runs that deadlocked.
    """
    if ax is None:
        fig = Figure(figsize=(9, 3.4))
        ax = fig.subplots()
    kinds = list(dict.fromkeys(table.index.get_level_values(0)))
    variants = list(dict.fromkeys(table.index.get_level_values(1)))
    width = 0.8 / len(variants)
    colours = plots.OKABE_ITO
    whole = table[table["never_started"] == 0]
    top = 1.6 * float((whole if len(whole) else table)["highest_seed_s"].max()) / 3600
    notes = []
    for k, variant in enumerate(variants):
        for i, kind in enumerate(kinds):
            row = table.loc[(kind, variant)]
            x = i + (k - (len(variants) - 1) / 2) * width
            h = row["mean_turnaround_s"] / 3600
            censored = row["never_started"] > 0
            err = None if censored else [[(row["mean_turnaround_s"] - row["lowest_seed_s"]) / 3600],
                                         [(row["highest_seed_s"] - row["mean_turnaround_s"]) / 3600]]
            (bar,) = ax.bar([x], [min(h, top)], width, yerr=err, capsize=3, color=colours[k % len(colours)],
                            edgecolor="black", linewidth=0.5, label=variant if i == 0 else None)
            if censored:
                bar.set_hatch("//")
                jobs = row["jobs_finished"] + row["never_started"]
                notes.append(f"{variant}, {kind}: at least {h:.0f} h;\n   {row['never_started']:g} of {jobs:g} jobs "
                             f"never started (mean), {int(row['runs_stalled'])} runs deadlocked")
    if notes:
        ax.text(0.99, 0.97, "hatched bars, cut:\n" + "\n".join(notes), transform=ax.transAxes, ha="right", va="top", ma="left",
                fontsize=8, bbox={"boxstyle": "round,pad=0.3", "facecolor": "white", "edgecolor": "0.7"})
    ax.set_ylim(0, top)
    ax.set_xticks(range(len(kinds)), kinds)
    ax.set_ylabel("mean turnaround (hours)")
    ax.legend(frameon=False, fontsize=9, loc="upper left")
    ax.set_title("Submission to finish, mean over seeds (whiskers: lowest and highest seed; a job that never "
                 "finished counts to the end of the run)", fontsize=9, loc="left")
    return ax


def _partly_placed(result) -> tuple[int, int]:
    """(the most jobs that held some but not all of their pods at one instant, the jobs that ever did)."""
    pods, jobs = result.pods, result.jobs.set_index("job")
    end = float(result.summary()["makespan_s"])
    steps = []
    for name, first in pods.dropna(subset=["bound_s"]).groupby("job")["bound_s"].min().items():
        start = jobs.at[name, "start_s"]
        start = end if math.isnan(start) else float(start)
        if start > first:  # bound some pods at ``first``, all of them only at ``start`` (or never)
            steps += [(float(first), 1), (start, -1)]
    most = now = 0
    for _, step in sorted(steps, key=lambda e: (e[0], e[1])):  # an interval that ends frees its slot first
        now += step
        most = max(most, now)
    return most, len(steps) // 2


def partial_placements(load: float = 0.8, seeds=range(5), n_jobs: int = 300) -> pd.DataFrame:
    """Synchronous training under each set-up: how many jobs held part of their pods at once, and the deadlocks.

    A job is *partly placed* from its first pod's binding until all its pods run (or the run's end):
    it holds GPUs and does nothing. Columns: the runs that deadlocked, the most jobs partly placed
    at one instant (the largest over the seeds), and the jobs ever partly placed (mean over seeds).
    """
    out = []
    for variant, (stack, min_member) in DECISION_VARIANTS.items():
        runs = [decision_run("synchronous training", stack, float(load), int(n_jobs), int(seed), min_member)
                for seed in seeds]
        parts = [_partly_placed(r) for r in runs]
        out.append({"stack": variant, "runs_deadlocked": sum(bool(r.summary()["deadlock"]) for r in runs),
                    "most_partly_placed_at_once": max(m for m, _ in parts),
                    "jobs_ever_partly_placed": round(sum(n for _, n in parts) / len(parts), 1)})
    return pd.DataFrame(out).set_index("stack")


def deadlock_story(seed: int = 0, load: float = 0.8) -> pd.DataFrame:
    """How ``pod`` and ``gang, minMember 1`` each deadlock, one seed: the bindings of the jobs left holding part of their pods.

    Synchronous training at ``load``, both set-ups on the same arrivals. Per binding of a job that
    holds some of its pods and never starts: the job, when it was submitted, the pods bound then,
    the pods it holds, how many older jobs of 8 pods (submitted before it, not started) were still
    waiting at that moment, and the other jobs holding part of their pods.
    """
    rows = []
    for variant in ("pod", "gang, minMember 1"):
        stack, min_member = DECISION_VARIANTS[variant]
        r = decision_run("synchronous training", stack, float(load), 300, int(seed), min_member)
        jobs = r.jobs.set_index("job")
        big = jobs[jobs["pods"] == NODES]
        ev = r.events
        stuck = set(ev.loc[ev["event"] == "pod_bound", "job"]) & set(jobs.index[jobs["start_s"].isna()])
        held: dict[str, int] = {}
        keep = ev[ev["job"].isin(stuck) & (ev["event"] == "pod_bound")]
        for (t, name), part in keep.groupby(["time_s", "job"], sort=False):
            held[name] = held.get(name, 0) + len(part)
            submitted = float(jobs.at[name, "submit_s"])
            older = big[(big["submit_s"] < submitted) & ~(big["start_s"] <= t)]
            rows.append({"stack": variant, "time_s": round(float(t), 1), "job": name,
                         "submitted_s": round(submitted, 1), "pods_bound_now": len(part),
                         "pods_held_of_8": held[name], "older big jobs waiting": len(older),
                         "others holding part of their pods": ", ".join(
                             f"{j} ({n} of {NODES})" for j, n in held.items() if j != name) or "none"})
    return pd.DataFrame(rows).set_index(["stack", "time_s"])
