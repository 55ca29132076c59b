"""Placement orderings as tables of cases, on clusters small enough to check by hand.

The usual picture: two nodes of 8 GPUs; a running job R holds some GPUs
until t=100; a 16-GPU gang H cannot start before R ends; small jobs behind
H either fit around H's reservation or would delay it.
"""

from __future__ import annotations

import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import gangkit as gk
from gangkit import Job, Node, PodSet, job
from gangkit.model.fast_paths import FastPaths
from gangkit.model.scenario import ORDERINGS
from gangkit.volcano.scheduler import VolcanoGang

from builders import gang, gpu_nodes, simulate_on
from conftest import same_start_finish, start_finish

NAN = math.nan


def run(ordering: str, jobs: list[Job], node_list=None, **settings):
    """Simulate under ``gang`` with ``ordering`` (on two 8-GPU nodes unless ``node_list`` says otherwise).

    Returns the result and the placement layer, whose ``first_reservation`` the cases read.
    """
    layer = VolcanoGang(ordering=ordering, estimate_factor=settings.get("estimate_factor", 1.0))
    result = simulate_on(node_list or gpu_nodes(2), jobs, stack=gk.Stack(layer, name="gang"), ordering=ordering, **settings)
    return result, layer




# R holds node-0 until 100; H (2 x 8 GPUs) waits for both nodes; node-1 is free now.
R = job("R", pods=1, gpus=8, run_time=100)
R_DECLARED = gang("R", 1, 8, run_time=100, pod_set="w", max_run_time=100)  # declares its true run time
H = job("H", pods=2, gpus=8, run_time=300, submit_time=1)
SHORT = job("short", pods=1, gpus=8, run_time=50, submit_time=2)   # ends at 52 < 100: fits before H
LONG = job("long", pods=1, gpus=8, run_time=200, submit_time=3)    # would hold node-1 past 100
# R2 holds 4 GPUs on each node until 100; H1 and B2 each want one whole node at 100;
# X (4 GPUs, 300 s) fits now on the node H1's reservation does not use, but delays B2.
R2 = job("R2", pods=2, gpus=4, run_time=100)
H1 = job("H1", pods=1, gpus=8, run_time=100, submit_time=1)
B2 = job("B2", pods=1, gpus=8, run_time=100, submit_time=2)
X = job("X", pods=1, gpus=4, run_time=300, submit_time=3)

CASES = [
    # (id, ordering, jobs, settings, expected {job: (start, finish, state)}, expected first reservations)
    ("skip lets both small jobs pass the gang, which waits until 252",
     "skip", [R, H, SHORT, LONG], {},
     {"R": (0, 100, "Finished"), "H": (252, 552, "Finished"), "short": (2, 52, "Finished"), "long": (52, 252, "Finished")}, {}),
    ("strict makes both small jobs wait behind the gang",
     "strict", [R, H, SHORT, LONG], {},
     {"R": (0, 100, "Finished"), "H": (100, 400, "Finished"), "short": (400, 450, "Finished"), "long": (400, 600, "Finished")}, {}),
    ("easy-backfill starts the short job (it ends before H's reservation) but not the long one",
     "easy-backfill", [R, H, SHORT, LONG], {},
     {"R": (0, 100, "Finished"), "H": (100, 400, "Finished"), "short": (2, 52, "Finished"), "long": (400, 600, "Finished")},
     {"H": 100, "long": 400}),
    ("easy-backfill with estimates 3x too long keeps the short job back too (150 s > the 98 s left)",
     "easy-backfill", [R_DECLARED, H, SHORT, LONG], dict(estimate_factor=3),
     {"R": (0, 100, "Finished"), "H": (100, 400, "Finished"), "short": (400, 450, "Finished"), "long": (400, 600, "Finished")},
     {"H": 100, "short": 1000}),
    ("with estimates 3x too long, R's own estimate moves H's reservation to 300, and the short job fits before it",
     "easy-backfill", [R, H, SHORT, LONG], dict(estimate_factor=3),
     {"R": (0, 100, "Finished"), "H": (100, 400, "Finished"), "short": (2, 52, "Finished"), "long": (400, 600, "Finished")},
     {"H": 300, "long": 1000}),
    ("easy-backfill trusts a declared maximum run time: long declares 90 s, runs 200 s, and delays H to 203",
     "easy-backfill", [R, H, Job("long", [PodSet("w", 1, 8)], 200, submit_time=3, max_run_time=90)], {},
     {"R": (0, 100, "Finished"), "H": (203, 503, "Finished"), "long": (3, 203, "Finished")},
     {"H": 100}),
    ("conservative-backfill agrees with EASY when only one job waits for a reservation",
     "conservative-backfill", [R, H, SHORT, LONG], {},
     {"R": (0, 100, "Finished"), "H": (100, 400, "Finished"), "short": (2, 52, "Finished"), "long": (400, 600, "Finished")},
     {"H": 100, "long": 400}),
    ("easy-backfill lets X start on the node H1 does not need, which delays B2 (no reservation) to 200",
     "easy-backfill", [R2, H1, B2, X], {},
     {"R2": (0, 100, "Finished"), "H1": (100, 200, "Finished"), "B2": (200, 300, "Finished"), "X": (3, 303, "Finished")},
     {"H1": 100, "B2": 200}),
    ("conservative-backfill protects B2's reservation too: X waits until 200",
     "conservative-backfill", [R2, H1, B2, X], {},
     {"R2": (0, 100, "Finished"), "H1": (100, 200, "Finished"), "B2": (100, 200, "Finished"), "X": (200, 500, "Finished")},
     {"H1": 100, "B2": 100, "X": 200}),
    ("strict: a gang bigger than the cluster blocks everyone behind it for good",
     "strict", [job("huge", 3, 8, 100), job("small", 1, 8, 100, submit_time=1)], dict(horizon=1000),
     {"huge": (NAN, NAN, "WaitingAtEnd"), "small": (NAN, NAN, "WaitingAtEnd")}, {}),
    ("easy-backfill: a gang no book can hold gets no reservation, so it blocks nobody",
     "easy-backfill", [job("huge", 3, 8, 100), job("small", 1, 8, 100, submit_time=1)], dict(horizon=1000),
     {"huge": (NAN, NAN, "WaitingAtEnd"), "small": (1, 101, "Finished")}, {}),
    ("conservative-backfill: the same, for every job",
     "conservative-backfill", [job("huge", 3, 8, 100), job("small", 1, 8, 100, submit_time=1)], dict(horizon=1000),
     {"huge": (NAN, NAN, "WaitingAtEnd"), "small": (1, 101, "Finished")}, {}),
    ("largest-first takes the 16-GPU gang before an 8-GPU job that arrived earlier",
     "largest-first", [job("R", 1, 8, 100), job("small", 1, 8, 100, submit_time=1), job("big", 2, 8, 100, submit_time=2)], {},
     {"R": (0, 100, "Finished"), "small": (1, 101, "Finished"), "big": (101, 201, "Finished")}, {}),
    ("largest-first at one session: the big gang goes first, the small one fills in after",
     "largest-first", [job("R", 2, 8, 100), job("small", 1, 8, 100, submit_time=1), job("big", 2, 8, 100, submit_time=2)], {},
     {"R": (0, 100, "Finished"), "small": (200, 300, "Finished"), "big": (100, 200, "Finished")}, {}),
    ("skip at the same session takes the small job first (arrival order)",
     "skip", [job("R", 2, 8, 100), job("small", 1, 8, 100, submit_time=1), job("big", 2, 8, 100, submit_time=2)], {},
     {"R": (0, 100, "Finished"), "small": (100, 200, "Finished"), "big": (200, 300, "Finished")}, {}),
    ("largest-first breaks ties by arrival: a and b (8 GPUs each) before c (8 GPUs), after big (16)",
     "largest-first", [job("R", 2, 8, 100), job("a", 1, 8, 100, submit_time=1), job("b", 2, 4, 50, submit_time=2),
                       job("c", 1, 8, 100, submit_time=3), job("big", 2, 8, 10, submit_time=4)], {},
     {"R": (0, 100, "Finished"), "big": (100, 110, "Finished"), "a": (110, 210, "Finished"),
      "b": (110, 160, "Finished"), "c": (160, 260, "Finished")}, {}),
    ("volcano-backfill places GPU gangs exactly as skip does",
     "volcano-backfill", [R, H, SHORT, LONG], {},
     {"R": (0, 100, "Finished"), "H": (252, 552, "Finished"), "short": (2, 52, "Finished"), "long": (52, 252, "Finished")}, {}),
    ("volcano-backfill places best-effort pods (no request at all), even on a full cluster",
     "volcano-backfill", [job("R", 2, 8, 100), job("be", pods=3, gpus=0, run_time=10, submit_time=1)], {},
     {"R": (0, 100, "Finished"), "be": (1, 11, "Finished")}, {}),
    ("volcano-backfill: a gang that needs best-effort and GPU pods together never becomes ready",
     "volcano-backfill", [Job("mixed", [PodSet("gpu", 1, 8), PodSet("be", 1, 0)], 10)], {},
     {"mixed": (NAN, NAN, "WaitingAtEnd")}, {}),
    ("skip places that mixed gang at once (it does not separate best-effort pods)",
     "skip", [Job("mixed", [PodSet("gpu", 1, 8), PodSet("be", 1, 0)], 10)], {},
     {"mixed": (0, 10, "Finished")}, {}),
    ("volcano-backfill: a gang whose minMember its GPU pods meet starts, then backfill adds its best-effort pod",
     "volcano-backfill", [Job("mixed", [PodSet("gpu", 2, 8), PodSet("be", 1, 0)], 10, min_member=2, progress="independent")], {},
     {"mixed": (0, 10, "Finished")}, {}),
]


@pytest.mark.parametrize("ordering, jobs, settings, expected, reservations",
                         [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_ordering_case(ordering, jobs, settings, expected, reservations):
    result, layer = run(ordering, jobs, **settings)
    want = {k: (float(a), float(b), s) for k, (a, b, s) in expected.items()}
    assert same_start_finish(start_finish(result), want), start_finish(result)
    assert layer.first_reservation == reservations


def test_mixed_gang_under_volcano_backfill_gets_every_pod_bound():
    result, _ = run("volcano-backfill", [Job("mixed", [PodSet("gpu", 2, 8), PodSet("be", 1, 0)], 10,
                                             min_member=2, progress="independent")])
    assert sorted(result.pods.pod_set) == ["be", "gpu", "gpu"]


def test_volcano_backfill_cannot_help_gpu_gangs_on_a_busy_stream():
    """On a random stream of GPU gangs, volcano-backfill's tables equal skip's, row for row."""
    sc = gk.scenarios.mixed(seed=4, n_jobs=400, n_nodes=8, load=0.95)
    skip = gk.simulate(sc, stack="gang", ordering="skip")
    backfill = gk.simulate(sc, stack="gang", ordering="volcano-backfill")
    strict = gk.simulate(sc, stack="gang", ordering="strict")
    assert not skip.jobs.equals(strict.jobs)  # the stream is contended: the ordering matters
    assert skip.jobs.equals(backfill.jobs) and skip.pods.equals(backfill.pods)
    assert skip.summary() == backfill.summary()


@pytest.mark.parametrize("ordering", ["easy-backfill", "conservative-backfill", "largest-first", "volcano-backfill"])
def test_without_contention_every_ordering_agrees_with_skip(ordering):
    """When every job fits as it arrives, no ordering changes anything (same nodes, same times)."""
    jobs = [job(f"j{i}", pods=1 + i % 2, gpus=2, run_time=100 + 10 * i, submit_time=50 * i) for i in range(6)]
    base = simulate_on(gpu_nodes(4), jobs, stack="gang", ordering="skip")
    other = simulate_on(gpu_nodes(4), jobs, stack="gang", ordering=ordering)
    assert base.pods[["pod", "node", "bound_s"]].equals(other.pods[["pod", "node", "bound_s"]])


def test_pending_reason_names_the_reservation():
    result, _ = run("easy-backfill", [R, H, LONG], horizon=50)
    reasons = result.jobs.set_index("job").reason.to_dict()
    assert "reservation at t=100 s" in reasons["H"]
    assert "would delay an earlier job's reservation" in reasons["long"]


@pytest.mark.parametrize("ordering", ORDERINGS)
def test_every_ordering_is_deterministic(ordering):
    sc = gk.scenarios.mixed(seed=2, n_jobs=80, n_nodes=4, load=0.95)
    a = gk.simulate(sc, stack="gang", ordering=ordering, estimate_factor=2)
    b = gk.simulate(sc, stack="gang", ordering=ordering, estimate_factor=2)
    assert a.jobs.equals(b.jobs) and a.events.equals(b.events)


# ------------------------------------------------------------------ properties
@st.composite
def contended(draw):
    """A small over-subscribed cluster of whole-second jobs of identical pods, equal priority."""
    gpus = draw(st.lists(st.sampled_from([2, 4, 8]), min_size=1, max_size=4))
    biggest = max(gpus)
    jobs = []
    for i in range(draw(st.integers(2, 9))):
        per_pod = draw(st.integers(1, biggest))
        jobs.append(job(f"j{i}", pods=draw(st.integers(1, 4)), gpus=per_pod,
                        run_time=draw(st.integers(1, 400)), submit_time=draw(st.integers(0, 6)) * 50,
                        progress=draw(st.sampled_from(["sync", "sync", "independent"]))))
    node_list = [Node(f"n{i}", g) for i, g in enumerate(gpus)]
    scoring = draw(st.sampled_from(["LeastAllocated", "MostAllocated"]))
    return node_list, jobs, scoring


PROPERTY = dict(deadline=None, derandomize=True, database=None, max_examples=100,
                suppress_health_check=[HealthCheck.too_slow])


@settings(**PROPERTY)
@given(contended())
def test_easy_head_never_starts_after_its_reservation(case):
    """With exact estimates (factor 1), EASY keeps its promise to the head."""
    node_list, jobs, scoring = case
    result, layer = run("easy-backfill", jobs, node_list, scoring=scoring)
    starts = result.jobs.set_index("job").start_s.to_dict()
    for name, promised in layer.first_reservation.items():
        assert starts[name] <= promised, (name, starts[name], promised)


@settings(**PROPERTY)
@given(contended())
def test_conservative_no_job_starts_after_its_first_reservation(case):
    node_list, jobs, scoring = case
    result, layer = run("conservative-backfill", jobs, node_list, scoring=scoring)
    starts = result.jobs.set_index("job").start_s.to_dict()
    for name, promised in layer.first_reservation.items():
        assert starts[name] <= promised, (name, starts[name], promised)
    states = result.jobs.set_index("job").state.to_dict()
    assert all(states[name] == "Finished" for name in layer.first_reservation)  # a promise is kept


@pytest.mark.parametrize("ordering", ORDERINGS)
def test_every_ordering_runs_from_the_command_line(capsys, ordering):
    import json

    from gangkit.cli.main import main

    assert main(["run", "three-workers", "--stack", "gang", "--ordering", ordering, "--estimate-factor", "2", "--json"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert payload["ordering"] == ordering and payload["jobs_finished"] == 3


@settings(**{**PROPERTY, "max_examples": 30})
@given(contended())
def test_volcano_backfill_equals_skip_when_every_pod_asks_for_a_gpu(case):
    """Volcano's backfill action only takes pods with an empty request: for GPU gangs it adds nothing."""
    node_list, jobs, scoring = case
    skip, _ = run("skip", jobs, node_list, scoring=scoring)
    backfill, _ = run("volcano-backfill", jobs, node_list, scoring=scoring)
    assert skip.jobs.equals(backfill.jobs) and skip.pods.equals(backfill.pods)


@settings(**{**PROPERTY, "max_examples": 40})
@given(contended(), st.sampled_from(["easy-backfill", "conservative-backfill"]), st.sampled_from([1, 2.5]))
def test_backfilling_shortcuts_change_no_decision(case, ordering, factor):
    """Differential test: the fast paths (cheap totals, twin memos, skipped start times) against the plain search."""
    node_list, jobs, scoring = case
    jobs = jobs + [Job("two-sets", [PodSet("a", 1, 2), PodSet("b", 2, 1)], 77, submit_time=50)]
    sc = gk.Scenario(node_list, jobs)
    fast = gk.simulate(sc, stack=gk.Stack(VolcanoGang(ordering, estimate_factor=factor), name="gang"), scoring=scoring)
    plain_layer = VolcanoGang(ordering, estimate_factor=factor, fast_paths=FastPaths(reservation_shortcuts=False))
    plain = gk.simulate(sc, stack=gk.Stack(plain_layer, name="gang"), scoring=scoring)
    assert fast.jobs.equals(plain.jobs) and fast.pods.equals(plain.pods)
