"""Pods at Permit hold and give back every resource the same way: GPUs, CPU, memory.

A coscheduling PodGroup or a kube-gang Workload whose pods wait at Permit holds what those pods
ask for; when the wait times out, Unreserve forgets every waiting pod, whatever it requests, and
the group takes its seats again at once (``gangkit.placement.permit``). A group rejected by
PostFilter is tried again when capacity is freed, and freed cores or bytes are capacity too.
Each table runs one story three times, once per resource, and the three runs must agree.
"""

from __future__ import annotations

import math

import pytest

import gangkit as gk
from gangkit import Job, Node, PodSet, Scenario

GIB = 2**30
#: One unit of each resource, as a pod asks for it, and a node of ``n`` units.
UNIT = {"gpus": dict(gpus=1), "cpu": dict(gpus=0, cpu=1.0), "memory": dict(gpus=0, memory=GIB)}
NODE = {"gpus": lambda n: Node("node-0", gpus=n), "cpu": lambda n: Node("node-0", gpus=0, cpu=float(n)),
        "memory": lambda n: Node("node-0", gpus=0, memory=n * GIB)}
RESOURCES = tuple(UNIT)


def pods(count: int, resource: str, units: int = 1) -> PodSet:
    return PodSet("workers", count, **{k: v * units for k, v in UNIT[resource].items()})


def short_by_one(resource: str) -> Scenario:
    """The reported story: a node with room for 9, a gang of 10 pods with scheduleTimeoutSeconds 10."""
    return Scenario([NODE[resource](9)], [Job("g", [pods(10, resource)], run_time=100, schedule_timeout=10)],
                    name=f"short-by-one-{resource}").with_settings(horizon=1000)


def beside_another(resource: str) -> Scenario:
    """A gang of 4 on a node of 4 units, beside a job that holds 2 of them for 1000 s."""
    return Scenario([NODE[resource](4)], [Job("other", [pods(1, resource, 2)], run_time=1000),
                                          Job("g", [pods(4, resource)], run_time=100)],
                    name=f"beside-{resource}").with_settings(horizon=3000)


def behind_a_short_job(resource: str) -> Scenario:
    """A gang of 4 behind a 60 s job of 2 units on a node of 4: rejected at once, retried when the job ends."""
    return Scenario([NODE[resource](4)], [Job("first", [pods(1, resource, 2)], run_time=60),
                                          Job("g", [pods(4, resource)], run_time=100)], name=f"behind-{resource}")


CASES = [
    # (id, story, stack, {job: (start, terminal state)}, times of the Permit releases)
    ("coscheduling: 9 of 10 wait, released every 10 s and held again, never a deadlock",
     short_by_one, "coscheduling", {"g": (math.nan, "WaitingAtEnd")}, [10.0 * k for k in range(1, 101)]),
    ("kube-gang: 9 of 10 wait, released every 300 s (fixed) and held again",
     short_by_one, "kube-gang", {"g": (math.nan, "WaitingAtEnd")}, [300.0, 600.0, 900.0]),
    ("kube-gang: half a gang waits beside another job, released each 300 s, starts when the other ends",
     beside_another, "kube-gang", {"other": (0.0, "Finished"), "g": (1000.0, "Finished")}, [300.0, 600.0, 900.0]),
    ("coscheduling: rejected by PostFilter (50 % missing), woken when the first job frees its room",
     behind_a_short_job, "coscheduling", {"first": (0.0, "Finished"), "g": (60.0, "Finished")}, []),
    ("kube-gang: half a gang waits at Permit behind a short job and completes when it ends",
     behind_a_short_job, "kube-gang", {"first": (0.0, "Finished"), "g": (60.0, "Finished")}, []),
]


@pytest.mark.parametrize("resource", RESOURCES)
@pytest.mark.parametrize("story, stack, expected, releases", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_every_resource_is_held_and_released_alike(story, stack, expected, releases, resource):
    r = gk.simulate(story(resource), stack=stack)
    rows = r.jobs.set_index("job")
    for name, (start, state) in expected.items():
        assert rows.loc[name, "state"] == state, rows.loc[name, "reason"]
        got = rows.loc[name, "start_s"]
        assert (math.isnan(got) and math.isnan(start)) or got == start, (name, got)
    assert r.events.query("event == 'released'").time_s.tolist() == releases
    assert not r.deadlock and r.figures["jobs_deadlocked"] == 0
    assert r.jobs.restarts.sum() == 0  # a Permit release is not an eviction


@pytest.mark.parametrize("story, stack", [c[1:3] for c in CASES], ids=[c[0] for c in CASES])
def test_the_three_resources_tell_one_story(story, stack):
    """Same events at the same instants, whatever the pods ask for (GPU-seconds aside)."""
    runs = {res: gk.simulate(story(res), stack=stack) for res in RESOURCES}
    events = {res: r.events[["time_s", "event", "job", "pod"]].reset_index(drop=True) for res, r in runs.items()}
    for res in RESOURCES[1:]:
        assert events[res].equals(events["gpus"]), res


@pytest.mark.parametrize("stack, resource, words", [
    ("coscheduling", "cpu", "9 of minMember 10 pods wait at Permit holding 9 cpu; 1 pods unschedulable (0 cpu free)"),
    ("coscheduling", "memory", "holding 9Gi memory; 1 pods unschedulable (0Gi memory free)"),
    ("kube-gang", "cpu", "9 of minCount 10 pods wait at Permit holding 9 cpu"),
    ("coscheduling", "gpus", "9 of minMember 10 pods wait at Permit holding 9 GPUs; 1 pods unschedulable (0 GPUs free)"),
])
def test_the_reason_at_the_end_names_what_is_held(stack, resource, words):
    """The run's reason column (the layer's pending reason at the end) names cores and bytes, not "0 GPUs"."""
    reason = gk.simulate(short_by_one(resource), stack=stack).jobs.set_index("job").loc["g", "reason"]
    assert reason.startswith("[placement] WaitingAtPermit: ") and words in reason


COSCHEDULING = """
apiVersion: v1
kind: Node
metadata: {name: cpu-0}
status:
  allocatable: {cpu: "9"}
---
apiVersion: scheduling.x-k8s.io/v1alpha1
kind: PodGroup
metadata: {name: train}
spec: {minMember: 10, scheduleTimeoutSeconds: 10}
---
apiVersion: batch/v1
kind: Job
metadata:
  name: train
  annotations: {gangkit/run-time: 10m, gangkit/progress: sync}
spec:
  parallelism: 10
  template:
    metadata:
      labels: {scheduling.x-k8s.io/pod-group: train}
    spec:
      restartPolicy: Never
      containers:
      - name: worker
        image: ghcr.io/example/trainer:1.0
        resources: {%s}
---
apiVersion: gangkit/v1alpha1
kind: Simulation
metadata: {name: permit-%s}
spec: {stack: coscheduling, horizon: 1h}
"""


@pytest.mark.parametrize("node, request_, unit", [
    ('cpu: "9"', 'requests: {cpu: "1"}', "cpu"),
    ('memory: 9Gi', 'requests: {memory: 1Gi}', "memory"),
    ('nvidia.com/gpu: "9"', 'limits: {nvidia.com/gpu: "1"}', "gpus"),
])
def test_the_reported_manifests_are_released_every_scheduleTimeoutSeconds(node, request_, unit):
    text = COSCHEDULING.replace('cpu: "9"', node, 1) % (request_, unit)
    r = gk.simulate(gk.load_manifests(text))
    released = r.events.query("event == 'released'").time_s.tolist()
    assert released == [10.0 * k for k in range(1, 361)]  # to the horizon, 1 h
    job = r.jobs.set_index("job").loc["train"]
    assert job.state == "WaitingAtEnd" and not r.deadlock
