"""A live cluster's snapshot (``kubectl get ... -A -o yaml``) read as the state a run starts from.

The dumps are built the way the API server writes them (``tests/apiserver.py``): manifests as
authors write them, plus server-set metadata, defaulted spec fields, owner references and status.
"""

from __future__ import annotations

import codecs
import copy
import warnings
from datetime import datetime, timezone

import pytest
import yaml
from apiserver import T0, as_list, node, pod_of, served, stamp, workload_of

import gangkit as gk
from gangkit.manifests import load_files, load_manifests
from gangkit.manifests.resume import match_pods
from gangkit.manifests.snapshot import is_snapshot, split
from gangkit.model.errors import ScenarioError
from gangkit.model.jobs import PodSet
from gangkit.model.reading import Reader

from conftest import run_cli, shared_path
from paths import REPO
from schema_util import requires_schemas, validate_manifest

GPU = "nvidia.com/gpu"
HOUR = 3600.0


def container(gpus: int, cpu: str = "8", memory: str = "64Gi", name: str = "trainer") -> dict:
    return {"name": name, "image": "ghcr.io/example/train:1.0",
            "resources": {"requests": {"cpu": cpu, "memory": memory}, "limits": {GPU: str(gpus)}}}


def kueue_objects(gpus: int = 24) -> list[dict]:
    rf = {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ResourceFlavor", "metadata": {"name": "default-flavor"}}
    cq = {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ClusterQueue", "metadata": {"name": "cluster-queue"},
          "spec": {"namespaceSelector": {}, "resourceGroups": [{"coveredResources": ["cpu", "memory", GPU], "flavors": [
              {"name": "default-flavor", "resources": [{"name": "cpu", "nominalQuota": 256},
                                                       {"name": "memory", "nominalQuota": "2048Gi"},
                                                       {"name": GPU, "nominalQuota": gpus}]}]}]}}
    lq = {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "LocalQueue",
          "metadata": {"name": "user-queue", "namespace": "team-a"}, "spec": {"clusterQueue": "cluster-queue"}}
    return [served(rf, -300), served(cq, -300, status={"admittedWorkloads": 1}), served(lq, -300, status={})]


def batch_job(name: str, pods: int, gpus: int, created: float, run_time: str = "4h", queue: str | None = "user-queue",
              ns: str = "team-a") -> dict:
    meta = {"name": name, "namespace": ns, "annotations": {"gangkit/run-time": run_time}}
    if queue:
        meta["labels"] = {"kueue.x-k8s.io/queue-name": queue}
    job = {"apiVersion": "batch/v1", "kind": "Job", "metadata": meta,
           "spec": {"parallelism": pods, "completions": pods, "suspend": queue is not None,
                    "template": {"spec": {"restartPolicy": "Never", "containers": [container(gpus)]}}}}
    return served(job, created, status={})


def running(job: dict, nodes: list[str | None], started: float, suffix: str = "p") -> list[dict]:
    """The pods of a batch/v1 Job: one per node given (None: Pending), Running since ``started`` minutes."""
    job["spec"]["suspend"] = False
    spec = job["spec"]["template"]["spec"]
    return [pod_of(job, f"{job['metadata']['name']}-{suffix}{i}", spec, n, started if n else None, started - 1)
            for i, n in enumerate(nodes)]


def admitted(job: dict, pods: int, cq: str = "cluster-queue", count: int | None = None) -> dict:
    spec = job["spec"]["template"]["spec"]
    return workload_of(job, [("main", pods, spec)], "user-queue", cq,
                       [{"cpu": "default-flavor", "memory": "default-flavor", GPU: "default-flavor"}],
                       [count or pods], created=job_created(job) + 0.1)


def job_created(job: dict) -> float:
    t = datetime.fromisoformat(job["metadata"]["creationTimestamp"].replace("Z", "+00:00"))
    return (t - T0).total_seconds() / 60


def nodes(n: int = 4, gpus: int = 8, heartbeat: float = 180.0) -> list[dict]:
    return [node(f"gpu-node-{i}", gpus, heartbeat=heartbeat) for i in range(n)]


def load(items: list[dict], **kw) -> gk.Scenario:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return load_manifests(as_list(items), **kw) if not kw else load_files_from(items, **kw)


def load_files_from(items, snapshot_time=None):
    import tempfile
    from pathlib import Path

    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "dump.yaml"
        path.write_text(yaml.safe_dump(as_list(items), sort_keys=False))
        return load_files([path], snapshot_time=snapshot_time)


def outcome(sc: gk.Scenario, stack: str) -> dict:
    r = gk.simulate(sc.with_settings(horizon=2 * 86400.0), stack=stack)
    return {row.job: (row.state, row.start_s, row.finish_s) for row in r.jobs.itertuples()}


# -- the cluster of the reference page: one Job running for 179 minutes, one waiting for quota ----------------------

def cluster(pending_created: float = 30.0) -> list[dict]:
    a = batch_job("train-a", 2, 8, 0)
    b = batch_job("train-b", 2, 8, pending_created, run_time="2h")
    items = nodes() + kueue_objects() + [a, b]
    items += running(a, ["gpu-node-0", "gpu-node-1"], 1)
    items += [admitted(a, 2), workload_of(b, [("main", 2, b["spec"]["template"]["spec"])], "user-queue",
                                          created=pending_created + 0.1)]
    return items


def test_a_dump_is_told_from_manifests_by_what_only_the_api_server_writes():
    assert is_snapshot([as_list(cluster())])
    assert not is_snapshot([{"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n"}}])


def test_the_snapshot_time_is_the_latest_timestamp_and_time_zero_of_the_run():
    sc = load(cluster())
    a = next(j for j in sc.jobs if j.name == "train-a")
    assert a.snapshot.elapsed == (179 * 60.0, 179 * 60.0)  # Running since T0+1 min, the nodes' heartbeat at T0+180 min
    assert any("snapshot taken at 2026-12-01T11:00:00Z" in w for w in sc.warnings)


def test_server_set_fields_are_ignored_silently():
    sc = load(cluster())
    assert not [w for w in sc.warnings if "does not read" in w]


@pytest.mark.parametrize("stack, a_finish, b_start", [
    # quota 24 GPUs: b (16) waits for a (16) under Kueue; a has 4 h - 179 min = 3660 s left
    ("kueue+pod", 3660.0, 3660.0),
    ("kueue+gang", 3660.0, 3660.0),
    # without Kueue 32 GPUs are free for... the same two nodes a holds: b fits on the other two at once
    ("gang", 3660.0, 0.0),
    ("pod", 3660.0, 0.0),
])
def test_a_running_job_finishes_when_its_run_time_is_used_up_and_quota_held_before_the_snapshot_counts(
        stack, a_finish, b_start):
    got = outcome(load(cluster()), stack)
    assert got["team-a/train-a"] == ("Finished", 0.0, a_finish)
    assert got["team-a/train-b"][1] == b_start


def test_the_snapshot_time_can_be_given():
    later = datetime(2026, 12, 1, 12, 0, tzinfo=timezone.utc)  # an hour after the heartbeats: 60 s left
    got = outcome(load(cluster(), snapshot_time=later), "kueue+gang")
    assert got["team-a/train-a"] == ("Finished", 0.0, 60.0)


@pytest.mark.parametrize("first, second", [(30.0, 60.0), (60.0, 30.0)])
def test_waiting_jobs_are_submitted_in_the_order_of_their_creation(first, second):
    a = batch_job("train-a", 2, 8, 0)
    b = batch_job("train-b", 2, 8, first, run_time="1h")
    c = batch_job("train-c", 2, 8, second, run_time="1h")
    items = nodes() + kueue_objects(16) + [a, b, c] + running(a, ["gpu-node-0", "gpu-node-1"], 1) + [admitted(a, 2)]
    got = outcome(load(items), "kueue+gang")
    earlier, later = ("team-a/train-b", "team-a/train-c") if first < second else ("team-a/train-c", "team-a/train-b")
    assert got[earlier][1] == 3660.0 and got[later][1] == 3660.0 + HOUR


def test_without_its_workload_a_running_job_holds_the_quota_its_nodes_imply():
    items = [i for i in cluster() if i["kind"] != "Workload"]
    sc = load(items)
    assert next(j for j in sc.jobs if j.name == "train-a").snapshot.admission is None
    assert outcome(sc, "kueue+gang")["team-a/train-b"][1] == 3660.0


def test_a_partial_admission_resumes_with_the_admitted_count():
    a = batch_job("train-a", 4, 8, 0)
    a["metadata"]["annotations"]["kueue.x-k8s.io/job-min-parallelism"] = "2"
    items = nodes() + kueue_objects(16) + [a] + running(a, ["gpu-node-0", "gpu-node-1"], 1) + [admitted(a, 4, count=2)]
    sc = load(items)
    j = sc.jobs[0]
    assert j.snapshot.nodes == ("gpu-node-0", "gpu-node-1") and j.snapshot.admission.counts == (2,)
    assert outcome(sc, "kueue+gang")["team-a/train-a"] == ("Finished", 0.0, 3660.0)


def test_a_deadlock_in_the_snapshot_is_a_deadlock_of_the_run():
    """Two Jobs of 2 x 8 GPUs, each holding one node of two: pod by pod nothing can move."""
    a = batch_job("train-a", 2, 8, 0, queue=None)
    b = batch_job("train-b", 2, 8, 1, queue=None)
    items = nodes(2) + [a, b] + running(a, ["gpu-node-0", None], 5) + running(b, ["gpu-node-1", None], 6)
    r = gk.simulate(load(items).with_settings(horizon=86400.0), stack="pod")
    assert r.summary()["deadlock"] is True and r.summary()["held_idle_gpus_at_end"] == 16


@pytest.mark.parametrize("stack", ["gang", "coscheduling", "kube-gang", "yunikorn", "pod"])
def test_every_placement_layer_takes_up_a_running_job(stack):
    a = batch_job("train-a", 2, 8, 0, queue=None)
    b = batch_job("train-b", 2, 8, 10, queue=None, run_time="1h")
    items = nodes(2) + [a, b] + running(a, ["gpu-node-0", "gpu-node-1"], 1)
    got = outcome(load(items), stack)
    assert got["team-a/train-a"] == ("Finished", 0.0, 3660.0)
    assert got["team-a/train-b"][0] == "Finished" and got["team-a/train-b"][1] >= 3660.0


def test_a_deployment_s_pods_come_through_its_replicaset():
    dep = served({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "infer", "namespace": "serving"},
                  "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "infer"}},
                           "template": {"metadata": {"labels": {"app": "infer"}},
                                        "spec": {"containers": [container(1, "2", "8Gi", "server")]}}}}, -120,
                 status={"replicas": 2})
    rs = served({"apiVersion": "apps/v1", "kind": "ReplicaSet",
                 "metadata": {"name": "infer-6d9f7c", "namespace": "serving", "labels": {"pod-template-hash": "6d9f7c"}},
                 "spec": {"replicas": 2, "selector": dep["spec"]["selector"], "template": dep["spec"]["template"]}},
                -120, dep)
    spec = dep["spec"]["template"]["spec"]
    pods = [pod_of(rs, f"infer-6d9f7c-{s}", spec, n, -110, -119) for s, n in (("abcde", "gpu-node-1"), ("fghij", "gpu-node-0"))]
    sc = load(nodes(2) + [dep, rs] + pods)
    assert sorted(j.key for j in sc.jobs) == ["serving/infer-0", "serving/infer-1"]  # the ReplicaSet is not a job
    assert {j.name: j.snapshot.nodes for j in sc.jobs} == {"infer-0": ("gpu-node-1",), "infer-1": ("gpu-node-0",)}


def test_a_jobset_s_pods_come_through_its_child_jobs():
    js = served({"apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet",
                 "metadata": {"name": "llm", "namespace": "team-a", "annotations": {"gangkit/run-time": "4h"}},
                 "spec": {"replicatedJobs": [
                     {"name": "driver", "replicas": 1, "template": {"spec": {"parallelism": 1, "completions": 1,
                      "template": {"spec": {"containers": [container(0, "4", "16Gi", "driver")]}}}}},
                     {"name": "workers", "replicas": 2, "template": {"spec": {"parallelism": 1, "completions": 1,
                      "template": {"spec": {"containers": [container(8)]}}}}}]}}, 0, status={})
    children, pods = [], []
    for role, i, n, g in (("driver", 0, "gpu-node-0", 0), ("workers", 0, "gpu-node-0", 8), ("workers", 1, "gpu-node-1", 8)):
        child = served({"apiVersion": "batch/v1", "kind": "Job",
                        "metadata": {"name": f"llm-{role}-{i}", "namespace": "team-a",
                                     "labels": {"jobset.sigs.k8s.io/replicatedjob-name": role}},
                        "spec": {"parallelism": 1, "template": {"spec": {"containers": [container(g)]}}}}, 0.2, js,
                       status={"active": 1})
        children.append(child)
        pods.append(pod_of(child, f"llm-{role}-{i}-0-x", {"containers": [container(g, "4" if role == "driver" else "8",
                                                                                     "16Gi" if role == "driver" else "64Gi")]},
                           n, 10, 0.5))
    sc = load(nodes(2) + [js] + children + pods)
    assert [j.key for j in sc.jobs] == ["team-a/llm"]  # the child Jobs are the JobSet's doing
    j = sc.jobs[0]
    assert j.snapshot.nodes == ("gpu-node-0", "gpu-node-0", "gpu-node-1")  # the driver matched by its request
    got = outcome(sc, "gang")
    assert got["team-a/llm"] == ("Finished", 0.0, 4 * HOUR - 170 * 60.0)


def test_a_volcano_job_s_podgroup_is_its_controller_s_and_its_pods_count_in_the_queue():
    def vcjob(name, created):
        return served({"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job",
                       "metadata": {"name": name, "namespace": "team-a", "annotations": {"gangkit/run-time": "4h"}},
                       "spec": {"schedulerName": "volcano", "minAvailable": 2, "queue": "default",
                                "tasks": [{"name": "worker", "replicas": 2,
                                           "template": {"spec": {"containers": [container(8)]}}}]}}, created,
                      status={"state": {"phase": "Running"}})
    a, b = vcjob("train-a", 0), vcjob("train-b", 20)
    b["status"] = {"state": {"phase": "Pending"}}
    pg = served({"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup",
                 "metadata": {"name": "train-a-" + a["metadata"]["uid"], "namespace": "team-a"},
                 "spec": {"minMember": 2, "queue": "default"}}, 0.1, a, status={"phase": "Running"})
    spec = a["spec"]["tasks"][0]["template"]["spec"]
    pods = [pod_of(a, f"train-a-worker-{i}", spec, f"gpu-node-{i}", 1, 0.5) for i in range(2)]
    sc = load(nodes(2) + [a, b, pg] + pods)
    assert sorted(j.name for j in sc.jobs) == ["train-a", "train-b"]
    got = outcome(sc, "gang")
    # b's PodGroup goes Inqueue when a's pods leave; its controller makes its pods for the next session
    assert got["team-a/train-a"] == ("Finished", 0.0, 3660.0) and got["team-a/train-b"][1] == 3661.0


@pytest.mark.parametrize("capability, b_start", [(16, 3661.0), (32, 1.0)])
def test_a_running_volcano_job_uses_its_queue_s_capability(capability, b_start):
    """Four free nodes, a queue of ``capability`` GPUs: the 16 the running Job holds count against it."""
    queue = served({"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue", "metadata": {"name": "research"},
                    "spec": {"weight": 1, "reclaimable": True, "capability": {GPU: capability}}}, -300,
                   status={"state": "Open"})
    jobs = []
    for name, created in (("train-a", 0), ("train-b", 20)):
        jobs.append(served({"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job",
                            "metadata": {"name": name, "namespace": "team-a", "annotations": {"gangkit/run-time": "4h"}},
                            "spec": {"schedulerName": "volcano", "minAvailable": 2, "queue": "research",
                                     "tasks": [{"name": "worker", "replicas": 2,
                                                "template": {"spec": {"containers": [container(8)]}}}]}}, created,
                           status={"state": {"phase": "Running" if name == "train-a" else "Pending"}}))
    spec = jobs[0]["spec"]["tasks"][0]["template"]["spec"]
    pods = [pod_of(jobs[0], f"train-a-worker-{i}", spec, f"gpu-node-{i}", 1, 0.5) for i in range(2)]
    got = outcome(load(nodes(4) + [queue] + jobs + pods), "gang")
    assert got["team-a/train-a"] == ("Finished", 0.0, 3660.0) and got["team-a/train-b"][1] == b_start


@pytest.mark.parametrize("status, note", [
    ({"conditions": [{"type": "Complete", "status": "True", "lastTransitionTime": stamp(100)}], "succeeded": 2},
     "had ended at the snapshot (condition Complete)"),
    ({"conditions": [{"type": "Failed", "status": "True", "lastTransitionTime": stamp(100)}], "failed": 7},
     "had ended at the snapshot (condition Failed)"),
])
def test_a_finished_job_is_left_out_with_a_note(status, note):
    done = batch_job("old", 2, 8, -100)
    done["status"] = status
    items = cluster() + [done] + [pod_of(done, f"old-{i}", done["spec"]["template"]["spec"], "gpu-node-2", None, -99,
                                         phase="Succeeded") for i in range(2)]
    sc = load(items)
    assert "team-a/old" not in {j.key for j in sc.jobs}
    assert any("Job team-a/old" in w and note in w for w in sc.warnings)


def test_a_pod_whose_controller_is_not_in_the_dump_is_read_on_its_own():
    a = batch_job("train-a", 1, 8, 0, queue=None)
    pod = running(a, ["gpu-node-0"], 1)[0]
    sc = load(nodes(1) + [pod])
    assert [j.key for j in sc.jobs] == ["team-a/train-a-p0"] and sc.jobs[0].snapshot.nodes == ("gpu-node-0",)
    assert any("made by a controller that is not in the input" in w for w in sc.warnings)


@pytest.mark.parametrize("change, obj, field, message", [
    (lambda items: items.pop(0), "Pod team-a/train-a-p0", "spec.nodeName",
     "names node 'gpu-node-0', which is not in the input"),
    (lambda items: items[-2]["status"]["admission"]["podSetAssignments"].append({"name": "extra", "count": 1}),
     "Workload team-a/job-train-a-", "status.admission", "one podSetAssignment for each of the 1 pod sets"),
    (lambda items: items[-2]["status"]["admission"]["podSetAssignments"][0].update(count=3),
     "Workload team-a/job-train-a-", "status.admission.podSetAssignments[0].count", "from 1 to 2, got 3"),
    (lambda items: items[-2]["status"]["admission"].update(clusterQueue="elsewhere"),
     "Job team-a/train-a", "snapshot.admission", "ClusterQueue elsewhere, which is not in the input"),
])
def test_a_dump_that_contradicts_itself_gets_one_clear_error(change, obj, field, message):
    items = cluster()
    change(items)
    with pytest.raises(ScenarioError) as e:
        sc = load(items)
        gk.simulate(sc, stack="kueue+gang")
    p = e.value.problems[0]
    assert p.obj.startswith(obj) and p.field == field and message in p.message, str(e.value)


def test_pods_on_a_node_that_cannot_hold_them_are_an_error_naming_the_pod():
    a = batch_job("train-a", 2, 8, 0, queue=None)
    with pytest.raises(ScenarioError) as e:
        load(nodes(1) + [a] + running(a, ["gpu-node-0", "gpu-node-0"], 1))
    assert [str(p) for p in e.value.problems] == [
        "Pod team-a/train-a-p1: spec.nodeName: bound to node gpu-node-0, which has no room left for it: the dump's "
        "pods bound to that node ask for 16 GPUs, 16 cores, 137438953472 bytes up to this one, and the node has 8 GPUs, "
        "96 cores, 1099511627776 bytes (expected at most what the node has)"]


def _pods(items: list[dict]) -> list[dict]:
    return [d for d in items if d["kind"] == "Pod"]


def _limits(items: list[dict]) -> dict:
    return _pods(items)[0]["spec"]["containers"][0]["resources"]["limits"]


def _started(items: list[dict]) -> dict:
    return _pods(items)[0]["status"]["containerStatuses"][0]["state"]["running"]


POD = "Pod team-a/train-a-p0"
GPU_LIMIT = "spec.containers[0].resources.limits.nvidia.com/gpu"
STARTED_AT = "status.containerStatuses[0].state.running.startedAt"


@pytest.mark.parametrize("change, obj, field, message", [
    pytest.param(lambda items: _pods(items)[0]["status"].update(phase="Exploded"), POD, "status.phase",
                 "expected one of Pending, Running, Succeeded, Failed, Unknown (a Pod's phase), got 'Exploded'",
                 id="a pod phase Kubernetes does not have"),
    pytest.param(lambda items: _pods(items)[0]["status"].update(phase=["Running"]), POD, "status.phase",
                 "expected one of Pending, Running, Succeeded, Failed, Unknown", id="a pod phase that is a list"),
    pytest.param(lambda items: _limits(items).update({GPU: float("nan")}), POD, GPU_LIMIT,
                 "expected a Kubernetes quantity such as 8, 500m, 1.5 or 16Gi, got nan", id="a NaN GPU request"),
    pytest.param(lambda items: _limits(items).update({GPU: "NaN"}), POD, GPU_LIMIT,
                 "expected a Kubernetes quantity such as 8, 500m, 1.5 or 16Gi, got 'NaN'",
                 id="a NaN GPU request written as a string"),
    pytest.param(lambda items: _limits(items).update({GPU: float("inf")}), POD, GPU_LIMIT,
                 "expected a Kubernetes quantity", id="an infinite GPU request"),
    pytest.param(lambda items: _limits(items).update({GPU: -8}), POD, GPU_LIMIT,
                 "must be greater than or equal to 0, got -8", id="a negative GPU request"),
    pytest.param(lambda items: _limits(items).update({GPU: "1e400"}), POD, GPU_LIMIT,
                 "expected a quantity of at most 2^63-1", id="a GPU request of 1e400"),
    pytest.param(lambda items: _pods(items)[0]["spec"]["containers"][0]["resources"]["requests"].update(cpu="-1"),
                 POD, "spec.containers[0].resources.requests.cpu", "must be greater than or equal to 0",
                 id="a negative CPU request"),
    pytest.param(lambda items: _pods(items)[0]["metadata"].update(name=None), "Pod (document 1, items[9])",
                 "metadata.name", "expected the Pod's name (a non-empty string), got null", id="a pod whose name is null"),
    pytest.param(lambda items: _pods(items)[0]["spec"].update(nodeName=7), POD, "spec.nodeName",
                 "expected the name of a Node (a string), got 7", id="a node name that is a number"),
    pytest.param(lambda items: _started(items).update(startedAt="garbage"), POD, STARTED_AT,
                 "expected an RFC 3339 time such as 2026-12-01T08:00:00Z, got 'garbage'", id="a start time that is garbage"),
    pytest.param(lambda items: _pods(items)[0]["status"].update(startTime="2026-12-01"), POD, "status.startTime",
                 "expected an RFC 3339 time", id="a start time without its time of day"),
    pytest.param(lambda items: _pods(items)[0]["metadata"].update(creationTimestamp="2026-12-01T08:00:00"), POD,
                 "metadata.creationTimestamp", "expected an RFC 3339 time", id="a creation time without its zone"),
    pytest.param(lambda items: items[0]["status"]["conditions"][0].update(lastHeartbeatTime="2026-13-01T00:00:00Z"),
                 "Node gpu-node-0", "status.conditions[0].lastHeartbeatTime", "expected an RFC 3339 time",
                 id="a node heartbeat in month 13"),
    pytest.param(lambda items: _pods(items)[1]["spec"].update(nodeName="gpu-node-0"), "Pod team-a/train-a-p1",
                 "spec.nodeName", "bound to node gpu-node-0, which has no room left for it",
                 id="two 8-GPU pods bound to one 8-GPU node"),
    pytest.param(lambda items: _pods(items)[0]["spec"].update(nodeName="gpu-node-9"), POD, "spec.nodeName",
                 "names node 'gpu-node-9', which is not in the input", id="a pod bound to a node the dump lacks"),
    pytest.param(lambda items: (items[7]["spec"]["template"]["spec"].update(nodeSelector={"pool": "a"}),
                                items[1]["metadata"]["labels"].update(pool="a")), POD,
                 "spec.nodeName", "bound to node gpu-node-0, whose labels do not match the pod's node selector "
                 "{'pool': 'a'}", id="a pod bound to a node its job's node selector does not pick"),
])
def test_a_dump_s_pod_that_could_not_exist_is_one_error_naming_the_pod_and_the_field(change, obj, field, message):
    items = cluster()
    change(items)
    with pytest.raises(ScenarioError) as e:
        load(items)
    assert len(e.value.problems) == 1, str(e.value)
    p = e.value.problems[0]
    assert (p.obj, p.field) == (obj, field) and message in p.message, str(p)


@pytest.mark.parametrize("change, says", [
    pytest.param(lambda items: _pods(items)[0]["spec"].update(nodeName="gpu-node-9"),
                 "error: Pod team-a/train-a-p0: spec.nodeName: names node 'gpu-node-9', which is not in the input",
                 id="a pod bound to a node the dump lacks"),
    pytest.param(lambda items: _pods(items)[1]["spec"].update(nodeName="gpu-node-0"),
                 "error: Pod team-a/train-a-p1: spec.nodeName: bound to node gpu-node-0, which has no room left for it",
                 id="a pod bound to a node that is full"),
    pytest.param(lambda items: _pods(items)[0]["status"].update(phase="Exploded"),
                 "error: Pod team-a/train-a-p0: status.phase: expected one of Pending", id="a pod phase that does not exist"),
])
@pytest.mark.parametrize("command", ["run", "check"])
def test_gangkit_run_and_gangkit_check_refuse_the_same_dump_with_the_same_error(change, says, command, tmp_path, capsys):
    items = cluster()
    change(items)
    path = tmp_path / "dump.yaml"
    path.write_text(yaml.safe_dump(as_list(items), sort_keys=False))
    status, out, err = run_cli([command, str(path)], capsys)
    errors = [line for line in err.splitlines() if line.startswith("error: ")]
    assert status == 2 and errors == [errors[0]] and errors[0].startswith(says), err
    assert "Traceback" not in err and "no findings" not in out


@pytest.mark.parametrize("at, field, started", [
    pytest.param(datetime(2026, 12, 1, 8, 0, 30, tzinfo=timezone.utc), STARTED_AT, "2026-12-01T08:01:00Z",
                 id="a snapshot time after the pods were made but before they started"),
    pytest.param(datetime(2026, 12, 1, 7, 0, tzinfo=timezone.utc), "metadata.creationTimestamp", "2026-12-01T08:00:00Z",
                 id="a snapshot time before the pods were made"),
])
def test_a_snapshot_time_before_a_pod_started_is_an_error_naming_the_pod_and_both_times(at, field, started):
    with pytest.raises(ScenarioError) as e:
        load(cluster(), snapshot_time=at)
    shown = at.isoformat().replace("+00:00", "Z")
    assert [(p.obj, p.field) for p in e.value.problems] == [(POD, field), ("Pod team-a/train-a-p1", field)]
    assert f"no later than the snapshot's, {shown}" in e.value.problems[0].message
    assert f"got {started}" in e.value.problems[0].message


@pytest.mark.parametrize("pod_sets, live, expected", [
    # (pod set requests), live pods' GPUs with their node (None: Pending) -> the node of each slot
    ([(1, 0), (2, 8)], [(8, "b"), (0, "a"), (8, None)], ("a", "b", None)),
    ([(2, 8)], [(8, None), (8, "b"), (8, "c")], ("b", "c")),  # bound pods first: a replaced pod was Pending
    ([(1, 8)], [(4, "a")], ("a",)),  # no pod set asks for what it asks: the first free slot
    ([(2, 8)], [], (None, None)),
])
def test_pods_are_matched_to_pod_sets_by_their_requests(pod_sets, live, expected):
    from gangkit.manifests.snapshot import LivePod

    sets = [PodSet(f"s{i}", n, g) for i, (n, g) in enumerate(pod_sets)]
    pods = [LivePod(f"p{i}", node, None, None, {"containers": [{"name": "c", "resources": {"limits": {GPU: str(g)}}}]}, {})
            for i, (g, node) in enumerate(live)]
    got = match_pods(sets, [ps.count for ps in sets], pods)
    assert tuple(p.node if p is not None else None for p in got) == expected


# -- the upstream corpus as it comes back from a cluster ----------------------------------------------------------

CORPUS = shared_path("upstream_manifests")
absent = pytest.mark.skipif(not CORPUS.is_dir(), reason=f"the upstream corpus {CORPUS} is absent (it sits beside the repository)")


def _simulating_files() -> list[str]:
    from test_upstream_corpus import SIMULATES

    return list(SIMULATES) if CORPUS.is_dir() else []


def _essence(sc: gk.Scenario) -> tuple:
    jobs = sorted((j.key, tuple(j.pod_sets), j.priority, j.queue, j.run_time, j.progress, j.min_member, j.kueue_managed,
                   j.framework, j.volcano_queue) for j in sc.jobs)
    return jobs, sorted(n.name for n in sc.nodes), repr(sc.kueue), repr(sc.volcano)


@absent
@pytest.mark.parametrize("name", _simulating_files())
def test_every_upstream_example_reads_the_same_when_it_comes_back_from_the_api_server(name):
    """Served (server-set metadata, defaulted fields, an empty status), each file reads as the file itself:
    the same jobs, nodes and queues, and no field gangkit does not read that the file itself did not have."""
    from test_upstream_corpus import NODES

    docs = [d for d in yaml.safe_load_all((CORPUS / name).read_text()) if d is not None]
    extra = [] if any(isinstance(d, dict) and d.get("kind") == "Node" for d in docs) else NODES
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        raw = load_files([CORPUS / name], extra=extra)
        live = [served(copy.deepcopy(d), created=float(i), status={} if d.get("kind") != "Node" else d.get("status"))
                for i, d in enumerate(docs + extra) if isinstance(d, dict) and d.get("kind") != "List"]
        back = load_manifests(as_list(live))
    assert _essence(back) == _essence(raw)
    unread = [w for w in back.warnings if "does not read" in w]
    assert len(unread) <= len([w for w in raw.warnings if "does not read" in w])


def test_split_keeps_an_object_s_fields_as_written():
    job = batch_job("train-a", 2, 8, 0)
    r = Reader("t")
    docs, _, taken = split(r, [as_list([job])], ["document 1"])
    assert docs[0]["spec"]["template"]["spec"]["containers"][0]["resources"] == job["spec"]["template"]["spec"][
        "containers"][0]["resources"]
    assert "uid" not in docs[0]["metadata"] and "status" not in docs[0] and "selector" not in docs[0]["spec"]
    assert taken.at == datetime(2026, 12, 1, 8, 0, tzinfo=timezone.utc)


# -- the example of docs/reference/snapshot.md, and the command line -------------------------------------------

EXAMPLE = REPO / "examples" / "snapshot" / "cluster-dump.yaml"


def test_the_reference_page_s_example_runs_as_the_page_says():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sc = load_files([EXAMPLE])
    got = outcome(sc, "kueue+gang")
    assert got["team-a/train-a"] == ("Finished", 0.0, 3660.0)
    assert got["team-a/train-b"] == ("Finished", 3660.0, 10860.0)
    assert got["serving/infer-0"][0] == got["serving/infer-1"][0] == "RunningAtEnd"
    page = (EXAMPLE.parents[2] / "docs" / "reference" / "snapshot.md").read_text()
    assert "team-a/train-b    16       0.0   3660.0   10860.0" in page
    assert not [w for w in sc.warnings if "does not read" in w]


@pytest.mark.parametrize("args, code, says", [
    (["--stack", "kueue+gang", "--json"], 0, '"jobs_finished": 2'),
    (["--snapshot-time", "2026-12-01T12:00:00Z", "--stack", "kueue+gang", "--json"], 0, '"jobs_finished": 2'),
    (["--snapshot-time", "yesterday"], 2, "--snapshot-time: expected an RFC 3339 time"),
    (["--snapshot-time", "2026-12-01T07:00:00Z"], 2, "error: Pod team-a/train-a-x7k2p: metadata.creationTimestamp: "
     "expected a time no later than the snapshot's, 2026-12-01T07:00:00Z"),
])
def test_gangkit_run_reads_a_dump(args, code, says, capsys):
    from gangkit.cli.main import main

    assert main(["run", str(EXAMPLE), *args]) == code
    out = capsys.readouterr()
    assert says in out.out + out.err and "Traceback" not in out.err


def test_a_resumed_job_is_not_written_back_as_if_it_had_not_started():
    sc = load(cluster())
    with pytest.raises(ScenarioError, match="Job team-a/train-a: snapshot: a job taken from a live cluster's snapshot"):
        gk.dump_manifests(sc)


@requires_schemas
def test_the_example_dump_is_valid_against_the_real_schemas():
    """Every object of the example dump (status and server-set metadata included) is one the API server returns."""
    doc = yaml.safe_load(EXAMPLE.read_text())
    for item in doc["items"]:
        if item["apiVersion"] == "apps/v1":  # the shared schemas have no apps/v1 kinds: their pod template, as a Pod
            template = item["spec"]["template"]
            validate_manifest({"apiVersion": "v1", "kind": "Pod", "spec": template["spec"],
                               "metadata": {k: v for k, v in template.get("metadata", {}).items() if v is not None}})
            continue
        validate_manifest(item)


@requires_schemas
def test_the_tests_dumps_are_valid_against_the_real_schemas():
    a = batch_job("train-a", 2, 8, 0, queue=None)
    for item in cluster() + [a] + running(a, ["gpu-node-0", None], 5):
        validate_manifest(item)


# -- a run taken up from its own snapshot goes on as the run itself -----------------------------------------------

def _mix(n: int = 14, seed: int = 3) -> gk.Scenario:
    import random

    from gangkit.model.jobs import job
    from gangkit.model.nodes import Node

    rng = random.Random(seed)
    jobs = [job(f"j{i:02d}", pods=rng.choice([1, 2, 4]), gpus=rng.choice([2, 4, 8]), run_time=float(rng.randrange(600, 4000, 10)))
            for i in range(n)]
    return gk.Scenario(nodes=[Node(f"node-{i}", 8) for i in range(4)], jobs=jobs, name="mix")


def dump_of_run(sc: gk.Scenario, stack: str, t: float) -> list[dict]:
    """The live cluster of ``sc``'s run under ``stack`` at time ``t``, as kubectl would print it (T0 = the run's 0)."""
    from gangkit.simulate import replay

    sim = replay(sc.with_settings(stack=stack), t)
    docs = [d for d in yaml.safe_load_all(gk.dump_manifests(sc.with_settings(stack=stack))) if d]
    kueue_layer = next((layer for layer in sim.stack.admission if hasattr(layer, "workloads")), None)
    states = {js.spec.name: js for js in sim.jobs}
    out = []
    for i, d in enumerate(docs):
        if d["kind"] == "Simulation":
            continue
        if d["kind"] != "Job":
            out.append(served(d, created=-10.0, status=d.get("status") if d["kind"] == "Node" else {}))
            continue
        js = states[d["metadata"]["name"]]
        job = served(d, created=i / 60, status={})
        if js.state == "Finished":
            job["status"] = {"conditions": [{"type": "Complete", "status": "True",
                                             "lastTransitionTime": stamp(js.finished_at / 60)}]}
            out.append(job)
            continue
        out.append(job)
        spec = job["spec"]["template"]["spec"]
        held = not sim.stack.placement.started(js)  # held at Permit, or placeholders: Pending in the API server
        for p in js.pods:
            if p.node is not None and not held:
                out.append(pod_of(job, p.name, spec, p.node.node.name, p.bound_at / 60, 0.0))
            else:
                out.append(pod_of(job, p.name, spec, None, None, 0.0))
        wl = kueue_layer.workloads.get(js.index) if kueue_layer is not None else None
        if wl is not None and wl.admission is not None:
            a = wl.admission
            out.append(workload_of(job, [(ps, a.counts[ps], spec) for ps in a.flavors], d["metadata"]["labels"][
                "kueue.x-k8s.io/queue-name"], a.cluster_queue, [a.flavors[ps] for ps in a.flavors],
                [a.counts[ps] for ps in a.flavors], created=i / 60))
    return out


# (kube-gang and YuniKorn are left out: pods held at Permit and placeholders are not bound in the API server, so a
# dump shows them Pending and the resumed run forms the hold again, with fresh timeouts)
@pytest.mark.parametrize("stack", ["pod", "gang", "kueue+gang", "kueue+pod", "coscheduling"])
@pytest.mark.parametrize("t", [1200.0, 2500.0])
def test_a_run_taken_up_from_its_own_snapshot_goes_on_as_the_run_itself(stack, t):
    """Stop a run at ``t``, dump the cluster as kubectl would, read the dump and run it: every job that had not
    ended ends as in the whole run (finished ``t`` seconds earlier on the new clock, deadlocked, or waiting)."""
    from gangkit.kueue.layer import default_objects

    sc = _mix()
    if stack.startswith("kueue"):
        sc = __import__("dataclasses").replace(sc, kueue=default_objects(sc, gpus=24))
    whole = gk.simulate(sc.with_settings(horizon=86400.0), stack=stack).jobs.set_index("job")
    later = datetime.fromtimestamp(T0.timestamp() + t, tz=timezone.utc)
    resumed = outcome(load(dump_of_run(sc, stack, t), snapshot_time=later), stack)
    open_jobs = [name for name, row in whole.iterrows() if not row["finish_s"] <= t]
    assert open_jobs and {k.split("/")[-1] for k in resumed} == set(open_jobs)
    for name in open_jobs:
        state, _, finish = resumed[next(k for k in resumed if k.split("/")[-1] == name)]
        expected = whole.loc[name, "finish_s"]
        assert state == whole.loc[name, "state"], name  # Finished, or Deadlocked, or still waiting, as in the run
        assert (finish + t == expected) or (finish != finish and expected != expected), name


def test_gangkit_admit_reads_a_dump_s_workloads_once():
    """In a dump Kueue's Workloads stand for their jobs (a Job and its Workload are one workload, not two)."""
    from gangkit.analysis.admit import admit
    from gangkit.manifests.kueue_snapshot import load_kueue

    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        report = admit(load_kueue(EXAMPLE))
    [admitted], [pending] = report["admitted"], report["pending"]
    assert admitted.startswith("team-a/job-train-a-") and pending.startswith("team-a/job-train-b-")
    assert "8 more needed" in next(iter(report["pending"].values()))["reason"]
    assert not [w for w in seen if "does not read" in str(w.message)]


# -- a dump saved by Windows PowerShell 5 (`kubectl get ... -o yaml > cluster.yaml` writes UTF-16 with its BOM) --------

@pytest.mark.parametrize("encode, says", [
    pytest.param(lambda text: text.encode("utf-16"), None, id="UTF-16 with its byte order mark reads as kubectl reads it"),
    pytest.param(lambda text: codecs.BOM_UTF16_BE + text.encode("utf-16-be"), None,
                 id="big-endian UTF-16 with its byte order mark reads too"),
    pytest.param(lambda text: text.encode("utf-16-le"), "invalid YAML: unacceptable character #x0000: special "
                 "characters are not allowed (a NUL byte: UTF-16 without its byte order mark?",
                 id="UTF-16 without its byte order mark is one error saying so"),
])
@pytest.mark.parametrize("command", ["run", "check", "admit"])
def test_a_dump_in_utf16_reads_as_kubectl_reads_it(encode, says, command, tmp_path, capsys):
    (tmp_path / "utf8").mkdir()
    plain, other = tmp_path / "utf8" / "cluster.yaml", tmp_path / "cluster.yaml"
    plain.write_bytes(EXAMPLE.read_bytes())
    other.write_bytes(encode(EXAMPLE.read_text()))
    got = run_cli([command, str(other)], capsys)
    if says is None:
        want = run_cli([command, str(plain)], capsys)
        assert got == want
    else:
        assert got[0] == 2 and got[1] == "" and got[2].startswith("error: cluster.yaml: line 1, column 2: " + says)
        assert len(got[2].splitlines()) == 1 and "Traceback" not in got[2]
