"""The lessons' explorers: knobs above a table and a picture, over plain functions.

Picture a lab bench: the experiment is a plain function that takes numbers
and returns a table and a figure (``render_deadlock`` in lesson 01,
``render_orderings`` in lesson 02, ...); the knobs only read their
positions, call the function and show what came back. So every figure an
explorer shows can be reproduced, and tested, by calling the function
directly.

An explorer is an ``ipywidgets`` box: a title, the controls, and an
``Output`` whose content is replaced each time a control's value changes
(``observe``, not ``interact``, so nothing is printed). Building an explorer
runs the experiment once with the default values. A notebook saved with its
outputs shows only the explorer's text line until the cell is run again.

This module holds what every lesson's explorer shares:

- :class:`Explorer`, the box that ties the controls to the experiment;
- :func:`table_output` and :func:`figure_output`, which turn a table and a
  Matplotlib figure into the display items the ``Output`` shows.

Each lesson's own explorer lives in the lesson's module
(:func:`gangkit.lessons.lesson01.deadlock_explorer`, ...). All figures are
simulated (see :func:`gangkit.simulate`), never measured on a real cluster.
"""

from __future__ import annotations

import base64
import io
import re
import zlib
from typing import Callable

import ipywidgets as W
import pandas as pd
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from gangkit.model.errors import ScenarioError


class Explorer(W.VBox):
    """Controls above an ``Output``: on every change, ``render(**values)`` gives a table and a figure.

    ``controls`` maps each argument name of ``render`` to the widget that
    sets it. :meth:`update` is the observer (call it by hand in tests);
    after it, :attr:`table` holds the table shown and ``output.outputs``
    the two display items (the table, then the figure as a PNG).
    """

    def __init__(self, title: str, note: str, controls: dict, render: Callable[..., tuple[pd.DataFrame, Figure]]):
        self.controls = dict(controls)
        self.render = render
        self.output = W.Output()
        self.table: pd.DataFrame | None = None
        self.updates = 0
        heading = W.HTML(f"<b>{title}</b>: {note}")
        super().__init__(children=[heading, *self.controls.values(), self.output])
        self.title_text = title
        for widget in self.controls.values():
            widget.observe(self.update, names="value")
        self.update()

    @property
    def values(self) -> dict:
        """The current value of every control, by argument name."""
        return {name: widget.value for name, widget in self.controls.items()}

    def update(self, change=None) -> None:
        """Run the experiment for the current values and replace what the output shows.

        An experiment that fails (settings the simulator refuses) shows its
        message in the output instead of raising inside the widget's callback,
        where nobody would see it.
        """
        self.updates += 1
        try:
            table, fig = self.render(**self.values)
        except (ScenarioError, ValueError) as error:
            self.table = None
            self.output.outputs = ({"output_type": "display_data", "metadata": {},
                                    "data": {"text/plain": f"cannot run these settings: {error}"}},)
            return
        self.table = table
        self.output.outputs = (table_output(table), figure_output(fig))

    def __repr__(self) -> str:  # the text a saved notebook shows until the cell is run again
        return f"{self.title_text} (run this cell to use it)"


def table_output(table: pd.DataFrame) -> dict:
    """``table`` as a display item of an ``Output`` (HTML, and plain text), as wide as the notebook at most.

    An explorer's column names are long words joined by underscores (``held_idle_gpus_at_end``);
    a browser never breaks a word, so a table of eight of them is wider than a notebook in a
    1400-pixel window, and JupyterLab shows its last columns only after a sideways scroll that is
    easy to miss. :func:`breakable_headers` lets the headings wrap after each underscore, which
    brings every explorer's table within the notebook's width; a table still too wide scrolls
    sideways in its own box (``overflow-x: auto``) instead of being cut at the right. Text columns
    are aligned left and row labels never break (:func:`text_columns_css`). The text a browser
    shows in each cell, and the plain-text view, are the table's own.
    """
    scope = f"gk-table-{zlib.crc32(repr(list(table.columns)).encode()):08x}"  # one per set of columns
    html = (f'<div style="max-width: 100%; overflow-x: auto"><div class="{scope}">{text_columns_css(table, scope)}'
            f'{breakable_headers(table.to_html())}</div></div>')
    return {"output_type": "display_data", "metadata": {},
            "data": {"text/html": html, "text/plain": table.to_string()}}


def text_columns_css(table: pd.DataFrame, scope: str) -> str:
    """A ``<style>`` for one explorer table: its text columns aligned left (a notebook aligns every cell right, which
    suits numbers and makes a column of messages hard to read), and its row labels (job names such as
    ``train-a``) kept on one line instead of breaking at a hyphen. Scoped to the class ``scope`` of a box around the table,
    which differs between tables of different columns (so two explorers on a page keep their own alignments)."""
    levels = table.index.nlevels
    rules = [f".{scope} tbody th {{ white-space: nowrap; }}"]
    for i, column in enumerate(table.columns):
        if not pd.api.types.is_numeric_dtype(table[column]):
            n = levels + i + 1  # the row labels come first in each row
            rules.append(f".{scope} td:nth-child({n}), .{scope} thead th:nth-child({n}) {{ text-align: left; }}")
    return "<style>" + " ".join(rules) + "</style>"


#: Header cells at most this long stay on one line (``mean_wait_s``, ``makespan_s``).
SHORT_HEADER = 12


def breakable_headers(html: str) -> str:
    """``html`` with a line-break opportunity (``<wbr>``, no visible text) after the underscores of its long header cells.

    A heading of at most :data:`SHORT_HEADER` characters is left whole, and a unit of one or two
    letters at the end (``_s``, ``_h``) stays with the word before it.
    """
    def wrap(m: re.Match) -> str:
        text = m.group(2)
        if len(text) <= SHORT_HEADER or "<" in text:
            return m.group(0)
        parts = text.split("_")
        if len(parts) > 2 and len(parts[-1]) <= 2:
            parts[-2:] = [parts[-2] + "_" + parts[-1]]
        return m.group(1) + "_<wbr>".join(parts) + m.group(3)

    return re.sub(r"(<th\b[^>]*>)(.*?)(</th>)", wrap, html, flags=re.S)


def figure_output(fig: Figure) -> dict:
    """``fig`` drawn as a PNG display item of an ``Output`` (100 dpi, as inline figures), outside pyplot."""
    FigureCanvasAgg(fig)
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=100)
    w, h = fig.get_size_inches()
    return {"output_type": "display_data", "metadata": {},
            "data": {"image/png": base64.b64encode(buf.getvalue()).decode("ascii"),
                     "text/plain": f"<Figure size {w * fig.dpi:g}x{h * fig.dpi:g} with {len(fig.axes)} Axes>"}}
