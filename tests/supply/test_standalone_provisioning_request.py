"""A ProvisioningRequest a user applies directly, served by cluster-autoscaler: stack ``pod+autoscaler``.

The rules (cluster-autoscaler's ``processors/provreq`` and
``provisioningrequest/conditions``, CA 1.35; gangkit.supply.provisioning_request):
consumers (pods with ``autoscaling.x-k8s.io/consume-provisioning-request``) never
trigger a scale-up; a best-effort-atomic request scales one node group for all its
pods or none; check-capacity launches nothing; a Provisioned request's booking ends
10 minutes later (CapacityReservationTimeExpired) or once all its pods are bound
(CapacityBookingConsumed). Expected times come from those rules and the default node
stages (registered 60 s, initialized 90 s: a node is ready 150 s after launch).
"""

from __future__ import annotations

import warnings

import pytest
import yaml

import gangkit as gk
from gangkit import Node
from gangkit.kueue.objects import (
    GPU,
    ClusterQueue,
    FlavorQuotas,
    KueueSetup,
    LocalQueue,
    Quota,
    ResourceFlavor,
    ResourceGroup,
)
from gangkit.manifests import GangkitInputWarning, load_manifests
from gangkit.manifests.dump import dump_manifests
from gangkit.model.errors import ScenarioError
from gangkit.model.jobs import Job, PodSet
from gangkit.supply.autoscaler import ClusterAutoscaler, NodeGroup
from gangkit.supply.cloud import InstanceType
from gangkit.supply.provisioning_request import (
    BEST_EFFORT_ATOMIC,
    BOOKING_CONSUMED,
    CHECK_CAPACITY,
    CONSUME_ANNOTATION,
    DEPRECATED_CONSUME_ANNOTATION,
    RESERVATION_EXPIRED,
    ProvisioningRequestSpec,
)

from conftest import case

try:
    from schema_util import requires_schemas, validate_manifest
except ImportError:  # run from the repository root
    from tests.schema_util import requires_schemas, validate_manifest

G8 = InstanceType("g8", 8, 8.0)
READY = 150.0  # launch -> ready with the default Stages
SYSTEM = Node("system-0", 0)


def kueue_setup(gpus=64) -> KueueSetup:
    """One ClusterQueue with ``gpus`` of quota and the default LocalQueue."""
    cq = ClusterQueue("cq", [ResourceGroup((GPU,), (FlavorQuotas("f", {GPU: Quota(gpus)}),))])
    return KueueSetup([ResourceFlavor("f")], [cq], [LocalQueue("default", "default", "cq")])


def run(submit=0.0, cls=BEST_EFFORT_ATOMIC, max_size=4, nodes=(SYSTEM,), consume="train", others=(), horizon=20000,
        create=0.0):
    ca = ClusterAutoscaler([NodeGroup("g8", G8, max_size=max_size)])
    pr = ProvisioningRequestSpec("train", (PodSet("workers", 4, 8),), cls, create_time=create)
    jobs = [Job("train", [PodSet("workers", 4, 8)], 600.0, submit_time=submit, consume_provisioning_request=consume),
            *others]
    sc = gk.Scenario(list(nodes), jobs, autoscaler=ca, provisioning_requests=[pr])
    return gk.simulate(sc, stack="pod+autoscaler", horizon=horizon)


def states(result):
    rows = result.metric("gangkit_provisioning_requests")
    return [(t, state, reason) for t, state, reason in zip(rows.time_s, rows.state, rows.reason) if state != "Created"]


def scale_ups(result):
    rows = result.metric("cluster_autoscaler_scaled_up_nodes_total")
    return [(t, n, why) for t, n, why in zip(rows.time_s, rows.value, rows.reason)]


def started(result, name="train"):
    row = result.jobs.set_index("job").loc[name]
    return None if row.state == "WaitingAtEnd" else float(row.start_s)


# -- the request's life, and where its consumers run ------------------------------------------------------
ATOMIC_AT_0 = [(0.0, "Provisioned", "CapacityIsProvisioned")]
LIFE = [
    # the pods come with the request: 4 nodes in one scale-up; bound when ready; booking consumed at the scan of that instant
    case("atomic-consumers-with-the-request", dict(),
         ATOMIC_AT_0 + [(READY, "BookingExpired", BOOKING_CONSUMED)], [(0.0, 4, "ProvisioningRequest")], READY),
    # the pods come 900 s later: the 10-minute booking is over, but the nodes are still there (unneeded for 10 min
    # only from then on), so the pods run at once
    case("atomic-consumers-late", dict(submit=900.0),
         ATOMIC_AT_0 + [(600.0, "BookingExpired", RESERVATION_EXPIRED)], [(0.0, 4, "ProvisioningRequest")], 900.0),
    # 1500 s later: the empty nodes were scaled down at 1200 s (unneeded 10 min after the booking), and consumers
    # never trigger a scale-up: they wait for ever
    case("atomic-consumers-too-late", dict(submit=1500.0),
         ATOMIC_AT_0 + [(600.0, "BookingExpired", RESERVATION_EXPIRED)], [(0.0, 4, "ProvisioningRequest")], None),
    # check-capacity on four free 8-GPU nodes, the pods 60 s later: found, booked, consumed
    case("check-capacity-room", dict(cls=CHECK_CAPACITY, nodes=[Node(f"n{i}", 8) for i in range(4)], submit=60.0),
         [(0.0, "Provisioned", "CapacityIsFound"), (60.0, "BookingExpired", BOOKING_CONSUMED)], [], 60.0),
    # check-capacity with no room: retried after 60, 120, 240, 480 and 600 s (CA's backoff), nothing launched
    case("check-capacity-no-room", dict(cls=CHECK_CAPACITY, horizon=2000),
         [(t, "Pending", "CapacityIsNotFound") for t in (0.0, 60.0, 180.0, 420.0, 900.0, 1500.0)], [], None),
    # all or nothing: 4 nodes needed, the group may grow to 3: no scale-up at all
    case("atomic-too-big-for-the-group", dict(max_size=3, horizon=1000),
         [(t, "Pending", "CapacityIsNotFound") for t in (0.0, 60.0, 180.0, 420.0, 900.0)], [], None),
    # the request is applied 100 s after the pods: nothing moves until then
    case("request-after-the-pods", dict(create=100.0),
         [(100.0, "Provisioned", "CapacityIsProvisioned"), (100.0 + READY, "BookingExpired", BOOKING_CONSUMED)],
         [(100.0, 4, "ProvisioningRequest")], 100.0 + READY),
]


@pytest.mark.parametrize("kw, want_states, want_scale_ups, want_start", LIFE)
def test_the_request_and_its_consumers(kw, want_states, want_scale_ups, want_start):
    r = run(**kw)
    assert states(r) == want_states
    assert scale_ups(r) == want_scale_ups
    assert started(r) == want_start


@pytest.mark.parametrize("consume, want_scale_ups, want_start", [
    # no annotation: ordinary pending pods, scaled up for at once (and the request is served too)
    case("no-annotation", None, [(0.0, 4, "pods")], READY),
    # a name no request has: CA still drops the pods from scale-up; they run on room that exists (here: the
    # request's nodes, which kube-scheduler gives to any pod)
    case("unknown-name", "trian", [(0.0, 4, "ProvisioningRequest")], READY),
])
def test_consumers_never_trigger_a_scale_up(consume, want_scale_ups, want_start):
    r = run(consume=consume, horizon=3000)
    assert scale_ups(r) == want_scale_ups
    assert started(r) == want_start


def test_kube_scheduler_ignores_the_booking():
    """Only cluster-autoscaler honours a booking: a pod without the annotation takes a booked node, and the
    consumers that come later find one node too few (and trigger no scale-up for it)."""
    other = Job("other", [PodSet("workers", 1, 8)], 600.0, submit_time=READY + 10)
    r = run(submit=300.0, others=[other], horizon=5000)
    assert started(r, "other") == READY + 10  # on one of the request's four nodes, at once
    assert started(r) == READY + 10 + 600.0  # the last consumer pod waits for it to finish
    assert scale_ups(r) == [(0.0, 4, "ProvisioningRequest")]
    assert states(r)[-1] == (600.0, "BookingExpired", RESERVATION_EXPIRED)  # never all four bound within 10 min


EVENT = "its event on each pod: \"Unschedulable pod didn't trigger scale-up, because it's consuming ProvisioningRequest "


@pytest.mark.parametrize("kw, at, words", [
    case("pods after the booking and the scale-down see the request Provisioned and its booking expired",
         dict(submit=1500.0), 3000, [EVENT + "default/train\")",
                                     "ProvisioningRequest default/train: Provisioned=True (CapacityIsProvisioned) at t=0 s, "
                                     "BookingExpired=True (CapacityReservationTimeExpired) at t=600 s"]),
    case("pods of a request no node group can hold see it not Provisioned, with CA's latest try",
         dict(max_size=3), 1000, [EVENT + "default/train\")",
                                  "ProvisioningRequest default/train: Provisioned=False (CapacityIsNotFound) at t=900 s"]),
    case("pods naming a request that does not exist are still left out of scale-up",
         dict(consume="trian", max_size=3), 100, [EVENT + "default/trian\")",
                                                   "ProvisioningRequest default/trian does not exist"]),
])
def test_a_stuck_consumer_is_diagnosed_with_cluster_autoscalers_event_and_the_requests_conditions(kw, at, words):
    d = run(horizon=3000, **kw).diagnose(job="train", at=at)
    assert (d.layer, d.code) == ("placement", "ConsumingProvisioningRequest"), str(d)
    assert "0/1 nodes are available: 1 Insufficient nvidia.com/gpu." in d.message  # kube-scheduler's FailedScheduling
    for w in words:
        assert w in d.message, str(d)
    assert "NodePool" not in d.message and "NotTriggerScaleUp" not in d.message


def test_kueues_pods_stay_consumers_after_the_booking_expires():
    """Regression: a slow node (ready after the 10-minute booking) does not make its pods ordinary pending pods,
    so cluster-autoscaler does not scale up a second time for them (Kueue's pods carry the consume annotation)."""
    from gangkit.supply.cloud import Stages
    ca = ClusterAutoscaler([NodeGroup("g8", G8, max_size=8)], stages=Stages(registered=60.0, initialized=840.0))
    setup = kueue_setup()
    sc = gk.Scenario([SYSTEM], [gk.job("a", pods=2, gpus=8)], autoscaler=ca, kueue=setup)
    r = gk.simulate(sc, stack="kueue+provreq+autoscaler", horizon=5000)
    assert [n for _, n, _ in scale_ups(r)] == [2]
    assert started(r, "a") is not None


# -- what is refused ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("spec, field", [
    case("unknown-class", ProvisioningRequestSpec("p", (PodSet(),), "queued-provisioning.gke.io"),
         "spec.provisioningClassName"),
    case("no-pod-sets", ProvisioningRequestSpec("p", ()), "spec.podSets"),
    case("no-name", ProvisioningRequestSpec("", (PodSet(),)), "name"),
    case("negative-create-time", ProvisioningRequestSpec("p", (PodSet(),), create_time=-1.0), "create_time"),
])
def test_bad_requests_are_refused_by_field(spec, field):
    with pytest.raises(ScenarioError) as e:
        gk.Scenario([SYSTEM], [gk.job("a")], provisioning_requests=[spec]).validate()
    assert [p.field for p in e.value.problems] == [field]


def test_two_requests_of_one_name_are_refused():
    pr = ProvisioningRequestSpec("p", (PodSet(),))
    with pytest.raises(ScenarioError, match="unique name"):
        gk.Scenario([SYSTEM], [gk.job("a")], provisioning_requests=[pr, pr]).validate()


@pytest.mark.parametrize("stack", ["pod", "gang", "pod+karpenter", "kueue+pod"])
def test_a_stack_without_cluster_autoscaler_is_refused(stack):
    sc = gk.Scenario([SYSTEM], [gk.job("a")], provisioning_requests=[ProvisioningRequestSpec("p", (PodSet(),))])
    with pytest.raises(ScenarioError, match="served by cluster-autoscaler.*pod\\+autoscaler"):
        gk.simulate(sc, stack=stack)


# -- manifests ------------------------------------------------------------------------------------------------
MANIFESTS = f"""
apiVersion: v1
kind: Node
metadata: {{name: system-0}}
---
apiVersion: v1
kind: PodTemplate
metadata: {{name: trainer, namespace: ml}}
template:
  spec:
    nodeSelector: {{gpu: a100}}
    containers:
    - name: main
      image: trainer
      resources: {{limits: {{nvidia.com/gpu: 8}}, requests: {{cpu: "32"}}}}
---
apiVersion: autoscaling.x-k8s.io/v1
kind: ProvisioningRequest
metadata:
  name: train
  namespace: ml
  annotations: {{gangkit/submit-time: 30s}}
spec:
  provisioningClassName: {CHECK_CAPACITY}
  podSets:
  - podTemplateRef: {{name: trainer}}
    count: 4
---
apiVersion: batch/v1
kind: Job
metadata: {{name: train, namespace: ml}}
spec:
  parallelism: 4
  template:
    metadata:
      annotations: {{{CONSUME_ANNOTATION}: train}}
    spec:
      restartPolicy: Never
      containers:
      - name: main
        image: trainer
        resources: {{limits: {{nvidia.com/gpu: 8}}}}
"""


def load(text):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", GangkitInputWarning)
        return load_manifests(text)


def test_a_request_and_its_pod_template_are_read():
    sc = load(MANIFESTS)
    (pr,) = sc.provisioning_requests
    assert (pr.key, pr.provisioning_class, pr.create_time) == ("ml/train", CHECK_CAPACITY, 30.0)
    assert pr.pods() == [(8, 32.0, 0, (("gpu", "a100"),))] * 4
    assert sc.jobs[0].consume_provisioning_request == "train"


def test_what_is_written_reads_back_the_same():
    sc = load(MANIFESTS).with_settings(stack="pod+autoscaler")
    again = load(dump_manifests(sc))
    assert again.provisioning_requests == sc.provisioning_requests
    assert [j.consume_provisioning_request for j in again.jobs] == ["train"]


@requires_schemas
def test_what_is_written_is_valid_for_the_real_schemas():
    sc = load(MANIFESTS).with_settings(stack="pod+autoscaler")
    docs = [d for d in yaml.safe_load_all(dump_manifests(sc)) if d and d["kind"] in ("PodTemplate", "ProvisioningRequest")]
    assert [d["kind"] for d in docs] == ["PodTemplate", "ProvisioningRequest"]
    for d in docs:
        assert validate_manifest(d) is not None


@requires_schemas
def test_the_input_is_valid_for_the_real_schemas():
    docs = [d for d in yaml.safe_load_all(MANIFESTS) if d["kind"] in ("PodTemplate", "ProvisioningRequest")]
    assert all(validate_manifest(d) is not None for d in docs)


def edited(old, new):
    assert old in MANIFESTS
    return MANIFESTS.replace(old, new, 1)


@pytest.mark.parametrize("text, field, words", [
    case("missing-template", edited("podTemplateRef: {name: trainer}", "podTemplateRef: {name: trainr}"),
         "spec.podSets[0].podTemplateRef.name", "FailedToCreatePods"),
    case("unknown-class", edited(f"provisioningClassName: {CHECK_CAPACITY}", "provisioningClassName: atomic"),
         "spec.provisioningClassName", "check-capacity"),
    case("zero-count", edited("    count: 4", "    count: 0"), "spec.podSets[0].count", ">= 1"),
    case("template-without-containers", edited("    containers:\n    - name: main\n      image: trainer\n      "
                                               "resources: {limits: {nvidia.com/gpu: 8}, requests: {cpu: \"32\"}}",
                                               "    containers: []"),
         "template.spec.containers", "at least one container"),
])
def test_bad_manifests_get_one_error_naming_the_field(text, field, words):
    with pytest.raises(ScenarioError) as e:
        load(text)
    assert [p.field for p in e.value.problems] == [field]
    assert words in e.value.problems[0].message


@pytest.mark.parametrize("text, consumer, note", [
    # the FAQ's form: the annotation on the Deployment's own metadata reaches no pod
    case("annotation-on-the-workload", edited(
        f"metadata: {{name: train, namespace: ml}}\nspec:\n  parallelism: 4\n  template:\n    metadata:\n"
        f"      annotations: {{{CONSUME_ANNOTATION}: train}}",
        f"metadata: {{name: train, namespace: ml, annotations: {{{CONSUME_ANNOTATION}: train}}}}\nspec:\n"
        "  parallelism: 4\n  template:\n    metadata: {}"), None, "not on its pod template"),
    case("deprecated-spelling", edited(f"{{{CONSUME_ANNOTATION}: train}}", f"{{{DEPRECATED_CONSUME_ANNOTATION}: train}}"),
         "train", "deprecated spelling"),
    case("unknown-request", edited(f"{{{CONSUME_ANNOTATION}: train}}", f"{{{CONSUME_ANNOTATION}: other}}"),
         "other", "never scales up for them"),
    case("unused-template", MANIFESTS + "---\napiVersion: v1\nkind: PodTemplate\nmetadata: {name: spare, namespace: ml}\n"
         "template: {spec: {containers: [{name: c, image: i}]}}\n", "train", "is not used"),
])
def test_what_cluster_autoscaler_would_ignore_is_noted(text, consumer, note):
    sc = load(text)
    assert sc.jobs[0].consume_provisioning_request == consumer
    assert any(note in w for w in sc.warnings), sc.warnings


# -- one pod per node (required pod anti-affinity on kubernetes.io/hostname) -----------------------------------
@pytest.mark.parametrize("apart, nodes", [case("the-rule-a-node-per-pod", True, 4), case("without-it-one-node", False, 1)])
def test_a_requests_simulation_keeps_one_pod_of_a_group_per_node(apart, nodes):
    """CA simulates a request's pods with the scheduler's filters: four 2-GPU pods kept apart need four nodes."""
    ca = ClusterAutoscaler([NodeGroup("g8", G8, max_size=4)])
    shape = PodSet("workers", 4, 2, one_per_node=apart)
    pr = ProvisioningRequestSpec("train", (shape,))
    train = Job("train", [shape], 600.0, consume_provisioning_request="train")
    r = gk.simulate(gk.Scenario([SYSTEM], [train], autoscaler=ca, provisioning_requests=[pr]), stack="pod+autoscaler")
    assert scale_ups(r) == [(0.0, nodes, "ProvisioningRequest")]
    assert started(r) == READY


def test_kueues_request_keeps_one_pod_of_a_group_per_node():
    """Regression: the request Kueue's check makes for a one-per-node pod set asks for a node per pod; with one node
    for all, three consumer pods would wait for ever (consumers trigger no scale-up)."""
    ca = ClusterAutoscaler([NodeGroup("g8", G8, max_size=4)])
    setup = kueue_setup()
    train = Job("train", [PodSet("workers", 4, 2, one_per_node=True)], 600.0)
    r = gk.simulate(gk.Scenario([SYSTEM], [train], autoscaler=ca, kueue=setup), stack="kueue+provreq+autoscaler")
    assert [n for _, n, _ in scale_ups(r)] == [4]
    assert started(r) == READY
