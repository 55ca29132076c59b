"""Validate manifests against the real Kubernetes, Volcano, Kueue... schemas in ../shared/schemas.

``validate_manifest(doc)`` picks the schema from ``apiVersion`` and ``kind``:

- built-in kinds (Node, Pod, batch/v1 Job, PriorityClass): the Kubernetes
  1.32.2 "standalone-strict" JSON schemas (unknown fields rejected);
- the Kubernetes 1.35 ``scheduling.k8s.io/v1alpha1`` Workload, and a Job
  whose pod template has ``spec.workloadRef`` (a 1.35 field): the official
  1.35 OpenAPI, made strict;
- Kubernetes 1.36 (``scheduling.k8s.io/v1alpha2``): no schema is in the
  shared folder, so its PodGroup and Workload are skipped (checked against the
  1.36 API reference's field lists in ``test_kube_gang_manifests_136.py``),
  and a Job whose pod template has ``spec.schedulingGroup`` is checked,
  without that field, against the 1.35 OpenAPI;
- custom resources (Volcano PodGroup, Kueue ClusterQueue, Karpenter NodePool...):
  the ``openAPIV3Schema`` of the served version in the CRD file, made strict
  (unknown fields rejected, as ``kubectl apply`` does by default) and with Go's
  ``^(?i)`` patterns rewritten for Python (see shared/schemas/README.md);
- the apps/v1 controllers (Deployment, StatefulSet, ReplicaSet): no schema of
  theirs is in the shared folder, so their pod template is checked as a v1 Pod
  (set A; a 1.36 ``schedulingGroup`` left out, as for a Job) and their ``spec``'s
  field names against the Kubernetes API reference's lists (:data:`APPS_SPEC_FIELDS`);
- gangkit's own kinds (``gangkit/...``) have no schema and are skipped;
- ``kind: List`` validates each item.

It raises ``AssertionError`` carrying the jsonschema messages. Tests that
need the schemas mark themselves with ``requires_schemas``.
"""

from __future__ import annotations

import json
import re
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
import yaml

try:
    from conftest import shared_path
except ImportError:  # tests/ imported as a package
    from tests.conftest import shared_path

if TYPE_CHECKING:  # imported where a validator is built: jsonschema's import takes seconds
    from jsonschema import Draft7Validator

SCHEMAS = shared_path("schemas")
requires_schemas = pytest.mark.skipif(
    not SCHEMAS.is_dir(), reason=f"the shared schema folder {SCHEMAS} is absent (it sits beside the repository)"
)

BUILTIN = {  # (apiVersion, kind) -> file in kubernetes/v1.32.2-standalone-strict
    ("v1", "Node"): "node-v1.json",
    ("v1", "Pod"): "pod-v1.json",
    ("batch/v1", "Job"): "job-batch-v1.json",
    ("scheduling.k8s.io/v1", "PriorityClass"): "priorityclass-scheduling-v1.json",
}
NO_SCHEMA_GROUPS = ("gangkit",)  # gangkit's own kinds: nothing to validate against
NO_SCHEMA_VERSIONS = ("scheduling.k8s.io/v1alpha2",)  # Kubernetes 1.36's gang API: no OpenAPI in the shared folder
OPENAPI_135 = {  # (apiVersion, kind) -> (file in kubernetes/openapi-v3-1.35, schema name): kinds newer than set A
    ("scheduling.k8s.io/v1alpha1", "Workload"): ("apis__scheduling.k8s.io__v1alpha1_openapi.json",
                                                 "io.k8s.api.scheduling.v1alpha1.Workload"),
    ("batch/v1", "Job"): ("apis__batch__v1_openapi.json", "io.k8s.api.batch.v1.Job"),  # only for 1.35 fields
    ("v1", "ConfigMap"): ("api__v1_openapi.json", "io.k8s.api.core.v1.ConfigMap"),  # Volcano's scheduler configuration
    ("v1", "PodTemplate"): ("api__v1_openapi.json", "io.k8s.api.core.v1.PodTemplate"),  # a ProvisioningRequest's pods
    ("batch/v1", "CronJob"): ("apis__batch__v1_openapi.json", "io.k8s.api.batch.v1.CronJob"),
}


#: the spec fields of the apps/v1 controllers, from the Kubernetes API reference (DeploymentSpec,
#: StatefulSetSpec, ReplicaSetSpec; unchanged from 1.32 to 1.35): no schema of theirs is in the shared folder
APPS_SPEC_FIELDS = {
    "Deployment": {"minReadySeconds", "paused", "progressDeadlineSeconds", "replicas", "revisionHistoryLimit",
                   "selector", "strategy", "template"},
    "StatefulSet": {"minReadySeconds", "ordinals", "persistentVolumeClaimRetentionPolicy", "podManagementPolicy",
                    "replicas", "revisionHistoryLimit", "selector", "serviceName", "template", "updateStrategy",
                    "volumeClaimTemplates"},
    "ReplicaSet": {"minReadySeconds", "replicas", "selector", "template"},
}


def _validate_apps(doc: dict, kind: str) -> str:
    """An apps/v1 controller: its spec's field names against the API reference, its pod template as a v1 Pod."""
    spec = doc.get("spec") or {}
    extra = sorted(set(spec) - APPS_SPEC_FIELDS[kind])
    if extra or set(doc) - {"apiVersion", "kind", "metadata", "spec", "status"} or "template" not in spec:
        raise AssertionError(f"{kind} {_name(doc)}: fields not in the API reference's {kind}Spec: {extra} "
                             f"(or no spec.template)")
    template = spec["template"]
    pod = {k: v for k, v in (template.get("spec") or {}).items() if k != "schedulingGroup"}
    validate_manifest({"apiVersion": "v1", "kind": "Pod", "metadata": template.get("metadata") or {}, "spec": pod})
    return f"the API reference's {kind}Spec fields, its pod template as pod-v1.json"


def validate_manifest(doc: dict) -> str | None:
    """Check one manifest against its real schema; return the schema's name, or None when skipped.

    Raises AssertionError listing every schema violation (path -> message),
    or when no schema is known for the apiVersion and kind.
    """
    api, kind = doc.get("apiVersion", ""), doc.get("kind", "")
    group, _, version = str(api).rpartition("/")
    if group in NO_SCHEMA_GROUPS or api in NO_SCHEMA_VERSIONS:
        return None
    if (api, kind) == ("v1", "List"):
        for item in doc.get("items") or []:
            validate_manifest(item)
        return "List"
    if api == "apps/v1" and kind in APPS_SPEC_FIELDS:
        return _validate_apps(doc, kind)
    pod = ((doc.get("spec") or {}).get("template") or {}).get("spec") or {}
    if (api, kind) == ("batch/v1", "Job") and "schedulingGroup" in pod:  # 1.36: the rest of the Job, against 1.35
        doc = {**doc, "spec": {**doc["spec"], "template": {**doc["spec"]["template"],
                                                           "spec": {k: v for k, v in pod.items() if k != "schedulingGroup"}}}}
        name, validator = _openapi_135_validator(*OPENAPI_135[(api, kind)])
    elif (api, kind) in OPENAPI_135 and ((api, kind) not in BUILTIN or "workloadRef" in pod):
        name, validator = _openapi_135_validator(*OPENAPI_135[(api, kind)])
    elif (api, kind) in BUILTIN:
        name = BUILTIN[(api, kind)]
        validator = _builtin_validator(name)
    else:
        name, validator = _crd_validator(group, version, kind)
    errors = sorted(validator.iter_errors(doc), key=lambda e: [str(p) for p in e.absolute_path])
    if errors:
        lines = [f"{'/'.join(map(str, e.absolute_path)) or '<root>'} -> {e.message}" for e in errors]
        raise AssertionError(f"{kind} {_name(doc)} does not validate against {name}:\n" + "\n".join(lines))
    return name


def _name(doc: dict) -> str:
    meta = doc.get("metadata") or {}
    return f"{meta['namespace']}/{meta.get('name')}" if meta.get("namespace") else str(meta.get("name"))


def _validator(schema: dict) -> Draft7Validator:
    """A Draft 7 validator. jsonschema is imported here, not at the top: its format checkers take
    seconds to import, which every test process importing this module (for the skip marker) would pay."""
    from jsonschema import Draft7Validator

    return Draft7Validator(schema)


@lru_cache(maxsize=None)
def _builtin_validator(filename: str) -> Draft7Validator:
    # Set A's $schema is "http://json-schema.org/schema#": build Draft 7 directly.
    schema = json.loads((SCHEMAS / "kubernetes" / "v1.32.2-standalone-strict" / filename).read_text())
    return _validator(schema)


@lru_cache(maxsize=None)
def _openapi_135_validator(filename: str, name: str) -> tuple[str, Draft7Validator]:
    """Set B (official 1.35 OpenAPI, ``$ref``s inside the file), made strict like the CRDs."""
    components = json.loads((SCHEMAS / "kubernetes" / "openapi-v3-1.35" / filename).read_text())["components"]["schemas"]
    schema = {"allOf": [{"$ref": f"#/components/schemas/{name}"}], "components": {"schemas": strict(components)}}
    return f"kubernetes/openapi-v3-1.35/{filename} ({name})", _validator(schema)


@lru_cache(maxsize=None)
def _crd_files() -> dict[tuple[str, str], Path]:
    """(group, kind) -> CRD file, for every CRD under the schema folder."""
    out = {}
    for path in sorted(SCHEMAS.glob("*/*.yaml")):
        # controller-gen writes "spec: group: ... names: kind: ..." near the top: read only that
        # part rather than parse every file (the Kueue Workload CRD alone is 1.4 MB).
        with open(path) as f:
            head = f.read(4096)
        group = re.search(r"^  group: (\S+)$", head, re.M)
        kind = re.search(r"^    kind: (\S+)$", head, re.M)
        if "kind: CustomResourceDefinition" in head and group and kind:
            out[(group[1], kind[1])] = path
    return out


@lru_cache(maxsize=None)
def _crd_validator(group: str, version: str, kind: str) -> tuple[str, Draft7Validator]:
    path = _crd_files().get((group, kind))
    if path is None:
        raise AssertionError(f"no schema for apiVersion {group}/{version} kind {kind} under {SCHEMAS}")
    crd = _load_yaml(path)
    served = [v for v in crd["spec"]["versions"] if v["name"] == version and v.get("served")]
    if not served:
        names = [v["name"] for v in crd["spec"]["versions"] if v.get("served")]
        raise AssertionError(f"{path.name} serves {kind} as {names}, not {version}")
    schema = strict(python_patterns(served[0]["schema"]["openAPIV3Schema"]))
    return f"{path.parent.name}/{path.name} ({version})", _validator(schema)


def _load_yaml(path: Path):
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    with open(path) as f:
        return yaml.load(f, Loader=loader)


def strict(node):
    """Reject unknown fields, as kubectl/apiserver strict field validation does (shared/schemas/README.md)."""
    if isinstance(node, list):
        return [strict(x) for x in node]
    if not isinstance(node, dict):
        return node
    out = {k: strict(v) for k, v in node.items()}
    if "properties" in out and "additionalProperties" not in out and not out.get("x-kubernetes-preserve-unknown-fields"):
        out["additionalProperties"] = False
    return out


def python_patterns(node):
    """Go RE2 allows '^(?i)...'; Python's re needs the inline flag first."""
    if isinstance(node, list):
        return [python_patterns(x) for x in node]
    if not isinstance(node, dict):
        return node
    out = {k: python_patterns(v) for k, v in node.items()}
    if isinstance(out.get("pattern"), str) and out["pattern"].startswith("^(?i)"):
        out["pattern"] = "(?i)^" + out["pattern"][5:]
    return out


def validate_yaml(text: str) -> int:
    """Validate every document of a YAML stream; return how many had a schema."""
    checked = 0
    for doc in yaml.safe_load_all(text):
        if doc is not None and validate_manifest(doc) is not None:
            checked += 1
    return checked


def schema_for(api_version: str, kind: str) -> dict:
    """The JSON schema that :func:`validate_manifest` uses for this apiVersion and kind."""
    if (api_version, kind) in BUILTIN:
        return _builtin_validator(BUILTIN[(api_version, kind)]).schema
    group, _, version = api_version.rpartition("/")
    return _crd_validator(group, version, kind)[1].schema


def fields_missing_from(known, schema: dict, path: str, *, deref=None, metadata_is_open: bool = False) -> list[str]:
    """The fields of ``known`` (a reader's tree of known fields: dict, ``[item]`` or True) that ``schema`` lacks.

    A schema without ``properties`` is a map or an open object: any key is valid there (its
    ``additionalProperties``, if a schema, checks what is below). ``deref`` resolves ``$ref`` in an
    OpenAPI document. ``metadata_is_open``: ObjectMeta is not spelled out in a CRD (it is the API
    server's own), so keys under ``metadata`` are not checked.
    """
    missing: list[str] = []

    def walk(known, schema, path):
        schema = deref(schema) if deref else schema
        if known is True:
            return
        if isinstance(known, list):
            walk(known[0], schema.get("items", {}), path + "[]")
            return
        props = schema.get("properties")
        for key, sub in known.items():
            if props is None:
                extra = schema.get("additionalProperties")
                walk(sub, extra if isinstance(extra, dict) else {}, f"{path}.{key}")
            elif key in props:
                walk(sub, props[key], f"{path}.{key}")
            elif not (metadata_is_open and path.endswith(".metadata")):
                missing.append(f"{path}.{key}")

    walk(known, schema, path)
    return missing
