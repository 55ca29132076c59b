"""Scenarios written as Kubernetes manifests: the reader, the kinds gangkit knows, loading and writing.

- :mod:`.reader`: the reader every family builds on (problems, unknown fields, schemas, YAML);
- :mod:`.kinds`: which (apiVersion, kind) gangkit reads, and which module reads each;
- :mod:`.core`: the core kinds (Node, batch/v1 Job, PriorityClass, Simulation, WorkloadGenerator);
- :mod:`.load`: :func:`load_manifests` and :func:`load_file`, which know every family;
- :mod:`.dump`: :func:`dump_manifests`, the way back to YAML.
"""

from gangkit.manifests.core import DEFAULT_RUN_TIME
from gangkit.manifests.dump import dump_manifests
from gangkit.manifests.load import load_file, load_files, load_manifests
from gangkit.model.reading import (
    CHECKPOINT_INTERVAL,
    GPU,
    PROGRESS,
    QUEUE_LABEL,
    RUN_TIME,
    SUBMIT_TIME,
    GangkitInputWarning,
)

__all__ = [
    "CHECKPOINT_INTERVAL", "DEFAULT_RUN_TIME", "GPU", "PROGRESS", "QUEUE_LABEL", "RUN_TIME", "SUBMIT_TIME",
    "GangkitInputWarning", "dump_manifests", "load_file", "load_files", "load_manifests",
]
