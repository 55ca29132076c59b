"""Workload generators: determinism, class shares, arrival statistics, run-time distributions, errors.

Every statistical check states its tolerance; samples are seeded, so each
check is deterministic (the tolerances are several standard errors wide, so
another seed would pass too).
"""

from __future__ import annotations

import math
import os
import statistics
import subprocess
import sys
from pathlib import Path

import pytest

from gangkit import nodes, simulate
from gangkit.model.errors import ScenarioError
from gangkit.workloads.generators import (
    Bursty,
    Constant,
    Empirical,
    Exponential,
    JobClass,
    Lognormal,
    Poisson,
    Stream,
    mm_c,
    philly_runtime,
    tiered_training,
)
from gangkit.workloads.run_times import PHILLY_QUANTILES, quantile_table

try:
    from conftest import shared_path
except ImportError:  # tests/ imported as a package
    from tests.conftest import shared_path
from paths import REPO, TESTS

ROOT = REPO
SHARED = shared_path()
PHILLY_CSV = SHARED / "traces" / "philly" / "philly_runtime.csv"


def two_class_stream(n=1000, seed=7, arrivals=None):
    return Stream(arrivals or Poisson(0.05), [
        JobClass("small", 0.7, pods=1, gpus_per_pod=1, run_time=Exponential(300)),
        JobClass("gang", 0.3, pods=2, gpus_per_pod=4, run_time=Lognormal(600, 1.0, 7200)),
    ], n_jobs=n, seed=seed, name="two")


def fingerprint(jobs) -> list[tuple]:
    return [(j.name, j.pod_sets[0].count, j.pod_sets[0].gpus, repr(j.run_time), repr(j.submit_time)) for j in jobs]


# ---------------------------------------------------------------- determinism
STREAMS = {
    "two-class-poisson": lambda: two_class_stream(),
    "two-class-bursty": lambda: two_class_stream(arrivals=Bursty(0.05, 4.0)),
    "tiered": lambda: tiered_training(n_jobs=300, seed=3),
    "philly": lambda: Stream(Poisson(0.01), [JobClass("p", 1.0, run_time=philly_runtime())], n_jobs=500, seed=1),
}


@pytest.mark.parametrize("name", STREAMS)
def test_same_seed_same_jobs_across_calls(name):
    s = STREAMS[name]()
    assert fingerprint(s.jobs()) == fingerprint(s.jobs()) == fingerprint(STREAMS[name]().jobs())


def test_other_seed_other_jobs():
    assert fingerprint(two_class_stream(seed=1).jobs()) != fingerprint(two_class_stream(seed=2).jobs())


CHILD = """
import hashlib, sys
sys.path[:0] = [{root!r}, {tests!r}, {here!r}]
from test_generators import STREAMS, fingerprint
for name in {names!r}:
    print(hashlib.sha256(repr(fingerprint(STREAMS[name]().jobs())).encode()).hexdigest())
"""


def test_same_seed_same_jobs_across_processes():
    """Two fresh interpreters with other string-hash seeds make the same jobs as this one."""
    import hashlib

    names = ["two-class-bursty", "tiered"]
    here = [hashlib.sha256(repr(fingerprint(STREAMS[n]().jobs())).encode()).hexdigest() for n in names]
    for hashseed in ("0", "12345"):
        env = dict(os.environ, PYTHONHASHSEED=hashseed)
        out = subprocess.run([sys.executable, "-c", CHILD.format(root=str(ROOT), tests=str(TESTS), here=str(Path(__file__).resolve().parent), names=names)], env=env,
                             capture_output=True, text=True, check=True, cwd=ROOT)
        assert out.stdout.split() == here


# ---------------------------------------------------------------- classes and arrivals
def test_class_probabilities():
    """20,000 jobs: each class share within 0.015 of its probability (about 4.6 standard errors at p=0.3)."""
    jobs = two_class_stream(n=20_000).jobs()
    share = sum(j.labels["class"] == "gang" for j in jobs) / len(jobs)
    assert abs(share - 0.3) < 0.015
    assert all((j.gpus == 8) == (j.labels["class"] == "gang") for j in jobs)


def test_tiered_class_probabilities_and_shapes():
    """Tiers within 0.02 of their probabilities over 5,000 jobs; whole 8-GPU pods, sync."""
    s = tiered_training(n_jobs=5000, seed=11)
    jobs = s.jobs()
    for c in s.classes:
        share = sum(j.labels["class"] == c.name for j in jobs) / len(jobs)
        assert abs(share - c.probability) < 0.02, c.name
    assert all(j.pod_sets[0].gpus == 8 and j.progress == "sync" for j in jobs)
    assert {j.gpus for j in jobs} == {8, 32, 64, 128}


def gaps(stream):
    t = [j.submit_time for j in stream.jobs()]
    return [b - a for a, b in zip(t, t[1:])]


ARRIVAL_CASES = [
    # arrivals, expected mean gap, expected CV, tolerance on mean (relative), tolerance on CV (absolute)
    (Poisson(0.05), 20.0, 1.0, 0.03, 0.03),
    (Poisson(2.0), 0.5, 1.0, 0.03, 0.03),
    (Bursty(0.05, 3.0), 20.0, 3.0, 0.06, 0.45),
    (Bursty(0.05, 1.0), 20.0, 1.0, 0.03, 0.03),
]


@pytest.mark.parametrize("arrivals,mean,cv,tol_mean,tol_cv", ARRIVAL_CASES, ids=lambda x: repr(x) if not isinstance(x, float) else None)
def test_interarrival_mean_and_cv(arrivals, mean, cv, tol_mean, tol_cv):
    """40,000 gaps. Poisson: mean within 3% (6 s.e.), CV 1 within 0.03; bursty: CV near its target, > 1."""
    g = gaps(Stream(arrivals, [JobClass("a", 1.0)], n_jobs=40_001, seed=5))
    m = statistics.fmean(g)
    s = statistics.pstdev(g)
    assert abs(m / mean - 1) < tol_mean
    assert abs(s / m - cv) < tol_cv
    if isinstance(arrivals, Bursty) and arrivals.cv > 1:
        assert s / m > 1.5


# ---------------------------------------------------------------- run-time distributions
def samples(dist, n=40_000, seed=9):
    import random

    rng = random.Random(seed)
    return sorted(dist.sample(rng) for _ in range(n))


def empirical_quantile(xs, q):
    pos = q * (len(xs) - 1)
    lo = int(pos)
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (pos - lo)


DIST_CASES = [
    # distribution, relative tolerance on the mean, relative tolerance on the quartiles and the 0.9 quantile
    (Exponential(600.0), 0.03, 0.04),       # CV 1: s.e. of the mean 0.5%
    (Lognormal(1800.0, 1.2, None), 0.06, 0.04),  # CV ~1.8: s.e. of the mean ~0.9%
    (Lognormal(1800.0, 1.2, 12 * 3600.0), 0.04, 0.04),
    (Lognormal(100.0, 0.0), 1e-12, 1e-12),  # sigma 0: a constant
    (Constant(42.0), 0.0, 0.0),
    (Empirical((0.0, 0.5, 1.0), (10.0, 20.0, 100.0)), 0.03, 0.04),
]


@pytest.mark.parametrize("dist,tol_mean,tol_q", DIST_CASES, ids=repr)
def test_distribution_mean_and_quantiles(dist, tol_mean, tol_q):
    xs = samples(dist)
    assert abs(statistics.fmean(xs) - dist.mean()) <= tol_mean * dist.mean()
    for q in (0.25, 0.5, 0.75, 0.9):
        assert abs(empirical_quantile(xs, q) - dist.quantile(q)) <= tol_q * dist.quantile(q) + 1e-9, q


def test_capped_lognormal_never_exceeds_cap():
    assert max(samples(Lognormal(1800.0, 2.0, 3600.0), n=5000)) == 3600.0


def test_empirical_matches_its_table():
    """Philly table: sample quantiles within 0.01 in probability of the table's (40,000 draws, s.e. < 0.0025)."""
    e = philly_runtime()
    xs = samples(e)
    assert xs[0] >= e.values[0] and xs[-1] <= e.values[-1]
    for q in (0.1, 0.25, 0.5, 0.75, 0.9, 0.95):
        lo, hi = e.quantile(q - 0.01), e.quantile(q + 0.01)
        assert lo <= empirical_quantile(xs, q) <= hi, q
    # the inverse CDF passes through every row of the table exactly
    for q, v in zip(e.quantiles, e.values):
        assert e.quantile(q) == pytest.approx(v)


def test_empirical_interpolates_linearly():
    e = Empirical((0.0, 0.5, 1.0), (10.0, 20.0, 100.0))
    assert [e.quantile(u) for u in (0.0, 0.25, 0.5, 0.75, 1.0)] == [10.0, 15.0, 20.0, 60.0, 100.0]
    assert e.mean() == pytest.approx(0.5 * 15 + 0.5 * 60)


def test_empirical_from_csv_column(tmp_path):
    p = tmp_path / "runs.csv"
    p.write_text("job,seconds\n" + "".join(f"j{i},{i}\n" for i in range(101)))
    e = Empirical.from_csv(p, "seconds")
    assert e.quantiles[0] == 0.0 and e.quantiles[-1] == 1.0 and len(e.quantiles) == 101
    assert e.quantile(0.5) == 50.0 and e.quantile(0.255) == pytest.approx(25.5)


def test_quantile_table_matches_numpy():
    import numpy as np

    data = [float(x) for x in np.random.default_rng(0).lognormal(5, 2, 999)]
    qs, vs = quantile_table(data, 101)
    assert np.allclose(vs, np.quantile(data, qs))


def test_committed_table_header_names_source_and_command():
    head = PHILLY_QUANTILES.read_text().splitlines()[0]
    assert head.startswith("#") and "Microsoft Philly trace" in head and "tools/make_runtime_quantiles.py" in head
    assert len(philly_runtime().values) == 101


@pytest.mark.skipif(not PHILLY_CSV.exists(), reason=f"the Philly trace is not here ({PHILLY_CSV}); the committed table cannot be re-derived")
def test_committed_table_is_what_the_tool_makes():
    out = subprocess.run([sys.executable, "tools/make_runtime_quantiles.py", "--check", "--source", str(PHILLY_CSV)],
                         cwd=ROOT, capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr


@pytest.mark.skipif(not PHILLY_CSV.exists(), reason=f"the Philly trace is not here ({PHILLY_CSV})")
def test_from_csv_of_the_trace_equals_committed_table():
    e = Empirical.from_csv(PHILLY_CSV, "runtime")
    committed = philly_runtime()
    assert committed.quantiles == e.quantiles
    assert all(math.isclose(a, b, rel_tol=1e-5) for a, b in zip(committed.values, e.values))


# ---------------------------------------------------------------- streams into scenarios
def test_scenario_runs():
    s = tiered_training(load=0.7, gpus=256, n_jobs=150, seed=2)
    sc = s.scenario(nodes(32, gpus=8), record="jobs")
    assert sc.settings.seed == 2 and sc.name == "tiered-training"
    r = simulate(sc, stack="gang")
    assert r.figures["jobs_finished"] == 150 and not r.deadlock


def test_rate_for_load():
    s = mm_c(rate=1.0, mean_run_time_s=100.0, n_jobs=10)
    assert s.rate_for_load(0.9, 8) == pytest.approx(0.9 * 8 / 100.0)
    t = tiered_training(load=0.8, gpus=512)
    assert t.arrivals.rate * t.mean_gpu_seconds() == pytest.approx(0.8 * 512)


def test_min_run_time_floor():
    s = Stream(Poisson(1.0), [JobClass("p", 1.0, run_time=philly_runtime())], n_jobs=2000, seed=0)
    assert min(j.run_time for j in s.jobs()) == 1.0


# ---------------------------------------------------------------- errors name the object and the field
ERROR_CASES = [
    (lambda: Poisson(-1), "Poisson", "rate"),
    (lambda: Poisson(0), "Poisson", "rate"),
    (lambda: Bursty(1.0, 0.5), "Bursty", "cv"),
    (lambda: Exponential(0), "Exponential", "mean_s"),
    (lambda: Lognormal(-5, 1), "Lognormal", "median_s"),
    (lambda: Lognormal(5, -1), "Lognormal", "sigma"),
    (lambda: Lognormal(5, 1, 0), "Lognormal", "cap_s"),
    (lambda: Constant(float("nan")), "Constant", "value_s"),
    (lambda: Empirical((0.0, 0.4), (1.0, 2.0)), "Empirical", "quantiles"),
    (lambda: Empirical((0.0, 1.0), (2.0, 1.0)), "Empirical", "values"),
    (lambda: Stream(Poisson(1), [JobClass("a", 0.5), JobClass("b", 0.4)]), "Stream stream", "classes"),
    (lambda: Stream(Poisson(1), [JobClass("a", 1.0, pods=0)]), "JobClass a", "pods"),
    (lambda: Stream(Poisson(1), [JobClass("a", 1.0, gpus_per_pod=1.5)]), "JobClass a", "gpus_per_pod"),
    (lambda: Stream(Poisson(1), [JobClass("a", 1.0, progress="async")]), "JobClass a", "progress"),
    (lambda: Stream(Poisson(1), [JobClass("a", 1.0, run_time=600)]), "JobClass a", "run_time"),
    (lambda: Stream(Poisson(1), [JobClass("a", 1.5)]), "JobClass a", "probability"),
    (lambda: Stream(Poisson(1), [JobClass("a", 1.0)], n_jobs=0), "Stream stream", "n_jobs"),
    (lambda: Stream(Poisson(1), [JobClass("a", 1.0)], seed="x"), "Stream stream", "seed"),
    (lambda: Stream("poisson", [JobClass("a", 1.0)]), "Stream stream", "arrivals"),
    (lambda: Stream(Poisson(1), []), "Stream stream", "classes"),
]


@pytest.mark.parametrize("make,obj,fieldname", ERROR_CASES, ids=[f"{o}.{f}" for _, o, f in ERROR_CASES])
def test_errors_name_object_and_field(make, obj, fieldname):
    with pytest.raises(ScenarioError) as e:
        make()
    assert any(p.obj == obj and p.field == fieldname for p in e.value.problems), e.value.problems
    assert f"{obj}: {fieldname}:" in str(e.value)


def test_from_csv_unknown_column(tmp_path):
    p = tmp_path / "x.csv"
    p.write_text("a\n1\n")
    with pytest.raises(ScenarioError) as e:
        Empirical.from_csv(p, "runtime")
    assert e.value.problems[0].field == "column" and "x.csv" in e.value.problems[0].obj


# ---------------------------------------------------------------- plain data in and out
@pytest.mark.parametrize("name", STREAMS)
def test_dict_round_trip(name):
    import yaml

    from gangkit.workloads.generators import stream_from_dict, stream_to_dict

    s = STREAMS[name]()
    back = stream_from_dict(yaml.safe_load(yaml.safe_dump(stream_to_dict(s))))
    assert back == s and fingerprint(back.jobs()) == fingerprint(s.jobs())


def test_dict_philly_table_and_errors():
    from gangkit.workloads.generators import stream_from_dict

    s = stream_from_dict({"arrivals": {"kind": "Poisson", "rate": 0.1},
                          "classes": [{"name": "p", "probability": 1.0, "run_time": {"kind": "Empirical", "table": "philly"}}]})
    assert s.classes[0].run_time == philly_runtime()
    cases = [
        ({"arrivals": {"kind": "Uniform"}, "classes": []}, "arrivals"),
        ({"arrivals": {"kind": "Poisson", "rate": 1}, "classes": [{"name": "a", "probability": 1, "run_time": {"kind": "Weibull"}}]}, "classes[0].run_time"),
        ({"arrivals": {"kind": "Poisson", "rate": 1}, "classes": [{"name": "a", "probability": 1, "gpu": 2}]}, "classes[0]"),
        ({"arrivals": {"kind": "Poisson", "rate": 1}, "classes": [], "jobs": 3}, "jobs"),
    ]
    for d, fieldname in cases:
        with pytest.raises(ScenarioError) as e:
            stream_from_dict(d)
        assert e.value.problems[0].obj == "Stream stream" and e.value.problems[0].field == fieldname, e.value.problems


# ---------------------------------------------------------------- the WorkloadGenerator kind in YAML
try:
    from schema_util import requires_schemas, validate_yaml
except ImportError:  # run from the repository root
    from tests.schema_util import requires_schemas, validate_yaml

EXAMPLE = ROOT / "examples" / "generator-mix.yaml"
NODES_YAML = """
apiVersion: v1
kind: Node
metadata: {name: n0}
status: {allocatable: {nvidia.com/gpu: "8"}}
---
apiVersion: v1
kind: Node
metadata: {name: n1}
status: {allocatable: {nvidia.com/gpu: "8"}}
"""


def generator_yaml(spec: str, name: str = "g", namespace: str | None = None) -> str:
    meta = f"{{name: {name}" + (f", namespace: {namespace}}}" if namespace else "}")
    return NODES_YAML + f"---\napiVersion: gangkit/v1alpha1\nkind: WorkloadGenerator\nmetadata: {meta}\nspec:\n" + spec


GOOD_SPEC = """
  jobs: 50
  seed: 3
  arrivals: {process: Poisson, rate: 0.02}
  classes:
  - {name: small, probability: 0.75, runTime: {distribution: Exponential, mean: 5m}}
  - {name: big, probability: 0.25, pods: 2, gpusPerPod: 8, runTime: {distribution: Lognormal, median: 1h, sigma: 0.5, max: 3h}}
"""


def test_the_example_gives_the_same_jobs_as_the_python_stream():
    import warnings as w

    from gangkit.manifests import load_file

    with w.catch_warnings():
        w.simplefilter("error")  # the example loads silently
        sc = load_file(EXAMPLE)
    classes = [JobClass("one-gpu", 0.9, 1, 1, run_time=Exponential(1800)),
               JobClass("whole-node", 0.1, 1, 8, run_time=Exponential(1800))]
    probe = Stream(Poisson(1.0), classes, n_jobs=2000, seed=1)
    stream = Stream(Poisson(probe.rate_for_load(0.6, 32)), classes, n_jobs=2000, seed=1, name="mix")
    assert fingerprint(sc.jobs) == fingerprint(stream.jobs())
    assert (sc.settings.ordering, sc.settings.record, len(sc.nodes)) == ("strict", "jobs", 4)


@requires_schemas
def test_the_example_nodes_are_valid_for_the_real_schemas():
    validate_yaml(EXAMPLE.read_text())


@pytest.mark.parametrize("spec, check", [
    (GOOD_SPEC, lambda jobs: len(jobs) == 50 and {j.labels["class"] for j in jobs} == {"small", "big"}),
    (GOOD_SPEC, lambda jobs: all(j.run_time <= 3 * 3600 for j in jobs if j.labels["class"] == "big")),
    (GOOD_SPEC.replace("process: Poisson, rate: 0.02", "process: Bursty, rate: 0.02, cv: 4"),
     lambda jobs: len(jobs) == 50),
    (GOOD_SPEC.replace("{distribution: Exponential, mean: 5m}", "{distribution: Constant, value: 90s}"),
     lambda jobs: {j.run_time for j in jobs if j.labels["class"] == "small"} == {90.0}),
    (GOOD_SPEC.replace("{distribution: Exponential, mean: 5m}", "{distribution: Empirical, table: philly}"),
     lambda jobs: max(j.run_time for j in jobs) <= philly_runtime().values[-1]),
    (GOOD_SPEC + "  startTime: 1h\n", lambda jobs: jobs[0].submit_time == 3600.0),
])
def test_generator_specs_load(spec, check):
    from gangkit.manifests import load_manifests

    sc = load_manifests(generator_yaml(spec))
    assert check(sc.jobs)


def test_generator_jobs_take_the_namespace_and_join_declared_jobs():
    from gangkit.manifests import load_manifests

    job = """---
apiVersion: batch/v1
kind: Job
metadata: {name: solo, annotations: {gangkit/run-time: 10m}}
spec: {template: {spec: {containers: [{name: c, image: x, resources: {limits: {nvidia.com/gpu: "1"}}}]}}}
"""
    sc = load_manifests(generator_yaml(GOOD_SPEC, namespace="team-a") + job)
    assert sc.jobs[0].name == "solo" and len(sc.jobs) == 51
    assert {j.key.split("/")[0] for j in sc.jobs[1:]} == {"team-a"} and sc.jobs[1].queue == "team-a"


def test_empirical_run_time_from_a_csv_column_next_to_the_file(tmp_path):
    from gangkit.manifests import load_file

    (tmp_path / "runs.csv").write_text("job,seconds\n" + "".join(f"j{i},{100 + i}\n" for i in range(101)))
    spec = GOOD_SPEC.replace("{distribution: Exponential, mean: 5m}",
                             "{distribution: Empirical, csv: runs.csv, column: seconds}")
    (tmp_path / "s.yaml").write_text(generator_yaml(spec))
    sc = load_file(tmp_path / "s.yaml")
    small = [j.run_time for j in sc.jobs if j.labels["class"] == "small"]
    assert small and all(100 <= r <= 200 for r in small)


BAD_GENERATORS = [
    # (spec change: old -> new, field named, words)
    ("distribution: Exponential, mean: 5m", "distribution: Weibull, mean: 5m", "spec.classes[0].runTime.distribution", "expected one of"),
    ("distribution: Exponential, mean: 5m", "distribution: Exponential", "spec.classes[0].runTime.mean", "required"),
    ("mean: 5m", "mean: 5d", "spec.classes[0].runTime.mean", "duration"),
    ("mean: 5m", "mean: 0s", "spec.classes[0].runTime.mean", "> 0"),
    ("sigma: 0.5", "sigma: -1", "spec.classes[1].runTime.sigma", ">= 0"),
    ("rate: 0.02", "rate: -1", "spec.arrivals.rate", "> 0"),
    ("rate: 0.02", "rate: 0.02, load: 0.5", "spec.arrivals", "exactly one of"),
    ("rate: 0.02", "rate: 0.02, cv: 2", "spec.arrivals.cv", "only Bursty"),
    ("process: Poisson", "process: Hawkes", "spec.arrivals.process", "Poisson or Bursty"),
    ("probability: 0.75", "probability: 0.5", "spec.classes", "add up to 1"),
    ("probability: 0.75", "probability: 1.5", "spec.classes[0].probability", "from 0 to 1"),
    ("pods: 2", "pods: 0", "spec.classes[1].pods", ">= 1"),
    ("gpusPerPod: 8", "gpusPerPod: 1.5", "spec.classes[1].gpusPerPod", "whole number"),
    ("name: big", "name: small", "spec.classes", "unique class names"),
    ("jobs: 50", "jobs: many", "spec.jobs", "whole number"),
    ("{distribution: Exponential, mean: 5m}", "{distribution: Empirical, table: alibaba}", "spec.classes[0].runTime", "table: philly"),
    ("{distribution: Exponential, mean: 5m}", "{distribution: Empirical, csv: nowhere.csv}", "spec.classes[0].runTime.csv", "no such file"),
]


@pytest.mark.parametrize("old, new, fieldname, words", BAD_GENERATORS)
def test_bad_generator_is_one_error_naming_object_and_field(old, new, fieldname, words):
    from gangkit.manifests import load_manifests

    assert old in GOOD_SPEC
    with pytest.raises(ScenarioError) as info:
        load_manifests(generator_yaml(GOOD_SPEC.replace(old, new, 1)))
    assert any(p.obj == "WorkloadGenerator g" and p.field == fieldname and words in p.message
               for p in info.value.problems), str(info.value)


def test_load_needs_nodes_and_names_must_not_clash():
    from gangkit.manifests import load_manifests

    two = generator_yaml(GOOD_SPEC) + generator_yaml(GOOD_SPEC, name="h").split(NODES_YAML)[1]
    with pytest.raises(ScenarioError, match="WorkloadGenerator h: spec.classes: its job small-00 has the name of WorkloadGenerator g"):
        load_manifests(two)


def test_unknown_generator_field_is_a_warning():
    from gangkit.manifests import GangkitInputWarning, load_manifests

    with pytest.warns(GangkitInputWarning, match=r"WorkloadGenerator g: spec.classes\[0\].gpus"):
        load_manifests(generator_yaml(GOOD_SPEC.replace("name: small,", "name: small, gpus: 2,")))
