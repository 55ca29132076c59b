"""Kubernetes quantities and Go durations, read exactly.

A manifest never says "two and a half cores" or "sixteen gibibytes": it says
``2500m`` and ``16Gi``. These strings are *quantities*, Kubernetes' way of
writing a number with a unit suffix (``k8s.io/apimachinery/pkg/api/resource``)::

    quantity        ::= sign? number suffix?
    number          ::= digits | digits "." digits? | "." digits
    suffix          ::= binarySI | decimalSI | exponent
    binarySI        ::= Ki | Mi | Gi | Ti | Pi | Ei          (powers of 1024)
    decimalSI       ::= n | u | m | k | M | G | T | P | E    (powers of 1000)
    exponent        ::= ("e" | "E") sign? digits             (1e3 = 1000)

So ``500m`` is 0.5, ``1.5Gi`` is 1610612736, ``2e3`` is 2000, and ``1E`` (a
bare E) is 10**18. Values are parsed into :class:`fractions.Fraction`, so
``0.1`` is exactly one tenth and nothing is lost before we decide how to
round, which each resource does its own way:

- ``nvidia.com/gpu`` is an *extended resource*: the API server insists it is
  a whole number ("must be an integer"), so ``0.5`` or ``500m`` GPUs is an error;
- ``cpu`` is kept as a float number of cores;
- ``memory`` is a whole number of bytes, rounded *up* as ``Quantity.Value()`` does.

Durations (gangkit's run time, submit time...) are seconds: a number, or a Go
duration string as ``time.ParseDuration`` reads it: ``90s``, ``10m``,
``1h30m``, ``1.5h``, ``250ms``. Go has no ``d`` unit: write ``24h``.

**Ranges.** Every value read here has a range the simulation can compute
with, and anything outside it is one error naming the field, never an
overflow later in a run (or an ``Infinity`` in ``--json``):

- a quantity is at most 2^63-1 in magnitude, the largest Kubernetes
  represents (the Quantity reference: "no quantity may represent a number
  greater than 2^63-1 in magnitude"; Kubernetes caps a larger one, gangkit
  refuses it, because a capped number is not what the manifest meant), and
  at most :data:`MAX_TEXT` characters long;
- a duration is at most (2^63-1) nanoseconds, about 292 years: Go's
  ``time.Duration`` is an int64 count of nanoseconds and
  ``time.ParseDuration`` refuses anything longer ("invalid duration");
  gangkit holds plain seconds to the same range.
"""

from __future__ import annotations

import math
import re
from fractions import Fraction

from gangkit.model.errors import problem

_SUFFIXES: dict[str, Fraction] = {
    "": Fraction(1),
    "n": Fraction(1, 10**9),
    "u": Fraction(1, 10**6),
    "m": Fraction(1, 10**3),
    "k": Fraction(10**3),
    "M": Fraction(10**6),
    "G": Fraction(10**9),
    "T": Fraction(10**12),
    "P": Fraction(10**15),
    "E": Fraction(10**18),
    "Ki": Fraction(2**10),
    "Mi": Fraction(2**20),
    "Gi": Fraction(2**30),
    "Ti": Fraction(2**40),
    "Pi": Fraction(2**50),
    "Ei": Fraction(2**60),
}

# The exponent alternative comes before the decimal suffixes, so "1E3" is 1000
# while a bare "1E" is one exa (Kubernetes reads them the same way).
_QUANTITY = re.compile(
    r"(?P<sign>[+-]?)(?P<number>[0-9]+(?:\.[0-9]*)?|\.[0-9]+)"
    r"(?:(?P<exp>[eE][+-]?[0-9]+)|(?P<suffix>[KMGTPE]i|[numkMGTPE]))?"
)

_QUANTITY_HINT = "expected a Kubernetes quantity such as 8, 500m, 1.5 or 16Gi"

#: The largest quantity, in magnitude: Kubernetes' int64 (k8s.io/apimachinery/pkg/api/resource).
MAX_QUANTITY = 2**63 - 1
#: The longest duration, in seconds: Go's time.Duration, int64 nanoseconds (time.ParseDuration).
MAX_DURATION_S = (2**63 - 1) / 10**9
#: The most pods one Job may have: the most Kubernetes is designed for in a whole cluster ("no more
#: than 150,000 total pods", kubernetes.io, Considerations for large clusters, v1.31). A gang larger
#: than that is refused before it is simulated (10^7 pods would end in a MemoryError).
MAX_JOB_PODS = 150_000
#: The longest quantity or duration text read (nobody writes more digits; Python refuses to turn
#: a number of more than 4300 digits into an int).
MAX_TEXT = 100
_MAX_EXPONENT = 1000  # 10**1000 is cheap to compute exactly; 1e-1000 of anything is below a nano-anything


def shown(value: object) -> str:
    """``repr(value)``, cut short: an error quotes what it got, not a whole document."""
    if isinstance(value, int) and value.bit_length() > 200:  # Python writes at most 4300 digits of an int
        return f"an integer of {len(str(value)) if value.bit_length() < 14000 else 'more than 4000'} digits"
    text = repr(value) if isinstance(value, (str, int, float)) and len(str(value)) <= 60 else None
    if text is None:
        import reprlib

        shorter = reprlib.Repr()
        shorter.maxlevel, shorter.maxstring, shorter.maxother, shorter.maxlong = 2, 60, 60, 60
        text = shorter.repr(value)
    return text


def _too_large(value: object, obj: str, field: str):
    return problem(obj, field, f"expected a quantity of at most 2^63-1 ({MAX_QUANTITY}) in magnitude, the largest "
                               f"Kubernetes represents, got {shown(value)}")


def parse_quantity(value: object, *, obj: str, field: str) -> Fraction:
    """The exact value of a Kubernetes quantity (``"500m"``, ``"16Gi"``, ``"1e3"``, ``8``, ``0.5``).

    Follows ``resource.ParseQuantity``: optional sign, decimal number, then
    one binary suffix, decimal suffix or ``e`` exponent. A YAML number is
    accepted too (JSON numbers are quantities in the API). Anything else
    raises :class:`~gangkit.model.errors.ScenarioError` naming ``obj`` and ``field``.
    """
    if isinstance(value, bool) or value is None:
        raise problem(obj, field, f"{_QUANTITY_HINT}, got {shown(value)}")
    if isinstance(value, int):
        if abs(value) > MAX_QUANTITY:
            raise _too_large(value, obj, field)
        return Fraction(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise problem(obj, field, f"{_QUANTITY_HINT}, got {shown(value)}")
        if abs(value) > MAX_QUANTITY:
            raise _too_large(value, obj, field)
        return Fraction(repr(value))
    if not isinstance(value, str):
        raise problem(obj, field, f"{_QUANTITY_HINT}, got {shown(value)}")
    if len(value) > MAX_TEXT:
        raise problem(obj, field, f"{_QUANTITY_HINT}, of at most {MAX_TEXT} characters, got {shown(value)}")
    m = _QUANTITY.fullmatch(value)
    if m is None:
        raise problem(obj, field, f"{_QUANTITY_HINT}, got {shown(value)}")
    number = Fraction(m["number"])
    if m["exp"]:
        exponent = int(m["exp"][1:])
        if number and exponent > 2 * MAX_TEXT:  # at least 10**-MAX_TEXT * 10**exponent: far beyond 2^63
            raise _too_large(value, obj, field)
        if number and exponent < -_MAX_EXPONENT:
            raise problem(obj, field, f"{_QUANTITY_HINT}, with an exponent from -{_MAX_EXPONENT}, got {shown(value)}")
        number *= Fraction(10) ** exponent if number else 0
    else:
        number *= _SUFFIXES[m["suffix"] or ""]
    if number > MAX_QUANTITY:
        raise _too_large(value, obj, field)
    return -number if m["sign"] == "-" else number


def parse_gpus(value: object, *, obj: str, field: str) -> int:
    """A GPU count: a whole number >= 0.

    ``nvidia.com/gpu`` is an extended resource, and the API server rejects a
    fractional one with "must be an integer" (GPUs are not shared by quantity;
    time-slicing or MIG advertise more devices instead).
    """
    q = parse_quantity(value, obj=obj, field=field)
    if q.denominator != 1:
        raise problem(obj, field, f"must be an integer (a whole number of GPUs), got {shown(value)}")
    if q < 0:
        raise problem(obj, field, f"must be greater than or equal to 0, got {shown(value)}")
    return int(q)


def parse_cpu(value: object, *, obj: str, field: str) -> float:
    """CPU cores as a float: ``"500m"`` is 0.5, ``2`` is 2.0. Negative is an error."""
    q = parse_quantity(value, obj=obj, field=field)
    if q < 0:
        raise problem(obj, field, f"must be greater than or equal to 0, got {shown(value)}")
    return float(q)


def parse_memory(value: object, *, obj: str, field: str) -> int:
    """Memory in bytes: ``"16Gi"`` is 17179869184; fractions of a byte round up (``Quantity.Value()``)."""
    q = parse_quantity(value, obj=obj, field=field)
    if q < 0:
        raise problem(obj, field, f"must be greater than or equal to 0, got {shown(value)}")
    return math.ceil(q)


_UNITS: dict[str, Fraction] = {
    "ns": Fraction(1, 10**9),
    "us": Fraction(1, 10**6),
    "µs": Fraction(1, 10**6),  # U+00B5 micro sign
    "μs": Fraction(1, 10**6),  # U+03BC Greek mu
    "ms": Fraction(1, 10**3),
    "s": Fraction(1),
    "m": Fraction(60),
    "h": Fraction(3600),
}
_DURATION_PART = re.compile(r"([0-9]+(?:\.[0-9]*)?|\.[0-9]+)(ns|us|µs|μs|ms|s|m|h)")
_NUMBER = re.compile(r"[0-9]+(?:\.[0-9]*)?|\.[0-9]+")
_DURATION_HINT = "expected seconds (a number) or a Go duration such as 90s, 10m, 1h30m, 250ms"


def parse_duration(value: object, *, obj: str, field: str) -> float:
    """Seconds, from a number or a Go duration string (``"90s"``, ``"1h30m"``, ``"1.5h"``, ``"250ms"``).

    Strings follow Go's ``time.ParseDuration`` (units ns, us, ms, s, m, h;
    parts add up). A string that is a plain number (``"600"``, as annotation
    values must be strings) counts as seconds. Negative durations and
    anything else raise :class:`~gangkit.model.errors.ScenarioError`.
    """
    if isinstance(value, bool) or value is None:
        raise problem(obj, field, f"{_DURATION_HINT}, got {shown(value)}")
    if isinstance(value, float) and not math.isfinite(value):
        raise problem(obj, field, f"{_DURATION_HINT}, got {shown(value)}")
    if isinstance(value, (int, float)):
        seconds: Fraction | float | int = value
    elif isinstance(value, str) and len(value) <= MAX_TEXT:
        sign = -1 if value.startswith("-") else 1
        body = value[1:] if value[:1] in ("+", "-") else value
        if _NUMBER.fullmatch(body):
            total = Fraction(body)
        elif body and _DURATION_PART.sub("", body) == "":
            total = sum((Fraction(n) * _UNITS[u] for n, u in _DURATION_PART.findall(body)), Fraction(0))
        else:
            raise problem(obj, field, f"{_DURATION_HINT}, got {shown(value)}")
        seconds = sign * total
    else:
        raise problem(obj, field, f"{_DURATION_HINT}, got {shown(value)}")
    if seconds < 0:
        raise problem(obj, field, f"expected a duration >= 0, got {shown(value)}")
    if seconds > MAX_DURATION_S:
        raise problem(obj, field, "expected a duration of at most 2562047h47m16.854775807s (about 292 years, the "
                                  f"longest Go's time.Duration holds), got {shown(value)}")
    return float(seconds)


def format_duration(seconds: float) -> str:
    """A Go duration string that :func:`parse_duration` reads back exactly: 600 -> ``"10m"``, 5400 -> ``"1h30m"``."""
    if seconds == 0:
        return "0s"
    if seconds != int(seconds):
        return f"{seconds!r}s"
    rest = int(seconds)
    hours, rest = divmod(rest, 3600)
    minutes, secs = divmod(rest, 60)
    return "".join(f"{n}{u}" for n, u in ((hours, "h"), (minutes, "m"), (secs, "s")) if n)


def format_cpu(cores: float) -> str:
    """A CPU quantity: 8 -> ``"8"``, 0.5 -> ``"500m"``; other values as exact decimals."""
    exact = Fraction(repr(float(cores)))
    if exact.denominator == 1:
        return str(exact.numerator)
    millis = exact * 1000
    if millis.denominator == 1:
        return f"{millis.numerator}m"
    return repr(float(cores))


def format_memory(size: int) -> str:
    """A memory quantity in the largest binary unit that divides it: 2**34 -> ``"16Gi"``."""
    for suffix in ("Ei", "Pi", "Ti", "Gi", "Mi", "Ki"):
        unit = int(_SUFFIXES[suffix])
        if size and size % unit == 0:
            return f"{size // unit}{suffix}"
    return str(size)
