"""Benchmark of ``gangkit predict``: a live cluster's dump of 1,000 nodes and 5,000 pods, 100 samples.

The dump is made here, the same every time (no randomness but a seeded generator): 1,000 nodes of
8 GPUs, 96 cores and 1 TiB; Kueue with one ClusterQueue whose quota is the cluster's GPUs; on the first
60 % of the nodes one whole-node training pod each (Jobs of one pod of 8 GPUs), on the others 8 one-GPU
pods (Jobs of four) and 3 CPU-only pods (data loaders: Jobs of four pods of 4 cores) each: 5,000 pods,
every GPU in use, bound for up to two days; 200 suspended Jobs wait for quota (Kueue has made no pods for
them). None carries ``gangkit/run-time``, so every sample draws every running job's remaining time. The
workload to predict is one Job of two 8-GPU pods.

    python benchmarks/predict.py                 # full size: 1,000 nodes, 5,000 pods, 100 samples
    python benchmarks/predict.py --quick         # 20 nodes, 100 pods, 4 samples (the smoke test)
    python benchmarks/predict.py --workers 1     # in this process only

It prints one row: the dump's size, the wall seconds to write the dump, and ``predict``'s wall and CPU
seconds (reading the dump, the snapshot's diagnosis, the samples; CPU of this process and its worker
processes) and the machine's load average, against the target of 60 s of wall time on 2 cores.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import tempfile
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

TARGET_S = 60.0
T0 = "2026-12-01T12:00:00Z"


def _stamp(seconds_before: int) -> str:
    from datetime import datetime, timedelta, timezone

    t = datetime(2026, 12, 1, 12, 0, 0, tzinfo=timezone.utc) - timedelta(seconds=seconds_before)
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


def _uid(kind: str, i: int) -> str:
    return f"{kind[:8].lower():0<8}-0000-4000-8000-{i:012d}"


def _container(gpus: int, cpu: int, memory: str) -> dict:
    requests = {"cpu": str(cpu), "memory": memory}
    limits = {"nvidia.com/gpu": str(gpus)} if gpus else {}
    return {"name": "main", "image": "registry.example/train:1", "resources": {"requests": requests, **({"limits": limits} if limits else {})}}


def _job(name: str, uid: str, pods: int, gpus: int, cpu: int, memory: str, created: str, suspend: bool) -> dict:
    return {"apiVersion": "batch/v1", "kind": "Job",
            "metadata": {"name": name, "namespace": "research", "uid": uid, "resourceVersion": "1",
                         "creationTimestamp": created, "labels": {"kueue.x-k8s.io/queue-name": "research"}},
            "spec": {"parallelism": pods, "completions": pods, "suspend": suspend,
                     "template": {"spec": {"restartPolicy": "Never", "containers": [_container(gpus, cpu, memory)]}}},
            "status": {} if suspend else {"active": pods, "startTime": created}}


def _pod(job: dict, k: int, node: str, started: str) -> dict:
    meta = job["metadata"]
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": f"{meta['name']}-{k}", "namespace": "research", "uid": f"{meta['uid'][:-4]}{k:04d}",
                         "resourceVersion": "2", "creationTimestamp": meta["creationTimestamp"],
                         "ownerReferences": [{"apiVersion": "batch/v1", "kind": "Job", "name": meta["name"],
                                              "uid": meta["uid"], "controller": True}]},
            "spec": {"nodeName": node, "restartPolicy": "Never", "containers": job["spec"]["template"]["spec"]["containers"]},
            "status": {"phase": "Running", "startTime": started}}


def make_dump(n_nodes: int = 1000, waiting: int = 200, seed: int = 0) -> list[dict]:
    """The dump's objects (see the module docstring); ``n_nodes`` nodes hold ``5 * n_nodes`` pods."""
    rng = random.Random(seed)
    docs: list[dict] = []
    for i in range(n_nodes):
        docs.append({"apiVersion": "v1", "kind": "Node",
                     "metadata": {"name": f"gpu-{i:04d}", "uid": _uid("Node", i), "resourceVersion": "1",
                                  "creationTimestamp": "2026-11-01T00:00:00Z", "labels": {"kubernetes.io/hostname": f"gpu-{i:04d}"}},
                     "status": {"allocatable": {"nvidia.com/gpu": "8", "cpu": "96", "memory": "1Ti", "pods": "110"}}})
    gpus = 8 * n_nodes
    docs += [{"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ResourceFlavor",
              "metadata": {"name": "default-flavor", "uid": _uid("Flavor", 0), "resourceVersion": "1"}},
             {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ClusterQueue",
              "metadata": {"name": "cluster", "uid": _uid("CQ", 0), "resourceVersion": "1"},
              "spec": {"namespaceSelector": {}, "queueingStrategy": "BestEffortFIFO", "resourceGroups": [
                  {"coveredResources": ["cpu", "memory", "nvidia.com/gpu"], "flavors": [{"name": "default-flavor", "resources": [
                      {"name": "cpu", "nominalQuota": 96 * n_nodes}, {"name": "memory", "nominalQuota": f"{n_nodes}Ti"},
                      {"name": "nvidia.com/gpu", "nominalQuota": gpus}]}]}]}},
             {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "LocalQueue",
              "metadata": {"name": "research", "namespace": "research", "uid": _uid("LQ", 0), "resourceVersion": "1"},
              "spec": {"clusterQueue": "cluster"}}]
    whole = n_nodes * 6 // 10
    j = 0

    def running(pods: int, g: int, cpu: int, memory: str, nodes: list[str]) -> None:
        nonlocal j
        age = rng.randint(60, 2 * 86400)
        job = _job(f"run-{j:05d}", _uid("Job", j), pods, g, cpu, memory, _stamp(age + 30), False)
        docs.append(job)
        docs.extend(_pod(job, k, node, _stamp(age)) for k, node in enumerate(nodes))
        j += 1

    for i in range(whole):
        running(1, 8, 32, "256Gi", [f"gpu-{i:04d}"])
    for i in range(whole, n_nodes, 2):  # two nodes: 16 one-GPU pods (4 Jobs of 4), 6 loader pods (part of 2 Jobs of 4)
        pair = [f"gpu-{i:04d}", f"gpu-{i + 1:04d}"] if i + 1 < n_nodes else [f"gpu-{i:04d}"]
        slots = [n for n in pair for _ in range(8)]
        for q in range(0, len(slots), 4):
            running(4, 1, 4, "64Gi", slots[q:q + 4])
        loaders = [n for n in pair for _ in range(3)]
        for q in range(0, len(loaders), 4):
            running(len(loaders[q:q + 4]), 0, 4, "16Gi", loaders[q:q + 4])
    for w in range(waiting):
        docs.append(_job(f"wait-{w:04d}", _uid("Wait", w), 1 + w % 2, 8, 32, "256Gi", _stamp(600 - w), True))
    return docs


NEW_JOB = {"apiVersion": "batch/v1", "kind": "Job",
           "metadata": {"name": "my-training", "namespace": "research", "labels": {"kueue.x-k8s.io/queue-name": "research"}},
           "spec": {"parallelism": 2, "completions": 2, "suspend": True,
                    "template": {"spec": {"restartPolicy": "Never", "containers": [_container(8, 32, "256Gi")]}}}}


def _cpu() -> float:
    """CPU seconds of this process and of its finished children (the worker processes of the samples)."""
    import resource

    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="20 nodes, 100 pods, 4 samples")
    ap.add_argument("--samples", type=int, help="samples (default 100; 4 with --quick)")
    ap.add_argument("--workers", type=int, help="processes (default: one per CPU)")
    ap.add_argument("--json", action="store_true", help="print the row as one JSON object")
    args = ap.parse_args(argv)
    os.environ.setdefault("GANGKIT_NO_PROGRESS", "1")
    import warnings

    from gangkit.analysis.predict import predict

    n_nodes, samples = (20, 4) if args.quick else (1000, 100)
    samples = args.samples or samples
    with tempfile.TemporaryDirectory() as tmp:
        t = time.perf_counter()
        docs = make_dump(n_nodes, waiting=max(4, n_nodes // 5))
        dump, job = Path(tmp) / "dump.yaml", Path(tmp) / "job.yaml"
        dump.write_text(yaml.dump({"apiVersion": "v1", "kind": "List", "items": docs}, Dumper=getattr(yaml, "CSafeDumper", yaml.SafeDumper)))
        job.write_text(yaml.safe_dump(NEW_JOB))
        build = time.perf_counter() - t
        t, c = time.perf_counter(), _cpu()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            pred = predict(dump, [job], stack="kueue+gang", samples=samples, seed=0, workers=args.workers)
        wall, cpu = time.perf_counter() - t, _cpu() - c
    w = pred.workloads[0]
    row = {"case": "predict", "nodes": n_nodes, "pods": sum(1 for d in docs if d["kind"] == "Pod"),
           "samples": pred.samples, "workers": args.workers or os.cpu_count(), "build_s": round(build, 2),
           "wall_s": round(wall, 2), "cpu_s": round(cpu, 2), "load": round(os.getloadavg()[0], 1), "will_start": w.will_start, "start_s": w.start_s, "waits_in": w.waits_in,
           "code": w.reason["code"]}
    if args.json:
        print(json.dumps(row))
    else:
        for k, v in row.items():
            print(f"{k:>10}  {v}")
        if not args.quick:
            print(f"verdict: {'PASS' if wall < TARGET_S else 'MISS'} (predict {wall:.1f} s wall, target < {TARGET_S:g} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
