"""The course's diagrams are drawn by ``tools/make_diagrams.py`` and committed as SVG.

A committed diagram must be exactly what the tool draws (so one edited by hand, or left stale
after a rename, fails here), readable by a screen reader (a ``<title>`` and a ``<desc>``), 900 px
wide, with text of 12 px or more, in colours of the Okabe-Ito palette (or their tints and
shades, or greys). The first diagram must name gangkit's wait buckets as the library and lesson
05 do; the second must list the framework's extension points in the order of the Kubernetes
documentation.
"""

from __future__ import annotations

import re
import runpy
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET

import nbformat
import pytest

from gangkit.cli.course import course_files
from gangkit.engine.waits import NODE_BUCKETS
from gangkit.kueue.layer import KueueLayer
from gangkit.kueue.provisioning import ProvisioningRequestCheck
from gangkit.placement.kube_scheduler import KubeScheduler

from conftest import case
from paths import REPO

TOOL = REPO / "tools" / "make_diagrams.py"
FIGURES = REPO / "course" / "figures"
DIAGRAMS = ["stack_path.svg", "scheduling_framework.svg"]
NS = {"svg": "http://www.w3.org/2000/svg"}

#: The palette as published (Okabe and Ito, "Color Universal Design").
OKABE_ITO = ["#000000", "#E69F00", "#56B4E9", "#009E73", "#F0E442", "#0072B2", "#D55E00", "#CC79A7"]
#: The extension points of the Scheduling Framework concept page, in its order.
EXTENSION_POINTS = ["PreEnqueue", "QueueSort", "PreFilter", "Filter", "PostFilter", "PreScore", "Score",
                    "NormalizeScore", "Reserve", "Permit", "PreBind", "Bind", "PostBind"]


@pytest.fixture(scope="module")
def tool():
    return runpy.run_path(str(TOOL), run_name="make_diagrams")


def _svg(name: str) -> ET.Element:
    return ET.parse(FIGURES / name).getroot()


def _texts(root: ET.Element, cls: str | None = None) -> list[str]:
    return [t.text or "" for t in root.iter(f"{{{NS['svg']}}}text") if cls is None or t.get("class") == cls]


def test_committed_diagrams_are_what_the_tool_draws():
    out = subprocess.run([sys.executable, str(TOOL), "--check"], cwd=REPO, capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr


@pytest.mark.parametrize("edit, expected", [
    case("a diagram edited by hand", lambda p: p.write_text(p.read_text().replace("Running", "Runing")),
         "differs from what tools/make_diagrams.py draws"),
    case("a diagram missing", lambda p: p.unlink(), "is missing"),
])
def test_check_names_the_file_that_differs(tool, tmp_path, edit, expected):
    for name in DIAGRAMS:
        shutil.copy(FIGURES / name, tmp_path / name)
    assert tool["check"](tmp_path) == []
    edit(tmp_path / "stack_path.svg")
    problems = tool["check"](tmp_path)
    assert len(problems) == 1 and "stack_path.svg" in problems[0] and expected in problems[0]


def test_drawing_twice_gives_the_same_bytes(tool):
    assert tool["render"]() == tool["render"]()


@pytest.mark.parametrize("name", DIAGRAMS)
def test_diagram_is_well_formed_and_titled_for_screen_readers(name):
    root = _svg(name)
    assert root.tag == f"{{{NS['svg']}}}svg" and root.get("role") == "img"
    title, desc = root.find("svg:title", NS), root.find("svg:desc", NS)
    assert title is not None and len(title.text or "") > 20
    assert desc is not None and len(desc.text or "") > 200
    assert root.get("aria-labelledby") == f"{title.get('id')} {desc.get('id')}"
    x, y, w, h = (float(v) for v in root.get("viewBox").split())
    assert (x, y, w) == (0, 0, 900) and 300 < h < 1400
    assert float(root.get("width")) == w and float(root.get("height")) == h


@pytest.mark.parametrize("name", DIAGRAMS)
def test_text_is_at_least_12px(name):
    root = _svg(name)
    sizes = [float(t.get("font-size", root.get("font-size"))) for t in root.iter(f"{{{NS['svg']}}}text")]
    assert sizes and min(sizes) >= 12


def _rgb(hex_colour: str) -> tuple[int, ...]:
    return tuple(int(hex_colour[i:i + 2], 16) for i in (1, 3, 5))


def _allowed(colour: str) -> bool:
    """A grey, or a palette colour mixed with white (a tint) or black (a shade), to the nearest unit."""
    rgb = _rgb(colour)
    if len(set(rgb)) == 1:
        return True
    for base in map(_rgb, OKABE_ITO):
        for end in ((255, 255, 255), (0, 0, 0)):
            for step in range(101):
                s = step / 100
                if all(abs(round(b * s + e * (1 - s)) - v) <= 1 for b, e, v in zip(base, end, rgb)):
                    return True
    return False


@pytest.mark.parametrize("name", DIAGRAMS)
def test_colours_come_from_the_okabe_ito_palette(name):
    text = (FIGURES / name).read_text()
    colours = set(re.findall(r'(?:fill|stroke)="(#[0-9A-Fa-f]{6})"', text))
    assert colours, "no colours found"
    assert [c for c in sorted(colours) if not _allowed(c)] == []


@pytest.mark.parametrize("colour, allowed", [
    case("a palette colour", "#0072B2", True),
    case("a tint of one", "#D9EAF3", True),
    case("a grey", "#555555", True),
    case("plain red", "#FF0000", False),
    case("plain green", "#00FF00", False),
])
def test_the_colour_rule_can_refuse(colour, allowed):
    assert _allowed(colour) is allowed


def test_stack_path_names_the_wait_buckets_as_the_library_does():
    buckets = [KueueLayer.name, ProvisioningRequestCheck.name, KubeScheduler.name, *NODE_BUCKETS]
    assert _texts(_svg("stack_path.svg"), "bucket") == buckets


def test_lesson_05_speaks_of_the_same_buckets():
    nb = nbformat.read(REPO / "course" / "05_layered_stack.ipynb", as_version=4)
    prose = "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")
    missing = [b for b in _texts(_svg("stack_path.svg"), "bucket") if f"`{b}`" not in prose]
    assert missing == []


def test_framework_lists_the_extension_points_in_the_documented_order():
    points = _texts(_svg("scheduling_framework.svg"), "point")
    assert [p for p in points if p != "WaitOnPermit"] == EXTENSION_POINTS
    assert points.index("WaitOnPermit") == points.index("Permit") + 1


def test_gangkit_course_copies_the_figures():
    copied = {p.as_posix() for p in course_files()}
    assert {f"course/figures/{name}" for name in DIAGRAMS} <= copied


@pytest.mark.parametrize("labels, problem", [
    case("labels apart", [(10, 20, "one"), (10, 60, "two")], None),
    case("labels overlap", [(10, 20, "one label"), (30, 22, "another")], "overlaps"),
    case("a label leaves its box", [(10, 20, "a long label in a small box", (0, 0, 60, 30))], "leaves its box"),
    case("a label leaves the picture", [(880, 20, "past the right edge")], "leaves the picture"),
])
def test_layout_check(tool, labels, problem):
    c = tool["Canvas"]("test", "a test", "a picture for the test", height=100)
    for x, y, s, *inside in labels:
        c.text(x, y, s, inside=tool["Box"](*inside[0]) if inside else None)
    if problem is None:
        assert c.svg().startswith("<svg")
    else:
        with pytest.raises(tool["LayoutError"], match=problem):
            c.svg()
