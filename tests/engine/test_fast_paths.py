"""The engine's exact shortcuts against the plain algorithm they stand for.

Each shortcut is one field of the run's :class:`~gangkit.model.fast_paths.FastPaths`; with
``FastPaths.none()`` the layers run Volcano's and Kueue's steps in full. A shortcut may only save work:
the run with it and the run without must give the same figures, tables (``jobs``, events and the others)
and metrics, to the last bit. The last tests check that each shortcut does save work on a case made for it
(so the comparisons above are not empty), and that no module keeps a speed switch of its own.
"""

from __future__ import annotations

import ast
import dataclasses

import pytest

from gangkit import Scenario, ScenarioError, load_file, nodes, simulate
from gangkit.engine import simulation
from gangkit.engine.capacity import FreeCapacity
from gangkit.kueue import (
    GPU,
    ClusterQueue,
    FlavorQuotas,
    Kueue,
    LocalQueue,
    PodSetSpec,
    Quota,
    ResourceFlavor,
    ResourceGroup,
    Workload,
)
from gangkit.kueue import pending as kueue_pending
from gangkit.kueue import scheduler as kueue_scheduler
from gangkit.kueue.flavor_assigner import FlavorAssigner
from gangkit.kueue.layer import KueueLayer, default_objects
from gangkit.kueue.objects import KueueConfig, KueueSetup
from gangkit.kueue.pending import PendingWorkloads
from gangkit.kueue.preemption import Preemptor
from gangkit.lessons import lesson04
from gangkit.model.fast_paths import ALL_ON, FastPaths
from gangkit.model.jobs import Job, PodSet, job
from gangkit.volcano import cache as volcano_cache
from gangkit.volcano.actions import allocate
from gangkit.volcano.api import Queue, VolcanoSetup
from gangkit.workloads import scenarios

from conftest import assert_same_result
from paths import REPO

#: the shortcuts test_each_shortcut_saves_work counts, by their FastPaths field
SWITCHES = {
    "skip repeated failures": "skip_repeated_failures",
    "skip clean sessions": "skip_clean_sessions",
    "cache scheduling hash": "cache_scheduling_hash",
    "reuse targets": "reuse_targets",
    "arrival callbacks": "arrival_callbacks",
    "keep shapes": "keep_shapes",
    "count lines": "count_lines",
    "fast reject": "fast_reject",
    "fast fit": "fast_fit",
    "fast park": "fast_park",
    "remember shortfall": "remember_shortfall",
    "keep trials": "keep_trials",
    "count fits": "count_fits",
    "direct commit": "direct_commit",
}
#: shortcuts that work through another one: it stays on in both runs of test_each_shortcut_saves_work
NEEDS = {"fast fit": ("fast reject",), "fast park": ("fast reject",), "direct commit": ("keep trials",)}


def only(switch: str, on: bool) -> FastPaths:
    """Every shortcut off but those ``switch`` needs, and ``switch`` itself as ``on`` says."""
    fields = {SWITCHES[needed]: True for needed in NEEDS.get(switch, ())}
    return dataclasses.replace(FastPaths.none(), **fields, **{SWITCHES[switch]: on})


def fractional_cpu(ordering: str) -> Scenario:
    """Gangs that ask for 0.1 cores (a give-back may round): the shortcuts must stand aside."""
    cluster = [dataclasses.replace(n, cpu=8.0, memory=64 * 2 ** 30) for n in nodes(3, gpus=8)]
    jobs = [Job(f"j{k}", [PodSet("workers", 1 + k % 3, 1 + k % 4, cpu=0.1 * (1 + k % 2), memory=2 ** 30)],
                run_time=float(20 + 7 * (k % 5)), submit_time=float(k // 2)) for k in range(40)]
    return Scenario(cluster, jobs).with_settings(ordering=ordering)


def two_roles(ordering: str) -> Scenario:
    """Gangs of two pod sets with different requests (not monotone) next to plain gangs."""
    jobs = []
    for k in range(40):
        if k % 3 == 0:
            jobs.append(Job(f"j{k}", [PodSet("launcher", 1, 1), PodSet("workers", 2, 4)],
                            run_time=float(30 + k % 7), submit_time=float(k)))
        else:
            jobs.append(job(f"j{k}", pods=1 + k % 4, gpus=2, run_time=float(25 + k % 9), submit_time=float(k)))
    return Scenario(nodes(3, gpus=8), jobs).with_settings(ordering=ordering)


def partial_gangs(ordering: str) -> Scenario:
    """Gangs whose minMember is below their pods (the rest placed later), some with a role minimum, some with a
    best-effort pod outside minMember (no request: volcano-backfill's backfill action places it)."""
    jobs = []
    for k in range(45):
        if k % 3 == 0:
            pod_sets = [PodSet("master", 1, 1, min_member=1), PodSet("workers", 3, 2, min_member=1)]
            jobs.append(Job(f"j{k}", pod_sets, min_member=2, run_time=float(30 + k % 7), submit_time=float(k)))
        elif k % 3 == 1:
            jobs.append(Job(f"j{k}", [PodSet("workers", 4, 2)], min_member=2, run_time=float(25 + k % 5),
                            submit_time=float(k), progress="independent"))
        else:
            jobs.append(Job(f"j{k}", [PodSet("workers", 2, 3), PodSet("sidecar", 1, 0)], min_member=2,
                            run_time=float(20 + k % 9), submit_time=float(k)))
    return Scenario(nodes(3, gpus=8), jobs).with_settings(ordering=ordering)


def mixed(ordering: str, **settings) -> Scenario:
    return scenarios.mixed(n_jobs=150, n_nodes=6, load=0.95, seed=4, ordering=ordering, **settings)


def two_queues_kueue(min_count: bool = False) -> Scenario:
    """Two ClusterQueues without cohort, quota for GPUs and CPU in two flavors each, jobs of several priorities.

    The flavor assigner's reasons quote the unused quota of both resources and both flavors; with
    ``min_count`` every third job may be admitted with fewer pods (partial admission: no replay)."""
    cluster = [dataclasses.replace(n, cpu=16.0) for n in nodes(4, gpus=8)]

    def cq(name, gpus, cpu):
        flavors = (FlavorQuotas("small", {GPU: Quota(gpus // 2), "cpu": Quota(cpu // 2)}),
                   FlavorQuotas("large", {GPU: Quota(gpus), "cpu": Quota(cpu)}))
        return ClusterQueue(name, [ResourceGroup((GPU, "cpu"), flavors)])
    kueue = KueueSetup([ResourceFlavor("small"), ResourceFlavor("large")], [cq("a", 16, 24000), cq("b", 12, 16000)],
                       [LocalQueue("team-a", "default", "a"), LocalQueue("team-b", "default", "b")])
    jobs = []
    for k in range(60):
        pods = 1 + k % 4
        ps = PodSet("workers", pods, 1 + k % 3, cpu=0.5 * (1 + k % 5),
                    min_count=1 if min_count and k % 3 == 0 and pods > 1 else None)
        jobs.append(Job(f"j{k}", [ps], run_time=float(40 + 13 * (k % 7)), submit_time=float(k // 3),
                        priority=k % 2, queue="team-a" if k % 5 < 3 else "team-b"))
    return Scenario(cluster, jobs, kueue=kueue)


def weighted_queues(ordering: str, controller: str = "batch", enqueue: bool = True) -> Scenario:
    """Volcano's proportion plugin over two weighted queues with a capability; Volcano Jobs have minResources."""
    sc = mixed(ordering)
    jobs = [dataclasses.replace(j, volcano_queue="a" if k % 3 else "b", controller=controller)
            for k, j in enumerate(sc.jobs)]
    setup = VolcanoSetup([Queue("a", weight=2), Queue("b", weight=1, capability=None)], enqueue=enqueue)
    return Scenario(sc.nodes, jobs, volcano=setup, settings=sc.settings)


def volcano_jobs(ordering: str) -> Scenario:
    """Volcano Jobs (their PodGroups have minResources) in Volcano's default queue: no proportion, but overcommit."""
    sc = mixed(ordering)
    return dataclasses.replace(sc, jobs=[dataclasses.replace(j, controller="volcano") for j in sc.jobs])


# (scenario, stack): busy clusters, every ordering, with Kueue in front or not, nodes added on demand
CASES = [
    ("mixed skip", lambda: mixed("skip"), "gang"),
    ("mixed strict", lambda: mixed("strict"), "gang"),
    ("mixed largest-first", lambda: mixed("largest-first"), "gang"),
    ("mixed volcano-backfill", lambda: mixed("volcano-backfill"), "gang"),
    ("mixed easy-backfill", lambda: mixed("easy-backfill"), "gang"),
    ("mixed skip, preemption", lambda: mixed("skip", preemption=True), "gang"),
    ("mixed skip", lambda: mixed("skip"), "kueue+gang"),
    ("mixed strict", lambda: mixed("strict"), "kueue+gang"),
    ("mixed largest-first", lambda: mixed("largest-first"), "kueue+gang"),
    ("mixed skip", lambda: mixed("skip"), "gang+karpenter"),
    ("mixed skip", lambda: mixed("skip"), "kueue+gang+karpenter"),
    ("lesson 04 mix", lambda: lesson04.mix(0.9, n_jobs=300, seed=1), "gang"),
    ("lesson 04 mix", lambda: lesson04.mix(0.9, n_jobs=300, seed=1), "kueue+gang"),
    ("fractional cpu skip", lambda: fractional_cpu("skip"), "gang"),
    ("fractional cpu strict", lambda: fractional_cpu("strict"), "kueue+gang"),
    ("two roles skip", lambda: two_roles("skip"), "gang"),
    ("two roles strict", lambda: two_roles("strict"), "gang"),
    ("two roles largest-first", lambda: two_roles("largest-first"), "kueue+gang"),
    ("three workers", lambda: scenarios.load("three-workers"), "kueue+gang"),
    ("two gangs deadlock", lambda: scenarios.load("two-gangs-deadlock"), "gang"),
    ("mixed skip", lambda: mixed("skip"), "kueue+coscheduling"),
    ("mixed strict, preemption", lambda: mixed("strict", preemption=True), "kueue+gang"),
    ("lesson 04 mix", lambda: lesson04.mix(0.9, n_jobs=300, seed=1), "kueue+coscheduling"),
    ("two ClusterQueues, two flavors", two_queues_kueue, "kueue+gang"),
    ("two ClusterQueues, two flavors", two_queues_kueue, "kueue+coscheduling"),
    ("two ClusterQueues, minCount", lambda: two_queues_kueue(min_count=True), "kueue+gang"),
    ("Volcano Jobs skip", lambda: volcano_jobs("skip"), "gang"),
    ("Volcano Jobs strict", lambda: volcano_jobs("strict"), "kueue+gang"),
    ("weighted queues skip", lambda: weighted_queues("skip"), "gang"),
    ("weighted queues strict, Volcano Jobs", lambda: weighted_queues("strict", "volcano"), "gang"),
    ("weighted queues, Volcano Jobs, no enqueue", lambda: weighted_queues("skip", "volcano", False), "kueue+gang"),
    ("weighted queues easy-backfill", lambda: weighted_queues("easy-backfill"), "gang"),
    ("lesson 04 mix strict", lambda: lesson04.mix(0.8, n_jobs=300, seed=2).with_settings(ordering="strict"), "gang"),
    ("lesson 04 mix volcano-backfill", lambda: lesson04.mix(0.8, n_jobs=300, seed=2).with_settings(
        ordering="volcano-backfill"), "kueue+gang"),
    ("mixed skip, preemption", lambda: mixed("skip", preemption=True), "kueue+gang"),
    ("partial gangs skip", lambda: partial_gangs("skip"), "gang"),
    ("partial gangs strict", lambda: partial_gangs("strict"), "kueue+gang"),
    ("partial gangs volcano-backfill", lambda: partial_gangs("volcano-backfill"), "gang"),
]


def run(build, stack: str, fast_paths: FastPaths = ALL_ON):
    return simulate(build(), stack=stack, record="full", engine="general", fast_paths=fast_paths)


def assert_same(a, b) -> None:
    assert_same_result(a, b)


@pytest.mark.parametrize(("name", "build", "stack"), CASES, ids=[f"{n} | {s}" for n, _, s in CASES])
def test_shortcuts_change_nothing(name, build, stack):
    plain = run(build, stack, FastPaths.none())
    assert_same(run(build, stack), plain)


def example_scenario(name: str) -> Scenario:
    return load_file(REPO / "examples" / name)


# the examples with Kueue cohorts and preemption, Volcano queues, autoscalers
EXAMPLES = [
    ("kueue-two-teams.yaml", "kueue+gang"),
    ("volcano-two-queues.yaml", "gang"),
    ("volcano-job-and-autoscaler.yaml", "gang"),
    ("kueue-provisioning-request.yaml", "kueue+provreq+autoscaler"),
]


@pytest.mark.parametrize(("name", "stack"), EXAMPLES, ids=[f"{n} | {s}" for n, s in EXAMPLES])
def test_shortcuts_change_nothing_in_examples(name, stack):
    plain = simulate(example_scenario(name), stack=stack, record="full", fast_paths=FastPaths.none())
    assert_same(simulate(example_scenario(name), stack=stack, record="full"), plain)


@pytest.mark.parametrize(("switch", "counted", "build", "stack"), [
    ("skip repeated failures", (allocate, "place_gang"), lambda: mixed("skip"), "gang"),
    ("skip repeated failures", (allocate, "place_gang"), lambda: mixed("strict"), "gang"),
    ("skip clean sessions", (allocate, "execute"), lambda: mixed("skip"), "kueue+gang"),
    ("cache scheduling hash", (kueue_pending, "scheduling_hash"), lambda: mixed("skip"), "kueue+gang"),
    ("reuse targets", (Preemptor, "targets"), lambda: mixed("skip"), "kueue+gang"),
    ("fast reject", (FlavorAssigner, "assign"), lambda: mixed("skip"), "kueue+gang"),
    ("fast reject", (FlavorAssigner, "assign"), two_queues_kueue, "kueue+gang"),
    ("fast fit", (FlavorAssigner, "assign"), lambda: lesson04.mix(0.9, n_jobs=300, seed=1), "kueue+gang"),
    ("fast fit", (FlavorAssigner, "assign"), two_queues_kueue, "kueue+gang"),
    ("count lines", (volcano_cache, "job_min_resources"), lambda: volcano_jobs("skip"), "gang"),
    ("remember shortfall", (allocate, "place_gang"), lambda: lesson04.mix(0.9, n_jobs=300, seed=1), "gang"),
    ("remember shortfall", (allocate, "place_gang"), lambda: weighted_queues("skip"), "gang"),
    ("keep trials", (FreeCapacity, "give"), lambda: mixed("skip"), "gang"),
    ("keep trials", (FreeCapacity, "give"), lambda: mixed("strict"), "kueue+gang"),
    ("count fits", (allocate, "trial"), lambda: mixed("skip"), "gang"),
    ("count fits", (allocate, "trial"), lambda: mixed("strict"), "kueue+gang"),
    ("fast park", (PendingWorkloads, "pop"), lambda: lesson04.mix(0.9, n_jobs=300, seed=1), "kueue+gang"),
    ("fast park", (PendingWorkloads, "pop"), lambda: mixed("skip"), "kueue+gang"),
    ("direct commit", (allocate, "trial"), lambda: mixed("skip"), "gang"),
    ("direct commit", (allocate, "trial"), lambda: lesson04.mix(0.9, n_jobs=300, seed=1), "kueue+gang"),
])
def test_each_shortcut_saves_work(monkeypatch, switch, counted, build, stack):
    """With only ``switch`` on (and those it ``NEEDS``), the function it saves is called fewer times than without."""
    owner, attr = counted
    original = getattr(owner, attr)
    calls = []

    def counting(*args, **kwargs):
        calls.append(1)
        return original(*args, **kwargs)

    monkeypatch.setattr(owner, attr, counting)
    counts = []
    for on in (False, True):
        calls.clear()
        run(build, stack, only(switch, on))
        counts.append(len(calls))
    assert counts[1] < counts[0]


def park_reasons(fast_paths: FastPaths) -> list[str]:
    """A 4-GPU workload parked in a ClusterQueue of 8 GPUs while the usage goes 8, 7, 6, 8, 6, then 4: its reason
    after each change (after each release that leaves it short, it is parked again in place)."""
    cq = ClusterQueue("cq", [ResourceGroup((GPU,), (FlavorQuotas("default", {GPU: Quota(8)}),))])
    kueue = Kueue([ResourceFlavor("default")], [cq], [LocalQueue("lq", "default", "cq")], fast_paths=fast_paths)
    made = {}

    def settle(now: float) -> None:
        while kueue.cycle(now).changed:
            pass

    def submit(name: str, gpus: int, now: float) -> None:
        made[name] = Workload(name, "default", "lq", [PodSetSpec("main", 1, {GPU: gpus})], created=now)
        kueue.submit(made[name])
        settle(now)

    def finish(name: str, now: float) -> None:
        kueue.finish(made[name])
        settle(now)

    for k, (name, gpus) in enumerate([("a1", 3), ("a2", 3), ("a3", 1), ("a4", 1), ("b", 4)]):
        submit(name, gpus, float(k))
    seen = []
    for step in (lambda: None, lambda: finish("a4", 5.0), lambda: finish("a3", 6.0), lambda: submit("a5", 2, 7.0),
                 lambda: finish("a5", 8.0), lambda: finish("a2", 9.0)):
        step()
        b = made["b"]
        seen.append("admitted" if b.admission is not None else b.pending_reason.rsplit(", ", 1)[-1])
    return seen


@pytest.mark.parametrize("on", [False, True], ids=["plain", "fast park"])
def test_a_class_parked_in_place_quotes_the_unused_quota_of_that_moment(on):
    """fast_park keeps a parked class's reasons per figure they quote: a release that changes the figure changes them."""
    assert park_reasons(FastPaths(fast_park=on)) == ["4 more needed", "3 more needed", "2 more needed", "2 more needed", "2 more needed",
                              "admitted"]


@pytest.mark.parametrize(("requests", "expected"), [
    (((2, 0.0, 0, ()),) * 3, True),  # identical pods
    (((2, 0.5, 2 ** 30, ()),) * 2, True),  # 500m and 1Gi: exact amounts
    (((2, 0.1, 0, ()),) * 2, False),  # 100m is no multiple of 2**-10 cores: a give-back may round
    (((2, 0.0, 0, ()), (4, 0.0, 0, ())), False),  # two requests: the first pod placed may block the other
    (((2, 0.0, 0, (("pool", "a"),)), (2, 0.0, 0, ())), False),  # same amounts, other node selectors
    ((), True),  # no pod: nothing to place
])
def test_monotone_shapes(requests, expected):
    assert volcano_cache.monotone((requests, len(requests), (len(requests),))) is expected


@pytest.mark.parametrize(("cpu", "memory", "expected"), [
    (0.0, 0, True),
    (0.25, 512 * 2 ** 20, True),
    (96.0, 2 ** 40, True),
    (0.1, 0, False),
    (0.0, 0.5, False),
    (2.0 ** 21, 0, False),
])
def test_exact_give_back(cpu, memory, expected):
    assert volcano_cache.exact_give_back(cpu, memory) is expected


@pytest.mark.parametrize(("wait_for_pods_ready", "block_admission", "fewer_cycles"), [
    (False, False, True),
    (True, False, True),  # waitForPodsReady reads the pods in its timer, not in a cycle
    (True, True, False),  # blockAdmission: a cycle admits nothing while an admitted workload is not ready
])
def test_last_bind_wakes_only_layers_that_look(monkeypatch, wait_for_pods_ready, block_admission, fewer_cycles):
    """A job's last bind runs a cycle only for an admission layer that looks at bound pods.

    Kueue does not, unless waitForPodsReady blocks admission (``KueueLayer.waits_for_ready_pods``): the run
    makes fewer cycles than one whose layer claims to look, and gives the same tables. With
    ``blockAdmission``, both runs make the same cycles."""
    base = mixed("skip")
    setup = dataclasses.replace(default_objects(base), config=KueueConfig(
        wait_for_pods_ready=wait_for_pods_ready, block_admission=block_admission))
    scenario = dataclasses.replace(base, kueue=setup)
    original = simulation.Simulation._cycle
    cycles = []

    def counting(self, now):
        cycles.append(now)
        return original(self, now)

    monkeypatch.setattr(simulation.Simulation, "_cycle", counting)
    runs, counts = [], []
    for looks in (False, True):
        if looks:
            monkeypatch.setattr(KueueLayer, "waits_for_ready_pods", property(lambda self: True))
        cycles.clear()
        runs.append(simulate(scenario, stack="kueue+gang", record="full", engine="general"))
        counts.append(len(cycles))
    assert_same(*runs)
    assert (counts[0] < counts[1]) is fewer_cycles and counts[0] <= counts[1]


def test_pods_ready_timeouts_need_no_cycle_at_the_last_bind(monkeypatch):
    """Lesson 04's mix under Kueue's default waitForPodsReady evicts and requeues workloads whose pods wait too
    long (timeouts, backoffs, requeues by eviction time): the same tables whether or not a job's last bind
    runs a cycle."""
    scenario = lesson04.mix(0.8, n_jobs=300, seed=0)
    plain = simulate(scenario, stack="kueue+gang", record="full", engine="general")
    assert plain.metrics["kueue_evicted_workloads_total"]["count"].sum() > 0  # the timer did act
    monkeypatch.setattr(KueueLayer, "waits_for_ready_pods", property(lambda self: True))
    assert_same(plain, simulate(scenario, stack="kueue+gang", record="full", engine="general"))


@pytest.mark.parametrize(("build", "most_assignments"), [
    (lambda: lesson04.mix(0.9, n_jobs=300, seed=1), 6),  # two classes that fit and fail in turn
    (lambda: mixed("skip"), 40),
])
def test_fast_fit_replays_fits_and_failures(monkeypatch, build, most_assignments):
    """With a fit and a failure kept per class, the flavor assigner runs about once per class and outcome, not
    once per admission (a single kept result, overwritten at each turn, would run it hundreds of times)."""
    original = FlavorAssigner.assign
    calls = []
    monkeypatch.setattr(FlavorAssigner, "assign", lambda self, *a, **k: calls.append(1) or original(self, *a, **k))
    run(build, "kueue+gang")
    assert len(calls) <= most_assignments


def test_kueue_layer_stops_once_no_head_is_left(monkeypatch):
    """Once every ClusterQueue's classes are admitted or parked, the layer stops: after a layer cycle's first Kueue
    cycle (which may find no head, when the engine wakes Kueue with every class parked) none finds no head."""
    original_cycle, original_layer = kueue_scheduler.Kueue.cycle, KueueLayer.cycle
    cycles, late_empty = [0], []

    def counting(self, now=0.0):
        cycles[0] += 1
        if cycles[0] > 1 and not self.has_heads():
            late_empty.append(now)
        return original_cycle(self, now)

    def per_layer_cycle(self, sim, now):
        cycles[0] = 0
        return original_layer(self, sim, now)

    monkeypatch.setattr(kueue_scheduler.Kueue, "cycle", counting)
    monkeypatch.setattr(KueueLayer, "cycle", per_layer_cycle)
    run(lambda: lesson04.mix(0.9, n_jobs=300, seed=1), "kueue+gang")
    assert late_empty == []


# -- one home for the switches ---------------------------------------------------------------------------
PACKAGE = REPO / "gangkit"
#: module-level booleans that are no speed switch: (module path, name) -> what it is
NOT_SWITCHES = {("model/reading/fields.py", "ANY"): "the known-fields tree's mark for 'any subtree'"}


def module_level_booleans() -> list[tuple[str, str]]:
    """(module path, name) of every module-level name in gangkit bound to True or False, read with ``ast``."""
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.parse(path.read_text()).body:
            targets, value = [], None
            if isinstance(node, ast.Assign):
                targets, value = node.targets, node.value
            elif isinstance(node, ast.AnnAssign) and node.value is not None:
                targets, value = [node.target], node.value
            if isinstance(value, ast.Constant) and isinstance(value.value, bool):
                found += [(path.relative_to(PACKAGE).as_posix(), t.id) for t in targets if isinstance(t, ast.Name)]
    return found


def test_no_module_keeps_a_speed_switch():
    """A shortcut is a field of FastPaths, carried on the run settings; a module-level True/False is a switch
    that a run cannot set (and a test would have to monkeypatch)."""
    switches = [f"{path}: {name}" for path, name in module_level_booleans() if (path, name) not in NOT_SWITCHES]
    assert switches == []


@pytest.mark.parametrize(("fast_paths", "expected"), [
    ("none", "expected a FastPaths value, got 'none'"),
    (FastPaths(fast_park=1), "fast_park: expected True or False, got 1"),
], ids=["a string instead of the value", "a number for one shortcut"])
def test_bad_fast_paths_are_refused_by_name(fast_paths, expected):
    with pytest.raises(ScenarioError, match="fast_paths") as err:
        simulate("three-workers", fast_paths=fast_paths)
    assert expected in str(err.value)


@pytest.mark.parametrize(("fast_paths", "lean"), [
    (ALL_ON, True),
    (FastPaths(lean_engine=False), False),
], ids=["all on: the lean engine runs", "lean_engine off: the general engine runs"])
def test_the_lean_engine_is_a_fast_path(monkeypatch, fast_paths, lean):
    """engine="auto" runs the plainest gang runs through the lean engine only while the fast path allows it."""
    made = []
    original = simulation.Simulation.__init__
    monkeypatch.setattr(simulation.Simulation, "__init__",
                        lambda self, *a, **k: made.append(type(self).__name__) or original(self, *a, **k))
    sc = scenarios.mixed(n_jobs=50, n_nodes=4, seed=2)
    sc = dataclasses.replace(sc, jobs=[job(j.name, pods=1, gpus=1, run_time=j.run_time, submit_time=j.submit_time)
                                       for j in sc.jobs])
    simulate(sc, stack="gang", record="jobs", fast_paths=fast_paths)
    assert (made[0] != "Simulation") is lean
