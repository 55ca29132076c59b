"""Every file of the upstream corpus (../shared/upstream_manifests: 124 examples of ten projects) has a row.

A platform engineer's first move is to feed gangkit the examples of Kueue's, Volcano's, Karpenter's
and the other projects' own docs. Each file is read alone, with four 8-GPU nodes added when it names
none (``gangkit run FILE --nodes 4x8,cpu=96,memory=1Ti``), and simulated for a day. A row says what
happens, and why when the file is refused:

- ``denied``: the real system refuses the file too (a webhook, a CRD rule, a removed API);
- ``fragment``: a snippet of a docs page that names an object of another snippet (gangkit names it);
- ``not modelled``: a kind or setting gangkit states it does not model.

A file added to the corpus fails until it has a row. The rows skip with a reason when the corpus is absent.
"""

from __future__ import annotations

import warnings

import pytest
import yaml

import gangkit as gk
from gangkit.manifests import load_files
from gangkit.model.errors import ScenarioError

from conftest import shared_path

CORPUS = shared_path("upstream_manifests")
NODES = [{"apiVersion": "v1", "kind": "Node", "metadata": {"name": f"node-{i}"},
          "status": {"allocatable": {"nvidia.com/gpu": "8", "cpu": "96", "memory": "1Ti"}}} for i in range(4)]

SIMULATES = (
    "karpenter/default_nodepool.yaml",
    "karpenter/design-balanced-consolidation.b0.yaml",
    "karpenter-provider-aws/100-cpu-limit.yaml",
    "karpenter-provider-aws/docs-disruption.b2.yaml",
    "karpenter-provider-aws/docs-nodeclaims.b0.yaml",
    "karpenter-provider-aws/docs-nodepools.b5.yaml",
    "karpenter-provider-aws/docs-scheduling.b12.yaml",
    "karpenter-provider-aws/docs-scheduling.b7.yaml",
    "karpenter-provider-aws/general-purpose.yaml",
    "karpenter-provider-aws/large-instances.yaml",
    "karpenter-provider-aws/max-node-lifetime.yaml",
    "karpenter-provider-aws/spot.yaml",
    "karpenter-provider-aws/workloads-gpu-nvidia.yaml",
    "kubeflow-trainer/01-multi-node.yaml",
    "kubeflow-trainer/03-kueue-integration.yaml",
    "kubeflow-trainer/04-volcano-integration.yaml",
    "kubernetes-website/docs-workload-api-1.35.b0.yaml",
    "kueue/admission-fair-sharing-setup.yaml",
    "kueue/concurrent-admission-setup.yaml",
    "kueue/controller_manager_config.yaml",
    "kueue/docs-administer_cluster_quotas.b11.yaml",
    "kueue/docs-administer_cluster_quotas.b8.yaml",
    "kueue/docs-cluster_queue.b0.yaml",
    "kueue/docs-cluster_queue.b1.yaml",
    "kueue/docs-cluster_queue.b12.yaml",
    "kueue/docs-cluster_queue.b13.yaml",
    "kueue/docs-cluster_queue.b14.yaml",
    "kueue/docs-cluster_queue.b6.yaml",
    "kueue/docs-cluster_queue.b7.yaml",
    "kueue/docs-cohort.b2.yaml",
    "kueue/docs-cohort.b3.yaml",
    "kueue/docs-cohort.b4.yaml",
    "kueue/docs-preemption.b1.yaml",
    "kueue/docs-run_job_with_workload_priority.b0.yaml",
    "kueue/docs-setup_wait_for_pods_ready.b1.yaml",
    "kueue/docs-setup_wait_for_pods_ready.b3.yaml",
    "kueue/docs-workload.b0.yaml",
    "kueue/docs-workload_priority_class.b0.yaml",
    "kueue/kueue-pod-group.yaml",
    "kueue/kueue-pod.yaml",
    "kueue/kueueviz-00-resource-flavor.yaml",
    "kueue/kueueviz-01-cluster-queues.yaml",
    "kueue/kueueviz-01.5-cohorts.yaml",
    "kueue/kueueviz-02-local-queues.yaml",
    "kueue/kueueviz-07-workload-priority-classes.yaml",
    "kueue/lq-a-simple-job.yaml",
    "kueue/minimal-cq.yaml",
    "kueue/multikueue-setup.yaml",
    "kueue/provisioning-sample-job.yaml",
    "kueue/provisioning-setup.yaml",
    "kueue/quick-start-job.yaml",
    "kueue/quick-start-setup.yaml",
    "kueue/resource-flavor-empty.yaml",
    "kueue/resource-flavor-taints.yaml",
    "kueue/resource-flavor-tolerations.yaml",
    "kueue/sample-job-partial-admission.yaml",
    "kueue/sample-job.yaml",
    "kueue/sample-jobset.yaml",
    "kueue/sample-mpijob.yaml",
    "kueue/sample-pytorchjob.yaml",
    "kueue/sample-scalable-job.yaml",
    "kueue/shared-quota-sample-job.yaml",
    "kueue/shared-quota-setup.yaml",
    "kueue/single-clusterqueue-setup.yaml",
    "kueue/tas-sample-gpu-queues.yaml",
    "kueue/tas-sample-job-required.yaml",
    "scheduler-plugins/coscheduling-scheduler-config.yaml",
    "scheduler-plugins/docs-coscheduling.b0.yaml",
    "scheduler-plugins/docs-coscheduling.b1.yaml",
    "scheduler-plugins/docs-install.b1.yaml",
    "scheduler-plugins/nodemetadata-nodes.yaml",
    "volcano/artifacts-podgroup.yaml",
    "volcano/artifacts-queue.yaml",
    "volcano/ctr-paddlepaddle-on-volcano.yaml",
    "volcano/deployment-queue.yaml",
    "volcano/deployment.yaml",
    "volcano/docs-capacity_plugin.b3.yaml",
    "volcano/docs-capacity_plugin.b4.yaml",
    "volcano/docs-job_policy.b0.yaml",
    "volcano/docs-network_topology.b4.yaml",
    "volcano/docs-nodegroup_plugin.b0.yaml",
    "volcano/docs-priorityclass_for_job.b0.yaml",
    "volcano/docs-pytorch_plugin.b0.yaml",
    "volcano/hierarchical-queues.yaml",
    "volcano/job-plugin.yaml",
    "volcano/job.yaml",
    "volcano/kubecon-elastic-job.yaml",
    "volcano/kubecon-gang-mpi-example.yaml",
    "volcano/mindspore-gpu.yaml",
    "volcano/mpi-example.yaml",
    "volcano/task-start-dependency-job.yaml",
    "volcano/tf-dist-mnist-example.yaml",
    "volcano-website/docs-gang.b1.yaml",
    "volcano-website/docs-queue_resource_management.b0.yaml",
    "volcano-website/docs-queue_resource_management.b2.yaml",
    "volcano-website/docs-queue_resource_management.b4.yaml",
    "volcano-website/docs-tutorials.b1.yaml",
    "volcano-website/docs-tutorials.b3.yaml",
    "volcano-website/docs-tutorials.b4.yaml",
    "yunikorn-k8shim/batch-sleep-job.yaml",
    "yunikorn-k8shim/mpioperator-pi.yaml",
    "yunikorn-site/docs-gang_scheduling.b1.yaml",
    "yunikorn-site/docs-gang_scheduling.b4.yaml",
)

#: file -> (the object and field of the first problem, why)
REFUSED = {
    "karpenter-provider-aws/docs-nodepools.b0.yaml": ('NodePool default: spec.limits', "denied: the NodePool CRD allows only limits.nodes on a static NodePool"),
    "karpenter-provider-aws/docs-nodepools.b4.yaml": ('NodePool default: spec.limits', "denied: the NodePool CRD allows only limits.nodes on a static NodePool"),
    "kubernetes-website/docs-workload-api-latest.b0.yaml": ('Workload some-ns/training-job-workload: apiVersion', "not modelled: the scheduling.k8s.io/v1beta1 Workload of Kubernetes 1.36"),
    "kubernetes-website/docs-workload-reference.b0.yaml": ('Pod some-ns/worker-0: spec.containers', "denied: a Pod without containers (a fragment of the docs)"),
    "kueue/docs-cluster_queue.b8.yaml": ('ClusterQueue team-a-cq: spec.resourceGroups[0].flavors[0].resources', "denied: Kueue's webhook wants a quota per covered resource (a fragment of the docs)"),
    "kueue/docs-cluster_queue.b9.yaml": ('ClusterQueue team-b-cq: spec.resourceGroups[0].flavors[0].resources', "denied: Kueue's webhook wants a quota per covered resource (a fragment of the docs)"),
    "kueue/docs-run_job_with_workload_priority.b1.yaml": ('Job sample-job: metadata.labels.kueue.x-k8s.io/priority-class', "fragment: the WorkloadPriorityClass is in another file"),
    "kueue/kueueviz-03-agi-job.yaml": ('Job agi-1: metadata.labels.kueue.x-k8s.io/priority-class', "fragment: the WorkloadPriorityClass is in another file"),
    "kueue/kueueviz-04-llm-job.yaml": ('Job llm-1: metadata.labels.kueue.x-k8s.io/priority-class', "fragment: the WorkloadPriorityClass is in another file"),
    "kueue/kueueviz-05-cancer-cure-research.yaml": ('Job cancer-research-1: metadata.labels.kueue.x-k8s.io/priority-class', "fragment: the WorkloadPriorityClass is in another file"),
    "kueue/sample-admission-check.yaml": ('ProvisioningRequestConfig prov-test-config: spec.provisioningClassName', "not modelled: a ProvisioningRequest class cluster-autoscaler does not serve"),
    "scheduler-plugins/docs-install.b2.yaml": ('Deployment pause: spec.template.metadata.labels.scheduling.x-k8s.io/pod-group', "fragment: the scheduler-plugins PodGroup is in another file"),
    "volcano/cronjob.yaml": ('CronJob volcano-cronjob-example: kind', "not modelled: Volcano's CronJob"),
    "volcano/hierarchical-jobs.yaml": ('VolcanoJob eng-prod-job: spec.queue', "fragment: the Volcano Queue is in another file (Volcano's webhook denies the Job without it)"),
    "volcano/invalid-duplicatedPolicyEvent-webhook-deny.yaml": ('VolcanoJob test-job-webhook-disallow: spec.policies[1].event', "denied: Volcano's webhook (a file written to be denied)"),
    "volcano/invalid-duplicatedTaskName-webhook-deny.yaml": ('VolcanoJob test-job-webhook-disallow: spec.tasks[1].name', "denied: Volcano's webhook (a file written to be denied)"),
    "volcano/invalid-minAvailable-webhook-deny.yaml": ('VolcanoJob test-job-webhook-disallow: spec.minAvailable', "denied: Volcano's webhook (a file written to be denied)"),
    "volcano/kubecon-high-priority.yaml": ('PriorityClass high-pri: apiVersion', "denied: scheduling.k8s.io/v1beta1 PriorityClass was removed in Kubernetes 1.22"),
    "volcano-website/docs-queue_resource_management.b5.yaml": ('VolcanoJob job3: spec.queue', "fragment: the Volcano Queue is in another file (Volcano's webhook denies the Job without it)"),
    "volcano-website/docs-tutorials.b5.yaml": ('VolcanoJob job-with-custom-queue: spec.queue', "fragment: the Volcano Queue is in another file (Volcano's webhook denies the Job without it)"),
    "yunikorn-k8shim/spark-driver.yaml": ('Pod (document 1): metadata.name', "denied: a Pod without a name or generateName"),
}


def outcome(path) -> str:
    """"simulates", or the object and field of the first problem."""
    docs = [d for d in yaml.safe_load_all(path.read_text()) if d is not None]
    extra = [] if any(isinstance(d, dict) and d.get("kind") == "Node" for d in docs) else NODES
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            sc = load_files([path], extra=extra)
            gk.simulate(sc.with_settings(horizon=86400.0))
    except ScenarioError as e:
        p = e.problems[0]
        return f"{p.obj}: {p.field}"
    return "simulates"


FILES = sorted(str(p.relative_to(CORPUS)) for p in CORPUS.rglob("*.y*ml")) if CORPUS.is_dir() else []
absent = pytest.mark.skipif(not CORPUS.is_dir(), reason=f"the upstream corpus {CORPUS} is absent (it sits beside the repository)")


@absent
@pytest.mark.parametrize("name", FILES)
def test_every_upstream_file_simulates_or_is_refused_for_its_stated_reason(name):
    assert name in SIMULATES or name in REFUSED, f"{name} has no row: add it to SIMULATES or REFUSED"
    expected = "simulates" if name in SIMULATES else REFUSED[name][0]
    assert outcome(CORPUS / name) == expected


@absent
def test_the_table_has_no_stale_rows():
    assert set(SIMULATES) | set(REFUSED) == set(FILES) and not set(SIMULATES) & set(REFUSED)


def test_every_refusal_says_why():
    kinds = ("denied: ", "fragment: ", "not modelled: ")
    assert all(why.startswith(kinds) for _, why in REFUSED.values())
