"""``gangkit admit``: tables of named cases, a manifest and the expected decisions per row.

Each row is real Kueue YAML (checked against Kueue's CRD schemas in
../shared/schemas) and the ``--json`` object ``gangkit admit`` must print.
The rows follow the examples of Kueue's concept pages (ClusterQueue,
Cohort, the cluster-quotas task page) and the vectors of Kueue's own unit
tests (``pkg/scheduler/scheduler_test.go: TestSchedule`` and
``pkg/scheduler/preemption/preemption_test.go: TestPreemption``), as listed
in the Kueue notes (sections 8.1, 8.2, 8.5, 8.6, 8.7). A pending workload's
reason is matched by a fragment; everything else exactly.
"""

from __future__ import annotations

import json
import warnings
from datetime import datetime, timedelta, timezone

import pytest
import yaml

from gangkit.analysis.admit import admit, format_report
from gangkit.cli.main import main
from gangkit.manifests import GangkitInputWarning
from gangkit.manifests.kueue_snapshot import load_kueue
from gangkit.model.quantity import parse_quantity

from conftest import case, run_cli

try:
    from schema_util import requires_schemas, validate_manifest
except ImportError:  # tests/ imported as a package
    from tests.schema_util import requires_schemas, validate_manifest
from paths import REPO

V1BETA2 = "kueue.x-k8s.io/v1beta2"
T0 = datetime(2025, 1, 1, tzinfo=timezone.utc)



# --- building blocks: Kueue manifests as YAML text ----------------------------------------------


def ts(seconds: float) -> str:
    return (T0 + timedelta(seconds=seconds)).strftime("%Y-%m-%dT%H:%M:%SZ")


def meta(name, namespace=None, created=None):
    m = {"name": name}
    if namespace:
        m["namespace"] = namespace
    if created is not None:
        m["creationTimestamp"] = ts(created)
    return m


def flavor(name, version=V1BETA2, **labels):
    doc = {"apiVersion": version, "kind": "ResourceFlavor", "metadata": meta(name)}
    if labels:
        doc["spec"] = {"nodeLabels": labels}
    return doc


def quota(res, q):
    """One resource quota: ``q`` is the nominal quota, or (nominal, borrowingLimit[, lendingLimit]); None = unset."""
    nominal, borrow, lend = (tuple(q) + (None, None))[:3] if isinstance(q, tuple) else (q, None, None)
    out = {"name": res, "nominalQuota": nominal}
    if borrow is not None:
        out["borrowingLimit"] = borrow
    if lend is not None:
        out["lendingLimit"] = lend
    return out


def rg(*flavors):
    """A resource group: flavors as (name, {resource: quota}); covers the resources of the first flavor, in order."""
    covered = list(flavors[0][1])
    return {"coveredResources": covered,
            "flavors": [{"name": f, "resources": [quota(r, qs[r]) for r in covered]} for f, qs in flavors]}


def cq(name, *groups, cohort=None, strategy=None, within=None, reclaim=None, borrow=None, threshold=None,
       when_borrow=None, when_preempt=None, preference=None, version=V1BETA2, selector=True):
    spec = {}
    if cohort:
        spec["cohortName" if version == V1BETA2 else "cohort"] = cohort
    if selector:
        spec["namespaceSelector"] = {}
    if strategy:
        spec["queueingStrategy"] = strategy
    preemption = {}
    if within:
        preemption["withinClusterQueue"] = within
    if reclaim:
        preemption["reclaimWithinCohort"] = reclaim
    if borrow:
        preemption["borrowWithinCohort"] = {"policy": borrow} | ({"maxPriorityThreshold": threshold} if threshold is not None else {})
    if preemption:
        spec["preemption"] = preemption
    fungibility = {k: v for k, v in (("whenCanBorrow", when_borrow), ("whenCanPreempt", when_preempt),
                                     ("preference", preference)) if v}
    if fungibility:
        spec["flavorFungibility"] = fungibility
    spec["resourceGroups"] = list(groups)
    return {"apiVersion": version, "kind": "ClusterQueue", "metadata": meta(name), "spec": spec}


def cohort(name, *groups, parent=None, version=V1BETA2):
    spec = {}
    if parent:
        spec["parentName"] = parent
    if groups:
        spec["resourceGroups"] = list(groups)
    return {"apiVersion": version, "kind": "Cohort", "metadata": meta(name), "spec": spec}


def lq(name, cluster_queue=None, namespace=None, version=V1BETA2):
    return {"apiVersion": version, "kind": "LocalQueue", "metadata": meta(name, namespace),
            "spec": {"clusterQueue": cluster_queue or name}}


def _times(value, count: int) -> str:
    q = parse_quantity(value, obj="", field="") * count
    return str(q.numerator) if q.denominator == 1 else f"{int(q * 1000)}m"


def wl(name, queue, cpu=None, *, ns=None, count=1, priority=None, created=None, podset="main", requests=None,
       admitted=None, version=V1BETA2):
    """A Workload. ``admitted=(clusterQueue, flavor or {resource: flavor}, reservedAt or None)`` gives it
    ``status.admission`` and a QuotaReserved condition, as Kueue writes them."""
    requests = dict(requests or {})
    if cpu is not None:
        requests = {"cpu": str(cpu)} | requests
    spec = {"queueName": queue}
    if priority is not None:
        spec["priority"] = priority
    spec["podSets"] = [{"name": podset, "count": count, "template": {"spec": {
        "restartPolicy": "Never",
        "containers": [{"name": "main", "image": "busybox:1.36", "resources": {"requests": requests}}]}}}]
    doc = {"apiVersion": version, "kind": "Workload", "metadata": meta(name, ns, created), "spec": spec}
    if admitted:
        cq_name, flavors, reserved_at = (tuple(admitted) + (None,))[:3]
        flavors = flavors if isinstance(flavors, dict) else {r: flavors for r in requests}
        doc["status"] = {
            "admission": {"clusterQueue": cq_name, "podSetAssignments": [{
                "name": podset, "flavors": flavors, "count": count,
                "resourceUsage": {r: _times(v, count) for r, v in requests.items()}}]},
            "conditions": [{"type": "QuotaReserved", "status": "True", "reason": "QuotaReserved",
                            "message": f"Quota reserved in ClusterQueue {cq_name}",
                            "lastTransitionTime": ts(reserved_at or 0)},
                           {"type": "Admitted", "status": "True", "reason": "Admitted",
                            "message": "The workload is admitted", "lastTransitionTime": ts(reserved_at or 0)}]}
    return doc


def manifest(*docs) -> str:
    return yaml.safe_dump_all(docs, sort_keys=False)


# --- expected decisions -------------------------------------------------------------------------


def A(cluster_queue, flavors, count=1, podset="main"):
    """An admitted workload: ClusterQueue, {resource: flavor}, pod count."""
    return {"cluster_queue": cluster_queue, "flavors": {podset: flavors}, "counts": {podset: count}}


def P(state, fragment=""):
    """A pending workload: its state and a fragment of its reason."""
    return {"state": state, "reason": fragment}


def expect(admitted=None, preempted=(), pending=None):
    return {"admitted": admitted or {}, "preempted": [{"name": n, "reason": r} for n, r in preempted],
            "pending": pending or {}}


def check(got: dict, want: dict) -> None:
    assert set(got) == {"admitted", "preempted", "pending"}
    assert got["admitted"] == want["admitted"]
    key = lambda p: (p["name"], p["reason"])  # noqa: E731
    assert sorted(got["preempted"], key=key) == sorted(want["preempted"], key=key)
    assert {k: v["state"] for k, v in got["pending"].items()} == {k: v["state"] for k, v in want["pending"].items()}
    for k, v in want["pending"].items():
        assert v["reason"] in got["pending"][k]["reason"], (k, got["pending"][k]["reason"])


def decide(text: str, cycles):
    with warnings.catch_warnings():
        warnings.simplefilter("error", GangkitInputWarning)  # the rows are clean input
        source = load_kueue(text)
    return admit(source, cycles)


UNTIL_QUIET = None

# --- 8.1 cluster_queue.md -----------------------------------------------------------------------

DEFAULT = flavor("default-flavor")
CQ1 = cq("cluster-queue", rg(("default-flavor", {"cpu": 9, "memory": "36Gi", "pods": 5})))
CQ1_LQ = lq("user-queue", "cluster-queue")
ONE_CPU = {"cpu": "default-flavor", "memory": "default-flavor", "pods": "default-flavor"}

CQ2 = [flavor("spot"), flavor("on-demand"), flavor("pool1"), flavor("pool2"),
       cq("cluster-queue",
          rg(("spot", {"cpu": 9, "memory": "36Gi", "foo.com/gpu": 50}),
             ("on-demand", {"cpu": 18, "memory": "72Gi", "foo.com/gpu": 100})),
          rg(("pool1", {"bar.com/license": 10}), ("pool2", {"bar.com/license": 10}))),
       lq("user-queue", "cluster-queue")]


def two_teams(a, b, resources=("cpu",), extra=()):
    """Kueue's team-a-cq and team-b-cq in cohort team-ab (the ClusterQueue page): quotas per resource."""
    return [DEFAULT,
            cq("team-a-cq", rg(("default-flavor", dict(zip(resources, a)))), cohort="team-ab"),
            cq("team-b-cq", rg(("default-flavor", dict(zip(resources, b)))), cohort="team-ab"),
            lq("team-a", "team-a-cq"), lq("team-b", "team-b-cq"), *extra]


CPU = {"cpu": "default-flavor"}
CPU_MEM = {"cpu": "default-flavor", "memory": "default-flavor"}

CONCEPT_PAGES = [
    # CQ-1: nominal quotas of cpu, memory and pods, no cohort
    case("CQ-1 five one-pod workloads fill the pods quota; a sixth waits; ten cpus never fit in nine",
         manifest(DEFAULT, CQ1, CQ1_LQ, *[wl(f"job-{i}", "user-queue", 1, requests={"memory": "1Gi"}, created=i)
                                         for i in range(1, 7)],
                  wl("big", "user-queue", 10, created=0)),
         UNTIL_QUIET,
         expect({f"job-{i}": A("cluster-queue", ONE_CPU) for i in range(1, 6)},
                pending={"job-6": P("inadmissible", "insufficient unused quota for pods in flavor default-flavor"),
                         "big": P("inadmissible", "insufficient quota for cpu in flavor default-flavor")})),
    case("CQ-1 the same in kueue.x-k8s.io/v1beta1",
         manifest(flavor("default-flavor", "kueue.x-k8s.io/v1beta1"),
                  cq("cluster-queue", rg(("default-flavor", {"cpu": 9, "memory": "36Gi", "pods": 5})),
                     version="kueue.x-k8s.io/v1beta1"),
                  lq("user-queue", "cluster-queue", version="kueue.x-k8s.io/v1beta1"),
                  *[wl(f"job-{i}", "user-queue", 1, requests={"memory": "1Gi"}, created=i,
                       version="kueue.x-k8s.io/v1beta1") for i in range(1, 7)]),
         UNTIL_QUIET,
         expect({f"job-{i}": A("cluster-queue", ONE_CPU) for i in range(1, 6)},
                pending={"job-6": P("inadmissible", "pods")})),
    case("CQ-1 memory is counted too: 36Gi in 4 workloads of 9Gi and a fifth of 1Gi",
         manifest(DEFAULT, CQ1, CQ1_LQ, *[wl(f"job-{i}", "user-queue", 1, requests={"memory": "9Gi"}, created=i)
                                         for i in range(1, 5)],
                  wl("job-5", "user-queue", 1, requests={"memory": "1Gi"}, created=5)),
         UNTIL_QUIET,
         expect({f"job-{i}": A("cluster-queue", ONE_CPU) for i in range(1, 5)},
                pending={"job-5": P("inadmissible", "insufficient unused quota for memory")})),
    # CQ-2: resource groups; cpu, memory and foo.com/gpu share a flavor, the license is independent
    case("CQ-2 ten cpus do not fit spot's nine: every requested resource of the group gets on-demand",
         manifest(*CQ2, wl("job", "user-queue", 10, requests={"memory": "1Gi", "bar.com/license": "1"})),
         1,
         expect({"job": A("cluster-queue", {"cpu": "on-demand", "memory": "on-demand", "bar.com/license": "pool1"})})),
    case("CQ-2 five cpus fit spot; only requested resources get a flavor",
         manifest(*CQ2, wl("job", "user-queue", 5)),
         1,
         expect({"job": A("cluster-queue", {"cpu": "spot"})})),
    # CQ-3: borrowing in a cohort
    case("CQ-3 with team-b idle, team-a may admit up to 21 cpus and 84Gi",
         manifest(*two_teams((9, "36Gi"), (12, "48Gi"), ("cpu", "memory")),
                  wl("a", "team-a", 21, requests={"memory": "84Gi"})),
         1,
         expect({"a": A("team-a-cq", CPU_MEM)})),
    case("CQ-3 but not 22 cpus",
         manifest(*two_teams((9, "36Gi"), (12, "48Gi"), ("cpu", "memory")), wl("a", "team-a", 22)),
         1,
         expect(pending={"a": P("inadmissible", "maximum capacity")})),
    case("CQ-3 team-a at its nominal quota: team-b's workload goes first, though newer and of lower priority",
         manifest(*two_teams((9, "36Gi"), (12, "48Gi"), ("cpu", "memory")),
                  wl("a-running", "team-a", 9, admitted=("team-a-cq", "default-flavor")),
                  wl("a-new", "team-a", 4, priority=100, created=0), wl("b-new", "team-b", 12, created=10)),
         1,
         expect({"a-running": A("team-a-cq", CPU), "b-new": A("team-b-cq", CPU)},
                pending={"a-new": P("active", "no longer fits")})),
    # CQ-4: borrowingLimit
    case("CQ-4 borrowingLimit 1: team-a admits up to 9 + 1 = 10 cpus",
         manifest(*two_teams(((9, 1),), (12,)), wl("a", "team-a", 10)),
         1,
         expect({"a": A("team-a-cq", CPU)})),
    case("CQ-4 not 11",
         manifest(*two_teams(((9, 1),), (12,)), wl("a", "team-a", 11)),
         1,
         expect(pending={"a": P("inadmissible", "maximum capacity")})),
    case("CQ-4 team-b has no limit: 12 + 9 = 21 cpus",
         manifest(*two_teams(((9, 1),), (12,)), wl("b", "team-b", 21)),
         1,
         expect({"b": A("team-b-cq", CPU)})),
    # CQ-5: lendingLimit
    case("CQ-5 lendingLimit 1 on team-b: team-a admits up to 9 + 1 = 10 cpus",
         manifest(*two_teams((9,), ((12, None, 1),)), wl("a", "team-a", 10)),
         1,
         expect({"a": A("team-a-cq", CPU)})),
    case("CQ-5 not 11",
         manifest(*two_teams((9,), ((12, None, 1),)), wl("a", "team-a", 11)),
         1,
         expect(pending={"a": P("inadmissible", "maximum capacity")})),
    case("CQ-5 team-b may still use 12 + 9 = 21 cpus",
         manifest(*two_teams((9,), ((12, None, 1),)), wl("b", "team-b", 21)),
         1,
         expect({"b": A("team-b-cq", CPU)})),
    case("CQ-5 team-b using 11 (its guaranteed part) leaves team-a its 10",
         manifest(*two_teams((9,), ((12, None, 1),)),
                  wl("b-running", "team-b", 11, admitted=("team-b-cq", "default-flavor")), wl("a", "team-a", 10)),
         1,
         expect({"b-running": A("team-b-cq", CPU), "a": A("team-a-cq", CPU)})),
    case("CQ-5 team-b using all 12 takes the lent cpu back: team-a gets only 9",
         manifest(*two_teams((9,), ((12, None, 1),)),
                  wl("b-running", "team-b", 12, admitted=("team-b-cq", "default-flavor")), wl("a", "team-a", 10)),
         1,
         expect({"b-running": A("team-b-cq", CPU)}, pending={"a": P("inadmissible", "insufficient unused quota")})),
    # CO-1: a Cohort with quota of its own (cohort.md)
    *[case(f"CO-1 a cohort's own 12 cpus: {what}",
           manifest(DEFAULT,
                    cohort("hello-cohort", rg(("default-flavor", {"cpu": 12}))),
                    cq("my-cluster-queue", rg(("default-flavor", {"cpu": 0})), cohort="hello-cohort"),
                    lq("my-queue", "my-cluster-queue"), wl("job", "my-queue", cpus)),
           1, want)
      for what, cpus, want in [
          ("a 12-cpu workload borrows them all", 12, expect({"job": A("my-cluster-queue", CPU)})),
          ("13 never fit", 13, expect(pending={"job": P("inadmissible", "maximum capacity")}))]],
    case("CO-1 a ClusterQueue must list a resource (even with 0) to borrow it",
         manifest(DEFAULT,
                  cohort("hello-cohort", rg(("default-flavor", {"cpu": 12}))),
                  cq("my-cluster-queue", rg(("default-flavor", {"memory": "1Gi"})), cohort="hello-cohort"),
                  lq("my-queue", "my-cluster-queue"), wl("job", "my-queue", 1)),
         1,
         expect(pending={"job": P("inadmissible", "resource cpu unavailable in ClusterQueue")})),
    # T-1: administer_cluster_quotas.md, borrowingLimit on two resources
    *[case(f"T-1 team-a (cpu 9 + 6, memory 36Gi + 24Gi): {what}",
           manifest(*two_teams(((9, 6), ("36Gi", "24Gi")), (12, "48Gi"), ("cpu", "memory")),
                    wl(who, f"team-{who}", cpus, requests={"memory": mem})),
           1, want)
      for what, who, cpus, mem, want in [
          ("15 cpus and 60Gi fit", "a", 15, "60Gi", expect({"a": A("team-a-cq", CPU_MEM)})),
          ("16 cpus do not", "a", 16, "1Gi", expect(pending={"a": P("inadmissible", "cpu")})),
          ("61Gi do not", "a", 1, "61Gi", expect(pending={"a": P("inadmissible", "memory")})),
          ("team-b, without limits, 21 cpus and 84Gi", "b", 21, "84Gi", expect({"b": A("team-b-cq", CPU_MEM)}))]],
]

# --- 8.6 TestSchedule vectors -----------------------------------------------------------------------

ENG = [flavor("on-demand"), flavor("spot"), flavor("model-a"),
       cq("eng-alpha", rg(("on-demand", {"cpu": (50, 50)}), ("spot", {"cpu": (100, 0)})),
          cohort="eng", strategy="StrictFIFO"),
       cq("eng-beta", rg(("on-demand", {"cpu": (50, 10)}), ("spot", {"cpu": (0, 100)})),
          rg(("model-a", {"example.com/gpu": (20, 0)})),
          cohort="eng", strategy="StrictFIFO", within="LowerPriority", reclaim="Any"),
       lq("main", "eng-alpha", "eng-alpha"), lq("main", "eng-beta", "eng-beta")]
LEND = [flavor("default"),
        cq("lend-a", rg(("default", {"cpu": (3, None, 2)})), cohort="lend"),
        cq("lend-b", rg(("default", {"cpu": (2, None, 2)})), cohort="lend"),
        lq("lend-a-queue", "lend-a", "lend"), lq("lend-b-queue", "lend-b", "lend")]


def hierarchy(lending_limit):
    return [flavor("on-demand"), cohort("root"), cohort("child", parent="root"),
            cq("cq-lender", rg(("on-demand", {"cpu": (10, None, lending_limit)})), cohort="child"),
            cq("cq-borrower", rg(("on-demand", {"cpu": (5, 10)})), cohort="child"),
            lq("lq-lender", "cq-lender", "eng-alpha"), lq("lq-borrower", "cq-borrower", "eng-alpha"),
            wl("wl-existing", "lq-borrower", 5, ns="eng-alpha", admitted=("cq-borrower", "on-demand"))]


SCHEDULER = [
    case("cannot borrow if cohort was assigned and would result in overadmission",
         manifest(*ENG, wl("new", "main", 1, ns="eng-alpha", podset="one", count=45),
                  wl("new", "main", 1, ns="eng-beta", podset="one", count=56)),
         1,
         expect({"eng-alpha/new": A("eng-alpha", {"cpu": "on-demand"}, 45, "one")},
                pending={"eng-beta/new": P("active", "no longer fits after processing another workload")})),
    case("can borrow if cohort was assigned and will not result in overadmission",
         manifest(*ENG, wl("new", "main", 1, ns="eng-alpha", podset="one", count=45),
                  wl("new", "main", 1, ns="eng-beta", podset="one", count=55)),
         1,
         expect({"eng-alpha/new": A("eng-alpha", {"cpu": "on-demand"}, 45, "one"),
                 "eng-beta/new": A("eng-beta", {"cpu": "on-demand"}, 55, "one")})),
    case("workload exceeds lending limit when borrow in cohort",
         manifest(*LEND, wl("a", "lend-b-queue", 2, ns="lend", admitted=("lend-b", "default")),
                  wl("b", "lend-b-queue", 3, ns="lend")),
         1,
         expect({"lend/a": A("lend-b", CPU | {"cpu": "default"})},
                pending={"lend/b": P("inadmissible", "insufficient unused quota for cpu in flavor default")})),
    case("hierarchical cohort respects lending limit when borrowing",
         manifest(*hierarchy(3), wl("wl-pending", "lq-borrower", 4, ns="eng-alpha")),
         1,
         expect({"eng-alpha/wl-existing": A("cq-borrower", {"cpu": "on-demand"})},
                pending={"eng-alpha/wl-pending": P("inadmissible", "insufficient unused quota for cpu in flavor on-demand")})),
    case("hierarchical cohort allows borrowing up to lending limit",
         manifest(*hierarchy(5), wl("wl-borrowing", "lq-borrower", 5, ns="eng-alpha")),
         1,
         expect({"eng-alpha/wl-existing": A("cq-borrower", {"cpu": "on-demand"}),
                 "eng-alpha/wl-borrowing": A("cq-borrower", {"cpu": "on-demand"})})),
]

# --- 8.7 TestPreemption vectors (classical preemption) ------------------------------------------------

D = {"cpu": "default"}


def preemption_case(id, queues, running, incoming, preempted, incoming_state="active", fragment="", xfail=None):
    """Kueue's preemption vectors as a scheduling cycle: ``running`` = (name, cq, priority, cpus[, reservedAt]),
    ``incoming`` = (cq, priority, cpus[, created]). One cycle: the victims are preempted, the preemptor waits."""
    docs = [flavor("default"), *queues, *[lq(q["metadata"]["name"]) for q in queues]]
    for name, queue, priority, cpus, *reserved in running:
        docs.append(wl(name, queue, cpus, priority=priority, created=30,
                       admitted=(queue, "default", reserved[0] if reserved else 30)))
    queue, priority, cpus, *created = incoming
    docs.append(wl("in", queue, cpus, priority=priority, created=created[0] if created else 30))
    victims = {n for n, _ in preempted}
    want = expect({name: A(q, D) for name, q, *_ in running if name not in victims}, preempted,
                  {"in": P(incoming_state, fragment), **{n: P("active", f"preempted ({r})") for n, r in preempted}})
    return case(id, manifest(*docs), 1, want, xfail=xfail)


STANDALONE = [cq("standalone", rg(("default", {"cpu": 6})), within="LowerPriority")]
COHORT = [cq("c1", rg(("default", {"cpu": (6, 6), "memory": ("3Gi", "3Gi")})), cohort="cohort",
             within="LowerPriority", reclaim="LowerPriority"),
          cq("c2", rg(("default", {"cpu": (6, 6), "memory": ("3Gi", "3Gi")})), cohort="cohort",
             within="Never", reclaim="Any")]
COHORT_LEND = [cq(f"lend{i}", rg(("default", {"cpu": (6, None, ll)})), cohort="cohort-lend",
                  within="LowerPriority", reclaim="LowerPriority") for i, ll in ((1, 4), (2, 2))]
PREVENT_STARVATION = [cq("prevent-starvation", rg(("default", {"cpu": 6})), within="LowerOrNewerEqualPriority")]
BWC = dict(borrow="LowerPriority", threshold=0)
WITH_SHARED_CQ = [
    cq("a-standard", rg(("default", {"cpu": (1, 12)})), cohort="with-shared-cq", within="Never", reclaim="LowerPriority", **BWC),
    cq("b-standard", rg(("default", {"cpu": (1, 12)})), cohort="with-shared-cq", within="LowerPriority", reclaim="Any", **BWC),
    cq("a-best-effort", rg(("default", {"cpu": (1, 12)})), cohort="with-shared-cq", within="Never", reclaim="LowerPriority", **BWC),
    cq("b-best-effort", rg(("default", {"cpu": (0, 13)})), cohort="with-shared-cq", within="Never", reclaim="LowerPriority", **BWC),
    cq("shared", rg(("default", {"cpu": 10})), cohort="with-shared-cq"),
]

PREEMPTION = [
    preemption_case("preempt lowest priority", STANDALONE,
                    [("low", "standalone", -1, 2), ("mid", "standalone", 0, 2), ("high", "standalone", 1, 2)],
                    ("standalone", 1, 2), [("low", "InClusterQueue")]),
    preemption_case("preempt multiple", STANDALONE,
                    [("low", "standalone", -1, 2), ("mid", "standalone", 0, 2), ("high", "standalone", 1, 2)],
                    ("standalone", 1, 3), [("low", "InClusterQueue"), ("mid", "InClusterQueue")]),
    preemption_case("no preemption for low priority", STANDALONE,
                    [("low", "standalone", -1, 3), ("mid", "standalone", 0, 3)],
                    ("standalone", -1, 1), [], "inadmissible", "insufficient unused quota"),
    preemption_case("minimal set excludes low priority", STANDALONE,
                    [("low", "standalone", -1, 1), ("mid", "standalone", 0, 2), ("high", "standalone", 1, 3)],
                    ("standalone", 1, 2), [("mid", "InClusterQueue")]),
    preemption_case("reclaim quota from borrower", COHORT,
                    [("c1-low", "c1", -1, 3), ("c2-mid", "c2", 0, 3), ("c2-high", "c2", 1, 6)],
                    ("c1", 1, 3), [("c2-mid", "InCohortReclamation")]),
    preemption_case("preempting locally and borrowing same resource in cohort", COHORT,
                    [("c1-med", "c1", 0, 4), ("c1-low", "c1", -1, 4), ("c2-low-1", "c2", -1, 4)],
                    ("c1", 1, 4), [("c1-low", "InClusterQueue")]),
    preemption_case("not enough workloads borrowing", COHORT,
                    [("c1-high", "c1", 1, 4), ("c2-low-1", "c2", -1, 4), ("c2-low-2", "c2", -1, 4)],
                    ("c1", 1, 4), [], "inadmissible", "insufficient unused quota"),
    preemption_case("do not reclaim borrowed quota from same priority for withinCohort=ReclaimFromLowerPriority", COHORT,
                    [("c1", "c1", 0, 2), ("c2-1", "c2", 0, 4), ("c2-2", "c2", 0, 4)],
                    ("c1", 0, 4), [], "inadmissible", "insufficient unused quota"),
    preemption_case("reclaim quota from lender", COHORT_LEND,
                    [("lend1-low", "lend1", -1, 3), ("lend2-mid", "lend2", 0, 3), ("lend2-high", "lend2", 1, 4)],
                    ("lend1", 1, 3), [("lend2-mid", "InCohortReclamation")]),
    preemption_case("preempt from all ClusterQueues in cohort-lend", COHORT_LEND,
                    [("lend1-low", "lend1", -1, 3), ("lend1-mid", "lend1", 0, 2),
                     ("lend2-low", "lend2", -1, 3), ("lend2-mid", "lend2", 0, 4)],
                    ("lend1", 0, 4), [("lend1-low", "InClusterQueue"), ("lend2-low", "InCohortReclamation")]),
    preemption_case("cannot preempt from other ClusterQueues if exceeds requestable quota including lending limit",
                    COHORT_LEND, [("lend2-low", "lend2", -1, 10)],
                    ("lend1", 0, 9), [], "inadmissible", "maximum capacity"),
    preemption_case("preempt newer workloads with the same priority", PREVENT_STARVATION,
                    [("wl1", "prevent-starvation", 2, 2, 15), ("wl2", "prevent-starvation", 1, 2, 16),
                     ("wl3", "prevent-starvation", 1, 2, 15)],
                    ("prevent-starvation", 1, 2, 0), [("wl2", "InClusterQueue")]),
    preemption_case("use BorrowWithinCohort; allow preempting a lower-priority workload from another ClusterQueue "
                    "while borrowing", WITH_SHARED_CQ,
                    [("a-best-effort-low", "a-best-effort", -1, 10), ("b-best-effort-low", "b-best-effort", -1, 1)],
                    ("a-standard", 0, 10), [("a-best-effort-low", "InCohortReclaimWhileBorrowing")]),
    preemption_case("use BorrowWithinCohort; don't allow preempting a lower-priority workload with priority above "
                    "MaxPriorityThreshold, if borrowing is required even after the preemption", WITH_SHARED_CQ,
                    [("b-standard", "b-standard", 1, 10)],
                    ("a-standard", 2, 10), [], "inadmissible", "insufficient unused quota"),
    preemption_case("use BorrowWithinCohort; allow preempting a lower-priority workload with priority above "
                    "MaxPriorityThreshold, if borrowing is not required after the preemption", WITH_SHARED_CQ,
                    [("b-standard", "b-standard", 1, 13)],
                    ("a-standard", 2, 1), [("b-standard", "InCohortReclamation")]),
]


# --- section 2 rules: queueing strategies, a preemptor admitted later --------------------------------

def fifo(strategy):
    return [DEFAULT, cq("team", rg(("default-flavor", {"cpu": 4})), strategy=strategy), lq("team"),
            wl("running", "team", 2, admitted=("team", "default-flavor")),
            wl("big", "team", 4, created=0), wl("small", "team", 1, created=10)]


PREEMPTOR = [DEFAULT, cq("team", rg(("default-flavor", {"cpu": 4})), within="LowerPriority"), lq("team"),
             wl("low", "team", 4, priority=0, admitted=("team", "default-flavor")),
             wl("high", "team", 4, priority=10, created=10)]

RULES = [
    case("StrictFIFO: a head that cannot be admitted blocks the smaller workload behind it",
         manifest(*fifo("StrictFIFO")), UNTIL_QUIET,
         expect({"running": A("team", {"cpu": "default-flavor"})},
                pending={"big": P("active", "insufficient unused quota for cpu"),
                         "small": P("active", "waiting behind the head of ClusterQueue team")})),
    case("BestEffortFIFO: the head is parked as inadmissible and the small workload is admitted",
         manifest(*fifo("BestEffortFIFO")), UNTIL_QUIET,
         expect({"running": A("team", {"cpu": "default-flavor"}), "small": A("team", {"cpu": "default-flavor"})},
                pending={"big": P("inadmissible", "insufficient unused quota for cpu")})),
    case("one cycle: the preemptor evicts its victim but is not admitted yet",
         manifest(*PREEMPTOR), 1,
         expect(preempted=[("low", "InClusterQueue")],
                pending={"high": P("active", "waiting for 1 preempted workloads"),
                         "low": P("active", "preempted (InClusterQueue)")})),
    case("until quiet: the preemptor is admitted in a later cycle, the victim waits",
         manifest(*PREEMPTOR), UNTIL_QUIET,
         expect({"high": A("team", {"cpu": "default-flavor"})}, [("low", "InClusterQueue")],
                pending={"low": P("inadmissible", "insufficient unused quota for cpu")})),
    case("two cycles are enough for the preemptor",
         manifest(*PREEMPTOR), 2,
         expect({"high": A("team", {"cpu": "default-flavor"})}, [("low", "InClusterQueue")],
                pending={"low": P("active", "preempted (InClusterQueue)")})),
    case("ranking across queues: lower borrowing level first, then priority, then age",
         manifest(*two_teams((4,), (4,)),
                  wl("a-old", "team-a", 4, created=0), wl("b-high", "team-b", 6, priority=5, created=5)),
         1,
         expect({"a-old": A("team-a-cq", CPU)}, pending={"b-high": P("active", "no longer fits")})),
]



def reserve(reclaim):
    """team-a's head needs preemption and finds no victim; team-b's borrowing head comes after it in the cycle."""
    return [DEFAULT,
            cq("team-a-cq", rg(("default-flavor", {"cpu": 4})), cohort="ab", reclaim=reclaim),
            cq("team-b-cq", rg(("default-flavor", {"cpu": 4})), cohort="ab"),
            cq("lender", rg(("default-flavor", {"cpu": 1})), cohort="ab"),
            lq("team-a", "team-a-cq"), lq("team-b", "team-b-cq"),
            wl("a-running", "team-a", 3, admitted=("team-a-cq", "default-flavor")),
            wl("b-running", "team-b", 4, admitted=("team-b-cq", "default-flavor")),
            wl("a-new", "team-a", 4, priority=10), wl("b-new", "team-b", 1)]


RESERVED = {"a-running": A("team-a-cq", CPU), "b-running": A("team-b-cq", CPU)}


def overlap():
    """Two heads of two queues choose the same victim in the same cycle."""
    return [DEFAULT,
            *[cq(name, rg(("default-flavor", {"cpu": n})), cohort="x", reclaim="LowerPriority")
              for name, n in (("c1", 2), ("c2", 2))],
            cq("c3", rg(("default-flavor", {"cpu": 0})), cohort="x"),
            lq("c1"), lq("c2"), lq("c3"),
            wl("victim", "c3", 4, admitted=("c3", "default-flavor")),
            wl("w1", "c1", 2, priority=1, created=0), wl("w2", "c2", 2, priority=1, created=5)]


def borrow_after_preemption():
    """team-a's preemptor borrows now but not once its victim is gone (level 0 after the preemption)."""
    return [DEFAULT,
            cq("team-a-cq", rg(("default-flavor", {"cpu": 4})), cohort="abc", within="LowerPriority"),
            cq("team-b-cq", rg(("default-flavor", {"cpu": 4})), cohort="abc"),
            cq("team-c-cq", rg(("default-flavor", {"cpu": 2})), cohort="abc"),
            lq("team-a", "team-a-cq"), lq("team-b", "team-b-cq"),
            wl("a-low", "team-a", 2, priority=0, admitted=("team-a-cq", "default-flavor")),
            wl("b-running", "team-b", 6, admitted=("team-b-cq", "default-flavor")),
            wl("a-high", "team-a", 4, priority=10, created=0), wl("b-borrower", "team-b", 2, priority=20, created=0)]


def preference():
    """f1 needs a preemption (borrowing before it, not after); f2 fits by borrowing. PreemptionOverBorrowing."""
    return [flavor("f1"), flavor("f2"),
            cq("team-a-cq", rg(("f1", {"cpu": 4}), ("f2", {"cpu": 0})), cohort="ab", within="LowerPriority",
               when_borrow="TryNextFlavor", when_preempt="TryNextFlavor", preference="PreemptionOverBorrowing"),
            cq("team-b-cq", rg(("f1", {"cpu": 2}), ("f2", {"cpu": 4})), cohort="ab"),
            lq("team-a", "team-a-cq"), lq("team-b", "team-b-cq"),
            wl("a-low", "team-a", 4, admitted=("team-a-cq", "f1")),
            wl("b-f1", "team-b", 2, admitted=("team-b-cq", "f1")),
            wl("a-high", "team-a", 4, priority=10)]


RULES += [
    case("--until-quiet: the borrower skipped in the first cycle is admitted on its next flavor (spot)",
         manifest(*ENG, wl("new", "main", 1, ns="eng-alpha", podset="one", count=45),
                  wl("new", "main", 1, ns="eng-beta", podset="one", count=56)),
         UNTIL_QUIET,
         expect({"eng-alpha/new": A("eng-alpha", {"cpu": "on-demand"}, 45, "one"),
                 "eng-beta/new": A("eng-beta", {"cpu": "spot"}, 56, "one")})),
    case("a head that needs preemption but finds no victim keeps its capacity for the rest of the cycle",
         manifest(*reserve("LowerPriority")), 1,
         expect(RESERVED, pending={"a-new": P("inadmissible", "insufficient unused quota"),
                                   "b-new": P("active", "no longer fits")})),
    case("... unless its ClusterQueue has reclaimWithinCohort: Any",
         manifest(*reserve("Any")), 1,
         expect(RESERVED | {"b-new": A("team-b-cq", CPU)},
                pending={"a-new": P("inadmissible", "insufficient unused quota")})),
    case("two heads with the same victim: the second is skipped and stays active",
         manifest(*overlap()), 1,
         expect(preempted=[("victim", "InCohortReclamation")],
                pending={"w1": P("active", "waiting for 1 preempted"), "w2": P("active", "overlapping preemption targets"),
                         "victim": P("active", "preempted")})),
    case("... and both are admitted once the victim has released its quota",
         manifest(*overlap()), UNTIL_QUIET,
         expect({"w1": A("c1", CPU), "w2": A("c2", CPU)}, [("victim", "InCohortReclamation")],
                pending={"victim": P("inadmissible", "insufficient unused quota")})),
    case("ranking uses the borrowing level after the preemption: the preemptor (level 0) goes before a "
         "higher-priority borrower (level 1)",
         manifest(*borrow_after_preemption()), 1,
         expect({"b-running": A("team-b-cq", CPU)}, [("a-low", "InClusterQueue")],
                pending={"a-high": P("active", "waiting for 1 preempted"), "a-low": P("active", "preempted"),
                         "b-borrower": P("active", "no longer fits")})),
    case("PreemptionOverBorrowing: a flavor that needs a preemption but no borrowing afterwards beats a flavor "
         "that fits by borrowing",
         manifest(*preference()), 1,
         expect({"b-f1": A("team-b-cq", {"cpu": "f1"})}, [("a-low", "InClusterQueue")],
                pending={"a-high": P("active", "waiting for 1 preempted"), "a-low": P("active", "preempted")})),
]



def tree():
    """root <- child <- {cq-a, cq-b} (2 cpus each), and cq-c (4 cpus) right under root."""
    return [DEFAULT, cohort("root"), cohort("child", parent="root"),
            cq("cq-a", rg(("default-flavor", {"cpu": 2})), cohort="child"),
            cq("cq-b", rg(("default-flavor", {"cpu": 2})), cohort="child"),
            cq("cq-c", rg(("default-flavor", {"cpu": 4})), cohort="root"),
            lq("a", "cq-a"), lq("b", "cq-b"), lq("c", "cq-c")]


def lending_cohort():
    """A cohort with quota of its own lends only 1 of its 4 cpus to its parent."""
    return [DEFAULT, cohort("root"),
            cohort("child", rg(("default-flavor", {"cpu": (4, None, 1)})), parent="root"),
            cq("cq-x", rg(("default-flavor", {"cpu": 0})), cohort="child"),
            cq("cq-y", rg(("default-flavor", {"cpu": 0})), cohort="root"),
            lq("x", "cq-x"), lq("y", "cq-y")]


RULES += [
    case("hierarchical cohort: borrowing from its own cohort (level 1) goes before borrowing from the root (level 2)",
         manifest(*tree(), wl("from-child", "a", 3, created=10), wl("from-root", "b", 6, priority=100, created=0)),
         1,
         expect({"from-child": A("cq-a", CPU)}, pending={"from-root": P("active", "no longer fits")})),
    case("hierarchical cohort: a queue may borrow up to the whole tree",
         manifest(*tree(), wl("all", "a", 8)), 1,
         expect({"all": A("cq-a", CPU)})),
    *[case(f"a cohort's lendingLimit: {what}", manifest(*lending_cohort(), wl("w", q, cpus)), 1, want)
      for what, q, cpus, want in [
          ("its own queue may use all 4 cpus", "x", 4, expect({"w": A("cq-x", CPU)})),
          ("a queue outside it gets only the 1 it lends", "y", 1, expect({"w": A("cq-y", CPU)})),
          ("not 2", "y", 2, expect(pending={"w": P("inadmissible", "maximum capacity")}))]],
    case("v1beta1: spec.cohort (v1beta2's cohortName) links the queues all the same",
         manifest(*[flavor("default-flavor", "kueue.x-k8s.io/v1beta1"),
                    cq("team-a-cq", rg(("default-flavor", {"cpu": (9, 1)})), cohort="team-ab", version="kueue.x-k8s.io/v1beta1"),
                    cq("team-b-cq", rg(("default-flavor", {"cpu": 12})), cohort="team-ab", version="kueue.x-k8s.io/v1beta1"),
                    lq("team-a", "team-a-cq", version="kueue.x-k8s.io/v1beta1"),
                    wl("a", "team-a", 10, version="kueue.x-k8s.io/v1beta1")]), 1,
         expect({"a": A("team-a-cq", CPU)})),
]


FAIR_SHARING = {"apiVersion": "config.kueue.x-k8s.io/v1beta2", "kind": "Configuration",
                "fairSharing": {"preemptionStrategies": ["LessThanOrEqualToFinalShare", "LessThanInitialShare"]}}


def borrowers(*config):
    """team-a already borrows 4 of the lender's 6 cpus; team-a and team-b each want 2 more (2 are free)."""
    return [*config, DEFAULT,
            cq("team-a-cq", rg(("default-flavor", {"cpu": 0})), cohort="ab"),
            cq("team-b-cq", rg(("default-flavor", {"cpu": 0})), cohort="ab"),
            cq("lender", rg(("default-flavor", {"cpu": 6})), cohort="ab"),
            lq("team-a", "team-a-cq"), lq("team-b", "team-b-cq"),
            wl("a-running", "team-a", 4, admitted=("team-a-cq", "default-flavor")),
            wl("a-new", "team-a", 2, priority=5, created=0), wl("b-new", "team-b", 2, created=10)]


def orgs():
    """cohort.md: root-cohort with 8 cpus of its own; important-org (weight 0.75) and regular-org (0.25) borrow them."""
    return [FAIR_SHARING, DEFAULT,
            cohort("root-cohort", rg(("default-flavor", {"cpu": 8}))),
            {**cohort("important-org", parent="root-cohort"),
             "spec": {"parentName": "root-cohort", "fairSharing": {"weight": "0.75"}}},
            {**cohort("regular-org", parent="root-cohort"),
             "spec": {"parentName": "root-cohort", "fairSharing": {"weight": "0.25"}}},
            cq("important-cq", rg(("default-flavor", {"cpu": 0})), cohort="important-org", reclaim="Any"),
            cq("regular-cq", rg(("default-flavor", {"cpu": 0})), cohort="regular-org", reclaim="Any"),
            lq("important", "important-cq"), lq("regular", "regular-cq"),
            *[wl(f"r-{i}", "regular", 1, created=i, admitted=("regular-cq", "default-flavor", i)) for i in range(8)],
            *[wl(f"i-{i}", "important", 1, created=10 + i) for i in range(8)]]


def with_min_count(doc, n):
    doc["spec"]["podSets"][0]["minCount"] = n
    return doc


def partial(*docs):
    return [DEFAULT, cq("team", rg(("default-flavor", {"cpu": 4}))), lq("team"), *docs]


RULES += [
    case("partial admission: minCount 2 of 6 one-cpu pods, 4 cpus: the largest count that fits, 4",
         manifest(*partial(with_min_count(wl("w", "team", 1, count=6), 2))), 1,
         expect({"w": A("team", CPU, 4)})),
    case("partial admission from a Job's kueue.x-k8s.io/job-min-parallelism",
         manifest(*partial({"apiVersion": "batch/v1", "kind": "Job",
                            "metadata": {"name": "j", "labels": {"kueue.x-k8s.io/queue-name": "team"},
                                         "annotations": {"kueue.x-k8s.io/job-min-parallelism": "2"}},
                            "spec": {"parallelism": 6, "template": {"spec": {"restartPolicy": "Never", "containers": [
                                {"name": "c", "image": "x:1", "resources": {"requests": {"cpu": "1"}}}]}}}})), 1,
         expect({"j": A("team", CPU, 4)})),
    case("without fair sharing: both borrow (level 1), so priority decides: a-new first",
         manifest(*borrowers()), 1,
         expect({"a-running": A("team-a-cq", CPU), "a-new": A("team-a-cq", CPU)},
                pending={"b-new": P("active", "no longer fits")})),
    case("fair sharing: the queue with the lower dominant resource share goes first: b-new",
         manifest(*borrowers(FAIR_SHARING)), 1,
         expect({"a-running": A("team-a-cq", CPU), "b-new": A("team-b-cq", CPU)},
                pending={"a-new": P("active", "no longer fits")})),
    case("CO-2 fair sharing with weights 0.75 and 0.25: the important org ends with 6 of the 8 cpus, the regular one 2",
         manifest(*orgs()), UNTIL_QUIET,
         expect({f"i-{i}": A("important-cq", CPU) for i in range(6)} | {f"r-{i}": A("regular-cq", CPU) for i in range(2)},
                # the most recently admitted go first
                [(f"r-{i}", "InCohortFairSharing") for i in range(2, 8)],
                {"i-6": P("inadmissible", ""), "i-7": P("inadmissible", ""),
                 **{f"r-{i}": P("inadmissible", "") for i in range(2, 8)}})),
]

TABLE = CONCEPT_PAGES + SCHEDULER + PREEMPTION + RULES


@pytest.mark.parametrize("text, cycles, want", TABLE)
def test_admit_decides_as_kueue(text, cycles, want):
    check(decide(text, cycles), want)


@requires_schemas
@pytest.mark.parametrize("text", [pytest.param(p.values[0], id=p.id) for p in TABLE])
def test_every_row_is_valid_for_kueues_schemas(text):
    for doc in yaml.safe_load_all(text):
        if not doc["apiVersion"].startswith("config.kueue.x-k8s.io/"):  # Kueue ships no schema for its Configuration
            validate_manifest(doc)


# --- the command line: a stable contract -----------------------------------------------------------


def write(tmp_path, text, name="in.yaml"):
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def test_json_is_exactly_one_object_on_stdout(tmp_path, capsys):
    path = write(tmp_path, manifest(*PREEMPTOR))
    assert main(["admit", path, "--json"]) == 0
    out = capsys.readouterr().out
    assert out.count("\n") == 1
    got = json.loads(out)
    assert (got["admitted"], got["preempted"]) == ({}, [{"name": "low", "reason": "InClusterQueue"}])
    assert {k: v["state"] for k, v in got["pending"].items()} == {"low": "active", "high": "active"}


@pytest.mark.parametrize("args, admitted", [([], []), (["--cycles", "2"], ["high"]), (["--until-quiet"], ["high"])])
def test_cycles_and_until_quiet(tmp_path, capsys, args, admitted):
    path = write(tmp_path, manifest(*PREEMPTOR))
    assert main(["admit", path, "--json", *args]) == 0
    assert list(json.loads(capsys.readouterr().out)["admitted"]) == admitted


def test_several_files_make_one_snapshot(tmp_path, capsys):
    setup = write(tmp_path, manifest(*PREEMPTOR[:3]), "setup.yaml")
    workloads = write(tmp_path, manifest(*PREEMPTOR[3:]), "workloads.yaml")
    assert main(["admit", setup, workloads, "--until-quiet", "--json"]) == 0
    assert list(json.loads(capsys.readouterr().out)["admitted"]) == ["high"]


def test_the_table_for_people(tmp_path, capsys):
    path = write(tmp_path, manifest(*PREEMPTOR))
    assert main(["admit", path, "--until-quiet"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("4 scheduling cycles: 1 admitted, 1 pending, 1 preemption\n")  # the last one changed nothing
    assert "high  ClusterQueue team  main: 1 pod (cpu=default-flavor)" in out
    assert "low   InClusterQueue" in out


def test_format_report_of_nothing():
    assert format_report({"admitted": {}, "preempted": [], "pending": {}}, 1) == \
        "1 scheduling cycle: 0 admitted, 0 pending, 0 preemptions"


NO_FLAVOR = manifest(cq("team", rg(("nowhere", {"cpu": 4}))), lq("team"), wl("a", "team", 1))
TWO_PROBLEMS = manifest(DEFAULT, cq("team", rg(("default-flavor", {"cpu": (4, 2)}))), wl("a", "team", -1))
NO_SELECTOR = manifest(DEFAULT, cq("team", rg(("default-flavor", {"cpu": 4})), selector=False), lq("team"), wl("a", "team", 1))
MANY = manifest(*two_teams((9,), (12,)), *[wl(f"w{i}", "team-a" if i % 2 else "team-b", 3, created=i) for i in range(10)])


@requires_schemas
@pytest.mark.parametrize("text", [NO_FLAVOR, TWO_PROBLEMS, NO_SELECTOR, MANY], ids=["no flavor", "two problems", "no selector", "many"])
def test_the_command_line_inputs_are_valid_for_kueues_schemas(text):
    """Kueue's webhook, not its schema, refuses the first two (a missing flavor, borrowingLimit without cohort)."""
    for doc in yaml.safe_load_all(text):
        validate_manifest(doc)


@pytest.mark.parametrize("text, lines", [
    (TWO_PROBLEMS,
     ["error: ClusterQueue team: spec.resourceGroups[0].flavors[0].resources[0].borrowingLimit: must be nil when cohort is empty",
      "error: Workload a: spec.podSets[0].template.spec.containers[0].resources.requests.cpu: must be greater than or equal to 0"]),
    ("kind: [", ["error: in.yaml: line 1, column 8: invalid YAML"]),
])
def test_bad_input_is_one_line_per_problem_on_stderr_and_exit_2(tmp_path, capsys, text, lines):
    path = write(tmp_path, text)
    assert main(["admit", path, "--json"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    got = captured.err.splitlines()
    assert len(got) == len(lines)
    for line, want in zip(got, lines):
        assert line.startswith(want), line


def test_a_missing_file(capsys):
    assert main(["admit", "nowhere.yaml"]) == 2
    assert capsys.readouterr().err == "error: File nowhere.yaml: not found\n"


def test_warnings_go_to_stderr(tmp_path, capsys):
    path = write(tmp_path, NO_SELECTOR)
    assert main(["admit", path, "--json"]) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out)["admitted"] == {"a": A("team", {"cpu": "default-flavor"})}
    assert "warning: ClusterQueue team has no spec.namespaceSelector" in captured.err


@pytest.mark.parametrize("args", [["--cycles", "0"], ["--cycles", "2", "--until-quiet"]])
def test_cycles_must_be_positive_and_exclusive_of_until_quiet(tmp_path, args):
    path = write(tmp_path, manifest(*PREEMPTOR))
    with pytest.raises(SystemExit) as e:
        main(["admit", path, *args])
    assert e.value.code == 2


def test_decisions_are_repeatable():
    assert decide(MANY, UNTIL_QUIET) == decide(MANY, UNTIL_QUIET)


# --- the example -------------------------------------------------------------------------------------------

EXAMPLE = str(REPO / "examples" / "kueue-two-teams.yaml")
A100 = {"cpu": "a100", "memory": "a100", "nvidia.com/gpu": "a100"}


def test_the_two_teams_example_admits_as_a_snapshot(capsys):
    assert main(["admit", EXAMPLE, "--until-quiet", "--json"]) == 0
    captured = capsys.readouterr()
    assert captured.err == ""
    check(json.loads(captured.out),
          expect({"team-b/eval": A("team-b-cq", A100, 2), "team-a/finetune": A("team-a-cq", A100, 1)},
                 pending={"team-a/pretrain": P("inadmissible", "insufficient unused quota for nvidia.com/gpu in flavor a100")}))


@pytest.mark.parametrize("stack", ["kueue+gang", "kueue+pod"])
def test_the_two_teams_example_runs(stack, capsys):
    assert main(["run", EXAMPLE, "--stack", stack, "--json"]) == 0
    captured = capsys.readouterr()
    assert captured.err == ""
    figures = json.loads(captured.out)
    assert (figures["stack"], figures["jobs_finished"], figures["deadlock"]) == (stack, 3, False)


def test_the_two_teams_example_tells_its_story():
    from gangkit import load_file, simulate

    events = simulate(load_file(EXAMPLE)).events
    preempted = events[events.event == "preempted"]
    assert list(zip(preempted.time_s, preempted.job, preempted.detail)) == [(600.0, "team-a/pretrain", "InCohortReclamation")]
    admitted = events[events.event == "admitted"]
    assert list(zip(admitted.time_s, admitted.job)) == [
        (0.0, "team-a/pretrain"), (600.0, "team-b/eval"), (1200.0, "team-a/finetune"), (4800.0, "team-a/pretrain")]


def test_a_queue_without_its_flavor_is_inactive_and_its_workload_waits(tmp_path, capsys):
    """Kueue keeps a ClusterQueue whose flavor is missing inactive (FlavorNotFound); its workloads wait."""
    path = tmp_path / "in.yaml"
    path.write_text(NO_FLAVOR)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        status, out, err = run_cli(["admit", str(path)], capsys)
    assert status == 0 and "ClusterQueue team is inactive" in out and "FlavorNotFound" in err


# -- TrainJob: the Workload of the JobSet its runtime makes (Kueue pkg/controller/jobs/trainjob) ----------------

def trainjob(name, nodes, cpu, created=None):
    return {"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob",
            "metadata": {**meta(name, created=created), "labels": {"kueue.x-k8s.io/queue-name": "training-queue"}},
            "spec": {"runtimeRef": {"apiGroup": "trainer.kubeflow.org", "kind": "ClusterTrainingRuntime",
                                    "name": "torch-distributed"}, "suspend": True,
                     "trainer": {"numNodes": nodes, "resourcesPerNode": {"requests": {"cpu": str(cpu)},
                                                                         "limits": {"cpu": str(cpu)}}}}}


@pytest.mark.parametrize("nodes, cpu, quota_cores, state", [
    (3, 2, 8, "admitted"),  # 3 nodes x 2 cores within 8
    (3, 4, 8, "pending"),  # 12 cores do not fit 8
    (1, 8, 8, "admitted"),
])
def test_a_trainjob_is_admitted_as_the_jobset_its_runtime_makes(nodes, cpu, quota_cores, state):
    docs = [flavor("default-flavor"), cq("cluster-queue", rg(("default-flavor", {"cpu": quota_cores}))),
            lq("training-queue", "cluster-queue"), trainjob("train", nodes, cpu)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        report = admit(load_kueue(docs))
    assert ("train" in report["admitted"]) == (state == "admitted") and ("train" in report["pending"]) == (state == "pending")
    if state == "admitted":
        assert sum(report["admitted"]["train"]["counts"].values()) == nodes
