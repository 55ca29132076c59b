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
