"""Lesson 04: the committed sweep is what its command makes; the lesson's helpers and widget.

The data file gangkit/data/lesson04_sweep.csv is made by ``python tools/make_lesson04_data.py``;
here the command re-runs a reduced grid with ``--check`` and compares with the matching rows.
"""

from __future__ import annotations

import importlib.util
import math
import os
import subprocess
import sys

import pandas as pd
import pytest

import gangkit as gk
from gangkit.lessons import lesson04
from gangkit.model.errors import ScenarioError

from paths import REPO

TOOL = REPO / "tools" / "make_lesson04_data.py"


def run_tool(*args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(REPO), GANGKIT_NO_PROGRESS="1")
    return subprocess.run([sys.executable, str(TOOL), *args], capture_output=True, text=True, env=env, cwd=REPO,
                          timeout=600)


def run_tool_here(capsys, *args: str) -> tuple[int, str]:
    """The tool's ``main`` in this process (no interpreter to start): exit code, and stdout + stderr."""
    spec = importlib.util.spec_from_file_location("make_lesson04_data", TOOL)
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    try:
        code, message = tool.main(list(args)), ""
    except SystemExit as stop:  # as the interpreter does: a message goes to stderr, with exit code 1
        code, message = (1, stop.code) if isinstance(stop.code, str) else (stop.code, "")
    out = capsys.readouterr()
    return code, out.out + out.err + message


def test_the_command_reproduces_the_committed_rows_on_a_reduced_grid():
    done = run_tool("--check", "--loads", "0.6", "--seeds", "1", "--orderings", "strict", "easy-backfill",
                    "--workers", "2")
    assert done.returncode == 0, done.stdout + done.stderr
    gangs = int((lesson04.story_data()["ordering"] == "strict").sum())
    assert f"up to date (2 rows, {2 * gangs} story rows and 2 packing rows compared)" in done.stdout


def test_check_notices_a_changed_row(tmp_path, capsys):
    data = pd.read_csv(lesson04.SWEEP_DATA, comment="#")
    i = data.index[(data["ordering"] == "skip") & (data["load"] == 0.6) & (data["seed"] == 1)][0]
    data.loc[i, "mean_wait_s"] += 1.0
    changed = tmp_path / "sweep.csv"
    changed.write_text("# changed\n" + data.to_csv(index=False))
    code, out = run_tool_here(capsys, "--check", "--output", str(changed), "--loads", "0.6", "--seeds", "1",
                              "--orderings", "skip", "--workers", "1")
    assert code == 1
    assert "mean_wait_s at ordering=skip load=0.6 seed=1" in out


@pytest.mark.parametrize("args, says", [
    (["--check", "--loads", "0.33"], "not in the lesson's grids"),
    (["--check", "--loads", "0.4", "--orderings", "easy-backfill"], "no point of the lesson's grids"),
    (["--loads", "0.6"], "only go with --check"),
])
def test_the_command_refuses_a_grid_it_cannot_compare(args, says, capsys):
    code, out = run_tool_here(capsys, *args)
    assert code != 0 and says in out


def test_the_committed_file_holds_the_whole_grid():
    data = lesson04.sweep_data()
    assert len(data) == sum(len(g["ordering"]) * len(g["load"]) * len(g["seed"]) * len(g["n_jobs"])
                            for g in lesson04.SWEEP_GRIDS)
    assert list(data.columns) == lesson04.SWEEP_COLUMNS
    assert lesson04.SWEEP_DATA.read_text().startswith("# Lesson 04 load sweep (simulated")
    story = lesson04.story_data()
    assert set(story["ordering"]) == {*lesson04.ORDERINGS, *lesson04.BACKFILL_ORDERINGS}


@pytest.mark.parametrize("ordering", lesson04.ORDERINGS)
def test_the_story_file_matches_the_live_runs(ordering):
    story = lesson04.story_data()
    live = lesson04.story_table([ordering])
    pd.testing.assert_frame_equal(story[story["ordering"] == ordering].reset_index(drop=True), live,
                                  check_exact=False, rtol=1e-12)


def test_the_mix_offers_the_load_asked_for():
    stream = lesson04.mix_stream()
    assert stream.mean_gpu_seconds() == pytest.approx((0.9 * 1 + 0.1 * 8) * 1800)
    sc = lesson04.mix(0.6, n_jobs=2000)
    span = sc.jobs[-1].submit_time - sc.jobs[0].submit_time
    offered = sum(j.gpus * j.run_time for j in sc.jobs) / span / 32
    assert offered == pytest.approx(0.6, rel=0.08)  # 2000 random jobs: within 8%


@pytest.mark.parametrize("shares, expected", [
    ({0.5: 0.0, 0.6: 0.2, 0.7: 1.0, 0.8: 1.0}, 0.7),
    ({0.5: 0.0, 0.6: 0.8, 0.7: 0.4, 0.8: 1.0}, 0.8),   # a stable read above resets the start
    ({0.5: 0.0, 0.6: 0.0}, math.nan),
])
def test_first_unstable_load(shares, expected):
    rows = [{"ordering": o, "load": load, "seed": s, "stability": "unstable" if s < share * 5 else "stable"}
            for load, share in shares.items() for o in lesson04.ORDERINGS for s in range(5)]
    got = lesson04.first_unstable_load(pd.DataFrame(rows), "strict")
    assert (math.isnan(got) and math.isnan(expected)) or got == expected


def test_strict_saturates_below_the_naive_bound_and_skip_does_not():
    strict = lesson04.saturated("strict", n_jobs=600)
    skip = lesson04.saturated("skip", n_jobs=600)
    assert strict["effective_utilization"] < 0.8 < skip["effective_utilization"] <= lesson04.naive_bound()
    # in a saturated run somebody always waits: utilization and free-while-waiting fill the capacity
    assert strict["effective_utilization"] + strict["idle_while_waiting"] == pytest.approx(1.0, abs=1e-3)


def test_gang_waits_are_the_whole_node_gangs_longest_first():
    gangs = lesson04.gang_waits(lesson04.run("skip", 0.6, n_jobs=300))
    assert list(gangs["wait_s"]) == sorted(gangs["wait_s"], reverse=True)
    assert all(name.startswith("whole-node-") for name in gangs["job"])


def test_wait_explorer_follows_its_controls(capsys):
    ex = lesson04.wait_explorer(n_jobs=300)
    out = capsys.readouterr()
    assert out.out == "" and out.err == ""
    pd.testing.assert_frame_equal(ex.table, lesson04.render_waits("strict", 0.6, 0, 300)[0])
    ex.controls["ordering"].value = "skip"
    pd.testing.assert_frame_equal(ex.table, lesson04.render_waits("skip", 0.6, 0, 300)[0])
    ex.controls["load"].value = 0.9
    expected = gk.wait_table(lesson04.run("skip", 0.9, n_jobs=300))
    assert ex.table.loc["all", "mean_wait_s"] == expected.loc["all", "mean_wait_s"]
    assert ex.updates == 3
    assert repr(ex) == "Waiting explorer (run this cell to use it)"


def test_the_packing_file_matches_the_live_runs():
    """One seed of the packing experiment, run live under both scorings and both orderings."""
    live = lesson04.packing_rows(seeds=[2])
    data = lesson04.packing_data()
    committed = data[data["seed"] == 2].reset_index(drop=True)
    pd.testing.assert_frame_equal(committed, live, check_dtype=False)
    assert set(data["scoring"]) == set(lesson04.SCORINGS) and sorted(set(data["seed"])) == list(lesson04.PACKING["seeds"])


def test_packing_shortens_the_starvation_under_skip():
    """The lesson's reading: packed, skip's worst gang wait is far shorter than spread."""
    t = lesson04.packing_data().groupby(["scoring", "ordering"])["worst_gang_wait_s"].mean()
    assert t["MostAllocated", "skip"] < 0.5 * t["LeastAllocated", "skip"]
    table = lesson04.packing_table(lesson04.packing_data())
    assert list(table.columns) == ["scoring", "ordering", "seeds", "worst gang wait (min)", "mean wait (min)"]
    assert table["worst gang wait (min)"].str.fullmatch(r"\d+ ± \d+").all()


def test_the_sweep_summary_is_one_table_of_the_loads_every_ordering_ran():
    table = lesson04.sweep_summary(lesson04.sweep_data())
    assert list(table.index.get_level_values("load").unique()) == list(lesson04.SUMMARY_LOADS)
    assert table.notna().all().all()  # every ordering ran every one of these loads
    assert set(table["verdict"]) <= set(lesson04.VERDICTS)


def _seeds(load, carried, slopes=(0.0, 0.0, 0.0, 0.0, 0.0)):
    """Rows of one (ordering, load) point: one seed per carried utilization, with these queue slopes."""
    return pd.DataFrame({"ordering": "strict", "load": load, "seed": range(len(carried)), "window_offered_load": load,
                         "window_effective_utilization": carried, "queue_slope_per_h": slopes[:len(carried)]})


@pytest.mark.parametrize("rows, verdict", [
    (_seeds(0.6, [0.595, 0.60, 0.605, 0.598, 0.602]), "stable"),
    (_seeds(0.8, [0.72, 0.73, 0.715, 0.725, 0.72]), "unstable"),
    (_seeds(0.8, [0.87, 0.98, 0.85, 0.90, 0.88]), "not stationary"),
    (_seeds(0.8, [0.70, 0.90, 0.75, 0.85, 0.80]), "undecided"),
    (_seeds(0.6, [0.595, 0.60, 0.605, 0.598, 0.602], slopes=(2.0, 2.5, 1.8, 2.2, 2.1)), "unstable"),
    (_seeds(0.6, [0.595, 0.60, 0.605, 0.598, 0.602], slopes=(-2.0, -2.5, -1.8, -2.2, -2.1)), "stable"),
    (_seeds(1.0, [0.995, 1.0, 0.99, 1.0, 0.998]), "unstable"),
], ids=["carried matches offered in a narrow band: stable",
        "carried below offered: unstable",
        "carried above offered, the window drains a backlog: not stationary",
        "offered inside a wide band: undecided",
        "the queue grows although the GPUs keep up: unstable",
        "a shrinking queue alone is no evidence: stable",
        "an offered load at the capacity bound: unstable"])
def test_the_verdict_needs_carried_to_match_offered_and_a_queue_that_does_not_grow(rows, verdict):
    assert lesson04.verdicts(rows)["verdict"].tolist() == [verdict]


@pytest.mark.parametrize("verdicts, expected", [
    (["stable", "stable", "unstable", "unstable"], (0.6, 0.7)),
    (["stable", "not stationary", "stable", "unstable"], (0.5, 0.6)),
    (["undecided", "stable", "unstable", "unstable"], (math.nan, 0.5)),
    (["stable", "stable", "stable", "stable"], (0.8, math.nan)),
], ids=["stable up to 0.6, unstable from 0.7", "a point that is not stationary ends the stable run",
        "the lowest load undecided: no stable load", "stable everywhere: no upper end"])
def test_the_stability_limit_is_bracketed_by_the_verdicts(verdicts, expected):
    table = pd.DataFrame({"ordering": "strict", "load": [0.5, 0.6, 0.7, 0.8], "verdict": verdicts})
    got = lesson04.stability_limit(table, "strict")
    assert all((math.isnan(a) and math.isnan(b)) or a == b for a, b in zip(got, expected))


def test_the_saturated_strict_figure_lies_in_the_sweeps_bracket():
    """The lesson's two methods agree: strict's saturated utilization lies between its last stable load
    and the next load of the sweep."""
    low, high = lesson04.stability_limit(lesson04.verdicts(lesson04.main_rows(lesson04.sweep_data())), "strict")
    sat = lesson04.saturated_band("strict")
    assert low <= sat["effective_utilization"] <= high
    assert sat["low"] <= sat["effective_utilization"] <= sat["high"]
    assert 0 < sat["band"] < high - low  # the seeds agree more closely than the sweep's load step


def test_the_window_study_needs_long_runs_to_judge_skip_at_load_0_8():
    """skip at load 0.8: 2000-job runs cannot decide (the band is wide), 16000-job runs can; strict is
    unstable at every length."""
    study = lesson04.window_study(lesson04.sweep_data()).set_index(["ordering", "n_jobs"])
    assert study.loc[("skip", 2000), "verdict"] != "stable"
    assert study.loc[("skip", 2000), "excess ±"] > 5 * study.loc[("skip", 16000), "excess ±"]
    assert set(study.loc["strict", "verdict"]) == {"unstable"}


def test_the_window_offered_load_is_the_streams():
    """The file's window_offered_load is what the stream gives, and near the nominal load."""
    data = lesson04.sweep_data()
    row = data[(data["ordering"] == "skip") & (data["load"] == 0.6) & (data["seed"] == 1)
               & (data["n_jobs"] == lesson04.SWEEP_N_JOBS)].iloc[0]
    assert row["window_offered_load"] == lesson04.window_offered_load(0.6, 1, lesson04.SWEEP_N_JOBS)
    assert abs(row["window_offered_load"] - 0.6) < 0.06


@pytest.mark.parametrize("grid", [
    {"ordering": ["strict"], "load": [0.6], "seed": [1], "n_jobs": [8000]},
    {"ordering": ["skip"], "load": [0.9], "seed": [3], "n_jobs": [8000]},
    {"ordering": ["easy-backfill"], "load": [0.6], "seed": [0], "n_jobs": [8000]},
    {"ordering": ["skip"], "load": [0.8], "seed": [2], "n_jobs": [2000]},
], ids=["strict", "skip", "a backfilling ordering", "a point of the window study"])
def test_the_live_sweep_gives_the_files_rows(grid):
    """sweep_data(live=True) on a point of the file: the same table as the file, to the last bit."""
    live = lesson04.sweep_data(live=True, grids=[grid], workers=1)
    pd.testing.assert_frame_equal(live, lesson04.sweep_data(), check_exact=True)


def test_a_live_point_the_file_lacks_comes_last():
    data = lesson04.sweep_data()
    live = lesson04.sweep_data(live=True, grids=[{"ordering": ["skip"], "load": [0.95], "seed": [0],
                                                  "n_jobs": [300]}], workers=1)
    assert len(live) == len(data) + 1
    pd.testing.assert_frame_equal(live.iloc[:-1], data, check_exact=True)
    assert live.iloc[-1][["ordering", "load", "seed", "n_jobs"]].tolist() == ["skip", 0.95, 0, 300]


def test_a_live_grid_must_name_the_files_keys():
    with pytest.raises(ScenarioError, match=r"lesson04.sweep_data.*grids\[0\].*missing seed"):
        lesson04.sweep_data(live=True, grids=[{"ordering": ["skip"], "load": [0.95], "n_jobs": [300]}])
