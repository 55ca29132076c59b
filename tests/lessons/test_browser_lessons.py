"""The lessons' explorers work in a real browser: JupyterLab in headless Chromium, as a learner opens them.

nbval checks what a lesson's cells print, but a widget is drawn by JavaScript in the page and its
callbacks run only when a person moves a control. So these tests do what a learner does:

1. make a working copy with ``gangkit course --no-launch --dir <tmp>`` and start JupyterLab on it
   with the command ``gangkit course`` runs (:func:`gangkit.cli.course.lab_command`), on 127.0.0.1
   only, with its own settings folder (no news prompt, no autosave, every cell kept in the page);
2. open the lesson in Chromium (Debian's ``chromium``, driven by Playwright; no browser is
   downloaded), click Run > Run All Cells, and wait for the explorer;
3. move one control (a slider by the keyboard, a dropdown by choosing the next option) and check
   that the explorer's output changed to what the same explorer computes in this process for the
   new setting (the table cell by cell; the picture differs from the one before).

A screenshot of each lesson after the change goes to ``test-artifacts/browser/`` (git-ignored).

Each test skips, saying why, only when no browser can be had (no Playwright, no Chromium, or it
does not start) or JupyterLab is not installed. :func:`chromium` is shared with ``test_site.py``.
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import os
import secrets
import shutil
import signal
import subprocess
import time
import urllib.request
from contextlib import contextmanager
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path

import pandas as pd
import pytest

from gangkit.cli.course import free_port, lab_command, lab_environment
from gangkit.cli.main import main as gangkit_main

from conftest import case
from paths import REPO

pytestmark = pytest.mark.browser

ROOT = REPO
#: Screenshots of the browser tests (git-ignored).
ARTIFACTS = ROOT / "test-artifacts"

#: Chromium's flags for a headless run here: as root it needs --no-sandbox; this machine has no
#: GPU and no outside network (without the last flags Chromium keeps trying to reach Google's hosts).
CHROMIUM_ARGS = ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 "--no-first-run"]

#: Milliseconds: the longest any single browser step may take (loading, running the lesson, an update).
STEP_MS = 45_000


def chromium_executable() -> str | None:
    """The Chromium to drive: ``$GANGKIT_CHROMIUM``, else Debian's ``/usr/bin/chromium``, else one on ``PATH``."""
    for candidate in (os.environ.get("GANGKIT_CHROMIUM"), "/usr/bin/chromium", shutil.which("chromium"),
                      shutil.which("chromium-browser")):
        if candidate and Path(candidate).is_file() and os.access(candidate, os.X_OK):
            return candidate
    return None


@contextmanager
def chromium():
    """A headless Chromium (a Playwright ``Browser``), or ``pytest.skip`` saying why none can be had."""
    try:
        from playwright.sync_api import Error, sync_playwright
    except ImportError:
        pytest.skip("no browser: the Python package playwright is not installed "
                    "(pip install -c constraints.txt -e \".[test]\")")
    exe = chromium_executable()
    if exe is None:
        pytest.skip("no browser: no Chromium at /usr/bin/chromium or on PATH "
                    "(Debian: apt-get install chromium; or set GANGKIT_CHROMIUM to one)")
    with sync_playwright() as p:
        try:
            browser = p.chromium.launch(executable_path=exe, args=CHROMIUM_ARGS, timeout=STEP_MS)
        except Error as exc:
            pytest.skip(f"no browser: {exe} did not start: {str(exc).splitlines()[0]}")
        try:
            yield browser
        finally:
            browser.close()


class _Rows(HTMLParser):
    """The text of each cell of each row of an HTML table, as a browser's ``innerText`` reads it."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.rows: list[list[str]] = []
        self._cell: list[str] | None = None

    def handle_starttag(self, tag, attrs):
        if tag == "tr":
            self.rows.append([])
        elif tag in ("td", "th"):
            self._cell = []

    def handle_data(self, data):
        if self._cell is not None:
            self._cell.append(data)

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self._cell is not None:
            self.rows[-1].append(" ".join("".join(self._cell).split()))
            self._cell = None


def table_rows(table: pd.DataFrame) -> list[list[str]]:
    """``table`` as an explorer shows it (``DataFrame.to_html``), read back as rows of cell texts."""
    parser = _Rows()
    parser.feed(table.to_html())
    return parser.rows


# ------------------------------------------------------------------------------ JupyterLab
@dataclass
class Lab:
    """A running JupyterLab on a working copy of the course."""

    url: str
    token: str
    folder: Path
    log: Path

    def page_url(self, path: str) -> str:
        return f"{self.url}/lab/tree/{path}?token={self.token}&reset"


def _lab_settings(folder: Path) -> Path:
    """A JupyterLab user-settings folder: no news prompt or update check, no autosave, every cell in the page.

    ``windowingMode: none`` keeps cells out of view in the page, so the test can see every output.
    """
    settings = {
        "@jupyterlab/apputils-extension/notification": {"fetchNews": "false", "checkForUpdates": False},
        "@jupyterlab/docmanager-extension/plugin": {"autosave": False},
        "@jupyterlab/notebook-extension/tracker": {"windowingMode": "none"},
    }
    for name, values in settings.items():
        path = folder / f"{name}.jupyterlab-settings"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(values), encoding="utf-8")
    return folder


def _stop(proc: subprocess.Popen) -> None:
    """Stop JupyterLab (its own process group): SIGTERM lets it shut its kernels down; SIGKILL if it hangs."""
    if proc.poll() is not None:
        return
    os.killpg(proc.pid, signal.SIGTERM)
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    """JupyterLab serving ``gangkit course --no-launch --dir <tmp>``'s working copy on 127.0.0.1."""
    if importlib.util.find_spec("jupyterlab") is None:
        pytest.skip("JupyterLab is not installed (pip install -c constraints.txt -e \".[lab]\")")
    base = tmp_path_factory.mktemp("lab")
    folder = base / "my-course"
    assert gangkit_main(["course", "--no-launch", "--dir", str(folder)]) == 0
    env = dict(os.environ,
               JUPYTERLAB_SETTINGS_DIR=str(_lab_settings(base / "lab-settings")),
               JUPYTERLAB_WORKSPACES_DIR=str(base / "lab-workspaces"),
               JUPYTER_CONFIG_DIR=str(base / "jupyter-config"),
               JUPYTER_DATA_DIR=str(base / "jupyter-data"),
               JUPYTER_RUNTIME_DIR=str(base / "jupyter-runtime"),
               IPYTHONDIR=str(base / "ipython"),
               GANGKIT_NO_PROGRESS="1")
    env.pop("MPLBACKEND", None)  # the kernel draws inline, as when the outputs were stored
    port, token = free_port(8890), secrets.token_hex(16)
    cmd = lab_command(folder, port, None, ["--ServerApp.ip=127.0.0.1"], open_browser=False)
    env = lab_environment(token, env)  # the token in the environment, as gangkit course passes it
    log = base / "jupyterlab.log"
    with log.open("w") as out:
        proc = subprocess.Popen(cmd, cwd=folder, env=env, stdin=subprocess.DEVNULL, stdout=out,
                                stderr=subprocess.STDOUT, start_new_session=True)
    try:
        url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 60
        while True:
            if proc.poll() is not None:
                pytest.fail(f"JupyterLab exited with status {proc.returncode}:\n{log.read_text()[-3000:]}")
            try:
                with urllib.request.urlopen(f"{url}/api/status?token={token}", timeout=2) as answer:
                    if answer.status == 200:
                        break
            except OSError:
                pass
            if time.monotonic() > deadline:
                pytest.fail(f"JupyterLab did not answer within 60 s:\n{log.read_text()[-3000:]}")
            time.sleep(0.3)
        yield Lab(url, token, folder, log)
    finally:
        _stop(proc)


@pytest.fixture(scope="module")
def browser():
    with chromium() as b:
        yield b


# ------------------------------------------------------------------------------ in the page
_OUTPUT_JS = """(box) => {
  const out = box.querySelector(':scope > .widget-output');
  const rows = [...out.querySelectorAll('table tr')].map(tr => [...tr.children].map(c => c.innerText.trim()));
  const img = out.querySelector('img');
  return {rows: rows, image: img ? img.src : null, text: out.innerText.trim().slice(0, 400)};
}"""


def _kernel_state(lab: Lab, notebook: str) -> str | None:
    """The execution state of the kernel the server runs for ``notebook`` (``idle``, ``busy``...), or None."""
    with urllib.request.urlopen(f"{lab.url}/api/sessions?token={lab.token}", timeout=5) as answer:
        sessions = json.load(answer)
    for session in sessions:
        if session.get("path") == notebook and session.get("kernel"):
            return session["kernel"].get("execution_state")
    return None


def _open_and_run_all(page, lab: Lab, notebook: str) -> None:
    """Open ``notebook`` in JupyterLab, accept any dialog, wait until its kernel is idle, Run > Run All Cells.

    JupyterLab may ask which kernel to start (a "Select Kernel" dialog, when the page asks before
    the server has listed its kernels): the dialog's default button is the notebook's own kernel.
    """
    page.goto(lab.page_url(notebook), timeout=STEP_MS)
    page.wait_for_selector(".jp-NotebookPanel .jp-Cell", state="attached", timeout=STEP_MS)
    dialog = page.locator(".jp-Dialog")
    deadline = time.monotonic() + STEP_MS / 1000
    while _kernel_state(lab, notebook) != "idle":
        if dialog.count():
            page.click(".jp-Dialog .jp-mod-accept")
        if time.monotonic() > deadline:
            raise AssertionError(f"no idle kernel for {notebook} after {STEP_MS / 1000:g} s; "
                                 f"the server's log is {lab.log}")
        time.sleep(0.25)
    page.wait_for_selector(".jp-Notebook-ExecutionIndicator[data-status='idle']", timeout=STEP_MS)
    if dialog.count():
        page.click(".jp-Dialog .jp-mod-accept")
    page.click("li.lm-MenuBar-item:has-text('Run')")
    page.click(".lm-Menu-item:has-text('Run All Cells')")


def _move(page, control_box, widget) -> None:
    """Move ``widget``'s control in the page one notch, as a person would, and the same widget here too."""
    import ipywidgets as W

    if isinstance(widget, (W.IntSlider, W.FloatSlider)):
        handle = control_box.query_selector(".noUi-handle")
        handle.focus()
        page.keyboard.press("ArrowRight")  # one step, as the slider's keyboard handling moves it
        widget.value = min(widget.value + widget.step, widget.max)
        page.wait_for_function("([h, v]) => Math.abs(parseFloat(h.getAttribute('aria-valuenow')) - v) < 1e-9",
                               arg=[handle, float(widget.value)], timeout=STEP_MS)
    elif isinstance(widget, W.Dropdown):
        index = (widget.index + 1) % len(widget.options)
        control_box.query_selector("select").select_option(index=index)
        widget.index = index
    else:  # pragma: no cover - a new kind of control needs its own gesture here
        raise AssertionError(f"no gesture for a {type(widget).__name__} in this test")


LESSONS = [
    case("lesson 01: a slider of the deadlock explorer",
         "01_pod_level_deadlock.ipynb", "lesson01", "deadlock_explorer", "nodes"),
    # Lesson 07's decision explorer has a dropdown too, but its lesson runs for some 20 s before it.
    case("lesson 05: the stack dropdown of the diagnosis explorer",
         "05_layered_stack.ipynb", "lesson05", "diagnosis_explorer", "stack"),
]


@pytest.mark.parametrize("notebook, module, factory, control", LESSONS)
def test_explorer_answers_a_control_in_jupyterlab(lab, browser, notebook, module, factory, control):
    cells = json.loads((ROOT / "course" / notebook).read_text(encoding="utf-8"))["cells"]
    call = f"{module}.{factory}()"
    assert any(c["cell_type"] == "code" and "".join(c["source"]).strip() == call for c in cells), (
        f"course/{notebook} has no cell that is just {call}")
    # The same explorer in this process: what the page must show before and after the change.
    explorer = getattr(importlib.import_module(f"gangkit.lessons.{module}"), factory)()
    widget = explorer.controls[control]
    position = list(explorer.controls).index(control) + 1  # the explorer's children: heading, controls..., output
    shown_first = table_rows(explorer.table)

    started = time.monotonic()
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    page.set_default_timeout(STEP_MS)
    shot = ARTIFACTS / "browser" / f"{Path(notebook).stem}.png"
    shot.parent.mkdir(parents=True, exist_ok=True)
    try:
        _open_and_run_all(page, lab, f"course/{notebook}")
        box = page.locator(".widget-vbox:has(> .widget-output img)").filter(has_text=explorer.title_text).first
        box.wait_for(state="attached", timeout=STEP_MS)
        box.scroll_into_view_if_needed()
        # Run All has reached the explorer; let the cells after it finish too.
        page.wait_for_function("() => ![...document.querySelectorAll('.jp-Notebook .jp-InputPrompt')]"
                               ".some(p => p.textContent.includes('*'))", timeout=STEP_MS)
        errors = page.locator('.jp-Notebook [data-mime-type="application/vnd.jupyter.error"]')
        assert errors.count() == 0, f"a cell of {notebook} failed in JupyterLab: {errors.first.inner_text()[:500]}"
        before = box.evaluate(_OUTPUT_JS)
        assert before["rows"] == shown_first, f"the explorer's first table differs: {before['text']}"

        control_box = box.element_handle().evaluate_handle("(b, i) => b.children[i]", position).as_element()
        _move(page, control_box, widget)
        page.wait_for_function("([b, old]) => { const i = b.querySelector(':scope > .widget-output img');"
                               " return i !== null && i.src !== old; }",
                               arg=[box.element_handle(), before["image"]], timeout=STEP_MS)
        after = box.evaluate(_OUTPUT_JS)
        box.scroll_into_view_if_needed()
        page.screenshot(path=str(shot))
        assert after["rows"] == table_rows(explorer.table), (
            f"after moving {control!r} to {widget.value!r} the page shows: {after['text']}")
        assert after["rows"] != before["rows"], f"moving {control!r} did not change the table"
        assert after["image"].startswith("data:image/png;base64,")
    except Exception:
        if not page.is_closed():
            page.screenshot(path=str(shot))
        raise
    finally:
        page.close()
    assert time.monotonic() - started < 60, "one lesson took a minute or more in the browser"
