"""Lesson 01's restart churn: the deadlock of two (or three) gangs when launchers give up their rendezvous."""

import pytest

from gangkit.lessons import lesson01


@pytest.fixture(scope="module")
def table():
    return lesson01.churn_table()


@pytest.mark.parametrize(
    "workload, launcher, failures, finished, failed, deadlock, makespan",
    [
        ("2 jobs", "no timeout", 0, 0, 0, True, 2592000.0),  # carried to the 30-day horizon
        ("2 jobs", "rendezvous timeout 600 s", 14, 0, 2, False, 2400.0),  # 7 failures each: both Jobs fail
        ("3 jobs", "no timeout", 0, 0, 0, True, 2592000.0),
        ("3 jobs", "rendezvous timeout 600 s", 19, 1, 2, False, 3600.0),  # A and C fail, B runs: luck, not a cure
    ],
)
def test_churn_table(table, workload, launcher, failures, finished, failed, deadlock, makespan):
    row = table.loc[(workload, launcher)]
    assert (row["pod_failures"], row["jobs_finished"], row["jobs_failed"], row["deadlock"], row["makespan_s"]) == (
        failures, finished, failed, deadlock, makespan)


def test_churn_wastes_every_gpu_of_the_two_gang_deadlock_until_the_jobs_fail(table):
    row = table.loc[("2 jobs", "rendezvous timeout 600 s")]
    assert row["held_idle_gpu_s"] == 4 * 2400.0
    assert row["by_failed_pods_gpu_s"] == 8400.0


def test_with_churn_sets_every_job():
    sc = lesson01.with_churn(lesson01.deadlock_scenario(), timeout=300.0, backoff_limit=2)
    assert {(j.rendezvous_timeout, j.backoff_limit) for j in sc.jobs} == {(300.0, 2)}


# ------------------------------------------------------------------------ the explorer's table
# A browser never breaks a word: eight headings like held_idle_gpus_at_end made the deadlock
# explorer's table wider than JupyterLab's notebook at 1400 px, with effective_utilization cut off.
@pytest.mark.parametrize(
    "case, html, expected",
    [
        ("a heading may wrap after each underscore",
         "<th>held_idle_gpus_at_end</th>", "<th>held_<wbr>idle_<wbr>gpus_<wbr>at_<wbr>end</th>"),
        ("a heading with attributes too",
         '<th class="col_heading level0 col0" >jobs_finished</th>',
         '<th class="col_heading level0 col0" >jobs_<wbr>finished</th>'),
        ("a value cell is left as it is", "<td>a_b</td>", "<td>a_b</td>"),
        ("a short heading stays whole", "<th>mean_wait_s</th>", "<th>mean_wait_s</th>"),
        ("a unit stays with its word", "<th>useful_gpu_hours_h</th>", "<th>useful_<wbr>gpu_<wbr>hours_h</th>"),
    ],
)
def test_explorer_tables_let_their_headings_wrap(case, html, expected):
    from gangkit.lessons.explorer import breakable_headers

    assert breakable_headers(html) == expected


def test_the_deadlock_explorers_table_shows_the_same_cells_and_scrolls_rather_than_clips():
    from html.parser import HTMLParser

    class Cells(HTMLParser):
        def __init__(self):
            super().__init__()
            self.texts, self.inside = [], False

        def handle_starttag(self, tag, attrs):
            if tag in ("th", "td"):
                self.inside = True
                self.texts.append("")

        def handle_endtag(self, tag):
            self.inside = self.inside and tag not in ("th", "td")

        def handle_data(self, data):
            if self.inside:
                self.texts[-1] += data

    ex = lesson01.deadlock_explorer()
    shown, plain = Cells(), Cells()
    shown.feed(ex.output.outputs[0]["data"]["text/html"])
    plain.feed(ex.table.to_html())
    assert shown.texts == plain.texts and "effective_utilization" in shown.texts
    assert ex.output.outputs[0]["data"]["text/html"].startswith('<div style="max-width: 100%; overflow-x: auto">')
