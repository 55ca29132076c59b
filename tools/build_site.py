"""Build the course website: the lessons as stored, the exercises, the reference pages, the guide and the glossary.

``python tools/build_site.py`` writes a static HTML site into ``_site/`` (git ignores it; open
``_site/index.html``). It never runs a notebook: each lesson is shown with the outputs it was
stored with, the ones nbval compares in CI.

How it is laid out. The lessons link to each other and to the other pages as files, exactly as
they do in JupyterLab: ``02_gang_admission.ipynb``, ``../exercises/01_pod_level_deadlock.ipynb``,
``../docs/glossary.md``, ``../docs/reference/kueue.md``, ``figures/stack_path.svg``. So the build
copies the course tree, as ``gangkit course`` copies it (``course/``, ``exercises/``, ``docs/``,
see :func:`gangkit.cli.course.course_files`), into a staging folder with the same relative
paths, puts ``website/`` (the Sphinx configuration and the home page) at its top, and runs Sphinx
(myst-nb reads the notebooks, ``nb_execution_mode = "off"``) on it. No link is rewritten: a
relative path that works in the repository names the same page on the site.

It fails (exit status 1) when

- Sphinx warns about anything (``-W --keep-going``): a link to a page that does not exist, a
  missing image, a page left out of the navigation, bad markup;
- a link or image of the built HTML points to a file, or an anchor, that is not in the site
  (:func:`broken_links`); this catches what Sphinx lets through, such as raw HTML links.

Options: ``--out DIR`` (default ``_site``), ``--keep-staging`` (leave the staged sources and
Sphinx's doctrees in ``build/site/`` to look at).
"""

from __future__ import annotations

import argparse
import importlib.util
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

import nbformat

from gangkit.cli.course import course_files

ROOT = Path(__file__).resolve().parents[1]
#: The Sphinx configuration and the home page, copied to the top of the staged tree.
WEBSITE = ROOT / "website"
#: Where the site goes unless ``--out`` says otherwise (git-ignored).
DEFAULT_OUT = ROOT / "_site"
#: Where ``--keep-staging`` leaves the staged sources and the doctrees (``build/`` is git-ignored).
STAGING = ROOT / "build" / "site"

#: The modules the build needs (the ``site`` extra of pyproject.toml).
SITE_PACKAGES = ("sphinx", "myst_nb", "sphinx_book_theme")

# Folders of the built site that hold the theme's files and the page sources, not pages: the
# theme's template fragments in _static/ are HTML files but never served as pages.
_ASSET_FOLDERS = {"_static", "_sources", "_images"}

# Addresses that are not files of the site.
_EXTERNAL_SCHEMES = {"http", "https", "mailto", "data", "javascript", "ftp", "tel"}


@dataclass
class BuildReport:
    """What one build did: where the site is, how long it took, what went wrong (empty when it passed)."""

    out: Path
    seconds: float = 0.0
    pages: int = 0
    sphinx_status: int = 0
    warnings: list[str] = field(default_factory=list)
    broken: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.sphinx_status == 0 and not self.warnings and not self.broken


#: Where the staged tree gets the pages made at build time (excluded from Sphinx's documents in conf.py).
GENERATED = Path("_generated")


def lesson_table(root: Path = ROOT) -> str:
    """The home page's table of lessons with the minutes each states, and the course's totals.

    Made from the lessons' first cells at each build (``tools/lesson_minutes.py`` reads the same
    line), so the home page can never disagree with the lessons.
    """
    spec = importlib.util.spec_from_file_location("lesson_minutes", ROOT / "tools" / "lesson_minutes.py")
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    lines = ["| lesson | core path | going further | exercises |", "|---|---|---|---|"]
    core = further = 0
    for path in sorted((root / "course").glob("[0-9][0-9]_*.ipynb")):
        first = nbformat.read(path, as_version=4).cells[0].source
        title = first.splitlines()[0].lstrip("# ").strip()
        m = tool.STATED.search(first)
        stated = [int(v) for v in m.groups()] if m else [None, None, None]
        shown = [f"{m} min" if m is not None else "not stated" for m in stated]
        exercises = root / "exercises" / path.name
        lines.append(f"| [{title}](course/{path.name}) | {shown[0]} | {shown[1]} | "
                     + (f"[exercises, {shown[2]}](exercises/{path.name}) |" if exercises.is_file() else f"{shown[2]} |"))
        core += (stated[0] or 0) + (stated[2] or 0)
        further += stated[1] or 0
    lines += ["", f"The core paths with their exercises take {core} minutes (about {round(core / 60)} hours); "
              f"the going-further sections add {further} minutes."]
    return "\n".join(lines) + "\n"


def _with_download_link(source: Path, target: Path, original: Path) -> None:
    """Stage an exercise notebook with a line after its title that downloads it as the learner gets it.

    The page shows the staged copy; the link serves ``original``, an untouched copy (in ``_generated/``).
    """
    shutil.copy2(source, original)
    nb = nbformat.read(source, as_version=4)
    link = nbformat.v4.new_markdown_cell(
        f"{{download}}`Download this notebook <../{GENERATED.as_posix()}/download/{source.name}>` to work on it in "
        "JupyterLab (or open it in your course copy, made by `gangkit course`).")
    link.id = "site-download-link"
    nb.cells.insert(1, link)
    nbformat.write(nb, target)


def stage_sources(target: Path, root: Path = ROOT) -> list[Path]:
    """Copy the course tree and ``website/`` into ``target``, keeping the repository's relative paths.

    Returns the copied files, relative to ``target``. The course files are those ``gangkit
    course`` gives a learner (so the site shows what a learner gets, exercise notebooks with a
    download link under their title), plus the website's own and the home page's lesson table
    (:func:`lesson_table`, in ``_generated/``).
    """
    copied: list[Path] = []
    for rel in course_files(root):
        (target / rel).parent.mkdir(parents=True, exist_ok=True)
        if rel.parts[0] == "exercises" and rel.suffix == ".ipynb":
            original = target / GENERATED / "download" / rel.name
            original.parent.mkdir(parents=True, exist_ok=True)
            _with_download_link(root / rel, target / rel, original)
        else:
            shutil.copy2(root / rel, target / rel)
        copied.append(rel)
    table = GENERATED / "lessons.md"
    (target / table).parent.mkdir(parents=True, exist_ok=True)
    (target / table).write_text(lesson_table(root), encoding="utf-8")
    copied.append(table)
    website = root / WEBSITE.relative_to(ROOT)
    for path in sorted(website.rglob("*")):
        if path.is_file() and "__pycache__" not in path.parts:
            rel = path.relative_to(website)
            (target / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(path, target / rel)
            copied.append(rel)
    return copied


class _Links(HTMLParser):
    """The ids a page defines, and the addresses its links, images and scripts point to."""

    _ATTRS = {"a": "href", "link": "href", "img": "src", "script": "src", "source": "src", "iframe": "src"}

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.ids: set[str] = set()
        self.refs: list[tuple[str, str]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = dict(attrs)
        for name in ("id", "name"):
            if values.get(name):
                self.ids.add(values[name])
        attr = self._ATTRS.get(tag)
        if attr and values.get(attr):
            self.refs.append((tag, values[attr]))


def broken_links(site: Path) -> list[str]:
    """Every link, image or script address in ``site``'s HTML that names a missing file or anchor.

    Pages are the HTML files outside ``_static/``, ``_sources/`` and ``_images/`` (the theme keeps
    template fragments in ``_static/``). Relative addresses are resolved against the page's
    folder; an address with a scheme
    (``https:``, ``mailto:``, ``data:``) is not checked. An anchor (``page.html#id``) must be an
    ``id`` or ``name`` on the target page. Each problem reads ``page: <tag> address (why)``.
    """
    site = site.resolve()
    pages: dict[Path, _Links] = {}
    for page in sorted(site.rglob("*.html")):
        parser = _Links()
        parser.feed(page.read_text(encoding="utf-8"))
        pages[page] = parser
    problems: list[str] = []
    for page, parser in pages.items():
        where = page.relative_to(site).as_posix()
        if where.split("/", 1)[0] in _ASSET_FOLDERS:
            continue
        for tag, ref in parser.refs:
            parts = urlsplit(ref)
            if parts.scheme in _EXTERNAL_SCHEMES or parts.netloc or ref.startswith("//"):
                continue
            if parts.scheme:
                problems.append(f"{where}: <{tag}> {ref} (an address of an unknown scheme)")
                continue
            target = (page.parent / unquote(parts.path)).resolve() if parts.path else page
            if target.is_dir():
                target = target / "index.html"
            if site not in target.parents and target != site:
                problems.append(f"{where}: <{tag}> {ref} (points outside the site)")
                continue
            if not target.is_file():
                problems.append(f"{where}: <{tag}> {ref} (no such file in the site)")
                continue
            fragment = unquote(parts.fragment)
            if fragment and target.suffix == ".html" and fragment not in pages[target].ids:
                problems.append(f"{where}: <{tag}> {ref} (no id {fragment!r} on that page)")
    return problems


def build(out: Path = DEFAULT_OUT, *, root: Path = ROOT, keep_staging: bool = False, quiet: bool = False) -> BuildReport:
    """Stage the sources of ``root`` (default: this checkout), run Sphinx on them into ``out``, check the links.

    Sphinx runs in a fresh process of this Python with ``-W --keep-going`` and a fresh
    environment (``-E``), so every page is read and every warning is reported each time. ``out``
    is replaced; a folder that is not empty and holds no site built before (no ``objects.inv``)
    is refused rather than deleted.
    """
    out = Path(out).resolve()
    root = Path(root).resolve()
    report = BuildReport(out=out)
    if out.is_dir() and any(out.iterdir()) and not (out / "objects.inv").is_file():
        report.sphinx_status = 1
        report.warnings = [f"--out {out}: the folder is not empty and holds no site built before; "
                           "refusing to replace it (choose an empty or new folder)"]
        if not quiet:
            print_report(report)
        return report
    missing = [name for name in SITE_PACKAGES if importlib.util.find_spec(name) is None]
    if missing:
        report.sphinx_status = 1
        report.warnings = [f"not installed: {', '.join(missing)}; install the site extra with "
                           "`pip install -c constraints.txt -e \".[site]\"` from the top of the checkout"]
        if not quiet:
            print_report(report)
        return report
    start = time.perf_counter()
    if keep_staging:
        if STAGING.exists():
            shutil.rmtree(STAGING)
        STAGING.mkdir(parents=True)
        work = STAGING
        scratch = None
    else:
        scratch = tempfile.TemporaryDirectory(prefix="gangkit-site-")
        work = Path(scratch.name)
    try:
        # Sphinx writes into work/html, then the result is copied to ``out``: myst-nb keeps the notebooks'
        # images in a jupyter_execute/ folder beside its output folder, which must not be the repository.
        src, doctrees, html = work / "src", work / "doctrees", work / "html"
        stage_sources(src, root)
        warnings_file = work / "warnings.txt"
        cmd = [sys.executable, "-m", "sphinx", "-b", "html", "-E", "-W", "--keep-going", "-q",
               "-w", str(warnings_file), "-d", str(doctrees), str(src), str(html)]
        proc = subprocess.run(cmd, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=900)
        report.sphinx_status = proc.returncode
        if warnings_file.is_file():
            report.warnings = [line.replace(str(src) + "/", "") for line in
                               warnings_file.read_text(encoding="utf-8").splitlines() if line.strip()]
        if proc.returncode != 0 and not report.warnings:
            report.warnings = [line for line in (proc.stderr or proc.stdout).splitlines() if line.strip()]
        if out.exists():
            shutil.rmtree(out)
        if html.is_dir():
            shutil.copytree(html, out)
        if out.is_dir():
            report.pages = sum(1 for _ in out.rglob("*.html"))
            report.broken = broken_links(out)
    finally:
        if scratch is not None:
            scratch.cleanup()
    report.seconds = time.perf_counter() - start
    if not quiet:
        print_report(report)
    return report


def print_report(report: BuildReport) -> None:
    """Say what the build made, or every warning and broken link that failed it."""
    for line in report.warnings:
        print(f"build_site: sphinx: {line}", file=sys.stderr)
    for line in report.broken:
        print(f"build_site: broken link: {line}", file=sys.stderr)
    if report.ok:
        print(f"build_site: {report.pages} pages in {report.out} ({report.seconds:.1f} s); "
              f"open {report.out / 'index.html'}")
    else:
        print(f"build_site: FAILED ({len(report.warnings)} Sphinx warning(s) or error(s), "
              f"{len(report.broken)} broken link(s); Sphinx exit status {report.sphinx_status})", file=sys.stderr)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="where the site goes (default: _site/)")
    parser.add_argument("--keep-staging", action="store_true",
                        help="keep the staged sources and doctrees in build/site/")
    args = parser.parse_args(argv)
    return 0 if build(args.out, keep_staging=args.keep_staging).ok else 1


if __name__ == "__main__":
    sys.exit(main())
