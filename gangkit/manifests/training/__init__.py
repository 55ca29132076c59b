"""Training jobs as they are submitted in practice: jobs of several roles, created together.

A distributed training run is rarely one batch/v1 Job: it has roles (a driver and its workers, a
launcher and its ranks), and something creates them together. One module per family of kinds:

- :mod:`.jobset`: the JobSet (``jobset.x-k8s.io``), a set of Jobs; the gang and priority of a job of
  several roles, shared by the others;
- :mod:`.kubeflow`: Kubeflow's v1 PyTorchJob, TFJob, JAXJob, PaddleJob, XGBoostJob and MPIJob (a map of
  replica specs);
- :mod:`.trainer`: Kubeflow Trainer v2's TrainJob, which names a (Cluster)TrainingRuntime whose
  JobSet template it fills in.

Each is read as one :class:`~gangkit.model.jobs.Job` with a pod set per role, the pod sets Kueue's
integration for the kind derives; ``docs/reference/workload-kinds.md`` maps every field.
"""

from __future__ import annotations

from collections.abc import Mapping

from gangkit.manifests.training import jobset, kubeflow, trainer
from gangkit.manifests.training.jobset import JOBSET_API, KNOWN_ANNOTATIONS, jobset_manifest, read_jobset
from gangkit.manifests.training.kubeflow import REPLICA_KINDS, read_replica_job, replica_job_manifest, replica_problems
from gangkit.manifests.training.trainer import collect_runtimes, read_trainjob
from gangkit.model.reading import ManifestObject, Reader

__all__ = ["JOBSET_API", "KNOWN_FIELDS", "REPLICA_KINDS", "collect_runtimes", "jobset_manifest", "read_jobset",
           "read_object", "read_replica_job", "read_trainjob", "replica_job_manifest", "replica_problems"]

#: Known fields per kind of every module here (the board's offices look fields up by kind).
KNOWN_FIELDS: dict[str, dict] = {**jobset.KNOWN_FIELDS, **kubeflow.KNOWN_FIELDS, **trainer.KNOWN_FIELDS}


def read_object(r: Reader, doc: Mapping, where: str, role: str) -> ManifestObject | None:
    """Check one object of a training kind (its metadata, unknown fields and gangkit annotations)."""
    return r.check_object(doc, where, KNOWN_FIELDS[role], KNOWN_ANNOTATIONS)
