"""Pictures of a run: who held which GPU when, what the GPUs were doing, how long jobs waited.

Think of a hotel's room board. Each row is a room (a GPU of a node), each
coloured bar a guest (a pod) from check-in (bound) to check-out (released).
A guest who has checked in but whose party has not arrived yet (a sync
worker whose siblings are still pending) occupies the room without using it:
those stretches are drawn hatched, "held idle". The pictures:

- :func:`gantt`: the room board, one row per node, one lane per GPU;
- :func:`gpu_states`: the same GPUs counted over time: useful, held idle,
  free and not ready, stacked so that they add up to the capacity;
- :func:`wait_distribution`: for each waiting time, the share of jobs that
  waited at most that long (an ECDF); jobs that never started are marked
  apart, because their wait is only a lower bound (censored);
- :func:`wait_buckets`: where the waiting went, per stack;
- :func:`quota`: for a ``kueue+`` run, one panel per ClusterQueue with its
  nominal quota and what it reserves, borrows and lends, beside the cohort
  tree (its data: :func:`quota_table` and :func:`cohort_tree`, from
  :mod:`gangkit.results.kueue_quota`).

Each function takes a :class:`gangkit.Result`, draws on ``ax`` (a new figure
when ``ax`` is None) and returns the Axes (:func:`wait_buckets` takes a dict of them;
:func:`quota` returns a list of Axes, one per panel). Nothing is printed and nothing
depends on the wall clock, so a figure is the same on every run. All times
are simulated; the unit (seconds, minutes, hours or days) follows the span
shown unless ``unit`` is given.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
from matplotlib.patches import Patch

from gangkit.model.precision import TOLERANCE
from gangkit.results.kueue_quota import COHORT_TREE_COLUMNS as COHORT_TREE_COLUMNS  # re-exported: gk.plots.*
from gangkit.results.kueue_quota import QUOTA_TABLE_COLUMNS as QUOTA_TABLE_COLUMNS
from gangkit.results.kueue_quota import cohort_tree as cohort_tree
from gangkit.results.kueue_quota import cohort_tree_text as cohort_tree_text
from gangkit.results.kueue_quota import quota_table as quota_table

#: Display units for simulated time: name -> (seconds per unit, words for axis labels).
UNITS = {"s": (1.0, "seconds"), "min": (60.0, "minutes"), "h": (3600.0, "hours"), "d": (86400.0, "days")}

#: The Okabe-Ito palette: eight colours that people with the common colour-vision deficiencies tell apart.
OKABE_ITO = ("#0072B2", "#E69F00", "#009E73", "#D55E00", "#56B4E9", "#CC79A7", "#F0E442", "#000000")
#: Colours of the GPU states (stacked in this order from the bottom); held idle is also hatched.
STATE_COLOURS = {
    "useful": "#009E73",
    "held idle": "#D55E00",
    "free": "#d9d9d9",
    "not ready": "#56B4E9",
}
STATE_HATCHES = {"held idle": "///"}
STATE_COLUMNS = {
    "useful": "useful_gpus",
    "held idle": "held_idle_gpus",
    "free": "free_gpus",
    "not ready": "not_ready_gpus",
}

#: At most this many jobs get their own legend entry in :func:`gantt`.
MAX_LEGEND_JOBS = 12
#: Pod names are written inside the bars when there are at most this many placements.
MAX_BAR_LABELS = 30


def time_unit(span_s: float, unit: str | None = None) -> tuple[str, float, str]:
    """The display unit for a span of simulated seconds: (name, seconds per unit, words).

    Seconds up to two hours, hours up to two days, days beyond; ``unit``
    (``"s"``, ``"min"``, ``"h"`` or ``"d"``) forces one.

    >>> time_unit(900)[0], time_unit(86400)[0], time_unit(30 * 86400)[0]
    ('s', 'h', 'd')
    """
    if unit is not None:
        if unit not in UNITS:
            raise ValueError(f"unit: expected one of {', '.join(UNITS)}, got {unit!r}")
        name = unit
    elif span_s <= 2 * 3600:
        name = "s"
    elif span_s <= 2 * 86400:
        name = "h"
    else:
        name = "d"
    per, words = UNITS[name]
    return name, per, words


def end_time(result) -> float:
    """When the run ended (the makespan: last finish, or the horizon after a deadlock)."""
    return float(result.figures["makespan_s"])


def placements(result) -> pd.DataFrame:
    """One row per pod placement, with the stretch in which it held its GPUs idle.

    Columns: ``job``, ``pod``, ``node``, ``gpus``, ``bound_s``, ``end_s``
    (released, or the end of the run if still bound), ``progress_s`` (when
    the placement started doing useful work; ``end_s`` if it never did) and
    ``held_idle_s``. A pod of a *sync* job does useful work only from the
    moment its whole job runs (the job's ``job_started`` event at or after
    the pod was bound); a pod of an *independent* job works as soon as it is
    bound.
    """
    pods = result.pods
    if pods.empty and result.events.empty and result.figures.get("jobs_total", 0) > 0:
        raise ValueError("this result keeps no pods or events: simulate with record='full' to draw placements")
    end = end_time(result)
    progress = dict(zip(result.jobs["job"], result.jobs["progress"]))
    ev = result.events
    starts: dict[str, np.ndarray] = {}
    if not ev.empty:
        s = ev.loc[ev["event"] == "job_started", ["job", "time_s"]]
        starts = {job: np.sort(g["time_s"].to_numpy(dtype=float)) for job, g in s.groupby("job", sort=False)}
    rows = []
    for p in pods.itertuples(index=False):
        bound = float(p.bound_s)
        stop = end if pd.isna(p.released_s) else float(p.released_s)
        if progress.get(p.job, "sync") == "independent":
            begin = bound
        else:
            t = starts.get(p.job, np.empty(0))
            later = t[(t >= bound) & (t <= stop)]
            if len(later):
                begin = float(later[0])
            elif ev.empty:  # no events kept: fall back to the job's first start
                first = result.jobs.loc[result.jobs["job"] == p.job, "start_s"]
                first = float(first.iloc[0]) if len(first) else math.nan
                begin = first if not math.isnan(first) and bound <= first <= stop else stop
            else:
                begin = stop
        rows.append((p.job, p.pod, p.node, int(p.gpus), bound, stop, begin, begin - bound))
    return pd.DataFrame(rows, columns=["job", "pod", "node", "gpus", "bound_s", "end_s", "progress_s", "held_idle_s"])


def job_colours(jobs: list[str]) -> dict[str, tuple]:
    """A fixed colour per job, in the order given (the jobs table's order)."""
    if len(jobs) <= len(OKABE_ITO) - 1:  # black is kept for outlines
        return {job: OKABE_ITO[i] for i, job in enumerate(jobs)}
    from matplotlib import colormaps

    cmap = colormaps["tab20"]
    return {job: cmap(i % cmap.N) for i, job in enumerate(jobs)}


def _new_ax(ax, figsize):
    """The axes to draw on (new ones of ``figsize`` if None); an empty one cycles through :data:`OKABE_ITO`."""
    if ax is None:
        import matplotlib.pyplot as plt

        _, ax = plt.subplots(figsize=figsize)
    if not ax.lines and not ax.collections and not ax.patches:
        ax.set_prop_cycle(color=list(OKABE_ITO))
    return ax


def _node_order(names) -> list[str]:
    """Node names in natural order (node-2 before node-10)."""
    def key(name: str):
        head, _, tail = name.rpartition("-")
        return (head, int(tail)) if tail.isdigit() else (name, -1)

    return sorted(set(names), key=key)


def _lanes(pl: pd.DataFrame, node_gpus: dict[str, int]) -> tuple[dict[int, list[int]], dict[str, int]]:
    """Give every placement GPU lanes on its node: a contiguous block if one is free, else any free lanes."""
    lanes: dict[int, list[int]] = {}
    size: dict[str, int] = {}
    for node, grp in pl.groupby("node", sort=False):
        free_at: list[float] = [0.0] * int(node_gpus.get(node, 0))
        for idx, row in grp.sort_values(["bound_s", "pod"], kind="stable").iterrows():
            g = max(int(row.gpus), 1)
            open_ = [i for i, t in enumerate(free_at) if t <= row.bound_s + TOLERANCE]
            chosen = None
            for i in open_:  # lowest contiguous block of g free lanes
                if all((i + k) in open_ for k in range(g)):
                    chosen = list(range(i, i + g))
                    break
            if chosen is None:
                chosen = open_[:g]
                while len(chosen) < g:  # node size unknown: grow the row
                    free_at.append(0.0)
                    chosen.append(len(free_at) - 1)
            for i in chosen:
                free_at[i] = row.end_s
            lanes[idx] = chosen
        size[node] = len(free_at)
    return lanes, size


def gantt(result, ax=None, *, until: float | None = None, unit: str | None = None, nodes=None):
    """Pod placements on the nodes over time: one row per node, one lane per GPU, coloured by job.

    Each bar is one pod from the moment it was bound to the moment it was
    released (or to the end of the run). The hatched, pale part of a bar is
    held idle: the pod sits on its GPUs while its sync job cannot run
    because other workers are still pending (see :func:`placements`).

    ``until`` cuts the picture at that simulated time (seconds; default:
    the end of the run). Every node gets its full number of lanes, used or
    not (from ``result.nodes``, or ``nodes``, a list of :class:`gangkit.Node`);
    above 64 nodes only the nodes that held pods are drawn.
    """
    ax = _new_ax(ax, (9, 3.6))
    pl = placements(result)
    end = end_time(result) if until is None else float(until)
    name, per, words = time_unit(end, unit)
    jobs = list(result.jobs["job"]) if not result.jobs.empty else list(dict.fromkeys(pl["job"]))
    colours = job_colours(jobs)
    if nodes is not None:
        node_gpus = {n.name: n.gpus for n in nodes}
    elif getattr(result, "nodes", None) is not None and len(result.nodes) <= 64:
        node_gpus = dict(zip(result.nodes["node"], result.nodes["gpus"]))
    else:
        node_gpus = {}
    lanes, size = _lanes(pl, node_gpus)
    order = _node_order(list(pl["node"]) + list(node_gpus))
    base: dict[str, int] = {}
    y = 0
    for node in order:
        base[node] = y
        y += max(size.get(node, node_gpus.get(node, 0)), 1)
    total = max(y, 1)
    any_idle = False
    drawn: set[str] = set()
    label_bars = len(pl) <= MAX_BAR_LABELS
    edge = 0.5 if label_bars else 0.0  # thin white gaps between bars only while they are few
    for idx, row in pl.iterrows():
        if row.bound_s >= end:
            continue
        drawn.add(row.job)
        colour = colours.get(row.job, "grey")
        stop = min(row.end_s, end)
        idle_to = min(row.progress_s, stop)
        for lane in lanes[idx]:
            yy = base[row.node] + lane
            if idle_to > row.bound_s:
                any_idle = True
                ax.barh(yy, (idle_to - row.bound_s) / per, left=row.bound_s / per, height=0.8, color=colour,
                        alpha=0.35, hatch="///", edgecolor=colour, linewidth=0.8)
            if stop > idle_to:
                ax.barh(yy, (stop - idle_to) / per, left=idle_to / per, height=0.8, color=colour,
                        edgecolor="white", linewidth=edge)
        if label_bars:
            mid_y = base[row.node] + (min(lanes[idx]) + max(lanes[idx])) / 2
            ax.text((row.bound_s + stop) / 2 / per, mid_y, row.pod, ha="center", va="center", fontsize=8)
    for node in order[1:]:
        ax.axhline(base[node] - 0.5, color="black", linewidth=0.6 if len(order) <= 16 else 0.2)
    step = max(1, math.ceil(len(order) / 16))  # at most 16 node names on the axis
    ticks = order[::step]
    ax.set_yticks([base[n] + (max(size.get(n, node_gpus.get(n, 0)), 1) - 1) / 2 for n in ticks])
    ax.set_yticklabels(ticks)
    ax.set_ylim(total - 0.5, -0.5)
    ax.set_xlim(0, end / per if end > 0 else 1)
    ax.set_xlabel(f"simulated time ({words})")
    ax.set_ylabel("node (one lane per GPU)")
    ax.set_title(_title("Which pod held which GPU", result))
    handles = []
    if len(jobs) <= MAX_LEGEND_JOBS:
        shown = [j for j in jobs if j in drawn]
        handles = [Patch(facecolor=colours[j], label=f"job {j}") for j in shown]
    if any_idle:
        handles.append(Patch(facecolor="white", edgecolor="black", hatch="///", label="held idle (no progress)"))
    if handles:
        ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8, frameon=False)
    return ax


def describe(result) -> str:
    """The run in a few words: ``stack pod`` or ``stack gang, ordering skip``."""
    words = f"stack {result.stack}"
    if result.stack != "pod":  # kube-scheduler has no gang ordering
        words += f", ordering {result.ordering}"
    return words


def _title(what: str, result) -> str:
    title = f"{what}: {result.scenario_name}, {describe(result)}"
    if result.deadlock:
        title += f"\ndeadlock at t={result.figures['deadlock_at_s']:g} s; nothing changes until the run's horizon"
    return title


def gpu_states(result, ax=None, *, until: float | None = None, unit: str | None = None):
    """What the GPUs were doing over time, stacked: useful, held idle, free (and not ready, if any).

    At every instant the bands add up to the cluster's capacity, so the top
    edge is the number of GPUs. Held idle (vermillion, hatched) is allocated but useless: a
    sync job holds those GPUs while it waits for the rest of its workers.
    ``until`` cuts the picture at that simulated time (seconds; default: the
    end of the run).
    """
    ax = _new_ax(ax, (9, 3.2))
    tl = result.timeline
    end = end_time(result) if until is None else float(until)
    name, per, words = time_unit(end, unit)
    t = tl["time_s"].to_numpy(dtype=float)
    keep = t <= end
    t = t[keep]
    values = {state: tl[col].to_numpy(dtype=float)[keep] for state, col in STATE_COLUMNS.items()}
    if len(t) and t[-1] < end:  # the last state lasts until the end of the picture
        t = np.append(t, end)
        values = {k: np.append(v, v[-1]) for k, v in values.items()}
    bottom = np.zeros(len(t))
    for state, v in values.items():
        if state == "not ready" and not v.any():
            continue
        hatch = STATE_HATCHES.get(state)
        ax.fill_between(t / per, bottom, bottom + v, step="post", facecolor=STATE_COLOURS[state], label=state,
                        linewidth=0.6 if hatch else 0, hatch=hatch, edgecolor="white" if hatch else None)
        bottom = bottom + v
    ax.set_xlim(0, end / per if end > 0 else 1)
    ax.set_ylim(0, max(float(bottom.max()) if len(bottom) else 0.0, 1.0) * 1.05)
    ax.set_xlabel(f"simulated time ({words})")
    ax.set_ylabel("GPUs")
    ax.set_title(_title("What the GPUs were doing", result))
    handles, labels = ax.get_legend_handles_labels()
    ax.legend(handles[::-1], labels[::-1], loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8, frameon=False)
    return ax


def wait_distribution(result, ax=None, *, unit: str | None = None, label: str | None = None, colour=None):
    """How long jobs waited before they started, as an ECDF (share of jobs that waited at most x).

    Jobs that never started (``censored``: deadlocked, or still waiting when
    the run ended) have a wait counted up to the end of the run, a lower
    bound: they are drawn as crosses and named in the legend. Rejected jobs
    never waited and are left out. ``label`` names this result's line, to
    draw several results on one Axes.
    """
    ax = _new_ax(ax, (6, 3.6))
    jobs = result.jobs.loc[result.jobs["state"] != "Rejected"]
    waits = jobs["wait_s"].to_numpy(dtype=float)
    censored = jobs["censored"].to_numpy(dtype=bool)
    order = np.argsort(waits, kind="stable")
    waits, censored = waits[order], censored[order]
    n = len(waits)
    span = float(waits.max()) if n else 0.0
    name, per, words = time_unit(span, unit)
    share = np.arange(1, n + 1) / n if n else np.empty(0)
    line_label = label or f"{describe(result)} ({n} jobs)"
    if n:
        xs = np.concatenate([[0.0], waits / per])
        ys = np.concatenate([[0.0], share])
        (line,) = ax.step(xs, ys, where="post", label=line_label, color=colour)
        if censored.any():
            ax.plot(waits[censored] / per, share[censored], linestyle="none", marker="x", markersize=8,
                    color=line.get_color(), label=f"{line_label}: never started ({int(censored.sum())}), counted to the end of the run")
    ax.set_ylim(0, 1.02)
    ax.set_xlim(left=0)
    ax.set_xlabel(f"wait before start ({words})")
    ax.set_ylabel("share of jobs waiting at most this long")
    ax.set_title(f"How long jobs waited: {result.scenario_name}")
    ax.legend(loc="lower right", fontsize=8)
    return ax


#: Colours of the wait buckets (gangkit.engine.waits), stacked in this order from the left.
BUCKET_COLOURS = {  # the colours of course/figures/stack_path.svg (Okabe-Ito and shades), so plot and diagram agree
    "quota": "#F0E442",
    "admission_check": "#E69F00",
    "placement": "#D55E00",
    "node_launch": "#56B4E9",
    "node_registration": "#0072B2",
    "node_initialization": "#00446B",
    "image_pull": "#000000",
}


def wait_buckets(results: dict, ax=None, *, unit: str | None = None, share: bool = False, title: str | None = None):
    """Where the waiting went, per stack: job-time summed per wait bucket, one stacked bar per result.

    ``results`` maps a label (a stack name) to a :class:`gangkit.Result`,
    for example from :func:`gangkit.analysis.compare.run_stacks`. Each bar is the sum
    over all jobs of their waits, cut into the buckets of
    :mod:`gangkit.engine.waits` (censored waits counted to the end of the run, and
    hatched when a bar holds some). Buckets no result uses are left out.
    With ``share`` each bar is scaled to 1 (the share of that stack's
    waiting in each bucket), so that a short wait's make-up shows too.
    """
    ax = _new_ax(ax, (9, 0.7 + 0.55 * len(results)))
    sums = {label: r.wait_breakdown().set_index("bucket")["seconds"] for label, r in results.items()}
    frame = pd.DataFrame(sums).T.fillna(0.0)
    frame = frame.drop(columns=[c for c in frame.columns if c == "unattributed" or not (frame[c] > 0).any()])
    order = [b for b in BUCKET_COLOURS if b in frame.columns] + sorted(c for c in frame.columns if c not in BUCKET_COLOURS)
    if share:
        totals = frame.sum(axis=1).replace(0.0, 1.0)
        frame = frame.div(totals, axis=0)
    span = float(frame.sum(axis=1).max()) if len(frame) else 0.0
    name, per, words = ("share", 1.0, "share") if share else time_unit(span, unit)
    labels = list(frame.index)
    left = np.zeros(len(labels))
    for bucket in order:
        v = frame[bucket].to_numpy(dtype=float) / per
        ax.barh(labels, v, left=left, color=BUCKET_COLOURS.get(bucket, "#999999"), label=bucket, height=0.6)
        left = left + v
    censored = [bool(r.jobs["censored"].any()) for r in results.values()]
    for i, c in enumerate(censored):
        if c:
            ax.barh([labels[i]], [left[i]], fill=False, hatch="//", edgecolor="#555555", linewidth=0, height=0.6)
    ax.invert_yaxis()
    hatched = " (hatched: includes jobs that never started)" if any(censored) else ""
    ax.set_xlabel(("share of each stack's waiting" if share else f"job-{words} of waiting, summed over jobs") + hatched)
    ax.set_title(title or "Where the waiting went, by layer")
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8, frameon=False)
    return ax


# ------------------------------------------------------------------------------------ quota (Kueue)
#: Colours of :func:`quota`'s bands (Okabe-Ito), stacked in this order from the bottom; lent is also hatched.
QUOTA_COLOURS = {"reserved": "#0072B2", "lent": "#56B4E9", "borrowed": "#E69F00"}
#: :func:`quota`'s legend: what each band is, in the words the docstring defines.
QUOTA_LABELS = {
    "reserved": "reserved within nominalQuota",
    "lent": "lent: its unused nominal (within lendingLimit)\nthat cohort borrowers use, shared in proportion",
    "borrowed": "borrowed: reserved above nominalQuota",
}


def quota(result, ax=None, *, resource: str = "nvidia.com/gpu", until: float | None = None, unit: str | None = None,
          cluster_queues=None):
    """Kueue's quota over a run, one panel per ClusterQueue: nominal, reserved, borrowed and lent; and the cohort tree.

    What Kueue's dashboards are asked to show. In each ClusterQueue's panel,
    stacked from the bottom (the figures of :func:`quota_table`, summed over
    the flavors of ``resource``):

    - *reserved within nominalQuota* (blue): what its own workloads reserve
      up to its ``nominalQuota``;
    - *lent* (sky blue, hatched): gangkit's attribution, as Kueue has none:
      its unused nominal quota within its ``lendingLimit`` that borrowers of
      its cohort use at that instant, the cohort's borrowing shared among its
      lenders in proportion to what each can lend (:func:`quota_table`);
    - *borrowed* (orange): what it reserves above its ``nominalQuota``, which
      Kueue's ClusterQueue status reports as ``borrowed``;

    with its ``nominalQuota`` as a black line, and, where set, the most it may
    hold (``nominalQuota + borrowingLimit``) and the part no one may borrow
    (``nominalQuota - lendingLimit``) as dotted lines. Beside the panels, the
    legend and the cohort tree (:func:`cohort_tree`) with each node's quotas.

    ``result`` is a :class:`gangkit.Result` of a ``kueue+`` stack (a clear
    error otherwise). ``ax`` is None (a new figure), a matplotlib ``Figure``
    to draw in (panels, legend and tree), or a list of Axes, one per
    ClusterQueue drawn (panels only, the legend on the first).
    ``cluster_queues`` picks the ClusterQueues drawn (default: all with quota
    of ``resource``); ``until`` cuts the picture at that simulated time
    (seconds); ``unit`` as in :func:`time_unit`. Returns the panels' Axes,
    in ClusterQueue order.
    """
    table = quota_table(result, resource=resource, until=until, cluster_queues=cluster_queues)
    cq = table[table["kind"] == "ClusterQueue"]
    names = list(dict.fromkeys(cq["name"]))
    if cluster_queues is not None:
        names = [n for n in ([cluster_queues] if isinstance(cluster_queues, str) else cluster_queues) if n in names]
    if not names:
        raise ValueError(f"Result {result.scenario_name!r}: no ClusterQueue has quota of {resource!r}")
    axes, side = _quota_axes(ax, len(names))
    end = float(table["time_s"].max())
    _, per, words = time_unit(end, unit)
    tops = [_quota_panel(panel, cq[cq["name"] == name], per, end) for panel, name in zip(axes, names)]
    for panel in axes:  # one GPU scale for every panel: a borrowed GPU and a lent one are drawn the same height
        panel.set_ylim(0, max(tops) * 1.12)
        panel.set_ylabel(f"{_short(resource)} quota")
    axes[-1].set_xlabel(f"simulated time ({words})")
    handles = [Patch(facecolor=QUOTA_COLOURS[k], hatch="///" if k == "lent" else None, edgecolor="white",
                     label=QUOTA_LABELS[k]) for k in QUOTA_COLOURS]
    from matplotlib.lines import Line2D

    handles.append(Line2D([], [], color="black", linewidth=1.2, label="nominalQuota"))
    if any(line.get_linestyle() == ":" for panel in axes for line in panel.lines):
        handles.append(Line2D([], [], color="#555555", linestyle=":", label="nominal + borrowingLimit (top),\n"
                                                                           "nominal - lendingLimit (bottom)"))
    title = _title(f"Quota per ClusterQueue ({resource})", result)
    if side is None:
        axes[0].legend(handles=handles, loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8, frameon=False)
        return axes
    side.axis("off")
    side.legend(handles=handles, loc="upper left", fontsize=8, frameon=False)
    side.text(0.0, 0.42, "Cohort tree\n" + cohort_tree_text(cohort_tree(result, resource)), family="monospace",
              fontsize=7.5, va="top", transform=side.transAxes)
    axes[0].figure.suptitle(title, fontsize=10)
    return axes


def _short(resource: str) -> str:
    """``nvidia.com/gpu`` -> ``GPU``; other resources keep their name."""
    return "GPU" if resource == "nvidia.com/gpu" else resource


def _quota_axes(ax, n: int):
    """The panels (one per ClusterQueue) and the side Axes for legend and tree (None for given Axes)."""
    from matplotlib.figure import Figure

    if ax is None or isinstance(ax, Figure):
        if ax is None:
            import matplotlib.pyplot as plt

            fig = plt.figure(figsize=(10, 0.6 + 1.9 * n))
        else:
            fig = ax
        grid = fig.add_gridspec(n, 2, width_ratios=(2.2, 1), wspace=0.08, hspace=0.35)
        panels = [fig.add_subplot(grid[i, 0]) for i in range(n)]
        for p in panels[1:]:
            p.sharex(panels[0])
        for p in panels[:-1]:
            p.tick_params(labelbottom=False)
        return panels, fig.add_subplot(grid[:, 1])
    axes = list(np.ravel(ax)) if not hasattr(ax, "plot") else [ax]
    if len(axes) != n:
        raise ValueError(f"ax: expected {n} Axes (one per ClusterQueue drawn), got {len(axes)}")
    return axes, None


def _quota_panel(ax, rows: pd.DataFrame, per: float, end: float) -> float:
    """One ClusterQueue's panel: its bands stacked over time (flavors summed), its nominal and limit lines;
    returns the highest value drawn (the caller gives every panel one scale)."""
    by_t = rows.groupby("time_s", sort=True)
    summed = by_t[["nominal", "reserved", "borrowed", "lent"]].sum()
    t = summed.index.to_numpy(dtype=float) / per
    nominal = summed["nominal"].to_numpy(dtype=float)
    borrowed = summed["borrowed"].to_numpy(dtype=float)
    within = summed["reserved"].to_numpy(dtype=float) - borrowed
    bottom = np.zeros(len(t))
    for key, v in (("reserved", within), ("lent", summed["lent"].to_numpy(dtype=float)), ("borrowed", borrowed)):
        if key == "reserved" or v.any():
            ax.fill_between(t, bottom, bottom + v, step="post", facecolor=QUOTA_COLOURS[key],
                            hatch="///" if key == "lent" else None, edgecolor="white" if key == "lent" else None,
                            linewidth=0.6 if key == "lent" else 0)
        bottom = bottom + v
    ax.step(t, nominal, where="post", color="black", linewidth=1.2)
    first = rows[rows["time_s"] == rows["time_s"].min()]
    top = float(max(bottom.max(), nominal.max(), 1.0))
    if first["borrowing_limit"].notna().all():
        cap = float(first["nominal"].sum() + first["borrowing_limit"].sum())
        ax.axhline(cap, color="#555555", linestyle=":", linewidth=1)
        top = max(top, cap)
    if first["lending_limit"].notna().all():
        kept = float((first["nominal"] - first["lending_limit"]).clip(lower=0).sum())
        ax.axhline(kept, color="#555555", linestyle=":", linewidth=1)
    ax.set_xlim(0, end / per if end > 0 else 1)
    cohort = first["cohort"].iloc[0]
    ax.set_title(f"ClusterQueue {first['name'].iloc[0]}" + (f" (cohort {cohort})" if cohort else " (no cohort)"),
                 fontsize=9, loc="left")
    return top
