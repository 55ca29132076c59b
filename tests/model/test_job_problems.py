"""``Job.problems``: a pod set's bad count is one problem, never a crash of the checks that compare with it.

``min_count`` (Kueue's partial admission), a pod set's ``min_member`` (Volcano's task minAvailable) and
the job's ``min_member`` (the PodGroup's minMember) are checked against the pod counts; when a count is
not a whole number, that count is the problem reported, and the other checks only look at their own value.
"""

from __future__ import annotations

import pytest

from gangkit.model.jobs import Job, PodSet

from conftest import case

CASES = [
    case("a text count beside a pod set's min_count", dict(count="x", min_count=2), {}, ["pod_sets[0].count"]),
    case("a fractional count beside a pod set's min_member", dict(count=2.5, min_member=2), {}, ["pod_sets[0].count"]),
    case("a missing count beside the job's min_member", dict(count=None), dict(min_member=2), ["pod_sets[0].count"]),
    case("a bad count and a bad min_count: both", dict(count="x", min_count="y"), {},
         ["pod_sets[0].count", "pod_sets[0].min_count"]),
    case("a bad count and a bad job min_member: both", dict(count="x"), dict(min_member=0),
         ["pod_sets[0].count", "min_member"]),
    case("a valid job has no problem", dict(count=4, min_count=2), dict(min_member=3), []),
]


@pytest.mark.parametrize("pod_set, job, fields", CASES)
def test_a_bad_count_is_one_problem_and_never_a_crash(pod_set, job, fields):
    count = pod_set.pop("count")
    problems = Job("j", [PodSet("w", count, 1, **pod_set)], run_time=10, **job).problems()
    assert [p.field for p in problems] == fields
