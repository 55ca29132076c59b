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
``cv`` of at most :data:`MAX_CV`; a WorkloadGenerator holds at most
:data:`MAX_JOBS` jobs.
"""

from __future__ import annotations

import bisect
import csv
import dataclasses
import itertools
import math
import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import Union

from gangkit.model.errors import Problem, ScenarioError
from gangkit.model.jobs import PROGRESS_MODES, Job, PodSet
from gangkit.model.precision import TOLERANCE
from gangkit.model.quantity import MAX_DURATION_S
from gangkit.model.scenario import RunSettings, Scenario

#: The committed quantile table of Philly run times (see tools/make_runtime_quantiles.py).
PHILLY_QUANTILES = Path(__file__).resolve().parents[1] / "data" / "philly_runtime_quantiles.csv"

#: The widest lognormal spread: e**20 (half a billion) between the median and one sigma above it.
#: The mean, exp(mu + sigma**2 / 2), overflows a float beyond sigma 37; no run-time trace is that wide.
MAX_SIGMA = 20.0
#: The burstiest arrivals: a coefficient of variation of 100 already makes one gap in 10,000 hold
#: half the stream's time; beyond, the slow phase's rate falls below any clock.
MAX_CV = 100.0
#: The slowest arrival rate: one job per MAX_DURATION_S (292 years).
MIN_RATE = 1.0 / MAX_DURATION_S
#: The highest offered load (1000 times the cluster's GPUs) and the most jobs a WorkloadGenerator
#: makes (gangkit's limits; the Jobs of an input hold at most MAX_SCENARIO_PODS pods in all).
MAX_LOAD, MAX_JOBS = 1000.0, 100_000


def _num(x) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


def _seconds(x) -> bool:
    """A positive time gangkit can compute with: at most Go's longest duration."""
    return _num(x) and 0 < x <= MAX_DURATION_S


def _whole(x) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def _raise(problems: list[Problem]) -> None:
    if problems:
        raise ScenarioError(problems)


def _phi(z: float) -> float:
    """The standard normal CDF."""
    return 0.5 * (1.0 + math.erf(z / math.sqrt(2.0)))


# ---------------------------------------------------------------- run times
@dataclass(frozen=True)
class Exponential:
    """Memoryless run times with this ``mean`` (seconds): the M in M/M/c queueing theory."""

    mean_s: float

    def __post_init__(self) -> None:
        if not _seconds(self.mean_s):
            _raise([Problem("Exponential", "mean_s", f"expected a mean > 0 seconds, at most {MAX_DURATION_S:.4g}, "
                                                     f"got {self.mean_s!r}")])

    def sample(self, rng: random.Random) -> float:
        return rng.expovariate(1.0 / self.mean_s)

    def mean(self) -> float:
        return float(self.mean_s)

    def quantile(self, q: float) -> float:
        return -self.mean_s * math.log1p(-q)


@dataclass(frozen=True)
class Lognormal:
    """Heavy-tailed run times: ``log(X)`` is normal with median ``median_s`` and spread ``sigma``.

    Most jobs are short, a few run for days (public GPU traces look like this).
    ``cap_s`` cuts every run time at a maximum, as clusters do with a maximum
    run time; ``None`` means no cut.
    """

    median_s: float
    sigma: float
    cap_s: float | None = None

    def __post_init__(self) -> None:
        out = []
        if not _seconds(self.median_s):
            out.append(Problem("Lognormal", "median_s", f"expected a median > 0 seconds, at most {MAX_DURATION_S:.4g}, "
                                                        f"got {self.median_s!r}"))
        if not _num(self.sigma) or not 0 <= self.sigma <= MAX_SIGMA:
            out.append(Problem("Lognormal", "sigma", f"expected a sigma from 0 to {MAX_SIGMA:g}, got {self.sigma!r}"))
        if self.cap_s is not None and not _seconds(self.cap_s):
            out.append(Problem("Lognormal", "cap_s", f"expected seconds > 0, at most {MAX_DURATION_S:.4g}, or None, "
                                                     f"got {self.cap_s!r}"))
        _raise(out)

    def sample(self, rng: random.Random) -> float:
        x = rng.lognormvariate(math.log(self.median_s), self.sigma)
        return x if self.cap_s is None else min(x, self.cap_s)

    def mean(self) -> float:
        """E[min(X, cap)]: exp(mu + sigma^2/2) without a cap."""
        mu, s = math.log(self.median_s), self.sigma
        if self.cap_s is None:
            return math.exp(mu + s * s / 2)
        if s == 0:
            return min(self.median_s, self.cap_s)
        z = (math.log(self.cap_s) - mu) / s
        return math.exp(mu + s * s / 2) * _phi(z - s) + self.cap_s * (1.0 - _phi(z))

    def quantile(self, q: float) -> float:
        from statistics import NormalDist

        x = math.exp(math.log(self.median_s) + self.sigma * NormalDist().inv_cdf(q))
        return x if self.cap_s is None else min(x, self.cap_s)


@dataclass(frozen=True)
class Constant:
    """Every job runs exactly ``value_s`` seconds (the D in M/D/c)."""

    value_s: float

    def __post_init__(self) -> None:
        if not _seconds(self.value_s):
            _raise([Problem("Constant", "value_s", f"expected seconds > 0, at most {MAX_DURATION_S:.4g}, "
                                                   f"got {self.value_s!r}")])

    def sample(self, rng: random.Random) -> float:
        return float(self.value_s)

    def mean(self) -> float:
        return float(self.value_s)

    def quantile(self, q: float) -> float:
        return float(self.value_s)


@dataclass(frozen=True)
class Empirical:
    """A distribution given by a quantile table: ``values[i]`` is the ``quantiles[i]`` quantile.

    Sampling is by the *inverse CDF*: draw ``u`` uniform on [0, 1), find the two
    table rows around it and interpolate linearly between their values. The
    samples therefore reproduce the table's quantiles exactly (up to sampling
    noise) and never leave its range; between two rows the CDF is a straight
    line. The table must start at quantile 0 and end at quantile 1, with both
    columns non-decreasing.

    Build one from a quantile table (:meth:`from_table`, a CSV with columns
    ``quantile,value``) or from raw observations in a CSV column
    (:meth:`from_csv`, which computes a 101-row table).
    """

    quantiles: tuple[float, ...]
    values: tuple[float, ...]
    source: str = ""

    def __post_init__(self) -> None:
        object.__setattr__(self, "quantiles", tuple(float(q) for q in self.quantiles))
        object.__setattr__(self, "values", tuple(float(v) for v in self.values))
        obj = f"Empirical {self.source}".rstrip()
        q, v = self.quantiles, self.values
        out = []
        if len(q) != len(v) or len(q) < 2:
            out.append(Problem(obj, "quantiles", f"expected at least 2 rows and as many values as quantiles, got {len(q)} and {len(v)}"))
        else:
            if q[0] != 0.0 or q[-1] != 1.0 or any(b <= a for a, b in zip(q, q[1:])):
                out.append(Problem(obj, "quantiles", "expected increasing quantiles from 0 to 1"))
            if any(not math.isfinite(x) for x in v) or any(b < a for a, b in zip(v, v[1:])):
                out.append(Problem(obj, "values", "expected finite, non-decreasing values"))
            elif v[-1] > MAX_DURATION_S:
                out.append(Problem(obj, "values", f"expected run times of at most {MAX_DURATION_S:.4g} seconds, "
                                                  f"got {v[-1]:g}"))
        _raise(out)

    @classmethod
    def from_table(cls, path: str | Path) -> "Empirical":
        """Read a quantile table: a CSV with columns ``quantile,value`` (lines starting with # are comments)."""
        path = Path(path)
        rows, columns = _csv_rows(path)
        if not rows or "quantile" not in columns or "value" not in columns:
            _raise([Problem(f"Empirical {path.name}", "columns", "expected the columns quantile,value")])
        return cls(tuple(_csv_number(path, "quantile", i, r["quantile"]) for i, r in enumerate(rows)),
                   tuple(_csv_number(path, "value", i, r["value"]) for i, r in enumerate(rows)), source=path.name)

    @classmethod
    def from_csv(cls, path: str | Path, column: str, n_quantiles: int = 101) -> "Empirical":
        """Observations in one column of a CSV file, summarised by ``n_quantiles`` evenly spaced quantiles."""
        path = Path(path)
        rows, columns = _csv_rows(path)
        if column not in columns:
            _raise([Problem(f"Empirical {path.name}", "column", f"no column {column!r}; columns are {columns}")])
        data = [_csv_number(path, column, i, r[column]) for i, r in enumerate(rows) if r[column] not in ("", None)]
        qs, vs = quantile_table(data, n_quantiles)
        return cls(qs, vs, source=f"{path.name}:{column}")

    def sample(self, rng: random.Random) -> float:
        return self.quantile(rng.random())

    def quantile(self, u: float) -> float:
        """The inverse CDF at ``u``: linear between the two table rows around it."""
        q, v = self.quantiles, self.values
        i = bisect.bisect_right(q, u) - 1
        if i >= len(q) - 1:
            return v[-1]
        i = max(i, 0)
        return v[i] + (v[i + 1] - v[i]) * (u - q[i]) / (q[i + 1] - q[i])

    def mean(self) -> float:
        """The mean of the piecewise-linear inverse CDF: the area under it.

        It can differ a lot from the mean of the raw data when the tail is
        heavy: for Philly the last row interval spreads 1% of the jobs evenly
        from the 0.99 quantile (about 3.3 days) to the maximum (53 days), so the
        table's mean is about 32,000 s where the 83,154 run times average 14,600 s.
        The quantiles, not the mean, are what the table preserves.
        """
        q, v = self.quantiles, self.values
        return sum((q[i + 1] - q[i]) * (v[i] + v[i + 1]) / 2 for i in range(len(q) - 1))


def _csv_rows(path: Path) -> tuple[list[dict], list[str]]:
    """The rows and column names of a CSV file (lines starting with # are comments); one problem naming a bad file."""
    try:
        with open(path, newline="", encoding="utf-8") as f:
            reader = csv.DictReader(line for line in f if not line.startswith("#"))
            return list(reader), list(reader.fieldnames or [])
    except FileNotFoundError:
        why = f"no such file: {path}"
    except IsADirectoryError:
        why = f"expected a CSV file, got a directory: {path}"
    except UnicodeDecodeError as e:
        why = f"expected a UTF-8 CSV file, got bytes that are not UTF-8 ({e.reason})"
    except (OSError, csv.Error) as e:
        why = f"cannot be read as a CSV file: {e}"
    raise ScenarioError([Problem(f"Empirical {path.name}", "path", why)])


def _csv_number(path: Path, column: str, i: int, text) -> float:
    try:
        return float(text)
    except (TypeError, ValueError):
        raise ScenarioError([Problem(f"Empirical {path.name}", column, f"expected a number on data line {i + 1}, "
                                                                        f"got {text!r}")]) from None


def quantile_table(data: list[float], n_quantiles: int = 101) -> tuple[tuple[float, ...], tuple[float, ...]]:
    """``n_quantiles`` evenly spaced quantiles (0 to 1) of ``data``, with linear interpolation
    between order statistics (numpy's default ``linear`` method)."""
    xs = sorted(data)
    n = len(xs)
    if n == 0:
        raise ScenarioError([Problem("Empirical", "data", "expected at least one observation")])
    qs, vs = [], []
    for k in range(n_quantiles):
        q = k / (n_quantiles - 1)
        pos = q * (n - 1)
        lo = int(math.floor(pos))
        hi = min(lo + 1, n - 1)
        vs.append(xs[lo] + (xs[hi] - xs[lo]) * (pos - lo))
        qs.append(round(q, 10))
    return tuple(qs), tuple(vs)


def philly_runtime() -> Empirical:
    """Run times of 83,154 jobs of Microsoft's Philly GPU cluster, as a committed 101-row quantile table."""
    return Empirical.from_table(PHILLY_QUANTILES)


RunTime = Union[Exponential, Lognormal, Constant, Empirical]
RUN_TIMES = (Exponential, Lognormal, Constant, Empirical)


# ---------------------------------------------------------------- arrivals
@dataclass(frozen=True)
class Poisson:
    """Jobs arrive independently at ``rate`` per second: exponential gaps, coefficient of variation 1."""

    rate: float

    def __post_init__(self) -> None:
        if not _num(self.rate) or self.rate < MIN_RATE:
            _raise([Problem("Poisson", "rate", f"expected a rate > 0 per second, at least {MIN_RATE:.3g} (one job in "
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
        if not _num(self.rate) or self.rate < MIN_RATE:
            out.append(Problem("Bursty", "rate", f"expected a rate > 0 per second, at least {MIN_RATE:.3g} (one job "
                                                 f"in 292 years), got {self.rate!r}"))
        if not _num(self.cv) or not 1 <= self.cv <= MAX_CV:
            out.append(Problem("Bursty", "cv", f"expected a coefficient of variation from 1 to {MAX_CV:g}, got {self.cv!r}"))
        _raise(out)

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
        if not _num(self.probability) or not 0 <= self.probability <= 1:
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
        probs = [c.probability for c in self.classes if isinstance(c, JobClass) and _num(c.probability)]
        if probs and len(probs) == len(self.classes) and abs(sum(probs) - 1.0) > TOLERANCE:
            out.append(Problem(obj, "classes", f"expected probabilities that add up to 1, got {sum(probs):g}"))
        if not _whole(self.n_jobs) or self.n_jobs < 1:
            out.append(Problem(obj, "n_jobs", f"expected a whole number >= 1, got {self.n_jobs!r}"))
        if not _whole(self.seed):
            out.append(Problem(obj, "seed", f"expected a whole number, got {self.seed!r}"))
        if not _seconds(self.min_run_time_s):
            out.append(Problem(obj, "min_run_time_s", f"expected seconds > 0, at most {MAX_DURATION_S:.4g}, "
                                                      f"got {self.min_run_time_s!r}"))
        if not _num(self.start_s) or not 0 <= self.start_s <= MAX_DURATION_S:
            out.append(Problem(obj, "start_s", f"expected seconds from 0 to {MAX_DURATION_S:.4g}, got {self.start_s!r}"))
        _raise(out)

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
    import dataclasses

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


# ---------------------------------------------------------------- YAML: the WorkloadGenerator kind
#: ``runTime.distribution`` -> (class, {YAML field: (argument, is a duration)}).
_YAML_RUN_TIMES = {
    "Exponential": (Exponential, {"mean": ("mean_s", True)}),
    "Lognormal": (Lognormal, {"median": ("median_s", True), "sigma": ("sigma", False), "max": ("cap_s", True)}),
    "Constant": (Constant, {"value": ("value_s", True)}),
}
#: Every field of a ``WorkloadGenerator`` spec (for the unknown-field warning of gangkit.manifests.reader).
YAML_FIELDS = {
    "jobs": True, "seed": True, "startTime": True, "minRunTime": True,
    "arrivals": dict.fromkeys(["process", "rate", "load", "cv"], True),
    "classes": [dict.fromkeys(["name", "probability", "pods", "gpusPerPod", "progress", "priority"], True)
                | {"runTime": dict.fromkeys(["distribution", "mean", "median", "sigma", "max", "value", "table",
                                             "csv", "column"], True)}],
}


def stream_from_manifest(reader, o, cluster_gpus: int, base: Path | None = None) -> Stream | None:
    """A gangkit/v1alpha1 ``WorkloadGenerator`` object -> :class:`Stream` (see docs/reference/scenario-yaml.md).

    ``reader`` is a :class:`gangkit.manifests.reader.Reader`: every problem is recorded
    there, naming the object and the field (``spec.classes[1].runTime.mean``),
    and ``None`` comes back. ``arrivals.load`` is turned into a rate with
    :meth:`Stream.rate_for_load` against ``cluster_gpus``, the GPUs of the
    file's Nodes; a CSV path for an empirical run time is relative to ``base``
    (the YAML file's folder).
    """
    from gangkit.manifests.reader import MAX_JOB_PODS, short
    from gangkit.model.quantity import parse_duration

    obj = o.label
    before = len(reader.problems)
    spec = reader.mapping(o.doc.get("spec"), obj, "spec")

    def duration(value, where: str, positive: bool = True):
        v = reader.attempt(parse_duration, value, obj, where)
        if v is not None and positive and v <= 0:
            reader.error(obj, where, f"expected a duration > 0, got {value!r}")
            return None
        return v

    def number(value, where: str, minimum: float, strict: bool, maximum: float = float("inf")):
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or \
                (value <= minimum if strict else value < minimum) or value > maximum:
            top = f" and <= {maximum:g}" if math.isfinite(maximum) else ""
            reader.error(obj, where, f"expected a number {'>' if strict else '>='} {minimum:g}{top}, got {short(value)}")
            return None
        return float(value)

    def run_time(rt, where: str):
        rt = reader.mapping(rt, obj, where)
        kind = rt.get("distribution")
        if kind == "Empirical":
            if rt.get("table") == "philly" and "csv" not in rt:
                return philly_runtime()
            if "csv" in rt and "table" not in rt:
                return empirical(rt, where)
            reader.error(obj, where, "an Empirical run time needs either table: philly or csv: <file> (with column:)")
            return None
        if not isinstance(kind, str) or kind not in _YAML_RUN_TIMES:
            reader.error(obj, f"{where}.distribution",
                         f"expected one of {', '.join([*_YAML_RUN_TIMES, 'Empirical'])}, got {short(kind)}")
            return None
        cls, fields = _YAML_RUN_TIMES[kind]
        args, ok = {}, True
        for key, (arg, is_duration) in fields.items():
            if key not in rt:
                if key in ("max",):
                    continue
                reader.error(obj, f"{where}.{key}", f"required for the {kind} run time")
                ok = False
                continue
            v = (duration(rt[key], f"{where}.{key}") if is_duration
                 else number(rt[key], f"{where}.{key}", 0, False, MAX_SIGMA))
            ok = ok and v is not None
            args[arg] = v
        return cls(**args) if ok else None

    def empirical(rt, where: str):
        """Observations in a CSV column: one problem naming the file when it cannot be read as one."""
        try:
            path = Path(str(rt["csv"]))
            path = path if path.is_absolute() or base is None else base / path
            found = path.is_file()
        except (OSError, ValueError):  # a name the file system cannot hold
            found = False
        if not found:
            reader.error(obj, f"{where}.csv", f"no such file: {short(rt['csv'])} (relative to the YAML file)")
            return None
        try:
            return Empirical.from_csv(path, str(rt.get("column", "runtime")))
        except ScenarioError as e:
            for p in e.problems:
                reader.error(obj, f"{where}.column" if p.field == "column" else f"{where}.csv", p.message)
        return None

    classes = []
    raw = spec.get("classes")
    if not isinstance(raw, list) or not raw:
        reader.error(obj, "spec.classes", f"expected a list of at least one job class, got {raw!r}")
        raw = []
    for i, c in enumerate(raw):
        where = f"spec.classes[{i}]"
        c = reader.mapping(c, obj, where)
        name = c.get("name")
        if not isinstance(name, str) or not name:
            reader.error(obj, f"{where}.name", f"expected a non-empty name, got {name!r}")
            continue
        prob = c.get("probability")
        if isinstance(prob, bool) or not isinstance(prob, (int, float)) or not 0 <= prob <= 1:
            reader.error(obj, f"{where}.probability", f"expected a probability from 0 to 1, got {prob!r}")
            continue
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
            continue
        rt = run_time(c["runTime"], f"{where}.runTime")
        if None not in (pods, gpus, rt) and progress in PROGRESS_MODES and isinstance(priority, int):
            classes.append(JobClass(name, float(prob), pods, gpus, progress, rt, priority))
    if len(classes) == len(raw) and classes:
        total = sum(c.probability for c in classes)
        if abs(total - 1.0) > TOLERANCE:
            reader.error(obj, "spec.classes", f"expected probabilities that add up to 1, got {total:g}")
        if len({c.name for c in classes}) != len(classes):
            reader.error(obj, "spec.classes", "expected unique class names")

    arrivals = reader.mapping(spec.get("arrivals"), obj, "spec.arrivals")
    process = arrivals.get("process", "Poisson")
    if process not in ("Poisson", "Bursty"):
        reader.error(obj, "spec.arrivals.process", f"expected Poisson or Bursty, got {process!r}")
    if ("rate" in arrivals) == ("load" in arrivals):
        reader.error(obj, "spec.arrivals", "expected exactly one of rate (jobs per second) and load "
                                           "(offered GPU demand as a fraction of the Nodes' GPUs)")
    rate = number(arrivals["rate"], "spec.arrivals.rate", 0, True) if "rate" in arrivals else None
    if rate is not None and rate < MIN_RATE:
        reader.error(obj, "spec.arrivals.rate", f"expected at least {MIN_RATE:.3g} jobs per second (one in 292 years), "
                                                f"got {short(arrivals['rate'])}")
    load = number(arrivals["load"], "spec.arrivals.load", 0, True, MAX_LOAD) if "load" in arrivals else None
    if load is not None and cluster_gpus <= 0:
        reader.error(obj, "spec.arrivals.load", "a load needs Nodes with GPUs in the same input")
    if load is not None and classes and len(classes) == len(raw) and all(c.gpus == 0 for c in classes):
        reader.error(obj, "spec.arrivals.load", "a load needs job classes that ask for GPUs (every class has gpusPerPod 0)")
    cv = 3.0
    if "cv" in arrivals:
        if process != "Bursty":
            reader.error(obj, "spec.arrivals.cv", "only Bursty arrivals have a coefficient of variation")
        else:
            cv = number(arrivals["cv"], "spec.arrivals.cv", 1, False, MAX_CV)
    n_jobs = reader.whole(spec.get("jobs", 1000), obj, "spec.jobs", 1, MAX_JOBS)
    seed = reader.whole(spec.get("seed", 0), obj, "spec.seed", 0)
    start = duration(spec.get("startTime", 0), "spec.startTime", positive=False)
    floor = duration(spec.get("minRunTime", 1), "spec.minRunTime")
    if len(reader.problems) > before:
        return None
    probe = Stream(Poisson(1.0), tuple(classes), n_jobs=n_jobs, seed=seed, name=o.name, min_run_time_s=floor,
                   start_s=start)
    if load is not None:
        rate = probe.rate_for_load(load, cluster_gpus)
        if rate < MIN_RATE:
            reader.error(obj, "spec.arrivals.load", f"gives {rate:.3g} jobs per second, below one job in 292 years; "
                                                    "give a larger load or a rate")
            return None
    return dataclasses.replace(probe, arrivals=Poisson(rate) if process == "Poisson" else Bursty(rate, cv))
