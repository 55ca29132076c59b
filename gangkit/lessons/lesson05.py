"""Lesson 05's story: one workload through every stack, and where it gets stuck in each.

With the layers (gang placement, Kueue's quota, a node provisioner) a stalled job is held in one
known place, for a reason that layer can name: the failure point moves from "not enough resources"
inside the scheduler to "quota exhausted", "gang cannot fit" or "waiting for nodes".

Two nodes of 8 GPUs and four jobs of one team. ``train-a`` and ``train-b`` are gangs of two 8-GPU
workers, submitted together; ``eval-c`` (one 4-GPU pod) comes a minute later; ``train-d``, a gang
of four 8-GPU workers (32 GPUs), comes at t=120 s and is bigger than the whole cluster. The same
jobs and seed go through each stack (:func:`gangkit.analysis.compare`); the story is in where each stack
makes them wait.

The Kueue stacks use Kueue's default set-up in gangkit (one ClusterQueue ``cluster-queue`` whose
quota is every GPU the stack can have: the nodes' 16, plus what Karpenter may add); the
``+karpenter`` stack uses one NodePool without limits, ``kueue+provreq+autoscaler`` Kueue's
ProvisioningRequest admission check in front of gangkit's default node groups for cluster-autoscaler,
with the ``least-waste`` expander named explicitly (cluster-autoscaler's ``--expander`` default since
1.33, ``cluster-autoscaler/config/flags/flags.go``; ``random`` before); both use the same stage defaults (launch to registered 60 s, to initialized 90 s more; assumptions, see
``docs/reference/provisioning.md``).

This module holds:

- :func:`layered_story`, the workload, and :data:`STACKS`, the stacks it goes through;
- :data:`CLASSIFY` and :data:`REASONS`, the waits exercise 5.1 asks about and the reasons to pick from;
- :func:`snapshot_examples`, the folder of the example dump and jobs that section 8 and exercise 5.3 read;
- :func:`diagnosis_explorer`, the lesson's widget: a stack and an instant, and which layer holds each
  job then and why (:func:`render_diagnosis`, from :meth:`gangkit.Result.diagnose`).

All figures are simulated by gangkit, never measured on a real cluster.
"""

from __future__ import annotations

from pathlib import Path

import ipywidgets as W
import pandas as pd
from matplotlib.figure import Figure

from gangkit.lessons.explorer import Explorer
from gangkit.model.jobs import job
from gangkit.model.nodes import nodes
from gangkit.model.scenario import Scenario
from gangkit.results import plots
from gangkit.simulate import simulate
from gangkit.supply.autoscaler import ClusterAutoscaler, default_autoscaler
from gangkit.supply.cloud import Stages
from gangkit.supply.karpenter import default_karpenter

#: The stacks of the lesson, from plain kube-scheduler to the full layered stack.
STACKS = ("pod", "gang", "kueue+gang", "kueue+gang+karpenter", "kueue+provreq+autoscaler")
#: The reasons exercise 5.1 chooses from (codes of gangkit.results.diagnosis).
REASONS = ("Unschedulable", "PartiallyPlaced", "GangCannotFit", "QuotaExhausted", "QuotaTooSmall", "WaitingForNodes")
#: cluster-autoscaler's expander in the story: its ``--expander`` default since 1.33 (``config/flags/flags.go``).
EXPANDER = "least-waste"
#: Where each run ends at the latest (simulated seconds): four hours.
HORIZON = 4 * 3600.0
#: The jobs whose waits exercise 5.1 classifies: (stack, job, time in seconds).
CLASSIFY = (
    ("pod", "train-b", 300.0),
    ("pod", "eval-c", 300.0),
    ("gang", "train-b", 300.0),
    ("kueue+gang", "eval-c", 300.0),
    ("kueue+gang", "train-d", 300.0),
    ("kueue+gang+karpenter", "train-d", 200.0),
)


def layered_story(stages: Stages | None = None) -> Scenario:
    """The workload of lesson 05 (see the module docstring).

    ``stages``: how long the nodes Karpenter launches take (under a ``+karpenter`` stack; default
    :class:`~gangkit.supply.cloud.Stages`: registered 60 s after launch, initialized 90 s after that).
    Under a ``+autoscaler`` stack the node groups are gangkit's defaults
    (:func:`~gangkit.supply.autoscaler.default_autoscaler`) with the :data:`EXPANDER` named explicitly.
    """
    jobs = [
        job("train-a", pods=2, gpus=8, run_time=1800),
        job("train-b", pods=2, gpus=8, run_time=1800),
        job("eval-c", pods=1, gpus=4, run_time=600, submit_time=60),
        job("train-d", pods=4, gpus=8, run_time=1200, submit_time=120),
    ]
    sc = Scenario(nodes(2, gpus=8), jobs, name="layered-story",
                    description="2 nodes x 8 GPUs; train-a, train-b: 2 x 8 GPUs at t=0; eval-c: 4 GPUs at t=60 s; "
                                "train-d: 4 x 8 GPUs at t=120 s").with_settings(horizon=HORIZON)
    sc.autoscaler = ClusterAutoscaler(default_autoscaler(sc).node_groups, expander=EXPANDER)
    if stages is not None:
        sc.karpenter = default_karpenter(sc, stages=stages)
    return sc


def snapshot_examples() -> Path:
    """The folder ``examples/snapshot`` of the source checkout: the example dump (``cluster-dump.yaml``) and the jobs
    (``new-job.yaml``, ``wide-job.yaml``) that section 8 and exercise 5.3 predict with.

    It ships with the repository, not with the package: this needs the checkout installed as the README says
    (``pip install -e .``). Found from the package, so a notebook copied into ``my-course/`` reaches it too.
    """
    folder = Path(__file__).resolve().parents[2] / "examples" / "snapshot"
    if not folder.is_dir():
        raise FileNotFoundError(f"lesson 05's example dump and jobs are not at {folder}: they ship with the source "
                                "checkout (clone the repository and install it with pip install -e .)")
    return folder


# --------------------------------------------------------------------------- the explorer
def render_diagnosis(stack: str = "kueue+gang+karpenter", time_s: float = 100.0, scenario: Scenario | None = None,
                     until: float = 3600.0, _cache: dict | None = None) -> tuple[pd.DataFrame, Figure]:
    """What :func:`diagnosis_explorer` shows: every job's diagnosis at ``time_s`` under ``stack``
    (:meth:`gangkit.Result.diagnose`), and the run's GPU states with that instant marked.

    The picture ends at ``until`` or at the run's end, whichever comes first (a run whose jobs all
    finish ends with the last of them); an instant after the run's end is marked to the right of it.
    """
    sc = scenario if scenario is not None else layered_story()
    cache = {} if _cache is None else _cache
    if stack not in cache:
        cache[stack] = simulate(sc, stack=stack)
    result = cache[stack]
    view = result.diagnose(at=time_s)
    table = view.table.set_index("job")
    fig = Figure(figsize=(8.5, 3.4))
    ax = fig.subplots()
    name, per, _ = plots.time_unit(until)
    end = min(float(until), plots.end_time(result))  # draw the run only: after its end there is no GPU state
    plots.gpu_states(result, ax=ax, until=end, unit=name)
    if time_s > end:  # an instant after the run: keep it in view, right of the run's end
        ax.set_xlim(0, time_s / per * 1.02)
        ax.axvline(end / per, color="#777777", linewidth=0.8, linestyle=":")
        ax.text(end / per, ax.get_ylim()[1] * 0.5, f" run over at t={end:g} s", fontsize=8, color="#555555")
    ax.axvline(time_s / per, color="black", linewidth=1.2, linestyle="--")
    ax.set_title("")  # the headline replaces the plot's own title: two short lines, never clipped
    ax.set_title(view.headline.replace("; ", "\n", 1), fontsize=9, loc="left")
    fig.subplots_adjust(left=0.08, right=0.82, bottom=0.16, top=0.84)
    return table, fig


def diagnosis_explorer(scenario: Scenario | None = None, stacks=None, time_s: float = 100.0,
                       until: float = 3600.0) -> Explorer:
    """Lesson 05's explorer: pick a stack and an instant, read which layer holds each job and why.

    A dropdown of stacks (default: :data:`STACKS`) and a time slider
    (seconds); shows the diagnosis table and the GPU states with the
    instant marked. Each stack is simulated once; moving the slider replays
    it up to the instant chosen.
    """
    stacks = list(STACKS if stacks is None else stacks)
    cache: dict = {}
    style = {"description_width": "7em"}
    controls = {
        "stack": W.Dropdown(options=stacks, value=stacks[-1], description="stack", style=style),
        "time_s": W.IntSlider(value=int(time_s), min=0, max=int(until), step=10, description="time (s)",
                              continuous_update=False, style=style, layout=W.Layout(width="34em")),
    }

    def render(stack: str, time_s: int):
        return render_diagnosis(stack, float(time_s), scenario, until, cache)

    return Explorer("Diagnosis explorer",
                    "Which layer holds each job at that instant, and why (simulated; each run is replayed up to the "
                    "instant).", controls, render)
