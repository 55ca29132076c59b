"""Grading learners' exercise notebooks: ``gangkit grade NOTEBOOK...``.

Picture an examiner with a stack of scripts who trusts none of them: each is photocopied (a
submission is never changed) and worked through in a locked room of its own (a sandboxed kernel with
a clock, a memory limit and no way out), and the examiner writes down only the answer to each
question, then marks that answer at their own desk with their own key (the checks, run in the
grader's interpreter). A script that changed the questions is marked *tampered*; one that never ends,
floods the room or burns it down gets a clear mark too, never a stalled examiner.

- :mod:`.locks`: which cells are locked, and what a submission changed;
- :mod:`.sandbox`: the box a kernel runs in (bubblewrap) and its limits;
- :mod:`.runner`: running a copy cell by cell, and taking each answer out as data;
- :mod:`.answers`: the data an answer travels as, and its rebuilding in the grader;
- :mod:`.marks`: judging an answer with its check, and the statuses;
- :mod:`.report`: grading a batch, and the table, JSON, JUnit XML and CSV gradebook;
- :mod:`.exercises`: which lesson a notebook is.
"""

from gangkit.grading.marks import STATUSES, Mark
from gangkit.grading.report import (
    SandboxUnavailable,
    all_passed,
    grade,
    gradebook_csv,
    junit_xml,
    table,
    to_json,
)
from gangkit.grading.sandbox import Limits

__all__ = ["STATUSES", "Limits", "Mark", "SandboxUnavailable", "all_passed", "grade", "gradebook_csv", "junit_xml",
           "table", "to_json"]
