"""The course website (``python tools/build_site.py``): it builds cleanly, has every page, and reads right in a browser.

The build is run here into a temporary folder, as CI runs it. Then:

- every lesson, exercise notebook, reference page, the instructor guide and the glossary has its
  page, and no link or image of the site points to a missing file or anchor;
- the build fails, naming the problem, on a link to a missing page, a missing figure, a broken
  raw HTML link or a missing anchor (small fake course trees, one problem each);
- in headless Chromium (the site served on 127.0.0.1): the home page's navigation lists every
  lesson in order, and every lesson page shows each figure and each stored image (loaded, width
  above zero) and each stored table; the links a learner follows open the page they name.

Screenshots go to ``test-artifacts/site/`` (git-ignored). The browser tests skip, saying why,
only when no browser can be had (see ``test_browser_lessons.chromium``).
"""

from __future__ import annotations

import functools
import html
import http.server
import importlib.util
import json
import re
import shutil
import sys
import threading
from pathlib import Path

import nbformat
import pytest
from test_browser_lessons import ARTIFACTS, STEP_MS, chromium

from gangkit.cli.course import course_files

from conftest import case
from paths import REPO

LESSONS = sorted(p.name for p in (REPO / "course").glob("*.ipynb"))
PAGES = [p for p in course_files(REPO) if p.suffix in (".ipynb", ".md")]


def _load_build_site():
    spec = importlib.util.spec_from_file_location("build_site", REPO / "tools" / "build_site.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["build_site"] = module
    spec.loader.exec_module(module)
    return module


build_site = _load_build_site()


def _need_site_packages():
    missing = [name for name in build_site.SITE_PACKAGES if importlib.util.find_spec(name) is None]
    if missing:
        pytest.skip(f"the website's packages are not installed ({', '.join(missing)}): "
                    "pip install -c constraints.txt -e \".[site]\"")


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """The course website, built from this checkout into a temporary folder."""
    _need_site_packages()
    return build_site.build(tmp_path_factory.mktemp("site") / "_site", quiet=True)


def _html_page(site_dir: Path, source: Path) -> Path:
    return site_dir / source.with_suffix(".html")


def _title(source: Path) -> str:
    """The first level-1 heading of a page's source (a notebook's first markdown cell, or a Markdown file)."""
    if source.suffix == ".ipynb":
        nb = json.loads(source.read_text(encoding="utf-8"))
        text = "\n".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "markdown")
    else:
        text = source.read_text(encoding="utf-8")
    heading = next(line[2:].strip() for line in text.splitlines() if line.startswith("# "))
    return re.sub(r"[`*]", "", heading)  # as the page shows it: code and emphasis marks are markup


def _plain(text: str) -> str:
    """``text`` with the typographic apostrophes Sphinx's smart quotes put in made straight again."""
    return text.replace("\u2019", "'").replace("\u2018", "'")


# ------------------------------------------------------------------------------ the build
def test_the_site_builds_without_a_warning_or_a_broken_link(site):
    assert site.ok, "\n".join([*site.warnings, *site.broken])
    assert (site.out / "index.html").is_file()


@pytest.mark.parametrize("source", PAGES, ids=[p.as_posix() for p in PAGES])
def test_every_course_page_is_on_the_site(site, source):
    page = _html_page(site.out, source)
    assert page.is_file(), f"{source.as_posix()} has no page {page.relative_to(site.out)}"
    title = html.unescape(re.search(r"<title>(.*?)</title>", page.read_text(encoding="utf-8"), re.S).group(1))
    assert _plain(title).startswith(_title(REPO / source) + " — "), title


@pytest.mark.parametrize("source", [p for p in PAGES if p.parts[0] == "course"],
                         ids=[p.name for p in PAGES if p.parts[0] == "course"])
def test_every_figure_of_a_lesson_is_in_the_site(site, source):
    nb = json.loads((REPO / source).read_text(encoding="utf-8"))
    text = "\n".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "markdown")
    page = _html_page(site.out, source).read_text(encoding="utf-8")
    for figure in re.findall(r"!\[[^\]]*\]\(([^)\s]+)\)", text):
        name = Path(figure).name
        assert f'src="../_images/{name}"' in page, f"{source.name}: figure {figure} is not on its page"
        assert (site.out / "_images" / name).read_bytes() == (REPO / source.parent / figure).read_bytes()


EXERCISES = [p for p in PAGES if p.parts[0] == "exercises" and p.suffix == ".ipynb"]


@pytest.mark.parametrize("source", EXERCISES, ids=[p.name for p in EXERCISES])
def test_every_exercise_page_downloads_its_notebook_as_the_learner_gets_it(site, source):
    page = _html_page(site.out, source).read_text(encoding="utf-8")
    links = re.findall(r'href="([^"]*_downloads/[^"]*)"', page)
    assert [link for link in links if link.endswith("/" + source.name)], "no download link to the notebook"
    served = (site.out / source.parent / links[0]).resolve()
    assert served.read_bytes() == (REPO / source).read_bytes(), "the download differs from the repository's notebook"


def test_the_home_page_table_states_each_lessons_minutes_and_lesson_00s_totals():
    """The table is made from the lessons' first cells; its totals are the ones lesson 00 states."""
    spec = importlib.util.spec_from_file_location("lesson_minutes", REPO / "tools" / "lesson_minutes.py")
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    table = build_site.lesson_table(REPO)
    rows = [line for line in table.splitlines() if line.startswith("| [")]
    assert len(rows) == len(LESSONS) and "not stated" not in table
    for row, stated in zip(rows, tool.rows(REPO)):
        assert f"| {stated['core_stated']} min | {stated['further_stated']} min |" in row
    core, further = tool.stated_totals(REPO)
    assert f"take {core} minutes" in table and f"add {further} minutes" in table


# ------------------------------------------------------------------------------ the link check
def _write_site(folder: Path, pages: dict[str, str]) -> Path:
    for name, body in pages.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(f"<html><body>{body}</body></html>", encoding="utf-8")
    return folder


@pytest.mark.parametrize("pages, expected", [
    case("relative links, anchors and outside addresses pass",
         {"index.html": '<a href="sub/page.html#intro">p</a><a href="https://kueue.sigs.k8s.io">k</a>'
                        '<a href="#top">top</a><img src="img/a.svg"><a id="top"></a>',
          "sub/page.html": '<h1 id="intro">x</h1><a href="../index.html">home</a><a href="..">up</a>',
          "img/a.svg": ""}, []),
    case("a link to a missing page",
         {"index.html": '<a href="course/02_missing.html">x</a>'}, ["course/02_missing.html (no such file"]),
    case("a missing image", {"index.html": '<img src="_images/missing.svg">'}, ["_images/missing.svg (no such file"]),
    case("an anchor that is not on the page",
         {"index.html": '<a href="glossary.html#gang">x</a>', "glossary.html": '<h1 id="glossary">g</h1>'},
         ["glossary.html#gang (no id 'gang'"]),
    case("a link out of the site", {"index.html": '<a href="../../README.md">x</a>'}, ["(points outside the site)"]),
    case("a notebook link that Sphinx left as it was", {"index.html": '<a href="01_pod_level_deadlock.ipynb">x</a>'},
         ["01_pod_level_deadlock.ipynb (no such file"]),
    case("the theme's template fragments in _static/ are not pages",
         {"index.html": "ok", "_static/macros.html": "<link href=\"{{ pathto('x.css', 1) }}\">"}, []),
])
def test_broken_links_names_each_problem(tmp_path, pages, expected):
    problems = build_site.broken_links(_write_site(tmp_path, pages))
    assert len(problems) == len(expected), problems
    for problem, want in zip(problems, expected):
        assert want in problem


# ------------------------------------------------------------------------------ the build fails
def _fake_checkout(root: Path, lesson_text: str) -> Path:
    """A course tree with one lesson (whose text is ``lesson_text``), one exercise, a figure and the docs pages."""
    def notebook(path: Path, text: str) -> None:
        nb = nbformat.v4.new_notebook()
        nb.cells.append(nbformat.v4.new_markdown_cell(text))
        path.parent.mkdir(parents=True, exist_ok=True)
        nbformat.write(nb, path)

    notebook(root / "course" / "00_a.ipynb", f"# 00 · A\n\n{lesson_text}\n")
    notebook(root / "course" / "01_b.ipynb", "# 01 · B\n\nText.\n")
    notebook(root / "exercises" / "00_a.ipynb", "# Exercises 00\n\n[the lesson](../course/00_a.ipynb)\n")
    (root / "course" / "figures").mkdir()
    (root / "course" / "figures" / "f.svg").write_text(
        '<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><rect width="10" height="10"/></svg>')
    (root / "docs" / "reference").mkdir(parents=True)
    (root / "docs" / "glossary.md").write_text("# Glossary\n\n## Gang\n\nAll or nothing.\n")
    (root / "docs" / "instructor-guide.md").write_text("# Instructor guide\n\nSee the [glossary](glossary.md).\n")
    for page in sorted((REPO / "docs" / "reference").glob("*.md")):  # the home page's toctrees name each one
        (root / "docs" / "reference" / page.name).write_text(f"# {page.stem}\n\nText.\n")
    shutil.copytree(REPO / "website", root / "website")
    return root


#: One problem per paragraph of a fake lesson, and the words its report must contain.
BROKEN = [
    case("a link to a missing lesson", "[next](02_missing.ipynb)", "02_missing"),
    case("a link to a missing reference page", "[ref](../docs/reference/missing.md)", "reference/missing"),
    case("a missing figure", "![a figure](figures/missing.svg)", "missing.svg"),
    case("a raw HTML link to a missing page", '<a href="../docs/absent.html">x</a>', "absent.html"),
    case("a link to a missing anchor", "[gang](../docs/glossary.md#no-such-term)", "no-such-term"),
]


@pytest.fixture(scope="module")
def fake_builds(tmp_path_factory):
    """Two builds of a fake course: one whose links all resolve, one with every problem of :data:`BROKEN`.

    Sphinx runs with ``--keep-going``, so one build reports every problem of the broken lesson.
    """
    _need_site_packages()
    base = tmp_path_factory.mktemp("fake-sites")
    good = ("[next](01_b.ipynb), [glossary](../docs/glossary.md#gang), [ref](../docs/reference/simulator.md), "
            "[exercise](../exercises/00_a.ipynb)\n\n![a figure](figures/f.svg)")
    bad = "\n\n".join(row.values[0] for row in BROKEN)
    return {name: build_site.build(base / f"{name}-out", root=_fake_checkout(base / name, text), quiet=True)
            for name, text in (("good", good), ("bad", bad))}


@pytest.mark.slow
def test_a_fake_course_whose_links_resolve_builds_cleanly(fake_builds):
    report = fake_builds["good"]
    assert report.ok, "\n".join([*report.warnings, *report.broken])
    assert (report.out / "course" / "00_a.html").is_file()
    assert (report.out / "_images" / "f.svg").is_file()


@pytest.mark.slow
@pytest.mark.parametrize("markup, expected", BROKEN)
def test_the_build_fails_naming_a_broken_link_or_figure(fake_builds, markup, expected):
    report = fake_builds["bad"]
    problems = [*report.warnings, *report.broken]
    assert not report.ok
    assert any(expected in p for p in problems), "\n".join(problems) or "no problem reported"


def test_the_build_refuses_to_replace_a_folder_that_is_not_a_site(tmp_path):
    (tmp_path / "notes.txt").write_text("mine")
    report = build_site.build(tmp_path, quiet=True)
    assert not report.ok and "refusing to replace it" in report.warnings[0]
    assert (tmp_path / "notes.txt").read_text() == "mine"


# ------------------------------------------------------------------------------ in a browser
class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format, *args):  # noqa: A002 - the base class's name
        pass


@pytest.fixture(scope="module")
def served(site):
    """The built site over HTTP on 127.0.0.1 (a free port), as a static host serves it."""
    assert site.ok, "\n".join([*site.warnings, *site.broken])
    handler = functools.partial(_QuietHandler, directory=str(site.out))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


@pytest.fixture(scope="module")
def tab(served):
    with chromium() as browser:
        p = browser.new_page(viewport={"width": 1300, "height": 1000})
        p.set_default_timeout(STEP_MS)
        yield p
        p.close()


def _shot(page, name: str) -> None:
    path = ARTIFACTS / "site" / f"{name}.png"
    path.parent.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(path))


@pytest.mark.browser
def test_the_home_page_lists_every_lesson_in_order(served, tab):
    tab.goto(f"{served}/index.html", wait_until="load")
    _shot(tab, "index")
    captions = tab.locator("nav.bd-docs-nav p.caption").all_inner_texts()
    assert [c.strip() for c in captions] == ["Lessons", "Exercises", "Reference: the simulator", "Reference: the layers",
                                             "Reference: manifests and commands", "For instructors"]
    links = tab.eval_on_selector_all("nav.bd-docs-nav a.reference.internal", "as => as.map(a => a.href)")
    lessons = [link.rsplit("/", 1)[-1] for link in links if "/course/" in link]
    assert lessons == [Path(name).with_suffix(".html").name for name in LESSONS]
    for source in PAGES:
        assert any(link.endswith("/" + source.with_suffix(".html").as_posix()) for link in links), (
            f"{source.as_posix()} is not in the navigation")


def _expected_outputs(notebook: Path) -> tuple[int, int]:
    """How many stored images (PNG, shown as such) and HTML tables the lesson's outputs hold."""
    images = tables = 0
    for cell in json.loads(notebook.read_text(encoding="utf-8"))["cells"]:
        for output in cell.get("outputs", []):
            data = output.get("data", {})
            if "text/html" in data:
                tables += "".join(data["text/html"]).count("<table")
            elif "image/png" in data:
                images += 1
    return images, tables


@pytest.mark.browser
@pytest.mark.parametrize("lesson", LESSONS)
def test_a_lesson_page_shows_its_figures_images_and_tables(served, tab, lesson):
    source = REPO / "course" / lesson
    images, tables = _expected_outputs(source)
    tab.goto(f"{served}/course/{Path(lesson).with_suffix('.html').name}", wait_until="load")
    if tab.locator("article img").count():
        tab.locator("article img").first.scroll_into_view_if_needed()  # the screenshot shows a figure
    _shot(tab, Path(lesson).stem)
    shown = tab.eval_on_selector_all("img", "is => is.map(i => [i.getAttribute('src'), i.naturalWidth])")
    assert [src for src, width in shown if width <= 0] == [], "images that did not load"
    assert tab.locator(".cell_output img").count() == images
    assert tab.locator(".cell_output table").count() == tables
    nb = json.loads(source.read_text(encoding="utf-8"))
    text = "\n".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "markdown")
    for figure in re.findall(r"!\[[^\]]*\]\(([^)\s]+)\)", text):
        assert any(src.endswith("/" + Path(figure).name) for src, _ in shown), f"figure {figure} is not shown"


FOLLOWED = [
    case("lesson 00 to lesson 01", "00_welcome.ipynb", "01_pod_level_deadlock.ipynb"),
    case("lesson 01 to the glossary", "01_pod_level_deadlock.ipynb", "../docs/glossary.md"),
    case("lesson 01 to its exercises", "01_pod_level_deadlock.ipynb", "../exercises/01_pod_level_deadlock.ipynb"),
    case("lesson 03 to the Kueue reference", "03_queues_and_quota.ipynb", "../docs/reference/kueue.md"),
]


@pytest.mark.browser
@pytest.mark.parametrize("lesson, target", FOLLOWED)
def test_a_link_in_a_lesson_opens_the_page_it_names(served, tab, lesson, target):
    target_source = (REPO / "course" / target).resolve()
    assert target_source.is_file() and target in (REPO / "course" / lesson).read_text(encoding="utf-8")
    tab.goto(f"{served}/course/{Path(lesson).with_suffix('.html').name}", wait_until="load")
    href = Path(target).with_suffix(".html").as_posix()
    tab.locator(f'article a[href="{href}"]').first.click()
    tab.wait_for_load_state("load")
    assert tab.url.endswith("/" + target_source.relative_to(REPO).with_suffix(".html").as_posix())
    assert _plain(tab.locator("article h1").first.inner_text().replace("#", "").strip()) == _title(target_source)
