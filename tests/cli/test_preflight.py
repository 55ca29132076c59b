"""``gangkit course --check``: each pre-flight step says ok, or what is wrong and the command that fixes it."""

from __future__ import annotations

import importlib.metadata
import subprocess
import sys

import pytest

from gangkit.cli import preflight

from paths import REPO

ROOT = REPO


@pytest.mark.parametrize("version, ok", [((3, 11, 0), True), ((3, 13, 1), True), ((3, 10, 14), False)],
                         ids=["3.11 passes", "3.13 passes", "3.10 fails"])
def test_the_python_version(version, ok):
    step = preflight.python_version(version)
    assert step.ok is ok and (ok or "3.11 or newer" in step.fix)


@pytest.mark.parametrize("missing, words", [
    (set(), []),
    ({"jupyterlab_widgets"}, ["jupyterlab_widgets", "draw nothing", "constraints.txt"]),
    ({"jupyterlab", "ipykernel"}, ["jupyterlab (JupyterLab itself)", "ipykernel", ".[lab]"]),
], ids=["everything installed", "the widget front end missing", "JupyterLab and its kernel missing"])
def test_the_packages_step_names_what_is_missing_and_the_fix(missing, words):
    step = preflight.packages(lambda name: None if name in missing else object())
    assert step.ok is (not missing)
    text = step.detail + " " + step.fix
    assert all(w in text for w in words), text


def _version(installed: dict[str, str]):
    def version(name):
        if name not in installed:
            raise importlib.metadata.PackageNotFoundError(name)
        return installed[name]
    return version


@pytest.mark.parametrize("installed, note", [
    ({"pandas": "2.3.1"}, ""),
    ({"pandas": "2.2.0"}, "pandas 2.2.0 (pinned 2.3.1)"),
    ({}, ""),
], ids=["as pinned", "another version is a note, not a failure", "not installed: left to the packages step"])
def test_pinned_versions_are_compared_without_failing(tmp_path, installed, note):
    (tmp_path / "constraints.txt").write_text("# pins\npandas==2.3.1\nsimpy==4.1.1\n")
    step = preflight.pinned_versions(tmp_path / "constraints.txt", _version(installed))
    assert step.ok and (note in step.detail if note else step.detail == "as in constraints.txt")


def test_a_clone_without_lessons_is_told_to_install_from_the_repository(tmp_path):
    step = preflight.course_beside_package(tmp_path)
    assert not step.ok and "clone the repository" in step.fix


def test_the_report_ends_with_what_to_do():
    steps = [preflight.Step("a", True, "fine"), preflight.Step("b", False, "broken", "do this")]
    text = preflight.report(steps)
    assert "FAILED b: broken" in text and "fix: do this" in text and text.endswith("run `gangkit course --check` again.")
    assert preflight.report(steps[:1]).endswith("Ready for the course: run `gangkit course`.")


def test_the_command_passes_on_this_checkout_with_a_kernel():
    """The whole check as a learner runs it: every step, a real kernel included, and exit status 0."""
    proc = subprocess.run([sys.executable, "-m", "gangkit.cli.main", "course", "--check"], cwd=ROOT,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "ok     a notebook kernel" in proc.stdout and proc.stdout.rstrip().endswith("run `gangkit course`.")
