"""``gangkit predict``: will a job submitted to a live cluster's dump start, when, and why not (issue 43)."""

from __future__ import annotations

import json
import random
import warnings
from pathlib import Path
from types import SimpleNamespace

import pytest
import yaml

import gangkit.analysis.predict.sampling as sampling
from gangkit.analysis.predict import ResidualLife, node_filters, predict, tolerates
from gangkit.cli.main import main
from gangkit.model.jobs import PodSet
from gangkit.model.nodes import Node
from gangkit.workloads.generators import Empirical

from paths import REPO

EXAMPLES = REPO / "examples" / "snapshot"
DUMP = EXAMPLES / "cluster-dump.yaml"
NEW_JOB = EXAMPLES / "new-job.yaml"
KEYS = ["name", "kind", "will_start", "start_s", "waits_in", "reason", "queue_position", "nodes"]


def _job(tmp_path: Path, name: str, pods: int = 1, gpus: int = 8, queue: bool = True) -> Path:
    """A Job like examples/snapshot/new-job.yaml: ``pods`` pods of ``gpus`` GPUs, in team-a's LocalQueue."""
    doc = yaml.safe_load(NEW_JOB.read_text())
    doc["metadata"]["name"] = name
    if not queue:
        del doc["metadata"]["labels"]
    doc["spec"]["parallelism"] = doc["spec"]["completions"] = pods
    doc["spec"]["template"]["spec"]["containers"][0]["resources"]["limits"]["nvidia.com/gpu"] = str(gpus)
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump(doc))
    return path


def _unannotated(tmp_path: Path) -> Path:
    """The example dump without its gangkit/run-time annotations: every running job's time left is drawn."""
    path = tmp_path / "dump.yaml"
    path.write_text("".join(line for line in DUMP.read_text().splitlines(keepends=True) if "gangkit/run-time" not in line))
    return path


def _predict(*args, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return predict(*args, **kw)


# ------------------------------------------------------------------------------------------ outcomes
@pytest.mark.parametrize("stack", ["kueue+gang", "gang", "kueue+pod", "kueue+coscheduling"])
def test_a_job_that_fits_now_starts_at_once_in_every_sample(stack):
    p = _predict(DUMP, [NEW_JOB], stack=stack, samples=8, seed=3, workers=1)
    (w,) = p.workloads
    assert (w.name, w.kind, w.will_start, w.start_s) == ("team-a/finetune", "Job", 1.0, {"p10": 0.0, "p50": 0.0, "p90": 0.0})
    assert w.reason["code"] == "Running" and w.nodes == [] and w.waits_in is None
    assert p.samples == 8


NEVER = [
    pytest.param("pod", 1, 16, "kueue+gang", "Rejected", "asks for 16 GPUs; the largest node has 8",
                 id="a pod larger than any node never starts, and says so without sampling"),
    pytest.param("pod", 1, 16, "pod", "Rejected", "asks for 16 GPUs; the largest node has 8",
                 id="so under kube-scheduler alone too"),
    pytest.param("quota", 4, 8, "kueue+gang", "QuotaTooSmall", "ClusterQueue",
                 id="a workload larger than its ClusterQueue's quota never starts, and says so without sampling"),
]


@pytest.mark.parametrize("why, pods, gpus, stack, code, words", NEVER)
def test_a_workload_that_can_never_start_says_why_without_sampling(tmp_path, monkeypatch, why, pods, gpus, stack, code, words):
    def no_sample(*a, **k):
        raise AssertionError("sampled a workload that can never start")

    monkeypatch.setattr(sampling, "run_sample", no_sample)
    p = _predict(DUMP, [_job(tmp_path, "huge", pods, gpus)], stack=stack, samples=50, seed=0, workers=1)
    (w,) = p.workloads
    assert (p.samples, w.will_start, w.start_s, w.reason["code"]) == (0, 0.0, None, code)
    assert words in w.reason["message"]
    assert "can never start" in str(p)
    if why == "pod":  # every node says why: kube-scheduler's words for too few GPUs
        assert w.nodes and {r["reason"] for r in w.nodes} == {"Insufficient nvidia.com/gpu"}
        assert sum(r["count"] for r in w.nodes) == 4


BEHIND = [
    pytest.param("kueue+gang", "QuotaExhausted", "quota", id="behind running work under Kueue: it waits for quota"),
    pytest.param("kueue+pod", "QuotaExhausted", "quota", id="under Kueue and kube-scheduler, for quota too"),
    pytest.param("pod", "Unschedulable", "placement", id="under kube-scheduler alone: it waits for nodes to free up"),
    pytest.param("gang", "GangCannotFit", "placement", id="under Volcano: its gang does not fit yet"),
]


@pytest.mark.parametrize("stack, code, bucket", BEHIND)
def test_a_job_behind_running_work_starts_later_with_a_spread_and_a_reason(tmp_path, stack, code, bucket):
    p = _predict(_unannotated(tmp_path), [_job(tmp_path, "wide", pods=3)], stack=stack, samples=30, seed=1, workers=1)
    (w,) = p.workloads
    s = w.start_s
    assert 0 < s["p10"] <= s["p50"] <= s["p90"]
    assert s["p10"] < s["p90"]  # sampled remaining times spread the start
    assert 0 < w.will_start <= 1
    assert w.reason["code"] == code and w.waits_in == bucket


def test_a_jobs_own_run_time_annotation_wins_over_the_drawn_one(tmp_path):
    # train-a (annotated 4 h, 3660 s left) then train-b (annotated 2 h, first in the queue) hold the quota and the
    # nodes; the serving Deployment holds 2 GPUs of gpu-node-2 for ever: 3 whole nodes are free at 3660 + 7200 s
    p = _predict(DUMP, [_job(tmp_path, "wide", pods=3)], stack="kueue+gang", samples=12, seed=5, workers=1)
    (w,) = p.workloads
    assert w.start_s == {"p10": 10860.0, "p50": 10860.0, "p90": 10860.0} and w.will_start == 1.0



@pytest.mark.parametrize("annotated, drawn", [
    pytest.param(True, ["team-a/wide"], id="with the dump's annotations only the new job's run time is drawn"),
    pytest.param(False, ["team-a/train-a", "team-a/train-b", "team-a/wide"],
                 id="without them every job that ends has its run time drawn, not the serving Deployment's"),
])
def test_the_prediction_names_the_jobs_whose_run_times_are_drawn(tmp_path, annotated, drawn):
    dump = DUMP if annotated else _unannotated(tmp_path)
    p = _predict(dump, [_job(tmp_path, "wide", pods=3)], stack="kueue+gang", samples=2, workers=1)
    assert p.drawn_run_times == drawn
    assert f"(no gangkit/run-time annotation): {', '.join(drawn)}" in " ".join(str(p).split())


@pytest.mark.parametrize("stack, name", [
    pytest.param("kueue+gang", "main", id="under Kueue a Job's node rows name its pod set as Kueue's message does"),
    pytest.param("gang", "workers", id="without Kueue they name gangkit's pod set"),
])
def test_node_rows_name_the_pod_set_as_the_workloads_status_does(tmp_path, stack, name):
    p = _predict(DUMP, [NEW_JOB, _job(tmp_path, "wide", pods=3)], stack=stack, samples=2, workers=1)
    w = p.workloads[1]  # wide, with finetune on gpu-node-3: no node takes one of its pods now
    assert w.nodes and {row["pod_set"] for row in w.nodes if row["filter"]} == {name}


def test_the_paragraphs_are_wrapped_between_words_at_88_columns(tmp_path):
    p = _predict(DUMP, [_job(tmp_path, "wide", pods=3)], stack="kueue+gang", samples=2, workers=1)
    text = str(p)
    assert max(len(line) for line in text.splitlines()) <= 88
    assert "couldn't assign flavors to pod set main" in " ".join(text.split())


QUEUE = [
    pytest.param(["a"], {"team-a/a": 1}, id="a new job queues behind the dump's waiting train-b"),
    pytest.param(["a", "b"], {"team-a/a": 1, "team-a/b": 2}, id="new jobs queue in the order of their files"),
]


@pytest.mark.parametrize("names, positions", QUEUE)
def test_queue_position_is_kueues_position_in_cluster_queue_at_the_snapshot(tmp_path, names, positions):
    p = _predict(DUMP, [_job(tmp_path, n, pods=3) for n in names], stack="kueue+gang", samples=2, workers=1)
    assert {w.name: w.queue_position for w in p.workloads} == positions


@pytest.mark.parametrize("stack, queue", [
    pytest.param("pod", True, id="no position without Kueue in the stack"),
    pytest.param("kueue+gang", False, id="no position for a job Kueue does not manage"),
])
def test_queue_position_is_null_where_kueue_does_not_queue_the_job(tmp_path, stack, queue):
    p = _predict(DUMP, [_job(tmp_path, "a", queue=queue)], stack=stack, samples=2, workers=1)
    assert p.workloads[0].queue_position is None


# ------------------------------------------------------------------------------------------ determinism
def test_the_same_seed_gives_the_same_prediction_with_one_or_two_workers(tmp_path):
    dump, job = _unannotated(tmp_path), _job(tmp_path, "wide", pods=3)
    one = _predict(dump, [job], stack="kueue+gang", samples=10, seed=7, workers=1).to_json()
    two = _predict(dump, [job], stack="kueue+gang", samples=10, seed=7, workers=2).to_json()
    again = _predict(dump, [job], stack="kueue+gang", samples=10, seed=7, workers=1).to_json()
    other = _predict(dump, [job], stack="kueue+gang", samples=10, seed=8, workers=1).to_json()
    assert one == two == again
    assert one != other


@pytest.mark.slow
def test_a_dask_client_gives_the_same_prediction_as_one_worker(tmp_path):
    distributed = pytest.importorskip("distributed")
    dump, job = _unannotated(tmp_path), _job(tmp_path, "wide", pods=3)
    here = _predict(dump, [job], stack="kueue+gang", samples=6, seed=7, workers=1).to_json()
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        on_dask = _predict(dump, [job], stack="kueue+gang", samples=6, seed=7, client=client).to_json()
    assert on_dask == here


# ------------------------------------------------------------------------------------------ residual life
def _life(rows):
    return ResidualLife(Empirical(tuple(q for q, _ in rows), tuple(v for _, v in rows)))


CDF = [
    pytest.param([(0, 0), (1, 100)], 25, 0.25, id="uniform 0 to 100 s: F(25) is 0.25"),
    pytest.param([(0, 0), (0.5, 10), (1, 110)], 60, 0.75, id="linear between the two rows around the age"),
    pytest.param([(0, 10), (1, 20)], 5, 0.0, id="below the first value: 0"),
    pytest.param([(0, 10), (1, 20)], 20, 1.0, id="at the last value: 1"),
]


@pytest.mark.parametrize("rows, age, expected", CDF)
def test_the_cdf_is_piecewise_linear_between_quantiles(rows, age, expected):
    assert _life(rows).cdf(age) == pytest.approx(expected)


def test_remaining_time_is_drawn_given_the_age():
    life = _life([(0, 0), (0.5, 100), (1, 200)])
    rng = random.Random(0)
    draws = [life.remaining(150, rng) for _ in range(2000)]
    assert all(0 <= d <= 50 for d in draws)  # T > 150 and T <= 200
    assert sum(draws) / len(draws) == pytest.approx(25, abs=2)  # uniform on (150, 200): 25 s left on average


def test_past_the_last_quantile_the_remaining_time_is_exponential_with_the_last_steps_mean():
    life = _life([(0, 0), (0.5, 100), (1, 200)])
    rng = random.Random(1)
    draws = [life.remaining(500, rng) for _ in range(4000)]
    assert life.tail_mean == 50 and all(d >= 0 for d in draws)
    assert sum(draws) / len(draws) == pytest.approx(50, rel=0.1)


def test_the_shipped_table_is_philly():
    life = ResidualLife.load()
    assert len(life.table.quantiles) == 101 and life.table.values[-1] == pytest.approx(4.62824e6)


def test_a_runtime_quantiles_file_of_ones_own_is_used(tmp_path):
    table = tmp_path / "q.csv"
    table.write_text("quantile,value\n0,3600\n1,3600\n")  # every job runs 1 h
    p = _predict(_unannotated(tmp_path), [_job(tmp_path, "wide", pods=3)], stack="kueue+gang", samples=4, workers=1,
                 runtime_quantiles=table)
    (w,) = p.workloads  # train-a (ran 10740 s > 1 h) is past the table: its rest is drawn from the tail; train-b 1 h
    assert w.will_start == 1.0 and w.start_s["p10"] > 3600


# ------------------------------------------------------------------------------------------ kube-scheduler's filters
def _state(name="n", gpus=8, free=8, labels=(), ready=True):
    return SimpleNamespace(node=Node(name, gpus, labels=labels), ready=ready, free_gpus=free, free_cpu=None, free_memory=None)


POD = PodSet("workers", count=1, gpus=4)
FILTERS = [
    pytest.param(_state(), {"n": {"unschedulable": True}}, [], "NodeUnschedulable", "node(s) were unschedulable",
                 id="a cordoned node: NodeUnschedulable"),
    pytest.param(_state(), {"n": {"taints": [{"key": "dedicated", "value": "infer", "effect": "NoSchedule"}]}}, [],
                 "TaintToleration", "node(s) had untolerated taint(s)", id="an untolerated taint: TaintToleration"),
    pytest.param(_state(ready=False), {}, [], "TaintToleration", "node(s) had untolerated taint(s)",
                 id="a node not ready carries the not-ready taint"),
    pytest.param(_state(labels=(("zone", "b"),)), {}, [], "NodeAffinity", "node(s) didn't match Pod's node affinity/selector",
                 id="labels that do not match the selector: NodeAffinity"),
    pytest.param(_state(free=2, labels=(("zone", "a"),)), {}, [], "NodeResourcesFit", "Insufficient nvidia.com/gpu",
                 id="too few free GPUs: NodeResourcesFit"),
    pytest.param(_state(free=2, labels=(("zone", "a"),)), {"n": {"taints": [{"key": "gpu", "effect": "NoSchedule"}]}},
                 [{"key": "gpu", "operator": "Exists"}], "NodeResourcesFit", "Insufficient nvidia.com/gpu",
                 id="a tolerated taint lets the next filter speak"),
]


@pytest.mark.parametrize("state, marks, tolerations, plugin, words", FILTERS)
def test_each_node_gets_the_first_filter_that_rejects_the_pod(state, marks, tolerations, plugin, words):
    pod = PodSet("workers", count=1, gpus=4, node_selector=(("zone", "a"),))
    (row,) = node_filters([state], pod, tolerations, marks)
    assert (row["filter"], row["reason"], row["count"]) == (plugin, words, 1)


def test_no_rows_when_some_node_takes_the_pod_now():
    assert node_filters([_state("a", free=2), _state("b", free=8)], POD, [], {}) == []


def test_identical_nodes_with_one_verdict_are_one_row():
    rows = node_filters([_state(f"n{i}", free=0) for i in range(5)] + [_state("m", free=2)], POD, [], {})
    assert [(r["node"], r["count"]) for r in rows] == [("n0", 5), ("m", 1)]


TOLERATIONS = [
    pytest.param([{"key": "a", "value": "x", "effect": "NoSchedule"}], {"key": "a", "value": "x", "effect": "NoSchedule"}, True,
                 id="Equal (the default operator) with the same key, value and effect"),
    pytest.param([{"key": "a", "value": "y"}], {"key": "a", "value": "x", "effect": "NoSchedule"}, False,
                 id="another value does not tolerate"),
    pytest.param([{"operator": "Exists"}], {"key": "a", "value": "x", "effect": "NoExecute"}, True,
                 id="an empty key with Exists tolerates every taint"),
    pytest.param([{"key": "a", "operator": "Exists", "effect": "NoExecute"}], {"key": "a", "effect": "NoSchedule"}, False,
                 id="another effect does not tolerate"),
]


@pytest.mark.parametrize("tolerations, taint, expected", TOLERATIONS)
def test_tolerations_match_taints_as_kubernetes_does(tolerations, taint, expected):
    assert tolerates(tolerations, taint) is expected


# ------------------------------------------------------------------------------------------ the command
def test_the_json_has_exactly_the_keys_the_issue_lists(capsys):
    status = main(["predict", str(DUMP), str(NEW_JOB), "--stack", "kueue+gang", "--samples", "3", "--workers", "1", "--json"])
    out = json.loads(capsys.readouterr().out)
    assert status == 0
    assert list(out) == ["snapshot_time", "samples", "workloads"]
    assert out["snapshot_time"] == "2026-12-01T11:00:00Z" and out["samples"] == 3
    (w,) = out["workloads"]
    assert list(w) == KEYS
    assert list(w["start_s"]) == ["p10", "p50", "p90"] and list(w["reason"]) == ["code", "message"]


def test_the_table_form_is_one_paragraph_per_workload(tmp_path, capsys):
    status = main(["predict", str(DUMP), str(NEW_JOB), str(_job(tmp_path, "huge", gpus=16)), "--stack", "kueue+gang",
                   "--samples", "2", "--workers", "1"])
    out = capsys.readouterr().out
    assert status == 0
    paragraphs = out.strip().split("\n\n")
    assert len(paragraphs) == 3  # the heading, then one per workload
    assert paragraphs[1].startswith("Job team-a/finetune starts at once")
    assert paragraphs[2].startswith("Job team-a/huge can never start")


BAD = [
    pytest.param(["missing.yaml", "{job}"], "error: dump missing.yaml: not found", id="a dump that is not there"),
    pytest.param(["{dump}", "{job}", "--stack", "kueue+gnag"], "did you mean kueue+gang?", id="a misspelt stack"),
    pytest.param(["{dump}", "{job}", "--samples", "0"], "--samples: expected a whole number >= 1", id="no samples"),
    pytest.param(["{dump}", "{job}", "--horizon", "-5"], "argument --horizon: expected seconds > 0", id="a negative horizon"),
    pytest.param(["{dump}", "{job}", "--runtime-quantiles", "none.csv"], "--runtime-quantiles none.csv: not found",
                 id="a quantile table that is not there"),
    pytest.param(["{dump}", "{job}", "--runtime-quantiles", "{bad}"], "expected increasing quantiles from 0 to 1",
                 id="a quantile table that is not one"),
    pytest.param(["{dump}"], "the following arguments are required: JOB", id="no job to predict"),
    pytest.param(["{dump}", "{queues}"], "hold no workload gangkit runs", id="a job file without a workload"),
]


@pytest.mark.parametrize("args, words", BAD)
def test_bad_input_is_one_clear_line_and_exit_2(tmp_path, capsys, args, words):
    bad = tmp_path / "bad.csv"
    bad.write_text("quantile,value\n0.5,10\n0.2,20\n")
    queues = tmp_path / "queues.yaml"
    queues.write_text(yaml.safe_dump({"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "LocalQueue",
                                      "metadata": {"name": "other", "namespace": "team-b"}, "spec": {"clusterQueue": "cluster-queue"}}))
    names = {"dump": str(DUMP), "job": str(NEW_JOB), "bad": str(bad), "queues": str(queues)}
    with pytest.raises(SystemExit) as exited:
        raise SystemExit(main(["predict", *[a.format(**names) for a in args], "--workers", "1"]))
    err = capsys.readouterr().err
    assert exited.value.code == 2
    assert words in err and "Traceback" not in err
    assert len([line for line in err.splitlines() if line.startswith(("error", "gangkit predict: error"))]) == 1


def test_with_a_node_supplier_the_nodes_it_launches_and_when_they_are_ready_are_rows(tmp_path):
    # cluster-autoscaler's default node group launches 8-GPU nodes for the pods no node takes; they are not
    # ready at the snapshot (kube-scheduler sees the not-ready taint), ready 150 s later
    p = _predict(DUMP, [_job(tmp_path, "wide", pods=3)], stack="pod+autoscaler", samples=3, workers=1)
    (w,) = p.workloads
    launched = [r for r in w.nodes if r["filter"] is None]
    assert [(r["node"], r["count"], r["share"]) for r in launched] == [("gpu-8", 4, 1.0)]
    assert launched[0]["ready_s"]["p50"] == w.start_s["p50"] > 0
    assert any(r["filter"] == "TaintToleration" and r["detail"].startswith("not ready") for r in w.nodes)
