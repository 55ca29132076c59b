"""A live cluster's dump with a LeaderWorkerSet: its groups' state as the LWS controller made them (lws v0.10).

The controller makes a leader StatefulSet owned by the LeaderWorkerSet, one leader pod per group, and for each
leader pod a worker StatefulSet it owns; every pod of a group carries ``leaderworkerset.sigs.k8s.io/name`` and
``leaderworkerset.sigs.k8s.io/group-index`` (``api/leaderworkerset/v1/leaderworkerset_types.go``).
"""

from __future__ import annotations

import warnings

import pytest
from apiserver import as_list, node, pod_of, served

import gangkit as gk
from gangkit.manifests import GangkitInputWarning, load_manifests

from conftest import case

NAME, GROUP, WORKER = ("leaderworkerset.sigs.k8s.io/name", "leaderworkerset.sigs.k8s.io/group-index",
                       "leaderworkerset.sigs.k8s.io/worker-index")


def pod_spec(gpus):
    return {"containers": [{"name": "vllm", "image": "vllm/vllm-openai:v0.10.0",
                            "resources": {"limits": {"nvidia.com/gpu": str(gpus)}, "requests": {"cpu": "4", "memory": "32Gi"}}}]}


LWS = {"apiVersion": "leaderworkerset.x-k8s.io/v1", "kind": "LeaderWorkerSet",
       "metadata": {"name": "llm", "namespace": "serve", "annotations": {"gangkit/run-time": "2h"}},
       "spec": {"replicas": 2, "leaderWorkerTemplate": {"size": 3, "leaderTemplate": {"spec": pod_spec(1)},
                                                        "workerTemplate": {"spec": pod_spec(4)}}}}


def sts(name, owner, created):
    return served({"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": name, "namespace": "serve"},
                   "spec": {"replicas": 1, "serviceName": "llm", "selector": {"matchLabels": {NAME: "llm"}},
                            "template": {"metadata": {"labels": {NAME: "llm"}}, "spec": pod_spec(1)}}}, created, owner)


def group_pods(leader_sts, group, nodes, started, labelled=True):
    """A group's leader pod, its worker StatefulSet and worker pods (``nodes``: leader's, then the workers')."""
    def labels(worker):
        return {NAME: "llm", GROUP: str(group), WORKER: str(worker)} if labelled else {NAME: "llm"}
    leader = pod_of(leader_sts, f"llm-{group}", pod_spec(1), nodes[0], started, 1.0, labels=labels(0))
    workers = sts(f"llm-{group}", leader, 1.5)
    out = [leader, workers]
    for w, n in enumerate(nodes[1:], start=1):
        out.append(pod_of(workers, f"llm-{group}-{w}", pod_spec(4), n, started, 2.0, labels=labels(w)))
    return out


def dump(second_group=(None, None, None), labelled=True):
    lws = served(LWS, 0.0)
    leaders = sts("llm", lws, 0.5)
    items = [node("gpu-0", 8), node("gpu-1", 8), node("gpu-2", 8), lws, leaders]
    items += group_pods(leaders, 0, ("gpu-0", "gpu-0", "gpu-1"), 5.0, labelled)
    items += group_pods(leaders, 1, second_group, None if None in second_group else 5.0, labelled)
    return as_list(items)


def load(items):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", GangkitInputWarning)
        return load_manifests(items)


@pytest.mark.parametrize("items, bound", [
    case("group 0 runs on its nodes, group 1 waits: each group's pods go to its job", dump(),
         {"llm-0": ("gpu-0", "gpu-0", "gpu-1"), "llm-1": (None, None, None)}),
    case("group 1 partly placed: its bound pods keep their nodes", dump(("gpu-2", "gpu-2", None)),
         {"llm-0": ("gpu-0", "gpu-0", "gpu-1"), "llm-1": ("gpu-2", "gpu-2", None)}),
])
def test_each_group_resumes_from_its_own_pods(items, bound):
    sc = load(items)
    assert sorted(j.name for j in sc.jobs) == ["llm-0", "llm-1"]  # the StatefulSets are the LWS's, not jobs
    got = {j.name: j.snapshot.nodes if j.snapshot is not None else (None, None, None) for j in sc.jobs}
    assert got == bound


def test_the_running_group_keeps_its_nodes_in_the_run():
    r = gk.simulate(load(dump()), stack="pod", horizon=600.0)
    pods = r.pods[r.pods.job == "serve/llm-0"].sort_values("pod")
    assert list(pods.node) == ["gpu-0", "gpu-0", "gpu-1"] and list(pods.bound_s) == [0.0, 0.0, 0.0]


def test_pods_without_the_group_index_label_are_noted_and_left_out():
    sc = load(dump(labelled=False))
    assert all(j.snapshot is None or set(j.snapshot.nodes) == {None} for j in sc.jobs)
    assert any("leaderworkerset.sigs.k8s.io/group-index" in w for w in sc.warnings)
