"""YuniKorn's placeholders as a table of cases from its gang scheduling documentation.

Placeholders take GPUs (held idle) from the first allocation; the timer
(``placeholderTimeoutInSeconds``, default 15 minutes) starts with the first
placeholder allocated; on timeout a ``Soft`` application falls back to
normal scheduling and a ``Hard`` one fails.
"""

from __future__ import annotations

import math

import pytest

import gangkit as gk
from gangkit import Scenario, job, nodes
from gangkit.placement.coscheduling import Coscheduling
from gangkit.placement.kube_gang import KubeGang
from gangkit.placement.yunikorn import PLACEHOLDER_TIMEOUT, YuniKorn
from gangkit.stacks import Stack

NAN = math.nan


def contended(**big):
    """One node of 4 GPUs; ``small`` holds 2 of them for 1200 s; ``big`` needs 4 x 1 GPU."""
    return Scenario(nodes(1, gpus=4), [job("small", pods=1, gpus=2, run_time=1200), job("big", pods=4, run_time=100, **big)],
                    name="contended")


CASES = [
    # (id, scenario, {job: (start, state)}, GPU-seconds held idle, placeholder timeouts)
    ("Hard: placeholders hold 2 GPUs until the 10-minute timeout, then the application fails",
     contended(placeholder_timeout=600, gang_style="Hard"), {"big": (NAN, "Deactivated")}, 2 * 600.0, 1),
    ("Hard with the default 15 minutes",
     contended(gang_style="Hard"), {"big": (NAN, "Deactivated")}, 2 * PLACEHOLDER_TIMEOUT, 1),
    ("Soft: after the timeout the real pods are placed one by one and hold the same GPUs until room appears",
     contended(placeholder_timeout=600, gang_style="Soft"), {"big": (1200, "Finished")}, 2 * 1200.0, 1),
    ("Soft is the default style",
     contended(placeholder_timeout=600), {"big": (1200, "Finished")}, 2 * 1200.0, 1),
    ("placeholders complete before the timeout: the real pods swap in and start",
     contended(placeholder_timeout=3600, gang_style="Hard"), {"big": (1200, "Finished")}, 2 * 1200.0, 0),
    ("no placeholder allocated, no timeout: the application waits holding nothing",
     Scenario(nodes(1, gpus=4), [job("small", pods=1, gpus=4, run_time=2000),
                                 job("big", pods=4, run_time=100, placeholder_timeout=60, gang_style="Hard")], name="full"),
     {"big": (2000, "Finished")}, 0.0, 0),
    ("applications are served FIFO: the first takes every node, the second waits whole",
     gk.scenarios.two_gangs_deadlock(), {"A": (0, "Finished"), "B": (600, "Finished")}, 0.0, 0),
]


@pytest.mark.parametrize("scenario, expected, held, timeouts", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_yunikorn_case(scenario, expected, held, timeouts):
    layer = YuniKorn()
    r = gk.simulate(scenario, stack=Stack(layer, name="yunikorn"), horizon=10_000)
    rows = r.jobs.set_index("job")
    for name, (start, state) in expected.items():
        assert rows.loc[name, "state"] == state, rows.loc[name, "reason"]
        got = rows.loc[name, "start_s"]
        assert (math.isnan(got) and math.isnan(start)) or got == start, (name, got)
    assert r.figures["held_idle_gpu_seconds"] == pytest.approx(held)
    assert layer.timeouts == timeouts


@pytest.mark.parametrize(
    "style, event, words",
    [("Soft", "released", "gangSchedulingStyle Soft: the real pods are scheduled one by one"),
     ("Hard", "deactivated", "gangSchedulingStyle Hard: the application fails")],
)
def test_the_timeout_releases_the_placeholders_and_says_what_follows(style, event, words):
    r = gk.simulate(contended(placeholder_timeout=600, gang_style=style), stack="yunikorn", horizon=10_000)
    row = r.events[r.events.event == event].iloc[0]
    assert row.time_s == 600.0
    assert row.detail.startswith("2 of 4 placeholders allocated after placeholderTimeoutInSeconds 600 s; released")
    assert words in row.detail


class Recorder(gk.NodeSupplier):
    """A node supplier that only records what it is shown (what an autoscaler would see)."""

    name = "recorder"

    def __init__(self):
        self.seen: list[tuple[float, list[str]]] = []

    def can_ever_fit(self, gpus, cpu, memory, selector):
        return False

    def observe(self, sim, now, unschedulable):
        self.seen.append((now, [p.name for p in unschedulable]))


def test_pending_placeholders_are_unschedulable_pods_an_autoscaler_sees():
    rec = Recorder()
    gk.simulate(contended(placeholder_timeout=600, gang_style="Hard"), stack=Stack(YuniKorn(), suppliers=[rec], name="yunikorn"),
                horizon=10_000)
    assert rec.seen[0] == (0.0, ["big-2", "big-3"])


@pytest.mark.parametrize("stack", ["yunikorn", "kueue+yunikorn"])
def test_two_gangs_end_without_a_deadlock(stack):
    r = gk.simulate("two-gangs-deadlock", stack=stack)
    assert set(r.jobs.state) == {"Finished"}
    assert not r.deadlock and r.figures["jobs_deadlocked"] == 0


def test_a_waiting_application_says_how_many_placeholders_it_holds():
    r = gk.simulate(contended(placeholder_timeout=600, gang_style="Hard"), stack="yunikorn", horizon=100)
    assert r.jobs.set_index("job").loc["big", "reason"] == (
        "[placement] PlaceholdersPending: 2 of 4 placeholders allocated, holding 2 GPUs; released at t=600 s if not complete (Hard)")


@pytest.mark.parametrize(
    "make, words",
    [
        (lambda: YuniKorn(style="Medium"), "YuniKorn: style: expected one of Soft, Hard, got 'Medium'"),
        (lambda: YuniKorn(placeholder_timeout=0), "YuniKorn: placeholder_timeout: expected seconds > 0, got 0"),
        (lambda: Coscheduling(reject_percentage=120),
         "Coscheduling: reject_percentage: expected a percentage from 0 to 100, got 120"),
        (lambda: Coscheduling(permit_waiting_time=-1),
         "Coscheduling: permit_waiting_time: expected seconds > 0, got -1"),
        (lambda: KubeGang(scheduling_timeout="5m"),
         "KubeGang: scheduling_timeout: expected seconds > 0, got '5m'"),
    ],
    ids=["yunikorn style", "yunikorn timeout", "coscheduling percentage", "coscheduling timeout", "kube-gang timeout"],
)
def test_bad_layer_settings_are_one_clear_error(make, words):
    """The layers' own settings (Python only) are checked like scenario fields."""
    with pytest.raises(gk.ScenarioError, match=words.replace("(", r"\(")):
        make()


@pytest.mark.parametrize("bad, words", [({"gang_style": "Medium"}, "gang_style: expected one of Soft, Hard"),
                                         ({"placeholder_timeout": 0}, "placeholder_timeout: expected seconds > 0"),
                                         ({"schedule_timeout": -5}, "schedule_timeout: expected seconds > 0")])
def test_bad_job_gang_settings_are_one_clear_error(bad, words):
    with pytest.raises(gk.ScenarioError, match=f"Job big: {words}"):
        gk.simulate(contended(**bad), stack="yunikorn")
