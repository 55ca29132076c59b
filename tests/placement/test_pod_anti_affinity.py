"""One pod of a pod set per node: required pod anti-affinity on ``kubernetes.io/hostname`` (``PodSet.one_per_node``).

kube-scheduler's InterPodAffinity Filter (Kubernetes 1.35) refuses a node
that holds, or has assumed, a pod the rule's selector picks; Volcano's
predicates plugin runs the same filter; Karpenter's and cluster-autoscaler's
simulations keep it too, so each such pod needs a node of its own. Rows:
placement under every gang layer, node supply, the node choice against a
plain scan, Volcano's shortcuts on and off, the manifest round trip, errors.
"""

from __future__ import annotations

import math
import random
import warnings

import pytest
import yaml

import gangkit as gk
from gangkit import Job, Node, PodSet, Scenario, nodes
from gangkit.engine.capacity import FreeCapacity
from gangkit.engine.state import JobState, PodState
from gangkit.manifests import dump_manifests, load_manifests
from gangkit.model.errors import ScenarioError
from gangkit.model.fast_paths import FastPaths
from gangkit.model.jobs import validate_jobs
from gangkit.placement.kube_scheduler import KubeScheduler
from gangkit.results.diagnosis import ANTI_AFFINITY_MISMATCH, diagnose, fit_error
from gangkit.supply.autoscaler import ClusterAutoscaler, NodeGroup
from gangkit.supply.cloud import InstanceType
from gangkit.supply.karpenter import Karpenter, NodePool
from gangkit.volcano import cache as volcano_cache

import builders
from builders import CPU_ONLY, simulate_on, supplied

try:
    from schema_util import requires_schemas, validate_manifest
except ImportError:  # tests/ imported as a package
    from tests.schema_util import requires_schemas, validate_manifest

STACKS = ("gang", "pod", "coscheduling", "kube-gang", "yunikorn")


def gang(name="g", pods=4, gpus=1, apart=True, **kw) -> Job:
    """:func:`builders.gang` as these cases start from it: 4 one-GPU pods of 100 s, one per node unless not ``apart``."""
    return builders.gang(name, pods, gpus, run_time=100.0, one_per_node=apart, **kw)


def run(node_list, jobs, stack, horizon=1000.0):
    """One run recorded in full (the cases read the pods table)."""
    return simulate_on(node_list, jobs, stack=stack, horizon=horizon, record="full", name="case")


# -- placement ------------------------------------------------------------------------------------------------
PLACEMENT = [
    # (id, nodes, rule, expected start of g (nan: never), nodes its pods use)
    ("with the rule a gang of 4 one-GPU pods cannot start on 2 nodes of 4 GPUs", 2, True, math.nan, None),
    ("without it the same gang packs onto the 2 nodes and starts", 2, False, 0.0, None),
    ("on 4 nodes it starts, one pod per node", 4, True, 0.0, 4),
]


@pytest.mark.parametrize("stack", STACKS)
@pytest.mark.parametrize("count, rule, start, used", [c[1:] for c in PLACEMENT], ids=[c[0] for c in PLACEMENT])
def test_gang_placement_keeps_one_pod_per_node(stack, count, rule, start, used):
    r = run(nodes(count, gpus=4), [gang(apart=rule)], stack)
    got = r.jobs.set_index("job").loc["g", "start_s"]
    assert (math.isnan(got) and math.isnan(start)) or got == start, r.jobs.loc[0, "reason"]
    pods = r.pods[r.pods.job == "g"].dropna(subset=["node"])
    if used is not None:
        assert pods.node.nunique() == used == len(pods)
    if rule:  # at no time two of its pods on one node
        live = pods[pods.bound_s.notna()]
        for t in sorted(set(live.bound_s)):
            on = live[(live.bound_s <= t) & ((live.released_s.isna()) | (live.released_s > t))]
            assert on.node.is_unique, (t, on)


@pytest.mark.parametrize("stack", STACKS)
def test_two_jobs_may_share_a_node(stack):
    # two gangs of 2 pods, each one per node, on 2 nodes of 2 GPUs: every node holds one pod of each job
    r = run(nodes(2, gpus=2), [gang("a", pods=2), gang("b", pods=2)], stack)
    assert list(r.jobs.start_s) == [0.0, 0.0]
    pods = r.pods.dropna(subset=["node"])
    assert sorted(pods.groupby("node").job.apply(sorted).tolist()) == [["a", "b"], ["a", "b"]]


@pytest.mark.parametrize("stack", STACKS)
def test_later_pods_of_the_group_wait_for_a_node_without_one(stack):
    # independent pods, minMember 2, on 2 nodes: two run at once, the other two take those nodes when they end
    j = gang(progress="independent", min_member=2)
    r = run(nodes(2, gpus=4), [j], stack)
    pods = r.pods.sort_values(["bound_s", "node"])
    assert list(pods.bound_s) == [0.0, 0.0, 100.0, 100.0]
    assert list(pods.node) == ["node-0", "node-1", "node-0", "node-1"]


@pytest.mark.parametrize("stack", ("pod", "gang"))
def test_the_rule_is_per_pod_set(stack):
    # a driver and its workers: workers one per node, the driver may join a worker
    j = Job("g", [PodSet("driver", 1, 1), PodSet("workers", 2, 1, one_per_node=True)], run_time=100.0)
    r = run(nodes(2, gpus=2), [j], stack)
    assert r.jobs.loc[0, "start_s"] == 0.0
    workers = r.pods[r.pods.pod_set == "workers"]
    assert workers.node.is_unique


# -- node choice ----------------------------------------------------------------------------------------------
def scan(cap: FreeCapacity, request: tuple, avoid: set):
    """The literal Filter and Score over the nodes not avoided, with the score :meth:`FreeCapacity.choose` uses."""
    gpus, cpu, memory, selector = request
    kind_index = bool(selector) or bool((cpu or memory) and cap.models_cpu_or_memory)
    best, best_key = None, None
    for st in cap.nodes:
        if st in avoid or not st.fits(gpus, cpu, memory, selector):
            continue
        key = cap.score_all(st, gpus, cpu, memory) if kind_index else cap._score(st.node.gpus, st.free_gpus, gpus)
        if best_key is None or key > best_key:
            best, best_key = st, key
    return best


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("scoring", ("LeastAllocated", "MostAllocated"))
def test_choose_avoiding_matches_a_scan_without_the_avoided_nodes(seed, scoring):
    rng = random.Random(seed)
    cap = FreeCapacity(scoring)
    with_cpu = seed % 2 == 0
    for i in range(12):
        g = rng.choice((2, 4, 8))
        cap.add(Node(f"n{i}", g, cpu=32.0 if with_cpu else None, memory=2 ** 36 if with_cpu else None,
                     labels={"zone": rng.choice("ab")}))
    for st in cap.nodes:  # some room taken
        cap.take(st, rng.randrange(st.free_gpus + 1), 0.0, 0)
    for _ in range(40):
        request = (rng.choice((0, 1, 2)), rng.choice((0.0, 4.0)) if with_cpu else 0.0, 0,
                   rng.choice(((), (("zone", "a"),))))
        avoid = set(rng.sample(cap.nodes, rng.randrange(5)))
        assert cap.choose_avoiding(request, avoid) is scan(cap, request, avoid)
        assert cap.choose(*request) is scan(cap, request, set())  # the avoided nodes are back for the next one
        node = cap.choose(*request)
        if node is not None and rng.random() < 0.5:
            cap.take(node, *request[:3])


def test_choose_for_skips_the_nodes_of_bound_and_tentatively_placed_pods_of_its_group():
    cap = FreeCapacity()
    for i in range(3):
        cap.add(Node(f"n{i}", 4))
    spec = gang(pods=3)
    js = JobState(spec, 0)
    js.pods = [PodState(js, k, spec.pod_sets[0], f"g-{k}") for k in range(3)]
    js.pods[0].node = cap.nodes[0]  # bound
    other = JobState(gang("h", pods=1), 1)
    stranger = PodState(other, 0, other.spec.pod_sets[0], "h-0")
    placed = [(js.pods[1], cap.nodes[1]), (stranger, cap.nodes[2])]  # the other job's pod does not count
    assert cap.choose_for(js.pods[2], placed) is cap.nodes[2]
    assert cap.choose_for(js.pods[2], placed + [(js.pods[1], cap.nodes[2])]) is None


# -- diagnosis -----------------------------------------------------------------------------------------------
def test_fit_error_names_the_anti_affinity_filter():
    cap = FreeCapacity()
    a, b = cap.add(Node("a", 4)), cap.add(Node("b", 4))
    cap.add(Node("c", 0))
    spec = gang(pods=3)
    js = JobState(spec, 0)
    js.pods = [PodState(js, k, spec.pod_sets[0], f"g-{k}") for k in range(3)]
    js.pods[0].node, js.pods[1].node = a, b
    message, reasons = fit_error(cap, js.pods[2])
    # NodeResourcesFit filters before InterPodAffinity: the empty node says Insufficient, the others the rule
    assert message == f"0/3 nodes are available: 1 Insufficient nvidia.com/gpu, 2 {ANTI_AFFINITY_MISMATCH}."
    assert reasons == {ANTI_AFFINITY_MISMATCH: 2, "Insufficient nvidia.com/gpu": 1}


@pytest.mark.parametrize("stack, code, words", [
    ("gang", "GangCannotFit", "4 pods wait, 2 of the ready nodes have room for one and hold none"),
    ("pod", "PartiallyPlaced", "2 pods wait, 0 of the ready nodes have room for one and hold none"),
])
def test_the_diagnosis_says_the_rule_keeps_the_pods_out(stack, code, words):
    d = diagnose(run(nodes(2, gpus=4), [gang()], stack), "g")
    assert d.code == code and words in d.message and "required pod anti-affinity" in d.message


def test_kube_scheduler_counts_the_nodes_the_rule_refuses():
    r = run(nodes(2, gpus=4), [gang()], "pod")
    assert f"2 {ANTI_AFFINITY_MISMATCH}" in r.jobs.loc[0, "reason"]


# -- node supply ---------------------------------------------------------------------------------------------
TYPES = [InstanceType("g1", 1, 1.0), InstanceType("g8", 8, 2.0)]


@pytest.mark.parametrize("placement", ("gang", "pod"))
@pytest.mark.parametrize("rule, claims, types", [(True, 4, {"g1"}), (False, 1, {"g8"})])
def test_karpenter_launches_a_node_per_pod_of_the_group(placement, rule, claims, types):
    k = Karpenter([NodePool("gpu", ["g1", "g8"])], TYPES)
    r = simulate_on(CPU_ONLY, [gang(apart=rule)], stack=supplied(placement, k, name="x"), horizon=5000)
    created = r.metrics["karpenter_nodeclaims_created_total"]
    assert len(created) == claims and set(created.instance_type) == types
    assert r.jobs.loc[0, "state"] == "Finished"


def test_karpenter_skips_an_existing_node_that_holds_a_pod_of_the_group():
    # one node of 8 GPUs holds one pod of the 2-pod gang's group after a first pod binds: the second needs a new node
    k = Karpenter([NodePool("gpu", ["g1", "g8"])], TYPES)
    r = simulate_on([Node("big", 8)], [gang(pods=2), gang("h", pods=1, apart=False)],
                    stack=supplied(KubeScheduler(), k, name="x"), horizon=5000)
    created = r.metrics["karpenter_nodeclaims_created_total"]
    assert len(created) == 1 and list(created.instance_type) == ["g1"]
    assert (r.jobs.state == "Finished").all()


@pytest.mark.parametrize("rule, launched", [(True, 4), (False, 1)])
def test_cluster_autoscaler_packs_one_pod_of_the_group_per_template(rule, launched):
    ca = ClusterAutoscaler([NodeGroup("g8", InstanceType("g8", 8, 2.0), max_size=10)], expander="least-waste")
    r = simulate_on(CPU_ONLY, [gang(apart=rule)], stack=supplied("pod", ca, name="x"), horizon=5000)
    assert r.jobs.loc[0, "state"] == "Finished"
    assert r.pods.node.nunique() == launched


# -- Volcano's shortcuts ---------------------------------------------------------------------------------------
def stream(seed: int) -> Scenario:
    rng = random.Random(seed)
    jobs = [Job(f"j{k:02d}", [PodSet("workers", rng.choice((1, 2, 3, 4)), rng.choice((1, 2)),
                                     one_per_node=rng.random() < 0.5)],
                run_time=float(rng.randrange(20, 200)), submit_time=float(rng.randrange(0, 300)))
            for k in range(40)]
    return Scenario(nodes(4, gpus=4), jobs, name=f"stream-{seed}")


@pytest.mark.parametrize("ordering", ("skip", "strict", "largest-first"))
@pytest.mark.parametrize("seed", range(3))
def test_volcano_shortcuts_change_nothing_with_the_rule(seed, ordering):
    def once(on: bool):
        fast = FastPaths(**dict.fromkeys(("skip_repeated_failures", "remember_shortfall", "keep_shapes", "count_lines"), on))
        return gk.simulate(stream(seed).with_settings(ordering=ordering), stack="gang", record="full",
                           engine="general", fast_paths=fast)
    fast, plain = once(True), once(False)
    assert fast.summary() == plain.summary()
    for table in ("jobs", "pods", "events"):
        assert getattr(fast, table).equals(getattr(plain, table)), table


@pytest.mark.parametrize("shape, expected", [
    (((((1, 0.0, 0, ()),) * 3), 3, (None,)), True),
    (((((1, 0.0, 0, ()),) * 3), 3, (None,), (volcano_cache.ONE_PER_NODE, (True,) * 3)), False),
])
def test_a_one_per_node_shape_is_not_monotone(shape, expected):
    assert volcano_cache.monotone(shape) is expected


def test_jobs_of_the_same_requests_with_and_without_the_rule_are_different_shapes():
    c = volcano_cache.JobCache()
    shapes = []
    for i, rule in enumerate((True, False)):
        spec = gang(f"j{i}", apart=rule)
        js = JobState(spec, i)
        js.pods = [PodState(js, k, spec.pod_sets[0], f"j{i}-{k}") for k in range(4)]
        shapes.append(c.shape(js))
    assert shapes[0] != shapes[1]


# -- manifests -----------------------------------------------------------------------------------------------
NODE_YAML = """apiVersion: v1
kind: Node
metadata: {name: n0}
status: {allocatable: {nvidia.com/gpu: "4"}}
"""


def job_yaml(affinity, labels=None) -> str:
    template = {"spec": {"containers": [{"name": "w", "image": "x",
                                         "resources": {"limits": {"nvidia.com/gpu": "1"}}}]}}
    if affinity is not None:
        template["spec"]["affinity"] = affinity
    if labels:
        template["metadata"] = {"labels": labels}
    doc = {"apiVersion": "batch/v1", "kind": "Job",
           "metadata": {"name": "train", "annotations": {"gangkit/run-time": "1h"}},
           "spec": {"parallelism": 4, "template": template}}
    return NODE_YAML + "---\n" + yaml.safe_dump(doc)


def anti(selector, key="kubernetes.io/hostname", **extra):
    term = {"labelSelector": selector, "topologyKey": key, **extra}
    return {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}}


READS = [
    # (id, affinity, template labels, one_per_node, warned)
    ("no affinity", None, None, False, False),
    ("the Job controller's job-name label", anti({"matchLabels": {"batch.kubernetes.io/job-name": "train"}}),
     None, True, False),
    ("the template's own labels", anti({"matchLabels": {"app": "train"}}), {"app": "train"}, True, False),
    ("matchExpressions In", anti({"matchExpressions": [{"key": "app", "operator": "In", "values": ["train"]}]}),
     {"app": "train"}, True, False),
    ("a selector the pods do not match", anti({"matchLabels": {"app": "other"}}), {"app": "train"}, False, True),
    ("a zone topology", anti({"matchLabels": {"app": "train"}}, key="topology.kubernetes.io/zone"),
     {"app": "train"}, False, True),
    ("NotIn", anti({"matchExpressions": [{"key": "app", "operator": "NotIn", "values": ["x"]}]}),
     {"app": "train"}, False, True),
    ("namespaces", anti({"matchLabels": {"app": "train"}}, namespaces=["a"]), {"app": "train"}, False, True),
    ("preferred only", {"podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
        {"weight": 1, "podAffinityTerm": {"labelSelector": {"matchLabels": {"app": "train"}},
                                          "topologyKey": "kubernetes.io/hostname"}}]}}, {"app": "train"}, False, True),
    ("node affinity", {"nodeAffinity": {}}, None, False, True),
    ("an empty selector", anti({}), None, False, True),
]


@pytest.mark.parametrize("affinity, labels, apart, warned", [c[1:] for c in READS], ids=[c[0] for c in READS])
def test_the_reader_takes_only_the_modelled_form(affinity, labels, apart, warned):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sc = load_manifests(job_yaml(affinity, labels))
    assert sc.jobs[0].pod_sets[0].one_per_node is apart
    said = "\n".join(sc.warnings)
    assert ("spec.template.spec.affinity" in said) is warned
    assert ("gangkit reads only affinity.podAntiAffinity" in said) is warned


@pytest.mark.parametrize("stack", ("gang", "pod", "coscheduling", "kube-gang", "yunikorn"))
def test_a_dump_reads_back_into_the_same_run(stack):
    sc = Scenario(nodes(4, gpus=4), [gang(), gang("h", pods=2, apart=False)], name="apart").with_settings(stack=stack)
    text = dump_manifests(sc)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        back = load_manifests(text)
    assert [ps.one_per_node for j in back.jobs for ps in j.pod_sets] == [True, False]
    assert not [w for w in back.warnings if "affinity" in w]
    assert gk.simulate(back).summary() == gk.simulate(sc).summary()


@requires_schemas
def test_the_written_job_is_valid_for_the_real_schema():
    sc = Scenario(nodes(4, gpus=4), [gang()], name="apart")
    docs = [d for d in yaml.safe_load_all(dump_manifests(sc)) if d["kind"] == "Job"]
    assert docs and docs[0]["spec"]["template"]["spec"]["affinity"] == anti(
        {"matchLabels": {"batch.kubernetes.io/job-name": "g"}})
    assert all(validate_manifest(d) for d in docs)


# -- errors --------------------------------------------------------------------------------------------------
def test_one_per_node_must_be_a_bool():
    with pytest.raises(ScenarioError, match=r"pod_sets\[0\]\.one_per_node.*expected True or False"):
        validate_jobs([Job("g", [PodSet("workers", 2, 1, one_per_node=1)], run_time=10.0)])


def test_the_plain_screen_sends_a_one_per_node_job_to_the_full_check():
    validate_jobs([gang()])  # valid: no error
    with pytest.raises(ScenarioError, match="one_per_node"):
        validate_jobs([Job("g", [PodSet("workers", 2, 1, one_per_node="yes")], run_time=10.0)])


def test_a_volcano_job_cannot_carry_the_rule_in_its_manifest():
    sc = Scenario(nodes(2, gpus=4), [gang(controller="volcano")], name="apart")
    with pytest.raises(ScenarioError, match="one_per_node"):
        dump_manifests(sc)


# -- the lean engine -----------------------------------------------------------------------------------------
def test_one_pod_jobs_with_the_rule_still_run_lean_and_agree_with_the_general_engine():
    from gangkit.engine import lean
    from gangkit.stacks import build_stack
    jobs = [Job(f"j{i:02d}", [PodSet("w", 1, 1, one_per_node=i % 2 == 0)], run_time=50.0 + i, submit_time=float(i))
            for i in range(30)]
    sc = Scenario(nodes(2, gpus=4), jobs, name="one-pod").with_settings(record="summary")
    assert lean.applies(sc, build_stack(sc.settings.stack, sc.settings, sc))  # a job of one pod has no pair to keep apart
    assert gk.simulate(sc, stack="gang").summary() == gk.simulate(sc, stack="gang", engine="general").summary()


# -- JobSets: a pod set per replicatedJob, its pods labelled by the JobSet controller -------------------------
def jobset_yaml(roles) -> str:
    """A JobSet with one replicatedJob per (name, replicas, labels, affinity)."""
    replicated = []
    for name, replicas, labels, affinity in roles:
        pod = {"containers": [{"name": "c", "image": "i", "resources": {"limits": {"nvidia.com/gpu": "1"}}}]}
        if affinity is not None:
            pod["affinity"] = affinity
        template = {"metadata": {"labels": labels}, "spec": pod} if labels else {"spec": pod}
        replicated.append({"name": name, "replicas": replicas,
                           "template": {"spec": {"parallelism": 2, "completions": 2, "template": template}}})
    doc = {"apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet", "metadata": {"name": "js"},
           "spec": {"replicatedJobs": replicated}}
    return NODE_YAML + "---\n" + yaml.safe_dump(doc)


RJ = "jobset.sigs.k8s.io/replicatedjob-name"
JOBSET_READS = [
    ("one replicatedJob, by its template label", [("w", 1, {"app": "js"}, anti({"matchLabels": {"app": "js"}}))],
         [True], False),
    ("by the label the JobSet controller adds", [("w", 2, None, anti({"matchLabels": {RJ: "w"}}))], [True], False),
    ("by the child Job's name (one replica)",
         [("w", 1, None, anti({"matchLabels": {"batch.kubernetes.io/job-name": "js-w-0"}}))], [True], False),
    ("by a child Job's name with two replicas: only that Job's pods are kept apart, not modelled",
         [("w", 2, None, anti({"matchLabels": {"batch.kubernetes.io/job-name": "js-w-0"}}))], [False], True),
    ("each role by its own name", [("leader", 1, None, anti({"matchLabels": {RJ: "leader"}})),
                                       ("w", 1, None, anti({"matchLabels": {RJ: "w"}}))], [True, True], False),
    ("a selector that also picks the other role's pods is not modelled",
         [("leader", 1, {"app": "js"}, anti({"matchLabels": {"app": "js"}})), ("w", 1, {"app": "js"}, None)],
         [False, False], True),
]


@pytest.mark.parametrize("roles, apart, warned", [c[1:] for c in JOBSET_READS], ids=[c[0] for c in JOBSET_READS])
def test_a_jobsets_pod_sets_are_read_with_the_rule(roles, apart, warned):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sc = load_manifests(jobset_yaml(roles))
    assert [ps.one_per_node for ps in sc.jobs[0].pod_sets] == apart
    assert any("template.spec.affinity" in w for w in sc.warnings) is warned


def test_a_jobset_with_the_rule_is_written_and_read_back():
    from gangkit.model.jobs import JOBSET
    j = Job("js", [PodSet("leader", 1, 1), PodSet("workers", 3, 1, one_per_node=True)], run_time=100.0,
            framework=JOBSET)
    sc = Scenario(nodes(4, gpus=4), [j], name="apart").with_settings(stack="gang")
    text = dump_manifests(sc)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        back = load_manifests(text)
    assert [ps.one_per_node for ps in back.jobs[0].pod_sets] == [False, True]
    assert not [w for w in back.warnings if "affinity" in w]
    assert gk.simulate(back).summary() == gk.simulate(sc).summary()


@requires_schemas
def test_the_written_jobset_is_valid_for_the_real_schema():
    from gangkit.model.jobs import JOBSET
    j = Job("js", [PodSet("workers", 3, 1, one_per_node=True)], run_time=100.0, framework=JOBSET)
    docs = [d for d in yaml.safe_load_all(dump_manifests(Scenario(nodes(4, gpus=4), [j], name="apart")))
            if d["kind"] == "JobSet"]
    assert docs and all(validate_manifest(d) for d in docs)
