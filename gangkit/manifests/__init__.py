"""Scenarios written as Kubernetes manifests: the kinds gangkit knows, loading and writing.

Every family reads its objects with the reader of the model tier (:mod:`gangkit.model.reading`:
problems, unknown fields, field trees, YAML); a layer's own kinds are read in its package
(:mod:`gangkit.volcano.manifests`, :mod:`gangkit.kueue.manifests`...). Here:

- :mod:`.kinds`: which (apiVersion, kind) gangkit reads, and which module reads each;
- :mod:`.core`: the core kinds (Node, batch/v1 Job, PodGroup, PriorityClass), written back by :mod:`.core_dump`;
- :mod:`.simulation` and :mod:`.streams`: gangkit's own Simulation and WorkloadGenerator kinds;
- :mod:`.load`: :func:`load_manifests` and :func:`load_file`, which know every family;
- :mod:`.snapshot` and :mod:`.resume`: a live cluster's dump, and its state given to the jobs read;
  :mod:`.kueue_snapshot`: ``gangkit admit``'s snapshot of Kueue's queues and workloads;
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
