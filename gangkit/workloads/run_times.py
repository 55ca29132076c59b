"""Run-time distributions: how long each job of a generated stream runs.

A :class:`~gangkit.workloads.generators.JobClass` draws each job's run time
from one of these plain frozen dataclasses, each with ``sample(rng)`` and
``mean()``:

- :class:`Exponential`: memoryless, the M of M/M/c queueing theory (its
  coefficient of variation is 1);
- :class:`Lognormal`: a heavy right tail (most jobs short, a few very long, as
  in real GPU clusters), optionally cut at a maximum run time;
- :class:`Constant`: every job the same;
- :class:`Empirical`: a quantile table, read between its points, such as the
  committed one derived from Microsoft's Philly trace (:func:`philly_runtime`),
  or one computed from observations (:func:`quantile_table`, numpy's default
  "linear" quantiles).

Every time is at most :data:`~gangkit.model.quantity.MAX_DURATION_S` (Go's
longest duration, about 292 years) and a lognormal ``sigma`` at most
:data:`MAX_SIGMA`, so no sample overflows. Bad values raise
:class:`~gangkit.model.errors.ScenarioError` naming the class and the field.
"""

from __future__ import annotations

import bisect
import csv
import math
import random
from dataclasses import dataclass
from pathlib import Path
from typing import Union

from gangkit.model.errors import Problem, ScenarioError
from gangkit.model.quantity import MAX_DURATION_S

__all__ = [
    "MAX_SIGMA", "PHILLY_QUANTILES", "RUN_TIMES", "Constant", "Empirical", "Exponential", "Lognormal", "RunTime",
    "is_number", "is_seconds", "philly_runtime", "quantile_table", "raise_problems",
]

#: The committed quantile table of Philly run times (see tools/make_runtime_quantiles.py).
PHILLY_QUANTILES = Path(__file__).resolve().parents[1] / "data" / "philly_runtime_quantiles.csv"

#: The widest lognormal spread: e**20 (half a billion) between the median and one sigma above it.
#: The mean, exp(mu + sigma**2 / 2), overflows a float beyond sigma 37; no run-time trace is that wide.
MAX_SIGMA = 20.0

def is_number(x) -> bool:
    """A finite int or float (not a bool)."""
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


def is_seconds(x) -> bool:
    """A positive time gangkit can compute with: at most Go's longest duration."""
    return is_number(x) and 0 < x <= MAX_DURATION_S


def raise_problems(problems: list[Problem]) -> None:
    """One ScenarioError with every problem, if there is one."""
    if problems:
        raise ScenarioError(problems)


def _phi(z: float) -> float:
    """The standard normal CDF."""
    return 0.5 * (1.0 + math.erf(z / math.sqrt(2.0)))


@dataclass(frozen=True)
class Exponential:
    """Memoryless run times with this ``mean`` (seconds): the M in M/M/c queueing theory."""

    mean_s: float

    def __post_init__(self) -> None:
        if not is_seconds(self.mean_s):
            raise_problems([Problem("Exponential", "mean_s", f"expected a mean > 0 seconds, at most {MAX_DURATION_S:.4g}, "
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
        if not is_seconds(self.median_s):
            out.append(Problem("Lognormal", "median_s", f"expected a median > 0 seconds, at most {MAX_DURATION_S:.4g}, "
                                                        f"got {self.median_s!r}"))
        if not is_number(self.sigma) or not 0 <= self.sigma <= MAX_SIGMA:
            out.append(Problem("Lognormal", "sigma", f"expected a sigma from 0 to {MAX_SIGMA:g}, got {self.sigma!r}"))
        if self.cap_s is not None and not is_seconds(self.cap_s):
            out.append(Problem("Lognormal", "cap_s", f"expected seconds > 0, at most {MAX_DURATION_S:.4g}, or None, "
                                                     f"got {self.cap_s!r}"))
        raise_problems(out)

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
        if not is_seconds(self.value_s):
            raise_problems([Problem("Constant", "value_s", f"expected seconds > 0, at most {MAX_DURATION_S:.4g}, "
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
        raise_problems(out)

    @classmethod
    def from_table(cls, path: str | Path) -> "Empirical":
        """Read a quantile table: a CSV with columns ``quantile,value`` (lines starting with # are comments)."""
        path = Path(path)
        rows, columns = _csv_rows(path)
        if not rows or "quantile" not in columns or "value" not in columns:
            raise_problems([Problem(f"Empirical {path.name}", "columns", "expected the columns quantile,value")])
        return cls(tuple(_csv_number(path, "quantile", i, r["quantile"]) for i, r in enumerate(rows)),
                   tuple(_csv_number(path, "value", i, r["value"]) for i, r in enumerate(rows)), source=path.name)

    @classmethod
    def from_csv(cls, path: str | Path, column: str, n_quantiles: int = 101) -> "Empirical":
        """Observations in one column of a CSV file, summarised by ``n_quantiles`` evenly spaced quantiles."""
        path = Path(path)
        rows, columns = _csv_rows(path)
        if column not in columns:
            raise_problems([Problem(f"Empirical {path.name}", "column", f"no column {column!r}; columns are {columns}")])
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
