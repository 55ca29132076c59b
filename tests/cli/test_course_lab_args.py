"""`gangkit course -- ARGS`: JupyterLab's own arguments win, the address printed is theirs, and the token stays off the command line."""

from __future__ import annotations

import argparse
import importlib.util

import nbformat
import pytest

from gangkit.cli import course

from conftest import case

LESSON = "lab/tree/course/00_welcome.ipynb"

#: Each row: JupyterLab arguments after ``--``; the address printed (None: JupyterLab's own); the port it serves on.
LAB_ARGS = [
    case("no arguments: a free port and the launcher's token", [], f"http://localhost:8899/{LESSON}?token=t0k3n", 8899),
    case("--port 8890, as the help shows, serves on 8890 and says so", ["--port", "8890"],
         f"http://localhost:8890/{LESSON}?token=t0k3n", 8890),
    case("--port=8890 serves on 8890", ["--port=8890"], f"http://localhost:8890/{LESSON}?token=t0k3n", 8890),
    case("--ServerApp.port=8890 serves on 8890", ["--ServerApp.port=8890"],
         f"http://localhost:8890/{LESSON}?token=t0k3n", 8890),
    case("--ServerApp.port 8890 serves on 8890", ["--ServerApp.port", "8890", "--no-browser"],
         f"http://localhost:8890/{LESSON}?token=t0k3n", 8890),
    case("--port-retries replaces the launcher's no-retries", ["--port-retries", "3"],
         f"http://localhost:8899/{LESSON}?token=t0k3n", 8899),
    case("--notebook-dir replaces the working folder as the root", ["--notebook-dir", "/elsewhere"],
         f"http://localhost:8899/{LESSON}?token=t0k3n", 8899),
    case("--ip 127.0.0.1 is the address's host", ["--ip=127.0.0.1"], f"http://127.0.0.1:8899/{LESSON}?token=t0k3n", 8899),
    case("--ip 0.0.0.0 listens everywhere, and localhost reaches it", ["--ip", "0.0.0.0"],
         f"http://localhost:8899/{LESSON}?token=t0k3n", 8899),
    case("a base URL comes before the lesson's path", ["--ServerApp.base_url=/class/"],
         f"http://localhost:8899/class/{LESSON}?token=t0k3n", 8899),
    case("a certificate makes the address https", ["--certfile", "/etc/lab.pem"],
         f"https://localhost:8899/{LESSON}?token=t0k3n", 8899),
    case("a token you give on the command line is the address's token", ["--IdentityProvider.token=mine"],
         f"http://localhost:8899/{LESSON}?token=mine", 8899),
    case("port 0 lets JupyterLab choose, so it prints the address", ["--port", "0"], None, 0),
]

#: The settings the launcher gives JupyterLab, each under all its spellings: none may appear twice.
SETTINGS = {"port": course._PORT, "port_retries": course._PORT_RETRIES, "root_dir": course._ROOT_DIR,
            "token": course._TOKEN, "news_url": course._NEWS_URL, "default_url": course._DEFAULT_URL}


def _times_given(args, names) -> int:
    return sum(1 for a in args if a.startswith("--") and a[2:].partition("=")[0] in names)


@pytest.fixture
def lab(tmp_path, monkeypatch):
    """A working folder with one lesson, and ``launch_lab`` with a fake Popen, port 8899 and token ``t0k3n``."""
    if importlib.util.find_spec("jupyterlab") is None:
        pytest.skip("JupyterLab is not installed (pip install -c constraints.txt -e \".[lab]\")")
    work = tmp_path / "work"
    (work / "course").mkdir(parents=True)
    nbformat.write(nbformat.v4.new_notebook(), work / "course" / "00_welcome.ipynb")
    calls = []

    class FakePopen:
        def __init__(self, cmd, cwd, env=None, **kwargs):
            calls.append((cmd, env))

        def wait(self, timeout=None):
            return 0

    monkeypatch.setattr(course.subprocess, "Popen", FakePopen)
    monkeypatch.setattr(course, "free_port", lambda: 8899)
    monkeypatch.setattr(course.secrets, "token_hex", lambda n: "t0k3n")
    monkeypatch.delenv("JUPYTER_TOKEN", raising=False)
    monkeypatch.setenv("JUPYTER_DATA_DIR", str(tmp_path / "jupyter-data"))
    monkeypatch.setenv("JUPYTER_RUNTIME_DIR", str(tmp_path / "jupyter-runtime"))
    return work, calls


@pytest.mark.parametrize("lab_args, address, port", LAB_ARGS)
def test_lab_arguments_win_and_the_address_follows_them(lab, capsys, lab_args, address, port):
    work, calls = lab
    assert course.launch_lab(work, lab_args) == 0
    (cmd, env), = calls
    assert cmd[len(cmd) - len(lab_args):] == lab_args  # as given, last
    for setting, names in SETTINGS.items():
        assert _times_given(cmd[3:], names) <= 1, f"{setting} given twice: JupyterLab would refuse to start"
    assert not any("t0k3n" in a for a in cmd) and env["JUPYTER_TOKEN"] == "t0k3n"
    first = capsys.readouterr().out.splitlines()[0]
    assert first == (f"Open {address} (your browser should open it by itself)." if address else
                     "Open the address JupyterLab prints below (your browser should open it by itself).")
    # JupyterLab's own parser takes the command as it is and serves on the port of the address.
    from jupyterlab.labapp import LabApp

    app = LabApp()
    app.parse_command_line(cmd[3:])  # exits with "... only accepts one value" for a setting given twice
    assert app.config.ServerApp.port == port


#: Each row: how the token could reach JupyterLab's command line, and the JUPYTER_TOKEN already set (None: none).
TOKENS = [
    case("a fresh token goes in the environment", [], None, "t0k3n"),
    case("with other arguments it still goes in the environment", ["--port", "8890", "--no-browser"], None, "t0k3n"),
    case("a JUPYTER_TOKEN already set is kept", [], "preset-token", "preset-token"),
]


@pytest.mark.parametrize("lab_args, preset, token", TOKENS)
def test_the_token_is_never_on_the_command_line(lab, monkeypatch, capsys, lab_args, preset, token):
    """Every user of the machine can read a process's command line (``ps``); only its own user its environment."""
    work, calls = lab
    if preset:
        monkeypatch.setenv("JUPYTER_TOKEN", preset)
    course.launch_lab(work, lab_args)
    (cmd, env), = calls
    assert not any(token in a for a in cmd)
    assert env["JUPYTER_TOKEN"] == token
    assert f"?token={token} " in capsys.readouterr().out


def test_a_port_that_is_no_number_is_one_clear_error(lab, capsys):
    work, calls = lab
    parser = argparse.ArgumentParser(prog="gangkit")
    course.add_course_parser(parser.add_subparsers(dest="command"))
    args = parser.parse_args(["course", "--dir", str(work), "--", "--port", "eighty"])
    assert args.func(args) == 1 and calls == []
    err = capsys.readouterr().err
    assert err == "error: --port 'eighty' (after --): expected a port number from 0 to 65535\n"
