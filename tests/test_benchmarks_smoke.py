"""`benchmarks/run.py --quick` runs and prints its table (a smoke test: never timed)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
COLUMNS = ["stack", "ordering", "jobs", "events", "build_s", "wall_s", "jobs_per_s", "events_per_s",
           "peak_rss_mib", "finished", "eff_util", "mean_wait_s", "deadlock", "makespan_h"]


def test_quick_benchmark_prints_the_table():
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    proc = subprocess.run([sys.executable, str(REPO / "benchmarks" / "run.py"), "--quick"],
                          capture_output=True, text=True, env=env, cwd=REPO, timeout=300)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.strip().splitlines()
    header = next(i for i, line in enumerate(lines) if line.split()[:2] == ["stack", "ordering"])
    assert lines[header].split() == COLUMNS
    rows = [line.split() for line in lines[header + 1:]]
    assert [r[0] for r in rows] == ["pod", "gang"]
    for r in rows:
        row = dict(zip(COLUMNS, r))
        assert len(r) == len(COLUMNS)
        assert row["jobs"] == "1000" and row["finished"] == "1000" and row["deadlock"] == "False"
        assert int(row["events"]) > 1000 and float(row["wall_s"]) > 0 and float(row["peak_rss_mib"]) > 0
