"""The ``WorkloadGenerator`` kind (``gangkit/v1alpha1``): a seeded stream of jobs written as a manifest.

gangkit's own kind (there is no upstream object): instead of listing every Job,
a file describes a :class:`~gangkit.workloads.generators.Stream` as data, one to
one (docs/reference/scenario-yaml.md, "WorkloadGenerator")::

    spec:
      jobs: 500
      seed: 1
      arrivals: {process: Poisson, load: 0.8}      # or rate: jobs per second
      classes:
      - {name: small, probability: 0.7, pods: 1, gpusPerPod: 1,
         runTime: {distribution: Exponential, mean: 10m}}

Reading it is three steps, each recording its problems on the one report of
the :class:`~gangkit.model.reading.Reader` (the field named, as
``spec.classes[1].runTime.mean``): the job classes with their run-time
distributions (:func:`read_classes`), the arrival process (:func:`read_arrivals`,
where ``load`` becomes a rate against the GPUs of the file's Nodes with
:meth:`~gangkit.workloads.generators.Stream.rate_for_load`), and the stream's
size, seed and times. The Python classes check the same ranges
(:data:`~gangkit.workloads.run_times.MAX_SIGMA`,
:data:`~gangkit.workloads.generators.MAX_CV`,
:data:`~gangkit.workloads.generators.MIN_RATE`); a WorkloadGenerator also
holds at most :data:`MAX_JOBS` jobs and offers at most :data:`MAX_LOAD` times
the cluster's GPUs.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

from gangkit.model.errors import ScenarioError
from gangkit.model.jobs import PROGRESS_MODES
from gangkit.model.precision import TOLERANCE
from gangkit.model.quantity import MAX_JOB_PODS, parse_duration
from gangkit.model.reading import ManifestObject, Reader, short
from gangkit.workloads.generators import MAX_CV, MIN_RATE, Bursty, JobClass, Poisson, Stream
from gangkit.workloads.run_times import MAX_SIGMA, Constant, Empirical, Exponential, Lognormal, philly_runtime

__all__ = ["MAX_JOBS", "MAX_LOAD", "YAML_FIELDS", "read_arrivals", "read_classes", "stream_from_manifest"]

#: The highest offered load (1000 times the cluster's GPUs) and the most jobs a WorkloadGenerator
#: makes (gangkit's limits; the Jobs of an input hold at most MAX_SCENARIO_PODS pods in all).
MAX_LOAD, MAX_JOBS = 1000.0, 100_000

#: ``runTime.distribution`` -> (class, {YAML field: (argument, is a duration)}).
_YAML_RUN_TIMES = {
    "Exponential": (Exponential, {"mean": ("mean_s", True)}),
    "Lognormal": (Lognormal, {"median": ("median_s", True), "sigma": ("sigma", False), "max": ("cap_s", True)}),
    "Constant": (Constant, {"value": ("value_s", True)}),
}
#: Every field of a ``WorkloadGenerator`` spec (for the unknown-field warning of gangkit.model.reading).
YAML_FIELDS = {
    "jobs": True, "seed": True, "startTime": True, "minRunTime": True,
    "arrivals": dict.fromkeys(["process", "rate", "load", "cv"], True),
    "classes": [dict.fromkeys(["name", "probability", "pods", "gpusPerPod", "progress", "priority"], True)
                | {"runTime": dict.fromkeys(["distribution", "mean", "median", "sigma", "max", "value", "table",
                                             "csv", "column"], True)}],
}


def stream_from_manifest(reader: Reader, o: ManifestObject, cluster_gpus: int, base: Path | None = None) -> Stream | None:
    """A gangkit/v1alpha1 ``WorkloadGenerator`` object -> :class:`~gangkit.workloads.generators.Stream`.

    Every problem is recorded on ``reader``, naming the object and the field
    (``spec.classes[1].runTime.mean``), and ``None`` comes back. ``arrivals.load``
    is turned into a rate against ``cluster_gpus``, the GPUs of the file's Nodes;
    a CSV path for an empirical run time is relative to ``base`` (the YAML file's folder).
    """
    f = _Fields(reader, o.label, base)
    before = len(reader.problems)
    spec = reader.mapping(o.doc.get("spec"), f.obj, "spec")
    classes, complete = read_classes(f, spec.get("classes"))
    arrivals = read_arrivals(f, reader.mapping(spec.get("arrivals"), f.obj, "spec.arrivals"), classes, complete,
                             cluster_gpus)
    n_jobs = reader.whole(spec.get("jobs", 1000), f.obj, "spec.jobs", 1, MAX_JOBS)
    seed = reader.whole(spec.get("seed", 0), f.obj, "spec.seed", 0)
    start = f.duration(spec.get("startTime", 0), "spec.startTime", positive=False)
    floor = f.duration(spec.get("minRunTime", 1), "spec.minRunTime")
    if len(reader.problems) > before:
        return None
    probe = Stream(Poisson(1.0), tuple(classes), n_jobs=n_jobs, seed=seed, name=o.name, min_run_time_s=floor,
                   start_s=start)
    rate = arrivals.rate
    if arrivals.load is not None:
        rate = probe.rate_for_load(arrivals.load, cluster_gpus)
        if rate < MIN_RATE:
            reader.error(f.obj, "spec.arrivals.load", f"gives {rate:.3g} jobs per second, below one job in 292 years; "
                                                      "give a larger load or a rate")
            return None
    process = Poisson(rate) if arrivals.process == "Poisson" else Bursty(rate, arrivals.cv)
    return dataclasses.replace(probe, arrivals=process)


@dataclass
class _Fields:
    """The typed getters of one WorkloadGenerator: each records a problem on the reader and returns None."""

    reader: Reader
    obj: str
    base: Path | None

    def duration(self, value: Any, where: str, positive: bool = True) -> float | None:
        v = self.reader.attempt(parse_duration, value, self.obj, where)
        if v is not None and positive and v <= 0:
            self.reader.error(self.obj, where, f"expected a duration > 0, got {value!r}")
            return None
        return v

    def number(self, value: Any, where: str, minimum: float, strict: bool, maximum: float = float("inf")) -> float | None:
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or \
                (value <= minimum if strict else value < minimum) or value > maximum:
            top = f" and <= {maximum:g}" if math.isfinite(maximum) else ""
            self.reader.error(self.obj, where, f"expected a number {'>' if strict else '>='} {minimum:g}{top}, "
                                               f"got {short(value)}")
            return None
        return float(value)

    def run_time(self, rt: Any, where: str):
        """A class's ``runTime``: one of the parametric distributions, or an Empirical table or CSV column."""
        rt = self.reader.mapping(rt, self.obj, where)
        kind = rt.get("distribution")
        if kind == "Empirical":
            if rt.get("table") == "philly" and "csv" not in rt:
                return philly_runtime()
            if "csv" in rt and "table" not in rt:
                return self.empirical(rt, where)
            self.reader.error(self.obj, where, "an Empirical run time needs either table: philly or csv: <file> "
                                               "(with column:)")
            return None
        if not isinstance(kind, str) or kind not in _YAML_RUN_TIMES:
            self.reader.error(self.obj, f"{where}.distribution",
                              f"expected one of {', '.join([*_YAML_RUN_TIMES, 'Empirical'])}, got {short(kind)}")
            return None
        cls, fields = _YAML_RUN_TIMES[kind]
        args, ok = {}, True
        for key, (arg, is_duration) in fields.items():
            if key not in rt:
                if key in ("max",):
                    continue
                self.reader.error(self.obj, f"{where}.{key}", f"required for the {kind} run time")
                ok = False
                continue
            v = (self.duration(rt[key], f"{where}.{key}") if is_duration
                 else self.number(rt[key], f"{where}.{key}", 0, False, MAX_SIGMA))
            ok = ok and v is not None
            args[arg] = v
        return cls(**args) if ok else None

    def empirical(self, rt: dict, where: str) -> Empirical | None:
        """Observations in a CSV column: one problem naming the file when it cannot be read as one."""
        try:
            path = Path(str(rt["csv"]))
            path = path if path.is_absolute() or self.base is None else self.base / path
            found = path.is_file()
        except (OSError, ValueError):  # a name the file system cannot hold
            found = False
        if not found:
            self.reader.error(self.obj, f"{where}.csv", f"no such file: {short(rt['csv'])} (relative to the YAML file)")
            return None
        try:
            return Empirical.from_csv(path, str(rt.get("column", "runtime")))
        except ScenarioError as e:
            for p in e.problems:
                self.reader.error(self.obj, f"{where}.column" if p.field == "column" else f"{where}.csv", p.message)
        return None


def read_classes(f: _Fields, raw: Any) -> tuple[list[JobClass], bool]:
    """``spec.classes``: the job classes read, and whether every entry was (then their probabilities add up to 1)."""
    reader, obj = f.reader, f.obj
    if not isinstance(raw, list) or not raw:
        reader.error(obj, "spec.classes", f"expected a list of at least one job class, got {raw!r}")
        raw = []
    read = [_job_class(f, c, f"spec.classes[{i}]") for i, c in enumerate(raw)]
    classes = [c for c in read if c is not None]
    complete = len(classes) == len(raw) and bool(classes)
    if complete:
        total = sum(c.probability for c in classes)
        if abs(total - 1.0) > TOLERANCE:
            reader.error(obj, "spec.classes", f"expected probabilities that add up to 1, got {total:g}")
        if len({c.name for c in classes}) != len(classes):
            reader.error(obj, "spec.classes", "expected unique class names")
    return classes, len(classes) == len(raw)


def _job_class(f: _Fields, c: Any, where: str) -> JobClass | None:
    """One entry of ``spec.classes``: name, probability, pods, GPUs per pod, progress, priority and run time."""
    reader, obj = f.reader, f.obj
    c = reader.mapping(c, obj, where)
    name = c.get("name")
    if not isinstance(name, str) or not name:
        reader.error(obj, f"{where}.name", f"expected a non-empty name, got {name!r}")
        return None
    prob = c.get("probability")
    if isinstance(prob, bool) or not isinstance(prob, (int, float)) or not 0 <= prob <= 1:
        reader.error(obj, f"{where}.probability", f"expected a probability from 0 to 1, got {prob!r}")
        return None
    pods = reader.whole(c.get("pods", 1), obj, f"{where}.pods", 1, MAX_JOB_PODS)
    gpus = reader.whole(c.get("gpusPerPod", 1), obj, f"{where}.gpusPerPod", 0)
    progress = c.get("progress", "sync")
    if progress not in PROGRESS_MODES:
        reader.error(obj, f"{where}.progress", f"expected one of {', '.join(PROGRESS_MODES)}, got {progress!r}")
    priority = c.get("priority", 0)
    if isinstance(priority, bool) or not isinstance(priority, int):
        reader.error(obj, f"{where}.priority", f"expected a whole number, got {priority!r}")
    if "runTime" not in c:
        reader.error(obj, f"{where}.runTime", "required: the class's run-time distribution")
        return None
    rt = f.run_time(c["runTime"], f"{where}.runTime")
    if None not in (pods, gpus, rt) and progress in PROGRESS_MODES and isinstance(priority, int):
        return JobClass(name, float(prob), pods, gpus, progress, rt, priority)
    return None


class Arrivals(NamedTuple):
    """``spec.arrivals`` as read: the process, and a rate or a load (the other None), and Bursty's cv."""

    process: Any
    rate: float | None
    load: float | None
    cv: float | None


def read_arrivals(f: _Fields, arrivals: dict, classes: list[JobClass], complete: bool, cluster_gpus: int) -> Arrivals:
    """``spec.arrivals``: Poisson or Bursty, exactly one of ``rate`` and ``load``, and Bursty's ``cv``."""
    reader, obj = f.reader, f.obj
    process = arrivals.get("process", "Poisson")
    if process not in ("Poisson", "Bursty"):
        reader.error(obj, "spec.arrivals.process", f"expected Poisson or Bursty, got {process!r}")
    if ("rate" in arrivals) == ("load" in arrivals):
        reader.error(obj, "spec.arrivals", "expected exactly one of rate (jobs per second) and load "
                                           "(offered GPU demand as a fraction of the Nodes' GPUs)")
    rate = f.number(arrivals["rate"], "spec.arrivals.rate", 0, True) if "rate" in arrivals else None
    if rate is not None and rate < MIN_RATE:
        reader.error(obj, "spec.arrivals.rate", f"expected at least {MIN_RATE:.3g} jobs per second (one in 292 years), "
                                                f"got {short(arrivals['rate'])}")
    load = f.number(arrivals["load"], "spec.arrivals.load", 0, True, MAX_LOAD) if "load" in arrivals else None
    if load is not None and cluster_gpus <= 0:
        reader.error(obj, "spec.arrivals.load", "a load needs Nodes with GPUs in the same input")
    if load is not None and classes and complete and all(c.gpus == 0 for c in classes):
        reader.error(obj, "spec.arrivals.load", "a load needs job classes that ask for GPUs (every class has gpusPerPod 0)")
    cv = 3.0
    if "cv" in arrivals:
        if process != "Bursty":
            reader.error(obj, "spec.arrivals.cv", "only Bursty arrivals have a coefficient of variation")
        else:
            cv = f.number(arrivals["cv"], "spec.arrivals.cv", 1, False, MAX_CV)
    return Arrivals(process, rate, load, cv)
