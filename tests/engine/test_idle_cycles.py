"""Cycles that would do nothing return at once (engine ``Simulation._idle``): results unchanged.

When every layer says it is idle (``KueueLayer.idle``: no workload pending;
``VolcanoGang.idle``: nothing waits and the session's figures are an empty
session's), the engine's cycle returns without running the layers. Each case
below runs a scenario both ways, the shortcut on and off, and compares every
table, figure and metric to the last bit; another checks the shortcut is taken at all.
"""

from __future__ import annotations

import pytest

from gangkit import simulate
from gangkit.engine.simulation import Simulation
from gangkit.kueue.objects import ClusterQueue, Cohort, FlavorQuotas, Quota, ResourceGroup
from gangkit.kueue.quota import QuotaTree
from gangkit.lessons import lesson03
from gangkit.workloads import scenarios

from conftest import assert_same_result


def assert_same(a, b) -> None:
    assert_same_result(a, b)


@pytest.mark.parametrize("name,make,stack,record", [
    ("a stream of mixed jobs through Kueue and Volcano", lambda: scenarios.mixed(n_jobs=200, n_nodes=8, load=0.9, seed=3),
     "kueue+gang", "jobs"),
    ("a backlog through Kueue and Volcano", lambda: scenarios.mixed(n_jobs=200, n_nodes=4, load=3, seed=4),
     "kueue+gang", "summary"),
    ("a stream through Volcano alone", lambda: scenarios.mixed(n_jobs=200, n_nodes=8, load=0.9, seed=5), "gang", "jobs"),
    ("two teams borrowing quota", lambda: lesson03.two_teams(a_borrowing_limit=2), "kueue+gang", "jobs"),
    ("preemption to reclaim lent quota", lesson03.reclaim_puzzle, "kueue+gang", "jobs"),
    ("a big gang starved under BestEffortFIFO", lambda: lesson03.starvation_story("BestEffortFIFO"), "kueue+gang", "jobs"),
    ("a big gang starved, Volcano alone", lambda: lesson03.starvation_story("BestEffortFIFO"), "gang", "summary"),
])
def test_skipping_idle_cycles_changes_no_result(name, make, stack, record, monkeypatch):
    sc = make()
    shortcut = simulate(sc, stack=stack, record=record)
    monkeypatch.setattr(Simulation, "_idle", lambda self: False)  # every cycle runs its layers
    assert_same(shortcut, simulate(sc, stack=stack, record=record))


def test_idle_cycles_are_skipped_in_a_replay_of_small_jobs(monkeypatch):
    """After a job's pods are bound and after a finish with nobody waiting, nothing is left to do."""
    answers = []
    original = Simulation._idle

    def counting_idle(self):
        answers.append(original(self))
        return answers[-1]

    monkeypatch.setattr(Simulation, "_idle", counting_idle)  # asked once per cycle
    simulate(scenarios.mixed(n_jobs=100, n_nodes=32, load=0.3, seed=1), stack="kueue+gang", record="summary")
    assert sum(answers) > len(answers) // 3, (sum(answers), len(answers))


def _tree() -> QuotaTree:
    """Queue a (nominal 4, borrowing limit 2, lending limit 1) and queue b (nominal 6) in one cohort; c alone."""
    def cq(name, nominal, cohort=None, borrowing=None, lending=None):
        q = Quota(nominal, borrowing_limit=borrowing, lending_limit=lending)
        return ClusterQueue(name, [ResourceGroup(("gpu",), (FlavorQuotas("f", {"gpu": q}),))], cohort=cohort)
    return QuotaTree([cq("a", 4, "team", borrowing=2, lending=1), cq("b", 6, "team"), cq("c", 5)], [Cohort("team")])


@pytest.mark.parametrize("queue,used,ask", [
    ("a", {}, 3), ("a", {"a": 3}, 2), ("a", {"a": 4, "b": 5}, 2), ("a", {}, 9),
    ("b", {"a": 1}, 7), ("c", {}, 5), ("c", {"c": 4}, 2), ("c", {}, 6),
])
def test_fit_figures_agree_with_the_separate_questions(queue, used, ask):
    tree = _tree()
    for name, v in used.items():
        tree.cq[name].add_usage(("f", "gpu"), v)
    node, fr = tree.cq[queue], ("f", "gpu")
    cap, borrow, may_reclaim, avail = node.fit_figures(fr, ask)
    assert cap == node.potential_available(fr)
    if ask <= cap:
        assert (borrow, may_reclaim) == node.borrowing_level(fr, ask)
        assert avail == node.available(fr)
