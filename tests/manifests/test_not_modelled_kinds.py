"""Kinds gangkit accepts without modelling them, or refuses saying so.

Dynamic Resource Allocation (``resource.k8s.io/v1``): accepted, and a warning says its devices are not counted.

gangkit counts GPUs as the extended resource ``nvidia.com/gpu``. A pod that gets its GPUs through a
ResourceClaimTemplate is read, its ``resourceClaims`` named among the fields gangkit does not read,
and the DRA objects are accepted with a warning that says what is not modelled. The shared schema folder
has no ``resource.k8s.io`` schema: the manifests below are checked against the field lists of the
Kubernetes 1.34 API reference (``ResourceClaimTemplateSpec.spec`` is a ``ResourceClaimSpec``:
``devices.requests[].{name, exactly.{deviceClassName, allocationMode, count, selectors}}``).
"""

from __future__ import annotations

import warnings

import pytest

from gangkit.manifests.load import load_manifests

from conftest import case

NODE = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"},
        "status": {"capacity": {"nvidia.com/gpu": "8"}, "allocatable": {"nvidia.com/gpu": "8"}}}
TEMPLATE = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
            "metadata": {"name": "two-gpus", "namespace": "default"},
            "spec": {"spec": {"devices": {"requests": [
                {"name": "gpu", "exactly": {"deviceClassName": "gpu.nvidia.com", "count": 2}}]}}}}
CLAIM = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": "shared", "namespace": "default"},
         "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.nvidia.com"}}]}}}
CLASS = {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "gpu.nvidia.com"},
         "spec": {"selectors": [{"cel": {"expression": "device.driver == 'gpu.nvidia.com'"}}]}}
JOB = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "dra-train"},
       "spec": {"parallelism": 2, "template": {"spec": {
           "restartPolicy": "Never", "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "two-gpus"}],
           "containers": [{"name": "c", "image": "trainer", "resources": {"claims": [{"name": "gpu"}]}}]}}}}

#: The Kubernetes 1.34 API reference's fields of the objects above, as the tests write them.
API_FIELDS = {
    "ResourceClaimTemplate": {"spec.spec.devices.requests[].name", "spec.spec.devices.requests[].exactly.deviceClassName",
                              "spec.spec.devices.requests[].exactly.count"},
    "ResourceClaim": {"spec.devices.requests[].name", "spec.devices.requests[].exactly.deviceClassName"},
    "DeviceClass": {"spec.selectors[].cel.expression"},
}


def paths(doc, prefix="") -> set[str]:
    if isinstance(doc, dict):
        return {p for k, v in doc.items() for p in paths(v, f"{prefix}.{k}" if prefix else k)}
    if isinstance(doc, list):
        return {p for v in doc for p in paths(v, f"{prefix}[]")}
    return {prefix}


@pytest.mark.parametrize("doc", [TEMPLATE, CLAIM, CLASS], ids=lambda d: d["kind"])
def test_the_dra_objects_use_the_fields_of_the_api_reference(doc):
    written = {p for p in paths(doc) if p.startswith("spec")}
    assert written == API_FIELDS[doc["kind"]]


CASES = [
    case("a ResourceClaimTemplate", [TEMPLATE], "ResourceClaimTemplate default/two-gpus"),
    case("a ResourceClaim", [CLAIM], "ResourceClaim default/shared"),
    case("a DeviceClass", [CLASS], "DeviceClass gpu.nvidia.com"),
]


@pytest.mark.parametrize("objects, label", CASES)
def test_each_dra_object_is_accepted_with_a_warning_that_its_devices_are_not_counted(objects, label):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        load_manifests([NODE, *objects, {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "plain"},
                                         "spec": {"template": {"spec": {"restartPolicy": "Never", "containers": [
                                             {"name": "c", "image": "x"}]}}}}])
    said = [str(w.message) for w in caught]
    assert any(label.split(" default/")[-1].split(" ")[-1] in m and "Dynamic Resource Allocation" in m
               and "not counted" in m for m in said), said


def test_a_pods_claims_are_named_as_fields_gangkit_does_not_read_and_it_requests_no_gpu():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        scenario = load_manifests([NODE, TEMPLATE, JOB])
    said = "\n".join(str(w.message) for w in caught)
    assert "Job dra-train: spec.template.spec.resourceClaims" in said
    assert "Job dra-train: spec.template.spec.containers[0].resources.claims" in said
    [job] = scenario.jobs
    assert [ps.gpus for ps in job.pod_sets] == [0]


@pytest.mark.parametrize("kind", ["JobFlow", "JobTemplate"])
def test_volcanos_workflow_kinds_are_refused_saying_what_is_not_modelled(kind):
    from gangkit.model.errors import ScenarioError

    doc = {"apiVersion": "flow.volcano.sh/v1alpha1", "kind": kind, "metadata": {"name": "flow", "namespace": "default"},
           "spec": {}}
    with pytest.raises(ScenarioError) as raised:
        load_manifests([NODE, doc])
    message = str(raised.value)
    assert f"{kind} (flow.volcano.sh/v1alpha1) is not modelled" in message and "submit the flow's Volcano Jobs" in message
