"""gangkit.results.plots: each picture draws what the run's tables say, returns its Axes, prints nothing."""

from __future__ import annotations

import io
import math

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402

import gangkit as gk  # noqa: E402
from gangkit.results import plots  # noqa: E402

from builders import gang, gpu_nodes, simulate_on  # noqa: E402

HORIZON = 30 * 86400.0


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


# --------------------------------------------------------------------------------- time units
@pytest.mark.parametrize(
    "case, span, unit, expected",
    [
        ("a 15-minute story is drawn in seconds", 900, None, ("s", 1.0, "seconds")),
        ("two hours are still seconds", 7200, None, ("s", 1.0, "seconds")),
        ("a day is drawn in hours", 86400, None, ("h", 3600.0, "hours")),
        ("a deadlock held to the 30-day horizon is drawn in days", HORIZON, None, ("d", 86400.0, "days")),
        ("a unit asked for wins", 900, "min", ("min", 60.0, "minutes")),
    ],
)
def test_time_unit(case, span, unit, expected):
    assert plots.time_unit(span, unit) == expected


def test_time_unit_refuses_an_unknown_unit():
    with pytest.raises(ValueError, match="unit"):
        plots.time_unit(10, "weeks")


# ------------------------------------------------------------------------- held-idle stretches
@pytest.mark.parametrize(
    "case, name, stack, expected",
    [
        ("X's first two workers sit idle until Z leaves at 600 s", "three-workers", "pod",
         {"X-0": 600.0, "X-1": 600.0, "Z-0": 0.0, "X-2": 0.0, "Y-0": 0.0}),
        ("gang placement holds nothing idle in three-workers", "three-workers", "gang",
         {"Z-0": 0.0, "Y-0": 0.0, "X-0": 0.0, "X-1": 0.0, "X-2": 0.0}),
        ("deadlocked workers are idle until the horizon", "two-gangs-deadlock", "pod",
         {"A-0": HORIZON, "A-1": HORIZON, "B-0": HORIZON, "B-1": HORIZON}),
        ("two gangs run one after the other without idling", "two-gangs-deadlock", "gang",
         {f"{j}-{i}": 0.0 for j in "AB" for i in range(4)}),
    ],
)
def test_placements_held_idle(case, name, stack, expected):
    pl = plots.placements(gk.simulate(name, stack))
    assert dict(zip(pl["pod"], pl["held_idle_s"])) == expected


def test_placements_of_an_independent_job_are_never_idle():
    pl = plots.placements(simulate_on(gpu_nodes(2, gpus=1), [gang("batch", 3, 1, run_time=100, progress="independent")],
                                      stack="pod"))
    assert list(pl["held_idle_s"]) == [0.0, 0.0, 0.0]


@pytest.mark.parametrize("record", ["jobs", "summary"])
def test_placements_need_the_full_record(record):
    r = gk.simulate("three-workers", stack="pod", record=record)
    with pytest.raises(ValueError, match="record='full'"):
        plots.placements(r)


# ------------------------------------------------------------------------------------ gantt
@pytest.mark.parametrize(
    "case, name, stack, until, bars, hatched, legend",
    [
        # an idle and a useful bar each; Z-0 spans two lanes; X-2 and Y-0 one bar each
        ("three-workers pod: X's early workers drawn idle, then useful", "three-workers", "pod", None, 8, 2,
         ["job Z", "job X", "job Y", "held idle (no progress)"]),
        ("three-workers gang: nothing idle, no idle legend", "three-workers", "gang", None, 6, 0,
         ["job Z", "job X", "job Y"]),
        ("two-gangs pod: four workers idle to the end", "two-gangs-deadlock", "pod", None, 4, 4,
         ["job A", "job B", "held idle (no progress)"]),
        ("two-gangs gang: eight useful bars", "two-gangs-deadlock", "gang", None, 8, 0, ["job A", "job B"]),
        ("cut at 600 s: B's bars start there and are left out", "two-gangs-deadlock", "gang", 600, 4, 0,
         ["job A"]),
    ],
)
def test_gantt_bars_and_legend(case, name, stack, until, bars, hatched, legend):
    ax = plots.gantt(gk.simulate(name, stack), until=until)
    assert len(ax.patches) == bars
    assert sum(1 for p in ax.patches if p.get_hatch()) == hatched
    assert [t.get_text() for t in ax.get_legend().get_texts()] == legend


def test_gantt_rows_are_nodes_and_axes_say_units():
    r = gk.simulate("two-gangs-deadlock", "pod")
    ax = plots.gantt(r, until=1200)
    assert [t.get_text() for t in ax.get_yticklabels()] == ["node-0", "node-1", "node-2", "node-3"]
    assert ax.get_xlabel() == "simulated time (seconds)"
    assert ax.get_xlim() == (0.0, 1200.0)
    assert "deadlock at t=0 s" in ax.get_title()


def test_gantt_without_until_runs_to_the_horizon_in_days():
    ax = plots.gantt(gk.simulate("two-gangs-deadlock", "pod"))
    assert ax.get_xlabel() == "simulated time (days)"
    assert ax.get_xlim() == (0.0, 30.0)


def test_gantt_gives_each_node_all_its_lanes():
    sc = gk.scenarios.three_workers()
    r = gk.simulate(sc, stack="gang")
    full = plots.gantt(r)  # from result.nodes
    given = plots.gantt(r, ax=plt.subplots()[1], nodes=sc.nodes)
    assert full.get_ylim() == given.get_ylim() == (3.5, -0.5)  # two nodes of two GPUs: four lanes
    assert [t.get_text() for t in full.get_yticklabels()] == ["node-0", "node-1"]


def test_gantt_draws_on_the_axes_given():
    fig, ax = plt.subplots()
    assert plots.gantt(gk.simulate("three-workers", "pod"), ax=ax) is ax


# ------------------------------------------------------------------------------- gpu states
@pytest.mark.parametrize(
    "case, name, stack, until, xlabel, xmax",
    [
        ("three-workers pod over its 900 s", "three-workers", "pod", None, "seconds", 900.0),
        ("a deadlock drawn to its 30-day horizon", "two-gangs-deadlock", "pod", None, "days", 30.0),
        ("a deadlock cut at 1200 s", "two-gangs-deadlock", "pod", 1200, "seconds", 1200.0),
    ],
)
def test_gpu_states_axes(case, name, stack, until, xlabel, xmax):
    ax = plots.gpu_states(gk.simulate(name, stack), until=until)
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["free", "held idle", "useful"]
    assert len(ax.collections) == 3  # not ready is drawn only when some node is booting
    assert ax.get_ylabel() == "GPUs"
    assert ax.get_xlabel() == f"simulated time ({xlabel})"
    assert ax.get_xlim()[1] == pytest.approx(xmax)


def test_gpu_states_bands_add_up_to_the_capacity():
    ax = plots.gpu_states(gk.simulate("three-workers", "pod"))
    top = ax.collections[-1].get_paths()[0].vertices[:, 1]
    assert top.max() == pytest.approx(4.0)


def test_gpu_states_held_idle_band_of_a_deadlock_is_the_whole_cluster():
    ax = plots.gpu_states(gk.simulate("two-gangs-deadlock", "pod"), until=1200)
    useful, held, free = ax.collections
    ys = held.get_paths()[0].vertices[:, 1]
    assert ys.max() == pytest.approx(4.0) and ys.min() == pytest.approx(0.0)
    assert useful.get_paths()[0].vertices[:, 1].max() == pytest.approx(0.0)


# -------------------------------------------------------------------------- wait distribution
@pytest.mark.parametrize(
    "case, name, stack, lines, censored_label",
    [
        ("every job started: one ECDF line", "three-workers", "pod", 1, None),
        ("two deadlocked jobs drawn as censored crosses", "two-gangs-deadlock", "pod", 2,
         "stack pod (2 jobs): never started (2), counted to the end of the run"),
    ],
)
def test_wait_distribution(case, name, stack, lines, censored_label):
    ax = plots.wait_distribution(gk.simulate(name, stack))
    assert len(ax.lines) == lines
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    if censored_label:
        assert censored_label in labels
    assert ax.get_ylabel() == "share of jobs waiting at most this long"
    assert ax.get_xlabel().startswith("wait before start (")


def test_wait_distribution_leaves_out_rejected_jobs_and_overlays_runs():
    first = simulate_on(gpu_nodes(2, gpus=1), [gang("ok", 1, 1, run_time=60), gang("huge", 1, 4, run_time=60)], stack="pod")
    fig, ax = plt.subplots()
    plots.wait_distribution(first, ax=ax, label="first")
    plots.wait_distribution(gk.simulate("three-workers", "gang"), ax=ax, label="second")
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["first", "second"]
    first = ax.lines[0].get_ydata()
    assert list(first) == [0.0, 1.0]  # one job counted, the rejected one left out


# ---------------------------------------------------------------------- determinism, quiet
def _png(draw) -> bytes:
    fig, ax = plt.subplots()
    draw(ax)
    buf = io.BytesIO()
    fig.savefig(buf, format="png", metadata={"Software": None})
    plt.close(fig)
    return buf.getvalue()


@pytest.mark.parametrize("draw", [plots.gantt, plots.gpu_states, plots.wait_distribution])
def test_pictures_are_deterministic_and_print_nothing(draw, capsys):
    r = gk.simulate("three-workers", "pod")
    first = _png(lambda ax: draw(r, ax=ax))
    second = _png(lambda ax: draw(gk.simulate("three-workers", stack="pod"), ax=ax))
    assert first == second
    out = capsys.readouterr()
    assert out.out == "" and out.err == ""


def test_result_shortcuts_call_the_plots():
    r = gk.simulate("three-workers", "pod")
    for ax in (r.plot_gantt(), r.plot_gpu_states(), r.plot_waits()):
        assert isinstance(ax, matplotlib.axes.Axes)
        assert not math.isnan(ax.get_xlim()[1])
