"""Explorers for the lessons: knobs above a table and a picture, over plain functions.

Picture a lab bench: the experiment is a plain function that takes numbers
and returns a table (:func:`explore_deadlock`, :func:`compare_stacks`,
:func:`compare_orderings`); the knobs only read their positions, call the
function and show what came back. So every figure an explorer shows can be
reproduced, and tested, by calling the function directly.

An explorer is an ``ipywidgets`` box: a title, the controls, and an
``Output`` whose content is replaced each time a control's value changes
(``observe``, not ``interact``, so nothing is printed). Building an explorer
runs the experiment once with the default values. A notebook saved with its
outputs shows only the explorer's text line until the cell is run again.

All figures are simulated (see :func:`gangkit.simulate`), never measured on
a real cluster.
"""

from __future__ import annotations

import ipywidgets as W
import pandas as pd
from matplotlib.figure import Figure

from gangkit.lessons.explorer import Explorer
from gangkit.results import plots
from gangkit.model.scenario import Scenario
from gangkit.simulate import simulate


# ------------------------------------------------------------- lesson 06: node provisioning latency
def render_warm_pool(warm_nodes: int = 0, initialized_s: float = 90.0, image_pull_s: float = 0.0,
                     consolidate_after_s: float = 300.0) -> tuple[pd.DataFrame, Figure]:
    """What :func:`provisioning_explorer` shows: paid against waited for 0 to 4 warm nodes, and one day's GPU states."""
    from gangkit.lessons import lesson06
    from gangkit.supply.karpenter import Stages

    stages = Stages(initialized=float(initialized_s), image_pull=float(image_pull_s))
    table = lesson06.warm_pool_table(range(0, 5), stages, float(consolidate_after_s))
    fig = Figure(figsize=(8.5, 3.2))
    ax = fig.subplots(1, 1)
    plots.gpu_states(lesson06.warm_pool(warm_nodes, stages, float(consolidate_after_s)), ax=ax)
    ax.set_title(f"{warm_nodes} warm nodes: what the GPUs did over the day", fontsize=9)
    fig.subplots_adjust(left=0.08, right=0.8, bottom=0.16, top=0.88)
    return table, fig


def provisioning_explorer(warm_nodes: int = 0, initialized_s: float = 90.0, image_pull_s: float = 0.0,
                          consolidate_after_s: float = 300.0) -> "Explorer":
    """Lesson 06's explorer: keep warm nodes or wait for new ones; GPU-hours paid against the gangs' waits.

    Sliders for the warm (always-on) 8-GPU nodes whose GPU states are drawn,
    the GPU-initialization stage, an image pull stage, and Karpenter's
    ``consolidateAfter``. Shows :func:`gangkit.lessons.lesson06.warm_pool_table` and
    the GPU states of one run (:func:`gangkit.results.plots.gpu_states`).
    """
    style = {"description_width": "12em"}
    layout = W.Layout(width="30em")

    def slider(description: str, value: float, lo: float, hi: float, step: float) -> W.FloatSlider:
        return W.FloatSlider(value=value, min=lo, max=hi, step=step, description=description, continuous_update=False,
                             readout_format=".0f", style=style, layout=layout)

    controls = {
        "warm_nodes": W.IntSlider(value=warm_nodes, min=0, max=4, description="warm nodes drawn", continuous_update=False,
                                  style=style, layout=layout),
        "initialized_s": slider("GPU initialization (s)", initialized_s, 0, 600, 30),
        "image_pull_s": slider("image pull (s)", image_pull_s, 0, 900, 60),
        "consolidate_after_s": slider("consolidateAfter (s)", consolidate_after_s, 0, 3600, 300),
    }
    return Explorer("Warm nodes or waiting",
                    "twelve gangs of 2 to 4 x 8 GPUs over one day, stack gang+karpenter; rows: number of warm "
                    "nodes (simulated figures; stage durations are assumptions).",
                    controls, render_warm_pool)
