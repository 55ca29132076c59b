"""Real instance types by name, and how a NodePool's requirements choose among them.

Picture a cloud's price list: every machine it rents, with its GPUs, cores,
memory and price per hour. Karpenter reads that list from its cloud provider
(the AWS provider asks EC2 for instance types and their prices) and a
NodePool's ``requirements`` cross out the lines it may not buy. gangkit has
no cloud, so it ships a small list of its own, ``gangkit/data/instance_types.csv``
(read once, by :func:`catalogue`): common GPU and CPU types of AWS, GCP and
Azure with their published sizes and approximate on-demand list prices (the
file's header names the pages, the regions and the date).

**Labels.** Each type carries the labels Karpenter's instance types carry
(karpenter-provider-aws v1.14, ``pkg/providers/instancetype/types.go``,
``computeRequirements``): ``node.kubernetes.io/instance-type``,
``kubernetes.io/arch``, ``kubernetes.io/os`` (``linux``),
``karpenter.sh/capacity-type`` (``on-demand`` and ``spot``) and, for AWS rows
only, ``karpenter.k8s.aws/instance-family``, ``-category``, ``-generation``
(from the name, as the provider's regular expression splits it), ``-size``,
``-cpu``, ``-memory`` (MiB) and, for GPU types, ``-gpu-name``,
``-gpu-manufacturer``, ``-gpu-count`` and ``-gpu-memory`` (MiB of one GPU,
taken as the published GiB x 1024; EC2 reports a little less for some GPUs).
A GCP or Azure row has no ``karpenter.k8s.aws/*`` label: the AWS provider
never offers it. gangkit's default types (``gpu-1`` ... ``gpu-8``) are
generic amd64 Linux machines offered on demand and as spot, with no
provider label.

**Requirements** (karpenter.sh/v1 NodePool, ``spec.template.spec.requirements``;
Karpenter ``pkg/scheduling/requirements.go``, ``Intersects``): a type is
allowed when it satisfies every requirement. For a key the type carries:
``In`` (one of its values is listed), ``NotIn`` (it has a value not listed),
``Exists``; ``Gt``, ``Lt``, ``Gte``, ``Lte`` compare the label as a whole
number with the one value. For a key the type lacks (as the AWS provider
marks a CPU type's ``-gpu-count`` DoesNotExist): ``NotIn`` and
``DoesNotExist`` pass, the others fail. ``minValues`` (:class:`MinValues`)
is checked per NodeClaim, as Karpenter's default ``minValuesPolicy: Strict``
does: the types that can hold a NodeClaim's pods must span at least that
many values of the key, else no NodeClaim is made; the type launched is
still the cheapest. ``topology.kubernetes.io/zone`` is accepted and not
modelled (gangkit has no zones: every type counts as offered in every zone);
spot capacity is modelled as on demand (the on-demand price, never
interrupted); ``reserved`` capacity needs a capacity reservation, which
gangkit does not model, so no type offers it.

**Which types a NodePool chooses from** (its *universe*):

1. A ``gangkit/v1alpha1`` Karpenter object that lists ``spec.instanceTypes``
   plays the cloud provider: its list is the universe, as before. Those
   types carry only their name, so only instance-type requirements select
   among them (others are noted as not modelled).
2. Otherwise the universe is gangkit's default types, **plus this catalogue
   when the NodePool asks for it**: when an ``In`` requirement on
   ``node.kubernetes.io/instance-type`` names a catalogue type, or a
   requirement uses a catalogue-only key (:data:`CATALOGUE_KEYS`). So a
   NodePool without such a requirement gets exactly the default types,
   whatever its other requirements say.
"""

from __future__ import annotations

import csv
import difflib
import functools
import math
import operator
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from gangkit.supply.cloud import TYPE_LABEL, InstanceType

__all__ = ["CATALOGUE_FILE", "CATALOGUE_KEYS", "CatalogueType", "MinValues", "OPERATORS", "Requirement", "catalogue",
           "close_names", "default_labels", "wants_catalogue"]

CATALOGUE_FILE = Path(__file__).resolve().parents[1] / "data" / "instance_types.csv"

ARCH = "kubernetes.io/arch"
OS = "kubernetes.io/os"
CAPACITY_TYPE = "karpenter.sh/capacity-type"
ZONE = "topology.kubernetes.io/zone"
AWS = "karpenter.k8s.aws/"
#: The operators of a NodePool requirement (the CRD's enum).
OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt", "Gte", "Lte")
#: The ``karpenter.k8s.aws/*`` labels the catalogue gives its AWS types: a requirement on one draws from the catalogue.
CATALOGUE_KEYS = tuple(AWS + k for k in (
    "instance-family", "instance-category", "instance-generation", "instance-size", "instance-cpu", "instance-memory",
    "instance-gpu-name", "instance-gpu-manufacturer", "instance-gpu-count", "instance-gpu-memory"))
#: The keys every type of the catalogue and every default type defines (zone aside: see the module docstring).
WELL_KNOWN = (TYPE_LABEL, ARCH, OS, CAPACITY_TYPE)
#: Capacity types a catalogue type (or a default type) is offered as.
OFFERED = frozenset({"on-demand", "spot"})

_FAMILY = re.compile(r"(^[a-z]+)(-[0-9]+tb)?([0-9]+).*\.")  # karpenter-provider-aws instanceTypeScheme
_COMPARE = {"Gt": operator.gt, "Lt": operator.lt, "Gte": operator.ge, "Lte": operator.le}
_COLUMNS = ("name", "provider", "family", "gpus", "gpu_model", "gpu_memory_gib", "vcpu", "memory_gib", "arch",
            "price_per_hour", "source", "as_of")

Labels = Mapping[str, frozenset]


@dataclass(frozen=True)
class CatalogueType:
    """One row of the catalogue: a real machine type, its size and an approximate price."""

    name: str
    provider: str  # aws, gcp or azure
    family: str
    gpus: int
    gpu_model: str  # "" for a CPU type
    gpu_memory_gib: float  # of one GPU; 0 for a CPU type
    vcpu: int
    memory_gib: float
    arch: str
    price_per_hour: float  # USD, on demand, in the region the file names for the provider
    source: str
    as_of: str

    @property
    def memory_mib(self) -> int:
        return int(self.memory_gib * 1024)

    def instance_type(self) -> InstanceType:
        """What gangkit's Karpenter launches: GPUs, cores and bytes as published (capacity, not allocatable)."""
        return InstanceType(self.name, self.gpus, self.price_per_hour, float(self.vcpu), self.memory_mib * 2**20)

    def labels(self) -> dict[str, frozenset]:
        """The values of each label the type carries (a key it lacks is absent)."""
        out = default_labels(self.name, self.arch)
        if self.provider != "aws":
            return out
        family, _, size = self.name.partition(".")
        aws = {"instance-family": family, "instance-size": size, "instance-cpu": str(self.vcpu),
               "instance-memory": str(self.memory_mib)}
        parts = _FAMILY.match(self.name)
        if parts:
            aws |= {"instance-category": parts.group(1), "instance-generation": parts.group(3)}
        if self.gpus:
            aws |= {"instance-gpu-name": self.gpu_model, "instance-gpu-manufacturer": "nvidia",
                    "instance-gpu-count": str(self.gpus), "instance-gpu-memory": str(int(self.gpu_memory_gib * 1024))}
        return out | {AWS + k: frozenset({v}) for k, v in aws.items()}


def default_labels(name: str, arch: str = "amd64") -> dict[str, frozenset]:
    """The labels of a generic machine: its name, an architecture, Linux, on demand and spot."""
    return {TYPE_LABEL: frozenset({name}), ARCH: frozenset({arch}), OS: frozenset({"linux"}), CAPACITY_TYPE: OFFERED}


@functools.cache
def catalogue() -> dict[str, CatalogueType]:
    """Every type of ``gangkit/data/instance_types.csv`` by name (read once)."""
    return read_catalogue(CATALOGUE_FILE)


def read_catalogue(path: Path) -> dict[str, CatalogueType]:
    """Parse a catalogue file; a bad row raises ValueError naming its line."""
    lines = [(i, line) for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
             if line.strip() and not line.startswith("#")]
    rows = csv.reader(line for _, line in lines)
    header = next(rows)
    if tuple(header) != _COLUMNS:
        raise ValueError(f"{path.name}: expected the columns {', '.join(_COLUMNS)}, got {', '.join(header)}")
    out: dict[str, CatalogueType] = {}
    for (number, _), row in zip(lines[1:], rows):
        where = f"{path.name} line {number}"
        if len(row) != len(_COLUMNS):
            raise ValueError(f"{where}: expected {len(_COLUMNS)} columns, got {len(row)}")
        f = dict(zip(_COLUMNS, row))
        try:
            t = CatalogueType(f["name"], f["provider"], f["family"], int(f["gpus"]), f["gpu_model"],
                              float(f["gpu_memory_gib"] or 0), int(f["vcpu"]), float(f["memory_gib"]), f["arch"],
                              float(f["price_per_hour"]), f["source"], f["as_of"])
        except ValueError as e:
            raise ValueError(f"{where}: {e}") from None
        problem = _row_problem(t)
        if problem or t.name in out:
            raise ValueError(f"{where}: {problem or f'{t.name} is listed twice'}")
        out[t.name] = t
    return out


def _row_problem(t: CatalogueType) -> str:
    if t.provider not in ("aws", "gcp", "azure"):
        return f"provider: expected aws, gcp or azure, got {t.provider!r}"
    if t.arch not in ("amd64", "arm64"):
        return f"arch: expected amd64 or arm64, got {t.arch!r}"
    if t.gpus < 0 or t.vcpu <= 0 or t.memory_gib <= 0 or not (0 < t.price_per_hour < math.inf):
        return "expected gpus >= 0, and vcpu, memory_gib and price_per_hour > 0"
    if bool(t.gpus) != bool(t.gpu_model) or bool(t.gpus) != (t.gpu_memory_gib > 0):
        return "a GPU type needs gpu_model and gpu_memory_gib, a CPU type neither"
    if t.provider == "aws" and not t.name.startswith(t.family + "."):
        return f"family: an AWS family is the part of the name before the dot, got {t.family!r}"
    return ""


@dataclass(frozen=True)
class Requirement:
    """One NodePool requirement: ``key``, ``operator``, ``values`` (and ``minValues``, see :class:`MinValues`)."""

    key: str
    operator: str
    values: tuple[str, ...] = ()
    min_values: int | None = None

    def admits(self, labels: Labels) -> bool:
        """Does a type with these labels satisfy this requirement (Karpenter's ``Intersects``, see the docstring)?"""
        have = labels.get(self.key)
        op = self.operator
        if op == "Exists":
            return bool(have)
        if op == "DoesNotExist":
            return not have
        if op == "In":
            return bool(have) and not have.isdisjoint(self.values)
        if op == "NotIn":
            return not have or not have <= set(self.values)
        bound = int(self.values[0])
        return bool(have) and any(v.lstrip("-").isdigit() and _COMPARE[op](int(v), bound) for v in have)

    def __str__(self) -> str:
        if self.operator in ("Exists", "DoesNotExist"):
            return f"{self.key} {self.operator}"
        return f"{self.key} {self.operator} [{', '.join(self.values)}]"


@dataclass(frozen=True)
class MinValues:
    """A requirement's ``minValues``: the types a NodeClaim may be launched as must span ``count`` values of ``key``.

    ``values`` holds each allowed type's values of the key (Karpenter
    ``InstanceTypes.SatisfiesMinValues``: a type without the label adds none).
    """

    key: str
    count: int
    values: Mapping[str, frozenset]

    def met(self, type_names: Iterable[str]) -> bool:
        seen: set = set()
        for name in type_names:
            seen |= self.values.get(name, frozenset())
        return len(seen) >= self.count


def wants_catalogue(requirements: Iterable[Requirement]) -> bool:
    """Does a NodePool draw from the catalogue (rule 2 of the module docstring)?"""
    names = catalogue()
    return any(r.key in CATALOGUE_KEYS or (r.key == TYPE_LABEL and r.operator == "In" and any(v in names for v in r.values))
               for r in requirements)


def close_names(name: str, known: Iterable[str]) -> list[str]:
    """The known type name that looks most like ``name`` (for a did-you-mean), if one is close."""
    return difflib.get_close_matches(name, list(known), n=1, cutoff=0.75)
