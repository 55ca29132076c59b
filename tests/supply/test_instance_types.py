"""NodePools that name real instance types: the catalogue, Karpenter's requirement semantics, Balanced, static pools.

The catalogue (``gangkit/data/instance_types.csv``, read by
:mod:`gangkit.supply.catalogue`) holds real types with their published
sizes and approximate prices; a NodePool's requirements choose among them
with Karpenter's operators. Each table below is one rule: a row names the
case, gives the NodePool (as the dicts a YAML file holds) and what gangkit
must make of it.
"""

from __future__ import annotations

import warnings

import pytest
import yaml

import gangkit as gk
from gangkit import Node, job
from gangkit.manifests import dump_manifests, load_manifests
from gangkit.supply import InstanceType, Karpenter, NodePool
from gangkit.supply.catalogue import CATALOGUE_FILE, MinValues, Requirement, catalogue, read_catalogue
from gangkit.supply.dump import dump_problems

from builders import GIB, gang, scenario, simulate_on, supplied
from conftest import case, shared_path

try:
    from schema_util import requires_schemas, validate_manifest
except ImportError:  # tests/ imported as a package
    from tests.schema_util import requires_schemas, validate_manifest

DEFAULTS = ("gpu-1", "gpu-2", "gpu-4", "gpu-8")
SYSTEM = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "system-0"},
          "status": {"allocatable": {"cpu": "8", "memory": "32Gi"}}}
REQ = "spec.template.spec.requirements"


def req(key, operator, *values, min_values=None):
    r = {"key": key, "operator": operator}
    if values:
        r["values"] = list(values)
    if min_values is not None:
        r["minValues"] = min_values
    return r


def nodepool(*requirements, name="gpu", **spec):
    return {"apiVersion": "karpenter.sh/v1", "kind": "NodePool", "metadata": {"name": name},
            "spec": {"template": {"spec": {"nodeClassRef": {"group": "karpenter.kwok.sh", "kind": "KWOKNodeClass",
                                                            "name": "default"},
                                           "requirements": list(requirements)}}, **spec}}


def karpenter_object(*types):
    spec = {"instanceTypes": list(types)} if types else {"batchIdleDuration": "1s"}
    return {"apiVersion": "gangkit/v1alpha1", "kind": "Karpenter", "metadata": {"name": "karpenter"}, "spec": spec}


def load(*docs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return load_manifests([SYSTEM, *docs])


def problems_of(*docs):
    with pytest.raises(gk.ScenarioError) as info:
        load(*docs)
    return info.value.problems


# --- the catalogue ------------------------------------------------------------------------------------------------

NAMED_IN_THE_ISSUE = [
    "p3.2xlarge", "p3.8xlarge", "p3.16xlarge", "p4d.24xlarge", "p4de.24xlarge", "p5.48xlarge", "p5e.48xlarge",
    "g5.xlarge", "g5.2xlarge", "g5.12xlarge", "g5.48xlarge", "g6.xlarge", "g6.12xlarge", "g6e.xlarge", "g6e.12xlarge",
    "g6e.48xlarge", "c4.large", "m5.large", "c5.large", "m5.xlarge", "c3.2xlarge", "c4.2xlarge", "c5.2xlarge",
    "c5.4xlarge", "m5.2xlarge", "a2-highgpu-1g", "a2-highgpu-8g", "a2-ultragpu-8g", "a3-highgpu-8g", "a3-megagpu-8g",
    "g2-standard-4", "Standard_NC24ads_A100_v4", "Standard_ND96asr_v4", "Standard_ND96amsr_A100_v4",
    "Standard_ND96isr_H100_v5"]


def test_the_catalogue_holds_the_types_the_issue_and_karpenters_examples_name():
    assert [n for n in NAMED_IN_THE_ISSUE if n not in catalogue()] == []


@pytest.mark.parametrize("name", list(catalogue()))
def test_every_row_is_sane(name):
    t = catalogue()[name]
    assert t.provider in ("aws", "gcp", "azure") and t.arch in ("amd64", "arm64")
    assert t.price_per_hour > 0 and t.vcpu > 0 and t.memory_gib > 0 and t.gpus >= 0
    assert (t.gpus > 0) == bool(t.gpu_model) == (t.gpu_memory_gib > 0)
    assert t.gpu_model == t.gpu_model.lower() and len(t.as_of) == 7 and t.source
    it = t.instance_type()
    assert (it.name, it.gpus, it.cpu, it.memory) == (name, t.gpus, t.vcpu, int(t.memory_gib * 2**30))


PUBLISHED = [  # name: GPUs, GPU model, GiB of one GPU, vCPUs, GiB of memory (the providers' pages)
    case("p3.2xlarge", "p3.2xlarge", 1, "v100", 16, 8, 61),
    case("p3.16xlarge", "p3.16xlarge", 8, "v100", 16, 64, 488),
    case("p4d.24xlarge", "p4d.24xlarge", 8, "a100", 40, 96, 1152),
    case("p4de.24xlarge", "p4de.24xlarge", 8, "a100", 80, 96, 1152),
    case("p5.48xlarge", "p5.48xlarge", 8, "h100", 80, 192, 2048),
    case("p5e.48xlarge", "p5e.48xlarge", 8, "h200", 141, 192, 2048),
    case("g5.12xlarge", "g5.12xlarge", 4, "a10g", 24, 48, 192),
    case("g6.xlarge", "g6.xlarge", 1, "l4", 24, 4, 16),
    case("g6e.48xlarge", "g6e.48xlarge", 8, "l40s", 48, 192, 1536),
    case("c4.large", "c4.large", 0, "", 0, 2, 3.75),
    case("a2-highgpu-8g", "a2-highgpu-8g", 8, "a100", 40, 96, 680),
    case("a2-ultragpu-8g", "a2-ultragpu-8g", 8, "a100", 80, 96, 1360),
    case("a3-highgpu-8g", "a3-highgpu-8g", 8, "h100", 80, 208, 1872),
    case("g2-standard-4", "g2-standard-4", 1, "l4", 24, 4, 16),
    case("Standard_NC24ads_A100_v4", "Standard_NC24ads_A100_v4", 1, "a100", 80, 24, 220),
    case("Standard_ND96asr_v4", "Standard_ND96asr_v4", 8, "a100", 40, 96, 900),
    case("Standard_ND96isr_H100_v5", "Standard_ND96isr_H100_v5", 8, "h100", 80, 96, 1900),
]


@pytest.mark.parametrize("name, gpus, model, gpu_gib, vcpu, gib", PUBLISHED)
def test_published_sizes(name, gpus, model, gpu_gib, vcpu, gib):
    t = catalogue()[name]
    assert (t.gpus, t.gpu_model, t.gpu_memory_gib, t.vcpu, t.memory_gib) == (gpus, model, gpu_gib, vcpu, gib)


def test_bigger_machines_of_one_family_cost_more_and_the_header_names_the_date():
    header = [line for line in CATALOGUE_FILE.read_text().splitlines() if line.startswith("#")]
    assert any("APPROXIMATE" in line and "as of January 2025" in line for line in header)
    by_family: dict = {}
    for t in catalogue().values():
        by_family.setdefault((t.provider, t.family), []).append(t)
    for types in by_family.values():
        types.sort(key=lambda t: (t.gpus, t.vcpu, t.memory_gib, t.gpu_memory_gib))
        assert [t.price_per_hour for t in types] == sorted(t.price_per_hour for t in types), [t.name for t in types]


LABELS = [  # name: labels it must carry (None: must lack)
    case("an AWS GPU type: family, category, generation, size, cpu, MiB, the GPU labels", "p4d.24xlarge", {
        "karpenter.k8s.aws/instance-family": "p4d", "karpenter.k8s.aws/instance-category": "p",
        "karpenter.k8s.aws/instance-generation": "4", "karpenter.k8s.aws/instance-size": "24xlarge",
        "karpenter.k8s.aws/instance-cpu": "96", "karpenter.k8s.aws/instance-memory": "1179648",
        "karpenter.k8s.aws/instance-gpu-name": "a100", "karpenter.k8s.aws/instance-gpu-count": "8",
        "karpenter.k8s.aws/instance-gpu-memory": "40960", "kubernetes.io/arch": "amd64"}),
    case("g6e: category g, generation 6", "g6e.xlarge",
         {"karpenter.k8s.aws/instance-category": "g", "karpenter.k8s.aws/instance-generation": "6"}),
    case("an AWS CPU type lacks the GPU labels", "c4.large",
         {"karpenter.k8s.aws/instance-memory": "3840", "karpenter.k8s.aws/instance-gpu-count": None}),
    case("a Graviton type is arm64", "m6g.large", {"kubernetes.io/arch": "arm64"}),
    case("a GCP type carries no karpenter.k8s.aws label", "a3-highgpu-8g",
         {"karpenter.k8s.aws/instance-gpu-name": None, "karpenter.k8s.aws/instance-family": None,
          "node.kubernetes.io/instance-type": "a3-highgpu-8g"}),
]


@pytest.mark.parametrize("name, expected", LABELS)
def test_catalogue_labels(name, expected):
    labels = catalogue()[name].labels()
    assert {k: (None if k not in labels else next(iter(labels[k]))) for k in expected} == expected
    assert labels["karpenter.sh/capacity-type"] == {"on-demand", "spot"}


BAD_FILES = [
    case("an unknown provider", "x.large,oci,x,0,,,2,4,amd64,0.1,s,2025-01", "provider: expected aws, gcp or azure"),
    case("a missing column", "x.large,aws,x,0,,,2,4,amd64,0.1,s", "expected 12 columns, got 11"),
    case("a price that is no number", "x.large,aws,x,0,,,2,4,amd64,cheap,s,2025-01", "could not convert"),
    case("a GPU type without its model", "x.large,aws,x,1,,24,2,4,amd64,0.1,s,2025-01", "a GPU type needs gpu_model"),
    case("a name twice", "c4.large,aws,c4,0,,,2,3.75,amd64,0.1,s,2025-01", "c4.large is listed twice"),
]


@pytest.mark.parametrize("row, words", BAD_FILES)
def test_a_bad_catalogue_row_names_its_line(tmp_path, row, words):
    text = CATALOGUE_FILE.read_text()
    path = tmp_path / "instance_types.csv"
    path.write_text(text + row + "\n")
    with pytest.raises(ValueError, match="instance_types.csv line") as info:
        read_catalogue(path)
    assert words in str(info.value) and str(len(text.splitlines()) + 1) in str(info.value)


# --- one requirement ----------------------------------------------------------------------------------------------

LABELS_P4D = {"karpenter.k8s.aws/instance-gpu-count": frozenset({"8"}), "karpenter.sh/capacity-type": frozenset({"on-demand", "spot"})}
OPERATORS = [  # requirement, does p4d's labels satisfy it
    case("In: a listed value", Requirement("karpenter.k8s.aws/instance-gpu-count", "In", ("4", "8")), True),
    case("In: no listed value", Requirement("karpenter.k8s.aws/instance-gpu-count", "In", ("4",)), False),
    case("In on a label the type lacks fails", Requirement("karpenter.k8s.aws/instance-gpu-name", "In", ("a100",)), False),
    case("NotIn: its value is not listed", Requirement("karpenter.k8s.aws/instance-gpu-count", "NotIn", ("4",)), True),
    case("NotIn: its value is listed", Requirement("karpenter.k8s.aws/instance-gpu-count", "NotIn", ("8",)), False),
    case("NotIn on a label the type lacks passes", Requirement("karpenter.k8s.aws/instance-gpu-name", "NotIn", ("a100",)), True),
    case("NotIn keeps a type offered otherwise too (spot or on demand)",
         Requirement("karpenter.sh/capacity-type", "NotIn", ("spot",)), True),
    case("In any of several offered values", Requirement("karpenter.sh/capacity-type", "In", ("spot",)), True),
    case("In a value not offered", Requirement("karpenter.sh/capacity-type", "In", ("reserved",)), False),
    case("Exists", Requirement("karpenter.k8s.aws/instance-gpu-count", "Exists"), True),
    case("Exists on a label the type lacks", Requirement("karpenter.k8s.aws/instance-gpu-name", "Exists"), False),
    case("DoesNotExist", Requirement("karpenter.k8s.aws/instance-gpu-count", "DoesNotExist"), False),
    case("DoesNotExist on a label the type lacks", Requirement("karpenter.k8s.aws/instance-gpu-name", "DoesNotExist"), True),
    case("Gt 7", Requirement("karpenter.k8s.aws/instance-gpu-count", "Gt", ("7",)), True),
    case("Gt 8 is strict", Requirement("karpenter.k8s.aws/instance-gpu-count", "Gt", ("8",)), False),
    case("Lt 8 is strict", Requirement("karpenter.k8s.aws/instance-gpu-count", "Lt", ("8",)), False),
    case("Lt 9", Requirement("karpenter.k8s.aws/instance-gpu-count", "Lt", ("9",)), True),
    case("Gte 8", Requirement("karpenter.k8s.aws/instance-gpu-count", "Gte", ("8",)), True),
    case("Lte 8", Requirement("karpenter.k8s.aws/instance-gpu-count", "Lte", ("8",)), True),
    case("Lte 7", Requirement("karpenter.k8s.aws/instance-gpu-count", "Lte", ("7",)), False),
    case("Gt on a label the type lacks fails", Requirement("karpenter.k8s.aws/instance-gpu-name", "Gt", ("0",)), False),
    case("Gt on a label that is no number fails", Requirement("karpenter.sh/capacity-type", "Gt", ("0",)), False),
]


@pytest.mark.parametrize("requirement, admitted", OPERATORS)
def test_operators(requirement, admitted):
    assert requirement.admits(LABELS_P4D) is admitted


def test_min_values_counts_distinct_values_of_the_key():
    mv = MinValues("karpenter.k8s.aws/instance-family", 2,
                   {n: catalogue()[n].labels().get("karpenter.k8s.aws/instance-family", frozenset())
                    for n in ("p4d.24xlarge", "p4de.24xlarge", "g5.48xlarge")} | {"gpu-8": frozenset()})
    assert (mv.met(["p4d.24xlarge", "p4de.24xlarge"]), mv.met(["p4d.24xlarge", "gpu-8"]), mv.met(["p4d.24xlarge"])) == (
        True, False, False)


# --- a NodePool's instance types ----------------------------------------------------------------------------------

IT, FAMILY, GPUS, GPU_NAME = ("node.kubernetes.io/instance-type", "karpenter.k8s.aws/instance-family",
                              "karpenter.k8s.aws/instance-gpu-count", "karpenter.k8s.aws/instance-gpu-name")
CATEGORY, CPU, MEMORY = ("karpenter.k8s.aws/instance-category", "karpenter.k8s.aws/instance-cpu",
                         "karpenter.k8s.aws/instance-memory")
CHOSEN = [  # requirements: the pool's instance types, in order
    case("no requirement: the default types, as before", [], DEFAULTS),
    case("well-known keys the default types satisfy keep them (no catalogue)",
         [req("karpenter.sh/capacity-type", "In", "on-demand"), req("kubernetes.io/arch", "In", "amd64"),
          req("kubernetes.io/os", "In", "linux")], DEFAULTS),
    case("NotIn on the instance type, among the default types", [req(IT, "NotIn", "gpu-1", "gpu-2")], ("gpu-4", "gpu-8")),
    case("a catalogue name", [req(IT, "In", "p4d.24xlarge")], ("p4d.24xlarge",)),
    case("default and catalogue names, in the order written", [req(IT, "In", "p5.48xlarge", "gpu-8")],
         ("p5.48xlarge", "gpu-8")),
    case("two instance-type requirements intersect", [req(IT, "In", "p4d.24xlarge", "p5.48xlarge"),
                                                       req(IT, "NotIn", "p5.48xlarge")], ("p4d.24xlarge",)),
    case("instance-family", [req(FAMILY, "In", "p4d", "p5")], ("p4d.24xlarge", "p5.48xlarge")),
    case("instance-gpu-name chooses AWS types only", [req(GPU_NAME, "In", "h100")], ("p5.48xlarge",)),
    case("instance-gpu-count Gt with instance-category",
         [req(GPUS, "Gt", "4"), req(CATEGORY, "In", "p")],
         ("p3.16xlarge", "p3dn.24xlarge", "p4d.24xlarge", "p4de.24xlarge", "p5.48xlarge", "p5e.48xlarge")),
    case("instance-gpu-count Gte", [req(GPUS, "Gte", "8"), req(GPU_NAME, "In", "l40s")], ("g6e.48xlarge",)),
    case("instance-gpu-count Lt", [req(GPUS, "Lt", "2"), req(GPU_NAME, "In", "a10g")], ("g5.xlarge", "g5.2xlarge")),
    case("instance-gpu-count Lte", [req(GPUS, "Lte", "4"), req(GPU_NAME, "In", "a10g")],
         ("g5.xlarge", "g5.2xlarge", "g5.12xlarge")),
    case("instance-cpu", [req(CPU, "In", "2"), req(CATEGORY, "In", "c")], ("c4.large", "c5.large")),
    case("instance-memory in MiB", [req(MEMORY, "Gt", "1500000"), req(GPU_NAME, "Exists")],
         ("p5.48xlarge", "p5e.48xlarge", "g6e.48xlarge")),
    case("gpu-name DoesNotExist: CPU types", [req(GPU_NAME, "DoesNotExist"), req(CATEGORY, "In", "m")],
         ("m5.large", "m5.xlarge", "m5.2xlarge", "m5d.xlarge", "m6g.large", "m6g.xlarge")),
    case("kubernetes.io/arch among catalogue types", [req("kubernetes.io/arch", "In", "arm64"), req(CATEGORY, "Exists")],
         ("m6g.large", "m6g.xlarge")),
    case("the default types carry no provider label: DoesNotExist keeps them",
         [req(GPUS, "DoesNotExist"), req(IT, "In", "gpu-8", "c4.large", "p4d.24xlarge")], ("gpu-8", "c4.large")),
    case("zone requirements choose nothing", [req(IT, "In", "g6.xlarge"), req("topology.kubernetes.io/zone", "In", "a")],
         ("g6.xlarge",)),
]


@pytest.mark.parametrize("requirements, expected", CHOSEN)
def test_a_nodepools_instance_types(requirements, expected):
    (pool,) = load(nodepool(*requirements)).karpenter.nodepools
    assert pool.instance_types == expected


def test_catalogue_types_join_the_karpenter_with_their_figures():
    k = load(nodepool(req(IT, "In", "p4d.24xlarge")), nodepool(name="spare")).karpenter
    assert list(k.instance_types) == [*DEFAULTS, "p4d.24xlarge"]
    assert k.instance_types["p4d.24xlarge"] == InstanceType("p4d.24xlarge", 8, 32.7726, 96.0, 1152 * 2**30)
    assert {p.name: p.instance_types for p in k.nodepools} == {"gpu": ("p4d.24xlarge",), "spare": DEFAULTS}


KARPENTER_LISTS = [  # the Karpenter object, the requirements: the pool's types, words of a warning ("" none)
    case("a Karpenter object's list is the universe", karpenter_object(
        {"name": "p4d.24xlarge", "capacity": {"nvidia.com/gpu": "8"}, "pricePerHour": 20.0},
        {"name": "mine", "capacity": {"nvidia.com/gpu": "2"}}), [req(IT, "NotIn", "mine")], ("p4d.24xlarge",), ""),
    case("... whose types carry only their name: other keys are not modelled", karpenter_object(
        {"name": "mine", "capacity": {"nvidia.com/gpu": "2"}}), [req(GPUS, "Gt", "4")], ("mine",),
         "requirements[0] (karpenter.k8s.aws/instance-gpu-count Gt) is not modelled"),
    case("a Karpenter object without instanceTypes: the defaults and the catalogue", karpenter_object(),
         [req(IT, "In", "g6.xlarge")], ("g6.xlarge",), ""),
]


@pytest.mark.parametrize("settings, requirements, expected, note", KARPENTER_LISTS)
def test_a_karpenter_objects_list(settings, requirements, expected, note):
    sc = load(settings, nodepool(*requirements))
    (pool,) = sc.karpenter.nodepools
    assert pool.instance_types == expected
    assert any(note in w for w in sc.warnings) if note else not any("is not modelled" in w for w in sc.warnings)
    if settings["spec"].get("instanceTypes"):
        assert sorted(sc.karpenter.instance_types) == sorted(t["name"] for t in settings["spec"]["instanceTypes"])


WARNINGS = [  # requirements: words one warning has (None: no warning of the key)
    case("a zone requirement that filters is accepted, not modelled",
         [req(IT, "In", "g6.xlarge"), req("topology.kubernetes.io/zone", "In", "us-east-1a")],
         "topology.kubernetes.io/zone", "is accepted, not modelled: gangkit has no zones"),
    case("zone Exists filters nothing: no warning", [req(IT, "In", "g6.xlarge"), req("topology.kubernetes.io/zone", "Exists")],
         "topology.kubernetes.io/zone", None),
    case("spot is modelled as on demand", [req(IT, "In", "g6.xlarge"), req("karpenter.sh/capacity-type", "In", "spot")],
         "karpenter.sh/capacity-type", "spot capacity is modelled as on demand"),
    case("on demand only: no spot warning", [req("karpenter.sh/capacity-type", "In", "on-demand")],
         "karpenter.sh/capacity-type", None),
    case("a provider key the catalogue has not", [req(IT, "In", "g6.xlarge"),
                                                  req("karpenter.k8s.aws/instance-hypervisor", "In", "nitro")],
         "instance-hypervisor", "is not modelled"),
    case("... its minValues is not checked", [req(IT, "In", "g6.xlarge"),
                                              req("karpenter.k8s.aws/instance-hypervisor", "In", "nitro", min_values=1)],
         "instance-hypervisor", "its minValues is not checked"),
]


@pytest.mark.parametrize("requirements, key, words", WARNINGS)
def test_requirement_warnings(requirements, key, words):
    found = [w for w in load(nodepool(*requirements)).warnings if key in w]
    assert (found == []) if words is None else (len(found) == 1 and words in found[0]), found


# --- bad NodePools: one line each, naming the NodePool and the field -----------------------------------------------

P5 = {"name": "p4d.24xlarge", "capacity": {"nvidia.com/gpu": "8"}, "pricePerHour": 32.77}
ERRORS = [  # docs: field, words (all in the one message)
    case("an unknown name: where gangkit looked, a near name, the fix",
         [nodepool(req(IT, "In", "p3.8xlrage"))], f"{REQ}[0].values",
         ["instance type 'p3.8xlrage' is not in gangkit's instance-type catalogue nor among its default types",
          "(did you mean p3.8xlarge?)", "gangkit/v1alpha1 Karpenter object",
          "spec.instanceTypes: [{name: p3.8xlrage, capacity: {nvidia.com/gpu: \"<GPUs>\"", "pricePerHour: <USD>}]"]),
    case("an unknown name beside a Karpenter object's list",
         [karpenter_object(P5), nodepool(req(IT, "In", "h100-box"))], f"{REQ}[0].values",
         ["'h100-box' is not among the Karpenter instance types (p4d.24xlarge) of Karpenter karpenter nor in gangkit's "
          "instance-type catalogue", "describe it in that object's spec.instanceTypes: {name: h100-box"]),
    case("a catalogue name a Karpenter object's list lacks: the entry to add",
         [karpenter_object(P5), nodepool(req(IT, "In", "p5.48xlarge"))], f"{REQ}[0].values",
         ["not among the Karpenter instance types", "add {name: p5.48xlarge, capacity: {nvidia.com/gpu: \"8\", "
          "cpu: \"192\", memory: 2Ti}, pricePerHour: 98.32} (the catalogue's figures)"]),
    case("an operator the CRD does not have", [nodepool(req(IT, "Is", "gpu-8"))], f"{REQ}[0].operator",
         ["expected one of In, NotIn, Exists, DoesNotExist, Gt, Lt, Gte, Lte, got 'Is'"]),
    case("In without values", [nodepool(req(IT, "In"))], f"{REQ}[0].values",
         ["requirements with operator 'In' must have a value defined"]),
    case("Gt with a word", [nodepool(req(GPUS, "Gt", "many"))], f"{REQ}[0].values",
         ["must have a single positive integer value"]),
    case("Lt with two values", [nodepool(req(GPUS, "Lt", "1", "2"))], f"{REQ}[0].values",
         ["must have a single positive integer value"]),
    case("minValues above the values given", [nodepool(req(FAMILY, "In", "p4d", "p5", min_values=3))],
         f"{REQ}[0].minValues", ["must have at least that many values specified in the 'values' field; got 3 for 2"]),
    case("minValues the allowed types cannot span",
         [nodepool(req(GPU_NAME, "In", "a100", "h100", min_values=2), req(FAMILY, "In", "p4d"))], REQ,
         ["minValues 2 of karpenter.k8s.aws/instance-gpu-name", "p4d.24xlarge", "would launch no node"]),
    case("the restricted key karpenter.sh/nodepool", [nodepool(req("karpenter.sh/nodepool", "In", "a"))],
         f"{REQ}[0].key", ['label "karpenter.sh/nodepool" is restricted']),
    case("the restricted domain karpenter.sh", [nodepool(req("karpenter.sh/team", "In", "a"))], f"{REQ}[0].key",
         ['label domain "karpenter.sh" is restricted']),
    case("the restricted key kubernetes.io/hostname", [nodepool(req("kubernetes.io/hostname", "In", "a"))],
         f"{REQ}[0].key", ['label "kubernetes.io/hostname" is restricted']),
    case("reserved capacity only", [nodepool(req(IT, "In", "p4d.24xlarge"), req("karpenter.sh/capacity-type", "In", "reserved"))],
         f"{REQ}[1]", ["no instance type satisfies karpenter.sh/capacity-type In [reserved]",
                       "reserved capacity needs a capacity reservation"]),
    case("requirements that exclude each other", [nodepool(req(IT, "In", "p4d.24xlarge"), req(GPUS, "Lt", "8"))],
         f"{REQ}[1]", ["no instance type satisfies karpenter.k8s.aws/instance-gpu-count Lt [8]", "p4d.24xlarge"]),
    case("an architecture the default types are not", [nodepool(req("kubernetes.io/arch", "In", "arm64"))], f"{REQ}[0]",
         ["no instance type satisfies kubernetes.io/arch In [arm64]", "gpu-1, gpu-2, gpu-4, gpu-8"]),
    case("a consolidation policy the CRD does not have", [nodepool(disruption={"consolidationPolicy": "WhenIdle"})],
         "spec.disruption.consolidationPolicy", ["expected one of WhenEmpty, WhenEmptyOrUnderutilized, Balanced"]),
    case("a static pool with a GPU limit", [nodepool(replicas=2, limits={"nvidia.com/gpu": "16"})], "spec.limits",
         ["only 'limits.nodes' is supported on static NodePools"]),
    case("a static pool with a weight", [nodepool(replicas=2, weight=10)], "spec.weight",
         ["'weight' is not supported on static NodePools"]),
    case("negative replicas", [nodepool(replicas=-1)], "spec.replicas", ["expected a whole number >= 0"]),
    case("more replicas than a cluster has nodes", [nodepool(replicas=6000)], "spec.replicas",
         ["expected a whole number <= 5000"]),
    case("a fractional node limit", [nodepool(replicas=2, limits={"nodes": "1.5"})], "spec.limits.nodes",
         ["expected a whole number of nodes"]),
]


@pytest.mark.parametrize("docs, field, words", ERRORS)
def test_bad_nodepools(docs, field, words):
    problems = [p for p in problems_of(*docs) if p.obj == "NodePool gpu"]
    assert [p.field for p in problems] == [field], problems
    assert "\n" not in problems[0].message
    assert [w for w in words if w not in problems[0].message] == [], problems[0].message


@pytest.mark.parametrize("policy", ["WhenEmpty", "WhenEmptyOrUnderutilized", "Balanced"])
def test_every_consolidation_policy_of_the_crd_is_read(policy):
    (pool,) = load(nodepool(disruption={"consolidationPolicy": policy, "consolidateAfter": "30s"})).karpenter.nodepools
    assert (pool.consolidation_policy, pool.consolidate_after) == (policy, 30.0)


# --- the upstream files that were refused ---------------------------------------------------------------------------

UPSTREAM = shared_path("upstream_manifests")
UPSTREAM_POOLS = [  # file: {pool: (instance types, policy)}, or the fields of the errors the CRD's rules give
    case("p3.8xlarge and p3.16xlarge", "karpenter-provider-aws/docs-nodepools.b5.yaml",
         {"gpu": (("p3.8xlarge", "p3.16xlarge"), "WhenEmptyOrUnderutilized")}),
    case("c4.large, and a pool of spot or on-demand amd64", "karpenter-provider-aws/docs-scheduling.b12.yaml",
         {"reserved-instance": (("c4.large",), "WhenEmptyOrUnderutilized"), "default": (DEFAULTS, "WhenEmptyOrUnderutilized")}),
    case("instance-family p3", "karpenter-provider-aws/docs-scheduling.b7.yaml",
         {"gpu": (("p3.2xlarge", "p3.8xlarge", "p3.16xlarge"), "WhenEmptyOrUnderutilized")}),
    case("Balanced consolidation", "karpenter/design-balanced-consolidation.b0.yaml", {"default": (DEFAULTS, "Balanced")}),
    case("the reference NodePool: only its placeholders and static-pool fields the CRD refuses",
         "karpenter-provider-aws/docs-nodepools.b0.yaml",
         ["spec.limits", "spec.weight", "spec.disruption.consolidationPolicy", "spec.disruption.consolidateAfter"]),
]


@pytest.mark.skipif(not UPSTREAM.is_dir(), reason=f"the upstream manifests {UPSTREAM} are absent (they sit beside the repository)")
@pytest.mark.parametrize("path, expected", UPSTREAM_POOLS)
def test_upstream_nodepools(path, expected):
    docs = [d for d in yaml.safe_load_all((UPSTREAM / path).read_text()) if d]
    if isinstance(expected, list):
        assert [p.field for p in problems_of(*docs) if p.obj.startswith("NodePool")] == expected
        return
    pools = {p.name: (p.instance_types, p.consolidation_policy) for p in load(*docs).karpenter.nodepools}
    assert pools == expected


# --- running them ---------------------------------------------------------------------------------------------------

def sized(name, gpus, cores, gib, run_time=600):
    """A one-pod job that asks for GPUs, cores and GiB of memory."""
    return gang(name, 1, gpus, cpu=float(cores), memory=gib * GIB, run_time=run_time)


def run(*docs, jobs, stack="gang+karpenter", horizon=20000):
    """The jobs on the nodes and NodePools these manifests make (after the system node); the result and the scenario."""
    loaded = load(*docs)
    sc = scenario(loaded.nodes, jobs, karpenter=loaded.karpenter, stack=stack, horizon=horizon)
    return gk.simulate(sc), sc


def test_a_p4d_nodepool_provisions_8_gpu_nodes_for_a_gang():
    result, sc = run(nodepool(req(IT, "In", "p4d.24xlarge", "p5.48xlarge")),
                     jobs=[job("train", pods=4, gpus=8, run_time=3600, min_member=4)])
    created = result.metrics["karpenter_nodeclaims_created_total"]
    assert created.instance_type.tolist() == ["p4d.24xlarge"] * 4  # the cheaper of the two
    nodes = result.nodes[result.nodes.pool == "gpu"]
    assert nodes.gpus.tolist() == [8] * 4 and nodes.cpu.tolist() == [96.0] * 4
    assert result.jobs.state.tolist() == ["Finished"]
    # gangkit reports no cost; the catalogue's price is what Karpenter compares
    assert sc.karpenter.instance_types["p4d.24xlarge"].price_per_hour == catalogue()["p4d.24xlarge"].price_per_hour


CHEAPEST = [  # allowed types, the pod's (GPUs, cores, memory): the type launched
    case("8 GPUs: g5.48xlarge costs less than p4d", ["g5.48xlarge", "p4d.24xlarge"], (8, 8, 64), "g5.48xlarge"),
    case("8 GPUs and 1500Gi: only p5 holds it", ["g5.48xlarge", "p4d.24xlarge", "p5.48xlarge"], (8, 8, 1500),
         "p5.48xlarge"),
    case("100 cores: p4d has 96, g5.48xlarge has 192", ["p4d.24xlarge", "g5.48xlarge"], (1, 100, 8), "g5.48xlarge"),
    case("1 GPU: the cheapest 1-GPU type", ["g5.xlarge", "g6.xlarge", "g6e.xlarge", "p3.2xlarge"], (1, 2, 8),
         "g6.xlarge"),
]


@pytest.mark.parametrize("types, pod, expected", CHEAPEST)
def test_the_cheapest_catalogue_type_that_holds_the_pod(types, pod, expected):
    result, _ = run(nodepool(req(IT, "In", *types)), jobs=[sized("a", *pod)], stack="pod+karpenter")
    assert result.metrics["karpenter_nodeclaims_created_total"].instance_type.tolist() == [expected]


MIN_VALUES = [  # the pod's memory: the types launched (minValues 2 of instance-family over p4d and p5)
    case("p4d and p5 both hold 64Gi: minValues 2 is met, the cheaper is launched", 64, ["p4d.24xlarge"]),
    case("only p5 holds 1500Gi: minValues 2 is not met, Strict launches nothing", 1500, []),
]


@pytest.mark.parametrize("memory, launched", MIN_VALUES)
def test_min_values_per_nodeclaim(memory, launched):
    result, _ = run(nodepool(req(FAMILY, "In", "p4d", "p5", min_values=2)), jobs=[sized("a", 8, 8, memory)],
                    stack="pod+karpenter", horizon=3000)
    assert result.metrics["karpenter_nodeclaims_created_total"].instance_type.tolist() == launched


STATIC = [  # replicas, limits.nodes, the pool's type requirement: nodes launched at t=0 (all of one type)
    case("two replicas", 2, None, [req(GPU_NAME, "In", "a10g")], 2, "g5.xlarge"),
    case("limits.nodes caps the replicas", 3, 2, [req(IT, "In", "p4d.24xlarge")], 2, "p4d.24xlarge"),
    case("zero replicas", 0, None, [], 0, None),
]


@pytest.mark.parametrize("replicas, node_limit, requirements, launched, itype", STATIC)
def test_static_nodepool_nodes_exist_from_t0_and_stay(replicas, node_limit, requirements, launched, itype):
    spec = {"replicas": replicas, "disruption": {"consolidationPolicy": "WhenEmpty", "consolidateAfter": "0s"}}
    if node_limit is not None:
        spec["limits"] = {"nodes": str(node_limit)}
    result, _ = run(nodepool(*requirements, name="warm", **spec), jobs=[job("a", gpus=1, run_time=600)],
                    stack="pod+karpenter")
    events = result.events
    launched_rows = events[(events.event == "node_launched") & events.node.str.startswith("warm-")]
    assert launched_rows.time_s.tolist() == [0.0] * launched
    created = result.metrics["karpenter_nodeclaims_created_total"]
    assert created.instance_type.tolist() == [itype] * launched
    assert events[events.event == "node_removed"].empty  # never consolidated, though WhenEmpty after 0 s
    if launched:
        assert result.jobs.start_s.tolist() == [150.0]  # on a static node, once it is ready (60 s + 90 s)
    else:
        assert result.jobs.state.tolist() != ["Finished"]  # a static pool launches nothing for pending pods


def test_a_static_pool_launches_nothing_for_pending_pods_and_a_dynamic_pool_takes_the_rest():
    static = nodepool(req(IT, "In", "g6.xlarge"), name="warm", replicas=1)
    result, sc = run(static, jobs=[job("a", pods=2, gpus=1, run_time=600)], stack="pod+karpenter")
    assert result.metrics["karpenter_nodeclaims_created_total"].nodeclaim.tolist() == ["warm-0"]
    assert "NodePool warm is static (spec.replicas 1)" in sc.karpenter.launch_blocked([_Pod(1)])
    result, _ = run(static, nodepool(req(IT, "In", "g6.xlarge"), name="burst"),
                    jobs=[job("a", pods=2, gpus=1, run_time=600)], stack="pod+karpenter")
    created = result.metrics["karpenter_nodeclaims_created_total"]
    assert created.nodeclaim.tolist() == ["warm-0", "burst-0"]  # one pod waits on the starting static node


class _Pod:  # what launch_blocked reads of a pending pod
    def __init__(self, gpus):
        self.pod_set = type("PodSet", (), {"gpus": gpus})()


def test_static_pools_count_in_the_default_kueue_quota():
    k = Karpenter([NodePool("warm", ["g8"], replicas=2), NodePool("burst", ["g8"], {"nvidia.com/gpu": 16})],
                  [InstanceType("g8", 8, 8.0)])
    assert k.provisionable_gpus(gk.Scenario([Node("s", 0)], [job("a", gpus=1)])) == 16 + 16


# --- Balanced consolidation -------------------------------------------------------------------------------------

G = [InstanceType("g1", 1, 1.0), InstanceType("g4", 4, 3.5), InstanceType("g8", 8, 8.0)]
BALANCED = [  # policy, types the pool allows, the small job's priority: is the small job's node deleted
    case("WhenEmptyOrUnderutilized deletes a node whose pod fits elsewhere", "WhenEmptyOrUnderutilized",
         ["g1", "g4", "g8"], 0, True),
    case("Balanced keeps it: 1/9 of the pool's price for 2/4 of its disruption scores 0.22", "Balanced",
         ["g1", "g4", "g8"], 0, False),
    case("Balanced deletes a dearer node: 3.5/11.5 for 2/4 scores 0.61", "Balanced", ["g4", "g8"], 0, True),
    case("... not when its pod's priority makes the disruption dear (11 of 13): 0.36", "Balanced",
         ["g4", "g8"], 10**9, False),
]


@pytest.mark.parametrize("policy, types, priority, deleted", BALANCED)
def test_balanced_consolidation_scores_the_move(policy, types, priority, deleted):
    """A fixed 4-GPU node is busy until t=1000; Karpenter launches an 8-GPU node for ``big``, and later a small one
    for ``small``. When the fixed node frees up, ``small``'s pod fits there (``big``'s does not): a candidate."""
    k = Karpenter([NodePool("gpu", types, {}, policy, 0.0)], G)
    jobs = [job("fixed", gpus=4, run_time=1000), job("big", gpus=8, run_time=40000),  # outlasts the run
            job("small", gpus=1, run_time=20000, priority=priority, submit_time=200)]
    result = simulate_on([Node("fixed-0", 4)], jobs, stack=supplied("pod", k, name="pod+karpenter"), horizon=30000)
    created = result.metrics["karpenter_nodeclaims_created_total"]
    assert len(created) == 2
    disrupted = result.metrics["karpenter_nodeclaims_disrupted_total"]
    under = disrupted[disrupted.reason == "underutilized"]
    assert len(under) == (1 if deleted else 0), disrupted
    if deleted:
        assert under.nodeclaim.tolist() == [created[created.instance_type != "g8"].nodeclaim.iloc[0]]


# --- writing them back ------------------------------------------------------------------------------------------

ROUND_TRIP = [
    nodepool(req(IT, "In", "p4d.24xlarge", "p5.48xlarge", min_values=2), name="a100",
             limits={"nvidia.com/gpu": "32"}, disruption={"consolidationPolicy": "Balanced", "consolidateAfter": "5m"}),
    nodepool(req(GPU_NAME, "In", "a10g"), req(GPUS, "Lt", "2"), name="warm", replicas=2, limits={"nodes": "3"}),
]


def pools(k):
    return [(p.name, p.instance_types, p.limits, p.consolidation_policy, p.consolidate_after, p.replicas,
             [(m.key, m.count) for m in p.min_values]) for p in sorted(k.nodepools, key=lambda p: p.name)]


def test_nodepools_of_catalogue_types_are_written_and_read_back():
    sc = load(*ROUND_TRIP).with_settings(stack="gang+karpenter")
    back = load_manifests(dump_manifests(sc))
    assert pools(back.karpenter) == pools(sc.karpenter)
    assert back.karpenter.instance_types == sc.karpenter.instance_types


def test_a_min_values_on_another_key_is_refused_by_name():
    sc = load(nodepool(req(FAMILY, "In", "p4d", "p5", min_values=2))).with_settings(stack="gang+karpenter")
    assert [(p.obj, p.field) for p in dump_problems(sc)] == [("NodePool gpu", "min_values")]


@requires_schemas
def test_written_nodepools_of_catalogue_types_are_valid():
    sc = load(*ROUND_TRIP).with_settings(stack="gang+karpenter")
    docs = [d for d in yaml.safe_load_all(dump_manifests(sc)) if d.get("kind") == "NodePool"]
    assert len(docs) == 2 and all(validate_manifest(d) for d in docs)
    for d in docs:  # the CEL rules jsonschema does not check
        spec = d["spec"]
        if "replicas" in spec:
            assert set(spec.get("limits", {})) <= {"nodes"} and "weight" not in spec
        for r in spec["template"]["spec"]["requirements"]:
            assert r["operator"] != "In" or len(r["values"]) >= r.get("minValues", 1)
