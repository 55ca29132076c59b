"""How the whole test run shares out over pytest-xdist's workers (``python -m pytest -n 2 --dist loadgroup``).

Under ``--dist loadgroup`` each group runs whole on one worker. Every test module and every
notebook is made one group: a notebook's cells must run in order in one kernel (nbval), and a
module's fixtures (a built website, a JupyterLab server) are then set up once. The statistical
tests are the exception: each is long and stands alone, so each is its own unit of work, and
they are sent out first, longest first by their job counts, so that no worker is left with a
long one at the end while the other waits. Without xdist, or with another ``--dist``, nothing
changes.
"""

from __future__ import annotations

import pytest


def pytest_configure(config):
    if config.pluginmanager.hasplugin("xdist") and config.getoption("dist", "no") == "loadgroup":
        config.option.loadscopereorder = False  # keep the order below (xdist would put the biggest groups first)


def pytest_collection_modifyitems(config, items):
    if not config.pluginmanager.hasplugin("xdist") or config.getoption("dist", "no") != "loadgroup":
        return
    statistical = []
    for item in items:
        if item.get_closest_marker("statistical") is not None:
            statistical.append(item)
        else:
            item.add_marker(pytest.mark.xdist_group(item.nodeid.split("::")[0]))
    if statistical:
        first = sorted(statistical, key=_work, reverse=True)
        chosen = set(map(id, first))
        items[:] = first + [item for item in items if id(item) not in chosen]


def _work(item) -> int:
    """A statistical test's size: replications times jobs when its parameters say so, else 0."""
    params = getattr(getattr(item, "callspec", None), "params", {})
    reps, n = params.get("reps"), params.get("n")
    return reps * n if isinstance(reps, int) and isinstance(n, int) else 0
