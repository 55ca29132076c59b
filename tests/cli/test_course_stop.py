"""Stopping `gangkit course` stops JupyterLab: no server is left serving the course after the command has ended.

These run the real ``gangkit course`` in a child process, with a stand-in for JupyterLab first on
its ``PYTHONPATH`` (a ``jupyterlab`` package whose ``__main__`` records how it was started, then
waits; on SIGTERM it writes down that it was asked to stop, and exits, as jupyter_server's
``ServerApp._signal_stop`` does) so that no real server is needed. The signal goes to ``gangkit``
alone, as ``kill`` or a closing terminal sends it.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from gangkit.cli import course

from conftest import case

pytestmark = pytest.mark.skipif(not hasattr(signal, "SIGHUP"), reason="POSIX signals")

STAND_IN = '''
import json, os, signal, sys, time

record = os.environ["STAND_IN_LAB_RECORD"]


def stop(signum, frame):
    with open(record + ".stopped", "w") as f:
        f.write(signal.Signals(signum).name)
    sys.exit(0)


signal.signal(signal.SIGTERM, signal.SIG_IGN if os.environ.get("STAND_IN_LAB_SIGTERM") == "ignore" else stop)
with open(record + ".part", "w") as f:
    json.dump({"pid": os.getpid(), "argv": sys.argv[1:], "token": os.environ.get("JUPYTER_TOKEN")}, f)
os.replace(record + ".part", record)
while True:
    time.sleep(0.1)
'''

#: Runs gangkit's command line as the ``gangkit`` script does.
GANGKIT = "import sys; from gangkit.cli import main; sys.exit(main(sys.argv[1:]))"

#: Runs only the part that waits for the server and stops it, with a grace period of argv[1] seconds.
RUN_LAB = ("import sys; from pathlib import Path; from gangkit.cli.course import run_lab; "
           "sys.exit(run_lab([sys.executable, '-m', 'jupyterlab'], Path.cwd(), grace=float(sys.argv[1])))")


@pytest.fixture
def stand_in(tmp_path):
    """Start a Python child with the stand-in JupyterLab; yields ``start(argv, **env) -> (child, record)``."""
    package = tmp_path / "stand-in" / "jupyterlab"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "__main__.py").write_text(STAND_IN)
    started: list[tuple[subprocess.Popen, Path]] = []

    def start(argv: list[str], ignore: tuple[int, ...] = (), **extra_env: str) -> tuple[subprocess.Popen, dict]:
        record = tmp_path / f"record-{len(started)}.json"
        env = {k: v for k, v in os.environ.items() if k != "JUPYTER_TOKEN"}
        env.update(PYTHONPATH=os.pathsep.join([str(package.parent), str(course.REPO_ROOT)]),
                   STAND_IN_LAB_RECORD=str(record), JUPYTER_DATA_DIR=str(tmp_path / "jupyter-data"),
                   JUPYTER_RUNTIME_DIR=str(tmp_path / "jupyter-runtime"), **extra_env)
        out = (tmp_path / f"out-{len(started)}.txt").open("w")
        def dispositions() -> None:  # as from a terminal, whatever this test runner ignores; ``ignore`` as under nohup
            for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
                signal.signal(signum, signal.SIG_IGN if signum in ignore else signal.SIG_DFL)

        child = subprocess.Popen([sys.executable, "-c", *argv], cwd=tmp_path, env=env, stdout=out,
                                 stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, text=True,
                                 preexec_fn=dispositions)
        child.output = tmp_path / f"out-{len(started)}.txt"  # type: ignore[attr-defined]
        started.append((child, record))
        deadline = time.monotonic() + 120
        while not record.exists():
            if child.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"the stand-in JupyterLab did not start:\n{child.output.read_text()}")
            time.sleep(0.1)
        return child, json.loads(record.read_text())

    yield start
    for child, record in started:  # whatever a failing test left running
        if child.poll() is None:
            child.kill()
            child.wait()
        if record.exists():
            pid = json.loads(record.read_text())["pid"]
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass


def _gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


#: Each row: the signals sent to `gangkit course`, in order; those it was started ignoring; its exit status.
STOPS = [
    case("Ctrl-C (SIGINT) stops JupyterLab; gangkit ends with its status", [signal.SIGINT], (), 0),
    case("SIGTERM stops JupyterLab; gangkit ends with 128 + 15", [signal.SIGTERM], (), 128 + 15),
    case("SIGHUP (the terminal closed) stops JupyterLab; gangkit ends with 128 + 1", [signal.SIGHUP], (), 128 + 1),
    case("under nohup SIGHUP is ignored, and SIGTERM still stops JupyterLab", [signal.SIGHUP, signal.SIGTERM],
         (signal.SIGHUP,), 128 + 15),
]


@pytest.mark.parametrize("signals, ignore, status", STOPS)
def test_a_signal_to_gangkit_stops_jupyterlab(stand_in, tmp_path, signals, ignore, status):
    child, record = stand_in([GANGKIT, "course", "--dir", str(tmp_path / "work"), "--", "--port", "8890"], ignore)
    for signum in signals:
        child.send_signal(signum)
    assert child.wait(timeout=60) == status
    assert (tmp_path / "record-0.json.stopped").read_text() == "SIGTERM"  # asked to stop
    assert _gone(record["pid"])  # and waited for: no server left serving
    out = child.output.read_text()
    # The help's example as written: JupyterLab got --port 8890 (once), and the address says 8890.
    assert record["argv"][-2:] == ["--port", "8890"] and not any(a.startswith("--ServerApp.port=") for a in record["argv"])
    assert f"Open http://localhost:8890/lab/tree/course/00_welcome.ipynb?token={record['token']} " in out
    assert not any(record["token"] in a for a in record["argv"])  # the token came in the environment


#: Each row: the signals sent (in order) to a server that ignores SIGTERM, the grace period, the exit status.
KILLS = [
    case("a server that ignores SIGTERM is killed once the grace period is over", [signal.SIGTERM], 1, 128 + 15),
    case("a second Ctrl-C kills it at once", [signal.SIGINT, signal.SIGINT], 3600, 128 + 9),
]


@pytest.mark.parametrize("signals, grace, status", KILLS)
def test_a_server_that_does_not_stop_is_killed(stand_in, tmp_path, signals, grace, status):
    child, record = stand_in([RUN_LAB, str(grace)], STAND_IN_LAB_SIGTERM="ignore")
    for n, signum in enumerate(signals):
        if n:  # signals of one kind do not queue: send the next once gangkit has acted on the first
            deadline = time.monotonic() + 60
            while "stopping JupyterLab" not in child.output.read_text() and time.monotonic() < deadline:
                time.sleep(0.1)
        child.send_signal(signum)
    assert child.wait(timeout=60) == status
    assert _gone(record["pid"])
    assert not (tmp_path / "record-0.json.stopped").exists()
    assert "gangkit: killing JupyterLab" in child.output.read_text()
