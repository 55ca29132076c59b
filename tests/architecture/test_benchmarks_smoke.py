"""`benchmarks/run.py --quick` runs every case and prints its table and verdicts (a smoke test: never timed)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

try:
    from conftest import shared_path
except ImportError:  # tests/ imported as a package
    from tests.conftest import shared_path
from paths import REPO

OPENB = shared_path("traces", "alibaba-openb-2023")
COLUMNS = ["case", "stack", "jobs", "events", "build_s", "wall_s", "cpu_s", "jobs_per_s", "events_per_s", "us_per_job",
           "us_per_event", "finished", "waiting", "mean_wait_s", "peak_rss_mib", "load"]


def _run(*args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    return subprocess.run([sys.executable, str(REPO / "benchmarks" / "run.py"), *args],
                          capture_output=True, text=True, env=env, cwd=REPO, timeout=600)


def test_quick_benchmark_prints_every_case():
    proc = _run("--quick", "--same-process", "--traces", str(shared_path("traces")))  # the trace folder this test sees
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.strip().splitlines()
    header = next(i for i, line in enumerate(lines) if line.split()[:2] == ["case", "stack"])
    assert lines[header].split() == COLUMNS
    rows = [dict(zip(COLUMNS, line.split())) for line in lines[header + 1:] if not line.startswith("(")]
    expected = [("a", "gang"), ("a", "simpy-model"), ("b", "kueue+gang"), ("b", "kueue+gang"), ("c", "gang"),
                ("c", "kueue+gang")] + ([("d", "kueue+gang")] if OPENB.exists() else []) + [
                ("e", "gang"), ("e", "skeleton"), ("e", "simpy-model"), ("f", "gang"), ("f", "kueue+gang"), ("f", "gang/general"),
                ("g", "pod"), ("g", "pod")]
    assert [(r["case"], r["stack"]) for r in rows] == expected
    by = {(r["case"], r["stack"]): r for r in rows}
    for r in rows:
        assert int(r["events"]) > int(r["jobs"]) > 0 and float(r["wall_s"]) > 0 and float(r["peak_rss_mib"]) > 0
    a_gang, a_simpy = rows[0], rows[1]
    assert a_gang["jobs"] == a_simpy["jobs"] == "2000" and a_gang["finished"] == a_simpy["finished"] == "2000"
    assert [r["jobs"] for r in rows[2:4]] == ["1000", "3000"] and all(r["finished"] == r["jobs"] for r in rows[2:4])
    for r in rows[4:6]:  # the backlog: most gangs still wait when arrivals stop
        assert int(r["waiting"]) > int(r["jobs"]) // 2
    # e: case a's stream through the general engine gives the lean engine's figures; the SimPy model runs again
    e_gang, e_simpy = by["e", "gang"], by["e", "simpy-model"]
    assert [e_gang[k] for k in ("jobs", "events", "finished", "mean_wait_s")] == [
        a_gang[k] for k in ("jobs", "events", "finished", "mean_wait_s")]
    assert e_simpy["mean_wait_s"] == a_simpy["mean_wait_s"]
    # e: the engine's skeleton starts every job when the general engine does (a FIFO line is Volcano's rule here)
    assert [by["e", "skeleton"][k] for k in ("jobs", "events", "finished", "mean_wait_s")] == [
        e_gang[k] for k in ("jobs", "events", "finished", "mean_wait_s")]
    for stack in ("gang", "kueue+gang", "gang/general"):  # f: lesson 04's mix runs to the end through both stacks
        assert by["f", stack]["jobs"] == by["f", stack]["finished"] == "3000"
    # f: the lean engine for several sizes and the general engine give the same figures
    assert [by["f", "gang"][k] for k in ("events", "mean_wait_s")] == [by["f", "gang/general"][k] for k in ("events", "mean_wait_s")]
    # g: the pod-by-pod layer runs the mixed stream to the end at both sizes
    assert [(r["jobs"], r["finished"]) for r in rows if r["case"] == "g"] == [("300", "300"), ("1000", "1000")]
    for r in rows:
        assert float(r["us_per_event"]) * int(r["events"]) == pytest.approx(float(r["us_per_job"]) * int(r["jobs"]), rel=0.05)
    verdicts = [line for line in lines if line.startswith("(")]
    assert [v[:3] for v in verdicts] == ["(a)", "(b)", "(c)", "(c)"] + (["(d)"] if OPENB.exists() else []) + [
        "(e)", "(e)", "(f)", "(f)", "(f)", "(g)"]
    assert all(("met" in v) or ("missed" in v) or v.endswith("(for comparison)") for v in verdicts)
    assert sum(v.endswith("(for comparison)") for v in verdicts) == 2  # e's skeleton and f's gang/general: no target


@pytest.mark.parametrize("args, message", [
    (["--case", "a,x"], "--case: expected letters among a, b, c, d, e, f, g"),
    (["--case", "ab"], "--case: expected letters among a, b, c, d, e, f, g"),
    (["--case", "e,h"], "--case: expected letters among a, b, c, d, e, f, g"),
])
def test_bad_case_is_refused(args, message):
    proc = _run(*args)
    assert proc.returncode == 2 and message in proc.stderr


def test_quick_predict_benchmark_prints_its_row():
    """``benchmarks/predict.py --quick``: the generated dump (20 nodes, 100 pods) and a prediction of 4 samples."""
    import json

    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    proc = subprocess.run([sys.executable, str(REPO / "benchmarks" / "predict.py"), "--quick", "--workers", "1", "--json"],
                          capture_output=True, text=True, env=env, cwd=REPO, timeout=600)
    assert proc.returncode == 0, proc.stderr
    row = json.loads(proc.stdout)
    assert (row["case"], row["nodes"], row["pods"], row["samples"]) == ("predict", 20, 100, 4)
    assert row["will_start"] == 1.0 and row["start_s"]["p10"] <= row["start_s"]["p50"] <= row["start_s"]["p90"]
    assert row["waits_in"] == "quota" and row["wall_s"] > 0 and row["cpu_s"] > 0
