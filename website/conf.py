"""Sphinx configuration of the course website (built by ``python tools/build_site.py``).

The build runs on a staged copy of the repository's course tree: ``course/``, ``exercises/`` and
``docs/`` keep their places, and this folder's files sit at the top beside them, so every
relative link a lesson uses in JupyterLab (``02_gang_admission.ipynb``,
``../exercises/01_pod_level_deadlock.ipynb``, ``../docs/glossary.md``) names the same page here.

The home page's table of lessons and their minutes is made at each build from the lessons' first
cells, into ``_generated/lessons.md`` (included by ``index.md``, not a page of its own).

Notebooks are rendered with the outputs they were stored with (nbval checks those outputs in
CI); nothing is executed (``nb_execution_mode = "off"``).
"""

project = "gangkit"
author = "the gangkit project"
copyright = "the gangkit project"
html_title = "gangkit: gang scheduling, a course"

extensions = ["myst_nb"]
root_doc = "index"
exclude_patterns = ["**/.ipynb_checkpoints", "_generated/*"]

# Render what the notebooks hold, never run them: nbval compares the stored outputs in CI. A saved
# explorer cell holds only its text line ("... (run this cell to use it)"), and shows that.
nb_execution_mode = "off"
# Warnings a cell printed are part of what the lesson shows (nbval compares them too).
nb_output_stderr = "show"

# Lessons and reference pages link to each other as files (glossary.md, 02_gang_admission.ipynb);
# MyST turns those into page links and warns (an error with -W) when the target does not exist.
# Headings down to level 3 get anchors, so a link may name a section (glossary.md#some-heading).
myst_heading_anchors = 3

html_theme = "sphinx_book_theme"
html_theme_options = {
    "home_page_in_toc": True,
    "show_navbar_depth": 1,
    "use_download_button": True,
    "use_repository_button": False,
    "show_toc_level": 2,
}
html_copy_source = True
html_show_sphinx = False
