"""Trace loaders: the real files in ../shared/traces (skipped when absent) and small synthetic edge cases.

Counts on the real files are computed here independently with pandas, not through the loader.
"""

from __future__ import annotations

import gzip
from pathlib import Path

import pandas as pd
import pytest

import gangkit
from gangkit.model.errors import ScenarioError
from gangkit.workloads.traces import GPU_MODEL_LABEL, derive_gangs, load_alibaba_openb, load_philly_runtimes, load_swf

try:
    from conftest import shared_path
except ImportError:  # tests/ imported as a package
    from tests.conftest import shared_path

TRACES = shared_path("traces")
ALI = TRACES / "alibaba-openb-2023"
POD_DEFAULT = ALI / "openb_pod_list_default.csv"
POD_SPEC = ALI / "openb_pod_list_gpuspec33.csv"
POD_MULTI = ALI / "openb_pod_list_multigpu50.csv"
NODES_ALL = ALI / "openb_node_list_all_node.csv"
PHILLY = TRACES / "philly" / "philly_runtime.csv"
SWF = TRACES / "nasa-ipsc-1993-swf" / "NASA-iPSC-1993-3.1-cln.swf.gz"


def need(*paths: Path) -> None:
    missing = [str(p) for p in paths if not p.exists()]
    if missing:
        pytest.skip(f"trace data not present: {', '.join(missing)} (see issue 7; data lives outside the repo)")


# ------------------------------------------------------------------------------------- real Alibaba files


def _expected_alibaba(pods: pd.DataFrame) -> pd.DataFrame:
    """The rows a default-options load keeps, computed directly with pandas."""
    start = pods["scheduled_time"].fillna(pods["creation_time"])
    rt = pods["deletion_time"] - start
    return pods[(pods["num_gpu"] > 0) & (rt > 0)]


def test_alibaba_default_counts_on_real_file():
    need(POD_DEFAULT, NODES_ALL)
    pods = pd.read_csv(POD_DEFAULT)
    nodes = pd.read_csv(NODES_ALL)
    kept = _expected_alibaba(pods)
    frac = ((kept["num_gpu"] == 1) & (kept["gpu_milli"] < 1000)).sum()
    pending = kept["scheduled_time"].isna().sum()

    tl = load_alibaba_openb(POD_DEFAULT, NODES_ALL)
    assert len(pods) == 8152 and len(kept) == 7063 and frac == 3077 and pending == 860  # facts of the file
    assert tl.counts["rows"] == len(pods)
    assert len(tl.jobs) == len(kept)
    assert tl.counts["dropped"] == len(pods) - len(kept) == 1089
    assert tl.counts["mapped"] + tl.counts["changed"] == len(kept)
    rep = tl.report.set_index(["outcome", "reason"])["rows"]
    assert rep[("changed", "fractional GPU rounded up to 1 GPU")] == frac
    assert rep[("dropped", "CPU-only pod (num_gpu = 0; cpu_only='drop')")] == (pods["num_gpu"] == 0).sum() == 1088
    assert sum(j.gpus for j in tl.jobs) == kept["num_gpu"].sum()
    assert all(j.pod_count == 1 for j in tl.jobs)  # single pods, not gangs
    assert min(j.submit_time for j in tl.jobs) == 0.0
    # nodes
    assert len(tl.nodes) == len(nodes) == 1523
    assert sum(n.gpus for n in tl.nodes) == nodes["gpu"].sum() == 6212
    labelled = sum(1 for n in tl.nodes if dict(n.labels).get(GPU_MODEL_LABEL))
    assert labelled == nodes["model"].notna().sum()
    assert "single pods, not gangs" in tl.summary()


def test_alibaba_share_and_cpu_only_keep_on_real_file():
    need(POD_DEFAULT, NODES_ALL)
    pods = pd.read_csv(POD_DEFAULT)
    start = pods["scheduled_time"].fillna(pods["creation_time"])
    valid = pods[(pods["deletion_time"] - start) > 0]
    frac = (valid["num_gpu"] == 1) & (valid["gpu_milli"] < 1000)
    milli = valid["gpu_milli"].where(frac, valid["num_gpu"] * 1000).sum()

    tl = load_alibaba_openb(POD_DEFAULT, NODES_ALL, fractional="share", cpu_only="keep")
    assert tl.gpu_unit == 1000
    assert len(tl.jobs) == len(valid) == 8151
    assert sum(j.gpus for j in tl.jobs) == milli
    assert sum(n.gpus for n in tl.nodes) == 6212 * 1000
    assert sum(1 for j in tl.jobs if j.gpus == 0) == (valid["num_gpu"] == 0).sum()


def test_alibaba_gpu_spec_on_real_file():
    need(POD_SPEC)
    pods = pd.read_csv(POD_SPEC)
    kept = _expected_alibaba(pods)
    spec = kept["gpu_spec"].dropna()
    single = (~spec.str.contains("|", regex=False)).sum()
    multi = spec.str.contains("|", regex=False).sum()

    tl = load_alibaba_openb(POD_SPEC)
    assert tl.nodes == []
    selected = [j for j in tl.jobs if j.pod_sets[0].node_selector]
    assert len(selected) == single
    assert tl.report.set_index(["outcome", "reason"])["rows"][("changed", "multi-model gpu_spec widened to any model")] == multi
    ignored = load_alibaba_openb(POD_SPEC, gpu_spec="ignore")
    assert not any(j.pod_sets[0].node_selector for j in ignored.jobs)


def test_alibaba_multigpu50_has_no_times():
    need(POD_MULTI)
    with pytest.raises(ScenarioError) as e:
        load_alibaba_openb(POD_MULTI)
    assert "creation_time" in str(e.value) and str(POD_MULTI) in str(e.value)
    pods = pd.read_csv(POD_MULTI)
    tl = load_alibaba_openb(POD_MULTI, run_time=3600.0)
    assert len(tl.jobs) == (pods["num_gpu"] > 0).sum()
    assert {j.submit_time for j in tl.jobs} == {0.0} and {j.run_time for j in tl.jobs} == {3600.0}


def test_alibaba_slice_simulates():
    need(POD_DEFAULT, NODES_ALL)
    tl = load_alibaba_openb(POD_DEFAULT, NODES_ALL, limit=2000)
    sc = tl.scenario()
    r = gangkit.simulate(gangkit.Scenario(sc.nodes, sc.jobs), stack="gang", record="summary",
                         horizon=sc.settings.horizon)
    assert r.summary()["jobs_total"] == len(tl.jobs)
    assert r.summary()["jobs_finished"] == len(tl.jobs)  # the horizon covers the whole slice
    assert not r.deadlock


def test_alibaba_full_list_gpu_only_simulates():
    need(POD_DEFAULT, NODES_ALL)
    tl = load_alibaba_openb(POD_DEFAULT, NODES_ALL, cpu_memory=False)
    assert all(n.cpu is None and n.memory is None for n in tl.nodes)
    assert all(j.pod_sets[0].cpu == 0 and j.pod_sets[0].memory == 0 for j in tl.jobs)
    r = gangkit.simulate(tl.scenario(), stack="gang", record="summary")
    assert r.summary()["jobs_finished"] == len(tl.jobs) == 7063


# ------------------------------------------------------------------------------------- real Philly / SWF


def test_philly_runtimes_on_real_file():
    need(PHILLY)
    raw = pd.read_csv(PHILLY)["runtime"]
    s = load_philly_runtimes(PHILLY)
    assert len(s) == len(raw.dropna()) == 83154
    assert s.median() == raw.median() == 1186
    assert s.name == "run_time_s"


def _read_swf_with_pandas(path: Path) -> tuple[pd.DataFrame, int]:
    df = pd.read_csv(path, sep=r"\s+", comment=";", header=None)
    with gzip.open(path, "rt") as f:
        maxprocs = next(int(line.split(":")[1]) for line in f if line.startswith("; MaxProcs:"))
    return df, maxprocs


def test_swf_on_real_file():
    need(SWF)
    df, maxprocs = _read_swf_with_pandas(SWF)
    ok = df[(df[3] > 0) & (df[4] > 0) & (df[4] <= maxprocs)]

    tl = load_swf(SWF)
    assert len(df) == 18239 and len(ok) == 18066 and maxprocs == 128
    assert tl.counts == {"rows": len(df), "mapped": len(ok), "changed": 0, "dropped": len(df) - len(ok)}
    assert len(tl.nodes) == 128 and sum(n.gpus for n in tl.nodes) == maxprocs
    assert sum(j.pod_count for j in tl.jobs) == ok[4].sum()
    assert all(j.gang_size == j.pod_count for j in tl.jobs)
    assert sum(j.run_time for j in tl.jobs) == ok[3].sum()
    assert tl.jobs[0].submit_time == 0.0


# ------------------------------------------------------------------------------------- synthetic edge cases

HEADER = "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time\n"


def write(tmp_path: Path, name: str, text: str) -> Path:
    p = tmp_path / name
    p.write_text(text)
    return p


@pytest.fixture
def pods_csv(tmp_path):
    return write(tmp_path, "pods.csv", HEADER + "\n".join([
        "p-whole,4000,1024,2,1000,,LS,Running,100,400,100",   # 2 GPUs, runs 300 s
        "p-frac,2000,512,1,250,,BE,Succeeded,110,210,120",      # a quarter GPU, runs 90 s
        "p-cpu,1000,256,0,0,,BE,Running,120,220,120",           # CPU-only
        "p-pending,1000,256,1,1000,,LS,Pending,130,330,",       # never scheduled
        "p-nodel,1000,256,1,1000,,LS,Running,140,,140",          # no deletion time
        "p-zero,1000,256,1,1000,,LS,Failed,150,150,150",         # zero run time
        "p-t4,1000,256,1,1000,T4,LS,Running,160,260,160",        # one model
        "p-any,1000,256,1,1000,T4|P100,LS,Running,170,270,170",  # two models
    ]) + "\n")


def test_synthetic_alibaba_default(pods_csv):
    tl = load_alibaba_openb(pods_csv)
    by = {j.name: j for j in tl.jobs}
    assert set(by) == {"p-whole", "p-frac", "p-pending", "p-t4", "p-any"}
    assert by["p-whole"].gpus == 2 and by["p-whole"].run_time == 300 and by["p-whole"].submit_time == 0
    assert by["p-whole"].pod_sets[0].cpu == 4.0 and by["p-whole"].pod_sets[0].memory == 1024 * 2**20
    assert by["p-frac"].gpus == 1 and by["p-frac"].run_time == 90 and by["p-frac"].submit_time == 10
    assert by["p-pending"].run_time == 200  # deletion - creation
    assert by["p-t4"].pod_sets[0].node_selector == ((GPU_MODEL_LABEL, "T4"),)
    assert by["p-any"].pod_sets[0].node_selector == ()
    assert by["p-whole"].labels == {"qos": "LS", "pod-phase": "Running"}
    rows = tl.rows.set_index("name")
    assert rows.loc["p-frac", "outcome"] == "changed"
    assert rows.loc["p-cpu", "outcome"] == "dropped"
    assert "no valid run time" in rows.loc["p-nodel", "reason"]
    assert "no valid run time" in rows.loc["p-zero", "reason"]
    assert tl.counts == {"rows": 8, "mapped": 2, "changed": 3, "dropped": 3}
    text = tl.summary()
    assert "dropped: 3" in text and "fractional GPU rounded up" in text


def test_synthetic_alibaba_options(pods_csv):
    drop = load_alibaba_openb(pods_csv, fractional="drop", pending="drop", cpu_only="keep")
    names = {j.name for j in drop.jobs}
    assert "p-frac" not in names and "p-pending" not in names and "p-cpu" in names
    cpu = next(j for j in drop.jobs if j.name == "p-cpu")
    assert cpu.gpus == 0 and cpu.pod_sets[0].cpu == 1.0
    share = load_alibaba_openb(pods_csv, fractional="share")
    by = {j.name: j for j in share.jobs}
    assert by["p-frac"].gpus == 250 and by["p-whole"].gpus == 2000 and share.gpu_unit == 1000


def test_synthetic_alibaba_share_scales_nodes(pods_csv, tmp_path):
    nodes = write(tmp_path, "nodes.csv", "sn,cpu_milli,memory_mib,gpu,model\nn0,64000,262144,8,V100M16\nn1,32000,1024,0,\n")
    tl = load_alibaba_openb(pods_csv, nodes, fractional="share")
    assert [(n.name, n.gpus) for n in tl.nodes] == [("n0", 8000), ("n1", 0)]
    assert dict(tl.nodes[0].labels) == {GPU_MODEL_LABEL: "V100M16"} and tl.nodes[1].labels == ()
    assert tl.nodes[0].cpu == 64.0 and tl.nodes[0].memory == 262144 * 2**20


def test_synthetic_alibaba_small_scenario_simulates(pods_csv, tmp_path):
    nodes = write(tmp_path, "nodes.csv", "sn,cpu_milli,memory_mib,gpu,model\nn0,64000,262144,8,T4\n")
    r = gangkit.simulate(load_alibaba_openb(pods_csv, nodes).scenario(), stack="gang", record="summary")
    assert r.summary()["jobs_finished"] == 5


def test_malformed_alibaba_missing_column(tmp_path):
    p = write(tmp_path, "bad.csv", "name,cpu_milli,memory_mib,gpu_milli\na,1,1,1\n")
    with pytest.raises(ScenarioError) as e:
        load_alibaba_openb(p)
    (prob,) = e.value.problems
    assert prob.obj == f"file {p}" and prob.field == "num_gpu"


def test_malformed_alibaba_values(tmp_path):
    p = write(tmp_path, "bad.csv", HEADER + "a,1000,256,one,1000,,LS,Running,0,10,0\n")
    with pytest.raises(ScenarioError) as e:
        load_alibaba_openb(p)
    assert e.value.problems[0].field == "num_gpu" and "'one'" in str(e.value)
    p = write(tmp_path, "bad2.csv", HEADER + "a,1000,256,1.5,1000,,LS,Running,0,10,0\n")
    with pytest.raises(ScenarioError, match="num_gpu"):
        load_alibaba_openb(p)
    p = write(tmp_path, "bad3.csv", HEADER + "a,1000,256,1,1000,,LS,Running,0,10,0\na,1000,256,1,1000,,LS,Running,0,10,0\n")
    with pytest.raises(ScenarioError, match="unique"):
        load_alibaba_openb(p)
    p = write(tmp_path, "bad4.csv", HEADER + "a,1000,256,1,1000,,LS,Running,soon,10,0\n")
    with pytest.raises(ScenarioError) as e:
        load_alibaba_openb(p)
    assert e.value.problems[0].field == "creation_time"


def test_bad_options_and_missing_file(tmp_path, pods_csv):
    with pytest.raises(ScenarioError, match="fractional"):
        load_alibaba_openb(pods_csv, fractional="half")
    with pytest.raises(ScenarioError, match="no such file"):
        load_alibaba_openb(tmp_path / "nope.csv")
    with pytest.raises(ScenarioError, match="no such file"):
        load_swf(tmp_path / "nope.swf")


def test_philly_synthetic(tmp_path):
    s = load_philly_runtimes(write(tmp_path, "r.csv", "runtime\n0\n5.5\n\n100\n"))
    assert s.tolist() == [0.0, 5.5, 100.0]
    with pytest.raises(ScenarioError) as e:
        load_philly_runtimes(write(tmp_path, "neg.csv", "runtime\n-3\n"))
    assert e.value.problems[0].field == "runtime"
    with pytest.raises(ScenarioError) as e:
        load_philly_runtimes(write(tmp_path, "col.csv", "duration\n3\n"))
    assert e.value.problems[0].field == "runtime"


SWF_HEAD = "; Version: 2.2\n; MaxNodes: 4\n; MaxProcs: 8\n;\n"


def swf_line(job, submit, run, procs, req_procs=-1, status=1, queue=1):
    f = [job, submit, -1, run, procs, -1, -1, req_procs, -1, -1, status, 1, 1, -1, queue, -1, -1, -1]
    return " ".join(str(x) for x in f)


def test_swf_synthetic(tmp_path):
    text = SWF_HEAD + "\n".join([
        swf_line(1, 50, 100, 4),
        swf_line(2, 60, -1, 2),        # run time missing
        swf_line(3, 70, 30, -1, 2),    # allocated missing, requested 2
        swf_line(4, 80, 30, -1, -1),   # no processor count at all
        swf_line(5, 90, 0, 2),         # zero run time
        swf_line(6, 95, 10, 16),       # bigger than the machine
        swf_line(7, -1, 10, 1),        # submit missing
    ]) + "\n"
    p = tmp_path / "small.swf.gz"
    with gzip.open(p, "wt") as f:
        f.write(text)
    tl = load_swf(p)
    assert [(n.name, n.gpus) for n in tl.nodes] == [(f"swf-node-{i}", 2) for i in range(4)]
    by = {j.name: j for j in tl.jobs}
    assert set(by) == {"swf-1", "swf-3"}
    assert by["swf-1"].pod_count == 4 and by["swf-1"].gang_size == 4 and by["swf-1"].submit_time == 0
    assert by["swf-3"].pod_count == 2 and by["swf-3"].submit_time == 20
    assert by["swf-1"].labels == {"swf-queue": "1", "swf-status": "1"}
    assert tl.counts == {"rows": 7, "mapped": 1, "changed": 1, "dropped": 5}
    reasons = set(tl.rows["reason"])
    assert {"run time missing (-1)", "run time 0", "submit time missing (-1)"} <= reasons
    two = load_swf(p, gpus_per_processor=2)
    assert two.jobs[0].gpus == 8 and two.nodes[0].gpus == 4
    r = gangkit.simulate(tl.scenario(), stack="gang", record="summary")
    assert r.summary()["jobs_finished"] == 2


def test_swf_malformed(tmp_path):
    p = write(tmp_path, "short.swf", SWF_HEAD + "1 2 3\n")
    with pytest.raises(ScenarioError) as e:
        load_swf(p)
    assert e.value.problems[0].obj == f"file {p}" and "18" in str(e.value)
    p = write(tmp_path, "word.swf", SWF_HEAD + swf_line(1, 0, "ten", 2) + "\n")
    with pytest.raises(ScenarioError) as e:
        load_swf(p)
    assert e.value.problems[0].field == "run_time"
    p = write(tmp_path, "nohead.swf", swf_line(1, 0, 10, 2) + "\n")
    with pytest.raises(ScenarioError) as e:
        load_swf(p)
    assert e.value.problems[0].field == "MaxProcs"
    assert len(load_swf(p, machine_processors=4).nodes) == 4


# ------------------------------------------------------------------------------------- derived gangs


def test_derive_gangs_synthetic():
    one = lambda name, t, gpus=1, rt=100.0: gangkit.Job(name, [gangkit.PodSet("pod", 1, gpus)], rt, submit_time=t)
    jobs = [one("a", 0), one("b", 10, rt=300), one("c", 20), one("d", 500), one("e", 505, gpus=2),
            one("cpu", 506, gpus=0), gangkit.job("multi", pods=3, submit_time=507)]
    out = derive_gangs(jobs, sizes=(2,), window=60)
    by = {j.name: j for j in out}
    assert set(by) == {"gang-a", "c", "d", "e", "cpu", "multi"}
    g = by["gang-a"]
    assert g.pod_count == 2 and g.min_member == 2 and g.run_time == 300 and g.submit_time == 0
    assert g.labels["derived-gang-size"] == "2"
    assert sum(j.gpus for j in out) == sum(j.gpus for j in jobs)
    with pytest.raises(ScenarioError, match="rule"):
        derive_gangs(jobs, rule="random")


def test_derive_gangs_on_real_file_is_seeded_and_simulates():
    need(POD_DEFAULT, NODES_ALL)
    tl = load_alibaba_openb(POD_DEFAULT, NODES_ALL, limit=2000, cpu_memory=False)
    a = derive_gangs(tl.jobs, seed=1)
    b = derive_gangs(tl.jobs, seed=1)
    assert [(j.name, j.pod_count) for j in a] == [(j.name, j.pod_count) for j in b]
    assert sum(j.gpus for j in a) == sum(j.gpus for j in tl.jobs)
    assert sum(j.pod_count for j in a) == len(tl.jobs) and any(j.pod_count > 1 for j in a)
    sc = gangkit.Scenario(tl.nodes, a).with_settings(horizon=tl.scenario().settings.horizon)
    r = gangkit.simulate(sc, stack="gang", record="summary")
    assert r.summary()["jobs_finished"] == len(a)
