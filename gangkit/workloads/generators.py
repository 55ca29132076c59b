"""Workload generators described as data: arrivals, job classes, run-time distributions.

A generator is a plain dataclass, not a function: it can be printed, compared,
stored in a YAML file and sent to another process, and the same value with
the same ``seed`` always yields the same jobs, in any process::

    from gangkit.workloads.generators import Stream, Poisson, JobClass, Exponential
    from gangkit import nodes, simulate

    stream = Stream(
        arrivals=Poisson(rate=0.01),                       # one job every 100 s on average
        classes=[JobClass("one-gpu", 0.8, pods=1, gpus_per_pod=1, run_time=Exponential(600)),
                 JobClass("gang-16", 0.2, pods=2, gpus_per_pod=8, run_time=Exponential(3600))],
        n_jobs=1000, seed=1)
    result = simulate(stream.scenario(nodes(8, gpus=8)), stack="gang")

The three parts:

- **arrivals**: :class:`Poisson` (memoryless: the gaps between submissions are
  exponential, their coefficient of variation is 1) or :class:`Bursty`
  (gaps with a coefficient of variation above 1: quiet spells, then many
  jobs close together, as when a team launches a hyper-parameter sweep);
- **classes**: each :class:`JobClass` is one job shape (pods, GPUs per pod,
  progress mode) with the probability that a new job has that shape, and its
  own run-time distribution;
- **run-time distributions**: :class:`Exponential`, :class:`Lognormal` (heavy
  right tail, optionally cut at a maximum run time), :class:`Constant`, and
  :class:`Empirical` (a quantile table, such as the committed one derived from
  Microsoft's Philly trace: :func:`philly_runtime`).

Every distribution has ``sample(rng)`` and ``mean()``; :meth:`Stream.rate_for_load`
turns a target load (a fraction of the cluster's GPUs) into an arrival rate.
Bad values raise :class:`~gangkit.model.errors.ScenarioError` naming the object and
the field, e.g. ``Poisson: rate: expected a rate > 0 per second, got -1``.

Every number has a range whose samples stay numbers (no overflow, no
infinite gap): times at most :data:`~gangkit.model.quantity.MAX_DURATION_S`
(Go's longest duration, about 292 years), a rate of at least one job per
that long, a lognormal ``sigma`` of at most :data:`MAX_SIGMA`, a bursty
``cv`` of at most :data:`MAX_CV`. The same stream written as a manifest (the
``WorkloadGenerator`` kind) is read by :mod:`gangkit.manifests.streams`.
"""

from __future__ import annotations

import bisect
import dataclasses
import itertools
import math
import random
from dataclasses import dataclass, field
from typing import Union

from gangkit.model.errors import Problem, ScenarioError
from gangkit.model.jobs import PROGRESS_MODES, Job, PodSet
from gangkit.model.precision import TOLERANCE
from gangkit.model.quantity import MAX_DURATION_S
from gangkit.model.scenario import RunSettings, Scenario
from gangkit.workloads.run_times import (
    RUN_TIMES,
    Constant,
    Empirical,
    Exponential,
    Lognormal,
    RunTime,
    is_number,
    is_seconds,
    philly_runtime,
    raise_problems,
)

#: The burstiest arrivals: a coefficient of variation of 100 already makes one gap in 10,000 hold
#: half the stream's time; beyond, the slow phase's rate falls below any clock.
MAX_CV = 100.0
#: The slowest arrival rate: one job per MAX_DURATION_S (292 years).
MIN_RATE = 1.0 / MAX_DURATION_S


def _whole(x) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


# ---------------------------------------------------------------- arrivals
@dataclass(frozen=True)
class Poisson:
    """Jobs arrive independently at ``rate`` per second: exponential gaps, coefficient of variation 1."""

    rate: float

    def __post_init__(self) -> None:
        if not is_number(self.rate) or self.rate < MIN_RATE:
            raise_problems([Problem("Poisson", "rate", f"expected a rate > 0 per second, at least {MIN_RATE:.3g} (one job in "
                                               f"292 years), got {self.rate!r}")])

    def gap(self, rng: random.Random) -> float:
        return rng.expovariate(self.rate)


@dataclass(frozen=True)
class Bursty:
    """Bursty arrivals at mean ``rate`` per second; gaps with coefficient of variation ``cv`` > 1.

    Each gap is, with probability ``p``, exponential with a fast rate (inside a
    burst) and otherwise exponential with a slow rate (a quiet spell): a
    two-phase *hyperexponential* renewal process with balanced means
    (``p / fast = (1 - p) / slow``). Mean gap ``1/rate``; squared coefficient
    of variation ``cv**2``. With ``cv = 1`` it is Poisson.
    """

    rate: float
    cv: float = 3.0

    def __post_init__(self) -> None:
        out = []
        if not is_number(self.rate) or self.rate < MIN_RATE:
            out.append(Problem("Bursty", "rate", f"expected a rate > 0 per second, at least {MIN_RATE:.3g} (one job "
                                                 f"in 292 years), got {self.rate!r}"))
        if not is_number(self.cv) or not 1 <= self.cv <= MAX_CV:
            out.append(Problem("Bursty", "cv", f"expected a coefficient of variation from 1 to {MAX_CV:g}, got {self.cv!r}"))
        raise_problems(out)

    @property
    def phases(self) -> tuple[float, float, float]:
        """(p, fast rate, slow rate) of the balanced-means hyperexponential."""
        c2 = self.cv**2
        p = 0.5 * (1.0 + math.sqrt((c2 - 1.0) / (c2 + 1.0)))
        return p, 2.0 * p * self.rate, 2.0 * (1.0 - p) * self.rate

    def gap(self, rng: random.Random) -> float:
        p, fast, slow = self.phases
        u = rng.random()
        return rng.expovariate(fast if u < p else slow)


Arrivals = Union[Poisson, Bursty]


# ---------------------------------------------------------------- classes and streams
@dataclass(frozen=True)
class JobClass:
    """One job shape and how often it comes: ``pods`` x ``gpus_per_pod`` GPUs, ``progress`` mode.

    ``probability`` is the share of new jobs of this class (the classes of a
    stream add up to 1); ``run_time`` is the class's run-time distribution.
    """

    name: str
    probability: float
    pods: int = 1
    gpus_per_pod: int = 1
    progress: str = "sync"
    run_time: RunTime = field(default_factory=lambda: Exponential(600.0))
    priority: int = 0

    def problems(self) -> list[Problem]:
        obj = f"JobClass {self.name}"
        out = []
        if not isinstance(self.name, str) or not self.name:
            out.append(Problem(obj, "name", "expected a non-empty name"))
        if not is_number(self.probability) or not 0 <= self.probability <= 1:
            out.append(Problem(obj, "probability", f"expected a probability from 0 to 1, got {self.probability!r}"))
        if not _whole(self.pods) or self.pods < 1:
            out.append(Problem(obj, "pods", f"expected a whole number >= 1, got {self.pods!r}"))
        if not _whole(self.gpus_per_pod) or self.gpus_per_pod < 0:
            out.append(Problem(obj, "gpus_per_pod", f"expected a whole number of GPUs >= 0, got {self.gpus_per_pod!r}"))
        if self.progress not in PROGRESS_MODES:
            out.append(Problem(obj, "progress", f"expected one of {', '.join(PROGRESS_MODES)}, got {self.progress!r}"))
        if not isinstance(self.run_time, RUN_TIMES):
            out.append(Problem(obj, "run_time", f"expected Exponential, Lognormal, Constant or Empirical, got {self.run_time!r}"))
        if not _whole(self.priority):
            out.append(Problem(obj, "priority", f"expected a whole number, got {self.priority!r}"))
        return out

    @property
    def gpus(self) -> int:
        return self.pods * self.gpus_per_pod


@dataclass(frozen=True)
class Stream:
    """A seeded stream of ``n_jobs`` jobs: arrivals, classes, and the seed.

    :meth:`jobs` draws, for each job in turn, its class, its run time and the
    gap to the next arrival from one ``random.Random(seed)``: the same stream
    value gives the same jobs in any process and on any machine. Run times
    below ``min_run_time_s`` are raised to it (a job must run for some time;
    the Philly table starts at 0 s). The first job arrives at ``start_s``.
    """

    arrivals: Arrivals
    classes: tuple[JobClass, ...]
    n_jobs: int = 1000
    seed: int = 0
    name: str = "stream"
    min_run_time_s: float = 1.0
    start_s: float = 0.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "classes", tuple(self.classes))
        obj = f"Stream {self.name}"
        out: list[Problem] = []
        if not isinstance(self.arrivals, (Poisson, Bursty)):
            out.append(Problem(obj, "arrivals", f"expected Poisson or Bursty, got {self.arrivals!r}"))
        if not self.classes:
            out.append(Problem(obj, "classes", "expected at least one JobClass"))
        for c in self.classes:
            if isinstance(c, JobClass):
                out.extend(c.problems())
            else:
                out.append(Problem(obj, "classes", f"expected JobClass objects, got {c!r}"))
        names = [c.name for c in self.classes if isinstance(c, JobClass)]
        if len(set(names)) != len(names):
            out.append(Problem(obj, "classes", "expected unique class names"))
        probs = [c.probability for c in self.classes if isinstance(c, JobClass) and is_number(c.probability)]
        if probs and len(probs) == len(self.classes) and abs(sum(probs) - 1.0) > TOLERANCE:
            out.append(Problem(obj, "classes", f"expected probabilities that add up to 1, got {sum(probs):g}"))
        if not _whole(self.n_jobs) or self.n_jobs < 1:
            out.append(Problem(obj, "n_jobs", f"expected a whole number >= 1, got {self.n_jobs!r}"))
        if not _whole(self.seed):
            out.append(Problem(obj, "seed", f"expected a whole number, got {self.seed!r}"))
        if not is_seconds(self.min_run_time_s):
            out.append(Problem(obj, "min_run_time_s", f"expected seconds > 0, at most {MAX_DURATION_S:.4g}, "
                                                      f"got {self.min_run_time_s!r}"))
        if not is_number(self.start_s) or not 0 <= self.start_s <= MAX_DURATION_S:
            out.append(Problem(obj, "start_s", f"expected seconds from 0 to {MAX_DURATION_S:.4g}, got {self.start_s!r}"))
        raise_problems(out)

    # -- what the stream offers -------------------------------------------------
    def mean_gpu_seconds(self) -> float:
        """Mean GPU-seconds one job asks for: sum over classes of probability x GPUs x mean run time."""
        return sum(c.probability * c.gpus * max(c.run_time.mean(), self.min_run_time_s) for c in self.classes)

    def rate_for_load(self, load: float, gpus: int) -> float:
        """The arrival rate (per second) whose offered GPU demand is ``load`` x ``gpus``.

        (The floor ``min_run_time_s`` is counted only roughly, through the mean.)
        """
        demand = self.mean_gpu_seconds()
        if demand <= 0:
            raise ScenarioError([Problem(f"Stream {self.name}", "classes", "a load needs job classes that ask for GPUs "
                                                                           "(every class has gpus_per_pod 0)")])
        return load * gpus / demand

    # -- the jobs ------------------------------------------------------------------
    def jobs(self) -> list[Job]:
        """The ``n_jobs`` jobs, named ``<class>-<index>``, in submission order."""
        rng = random.Random(self.seed)
        classes = self.classes
        # random.choices(classes, weights)[0], with the cumulative weights made once (same draws, same results)
        cum = list(itertools.accumulate(c.probability for c in classes))
        total, last = cum[-1] + 0.0, len(cum) - 1
        t = float(self.start_s)
        out = []
        width = len(str(self.n_jobs - 1))
        pod_sets = [PodSet("workers", c.pods, c.gpus_per_pod) for c in classes]  # frozen: one per class, shared
        for i in range(self.n_jobs):
            k = bisect.bisect(cum, rng.random() * total, 0, last)
            c = classes[k]
            run = max(self.min_run_time_s, c.run_time.sample(rng))
            out.append(Job(f"{c.name}-{i:0{width}d}", [pod_sets[k]], run_time=run,
                           submit_time=t, priority=c.priority, progress=c.progress, labels={"class": c.name}))
            t += self.arrivals.gap(rng)
        return out

    def scenario(self, nodes: list, **settings) -> Scenario:
        """A :class:`Scenario` of these jobs on ``nodes``; ``settings`` go to :class:`RunSettings`."""
        settings.setdefault("seed", self.seed)
        return Scenario(list(nodes), self.jobs(), RunSettings(**settings), name=self.name,
                        description=f"{self.n_jobs} jobs, {type(self.arrivals).__name__} arrivals, "
                                    f"classes {', '.join(c.name for c in self.classes)}")


# ---------------------------------------------------------------- presets
#: Tiers of large training jobs on 8-GPU nodes: (name, probability, pods of 8 GPUs, median run time s).
TIERS = (
    ("tier-8", 0.50, 1, 2 * 3600.0),
    ("tier-32", 0.30, 4, 6 * 3600.0),
    ("tier-64", 0.15, 8, 12 * 3600.0),
    ("tier-128", 0.05, 16, 24 * 3600.0),
)


def tiered_training(load: float = 0.8, gpus: int = 512, n_jobs: int = 500, seed: int = 0,
                    sigma: float = 0.8, cap_s: float = 7 * 86400.0, bursty_cv: float | None = None) -> Stream:
    """A tiered mix of large sync training jobs (8 to 128 GPUs in whole 8-GPU pods).

    The bigger the tier, the rarer and the longer its jobs (lognormal run
    times, median from 2 h to 24 h, cut at a week), as in clusters where a few
    flagship runs share the machine with many mid-sized ones. The arrival rate
    makes the offered demand ``load`` x ``gpus``. ``bursty_cv`` switches to
    bursty arrivals with that coefficient of variation.
    """
    classes = tuple(JobClass(name, p, pods=pods, gpus_per_pod=8, progress="sync",
                             run_time=Lognormal(median, sigma, cap_s)) for name, p, pods, median in TIERS)
    probe = Stream(Poisson(1.0), classes, n_jobs=n_jobs, seed=seed, name="tiered-training")
    rate = probe.rate_for_load(load, gpus)
    arrivals = Poisson(rate) if bursty_cv is None else Bursty(rate, bursty_cv)
    return Stream(arrivals, classes, n_jobs=n_jobs, seed=seed, name="tiered-training")


def mm_c(rate: float, mean_run_time_s: float, n_jobs: int, seed: int = 0) -> Stream:
    """One-GPU jobs, Poisson arrivals, exponential run times: the M/M/c queue of textbooks."""
    return Stream(Poisson(rate), (JobClass("one-gpu", 1.0, 1, 1, run_time=Exponential(mean_run_time_s)),),
                  n_jobs=n_jobs, seed=seed, name="mm-c", min_run_time_s=TOLERANCE)


# ---------------------------------------------------------------- plain data (YAML, JSON) in and out
_KINDS = {cls.__name__: cls for cls in (Poisson, Bursty, Exponential, Lognormal, Constant, Empirical)}


def _part_from_dict(d, where: str, allowed: tuple[str, ...]):
    """One arrivals or run-time part from ``{"kind": "Lognormal", "median_s": ..., ...}``."""
    if not isinstance(d, dict) or d.get("kind") not in allowed:
        kind = d.get("kind") if isinstance(d, dict) else d
        raise ScenarioError([Problem(where.split(":")[0], where.split(":")[1], f"expected a kind among {', '.join(allowed)}, got {kind!r}")])
    args = {k: v for k, v in d.items() if k != "kind"}
    if d["kind"] == "Empirical":
        if args.get("table") == "philly":
            return philly_runtime()
        if "csv" in args:
            return Empirical.from_csv(args["csv"], args.get("column", "runtime"))
    try:
        return _KINDS[d["kind"]](**args)
    except TypeError as e:
        raise ScenarioError([Problem(where.split(":")[0], where.split(":")[1], f"{d['kind']}: {e}")]) from None


def stream_from_dict(d: dict) -> Stream:
    """A :class:`Stream` from plain data, as a YAML file would hold it::

        arrivals: {kind: Poisson, rate: 0.01}
        classes:
          - {name: small, probability: 0.8, run_time: {kind: Exponential, mean_s: 600}}
          - {name: big, probability: 0.2, pods: 4, gpus_per_pod: 8,
             run_time: {kind: Empirical, table: philly}}
        n_jobs: 1000
        seed: 1

    Run times may be ``Exponential``, ``Lognormal``, ``Constant`` or
    ``Empirical`` (``table: philly`` for the committed Philly table;
    ``csv: path`` and ``column: name`` for a column of a CSV file; or
    ``quantiles`` and ``values`` lists).
    """
    name = d.get("name", "stream") if isinstance(d, dict) else "stream"
    obj = f"Stream {name}"
    if not isinstance(d, dict):
        raise ScenarioError([Problem(obj, "", f"expected a mapping, got {d!r}")])
    unknown = set(d) - {"arrivals", "classes", "n_jobs", "seed", "name", "min_run_time_s", "start_s"}
    if unknown:
        raise ScenarioError([Problem(obj, sorted(unknown)[0], "unknown field")])
    arrivals = _part_from_dict(d.get("arrivals"), f"{obj}:arrivals", ("Poisson", "Bursty"))
    classes = []
    for i, c in enumerate(d.get("classes") or []):
        if not isinstance(c, dict):
            raise ScenarioError([Problem(obj, f"classes[{i}]", f"expected a mapping, got {c!r}")])
        c = dict(c)
        if "run_time" in c:
            c["run_time"] = _part_from_dict(c["run_time"], f"{obj}:classes[{i}].run_time",
                                            ("Exponential", "Lognormal", "Constant", "Empirical"))
        try:
            classes.append(JobClass(**c))
        except TypeError as e:
            raise ScenarioError([Problem(obj, f"classes[{i}]", str(e))]) from None
    rest = {k: v for k, v in d.items() if k not in ("arrivals", "classes")}
    return Stream(arrivals, tuple(classes), **rest)


def stream_to_dict(stream: Stream) -> dict:
    """The plain data that :func:`stream_from_dict` turns back into ``stream``."""

    def part(x) -> dict:
        out = {"kind": type(x).__name__}
        for f in dataclasses.fields(x):
            v = getattr(x, f.name)
            out[f.name] = list(v) if isinstance(v, tuple) else v
        return out

    return {
        "name": stream.name, "n_jobs": stream.n_jobs, "seed": stream.seed,
        "min_run_time_s": stream.min_run_time_s, "start_s": stream.start_s,
        "arrivals": part(stream.arrivals),
        "classes": [{"name": c.name, "probability": c.probability, "pods": c.pods, "gpus_per_pod": c.gpus_per_pod,
                     "progress": c.progress, "priority": c.priority, "run_time": part(c.run_time)} for c in stream.classes],
    }
