"""Grading learners' exercise notebooks: ``gangkit grade NOTEBOOK...``.

Picture an examiner with a stack of scripts: each is photocopied first (a
submission is never changed), worked through in a room of its own with a clock
and a limit on paper (a kernel per notebook, a time limit per cell and per
notebook, a memory limit), and marked exercise by exercise with the check's own
words. A script that never ends, eats all the paper or tore out its questions
gets a clear mark too, never a stalled examiner.

- :mod:`.exercises`: which exercises a lesson's notebook holds (its checks, in order);
- :mod:`.runner`: running a copy in a separate process and kernel, within the limits;
- :mod:`.marks`: reading each exercise's result from the executed cells;
- :mod:`.report`: the table, JSON and JUnit XML.
"""

from gangkit.grading.marks import STATUSES, Mark
from gangkit.grading.report import grade, junit_xml, table, to_json

__all__ = ["STATUSES", "Mark", "grade", "junit_xml", "table", "to_json"]
