"""gangkit: why distributed training jobs stall in shared GPU clusters, and how gang admission fixes it.

The public surface the lessons use::

    import gangkit as gk
    sc = gk.Scenario(gk.nodes(4, gpus=1), [gk.job("A", pods=4), gk.job("B", pods=4)])
    gk.simulate(sc, stack="pod").deadlock      # True: each job holds half of what it needs
    gk.simulate(sc, stack="gang").deadlock     # False: all or nothing
"""

from gangkit.engine.sockets import AdmissionLayer, NodeSupplier, PlacementLayer
from gangkit.manifests import dump_manifests, load_file, load_manifests
from gangkit.model.errors import Problem, ScenarioError
from gangkit.model.jobs import Job, PodSet, job
from gangkit.model.nodes import Node, nodes
from gangkit.model.reasons import Reason
from gangkit.model.scenario import RunSettings, Scenario
from gangkit.results.result import Result
from gangkit.simulate import simulate
from gangkit.stacks import STACKS, Stack, build_stack
from gangkit.workloads import scenarios

__version__ = "0.1.0"


def __getattr__(name: str):
    """``gk.plots`` and ``gk.checks`` load on first use (matplotlib and ipywidgets are slow to import)."""
    lazy = {"plots": "gangkit.results.plots", "checks": "gangkit.checks"}
    if name in lazy:
        import importlib

        return importlib.import_module(lazy[name])
    raise AttributeError(f"module 'gangkit' has no attribute {name!r}")

__all__ = [
    "AdmissionLayer", "Job", "Node", "NodeSupplier", "PlacementLayer", "PodSet", "Problem", "Reason",
    "Result", "RunSettings", "STACKS", "Scenario", "ScenarioError", "Stack", "build_stack", "dump_manifests", "job",
    "load_file", "load_manifests", "nodes",
    "scenarios", "simulate",
]

# per-layer diagnosis and stack comparison (lesson 05)
from gangkit.analysis.compare import compare  # noqa: E402
from gangkit.results.diagnosis import Diagnosis  # noqa: E402

__all__ += ["Diagnosis", "compare"]

# Workload generators, trace loaders, Karpenter node supply, waiting metrics and sweeps.
from gangkit.analysis.sweep import sweep  # noqa: E402 - the function gangkit.analysis.sweep; the module stays importable as gangkit.analysis.sweep
from gangkit.results.waiting import Stability, job_waits, metrics, stability, starvation, utilization, wait_table
from gangkit.supply.cloud import InstanceType, Stages
from gangkit.supply.karpenter import Karpenter, NodePool, default_karpenter
from gangkit.workloads.generators import (
    Bursty,
    Constant,
    Empirical,
    Exponential,
    JobClass,
    Lognormal,
    Poisson,
    Stream,
    mm_c,
    philly_runtime,
    stream_from_dict,
    stream_to_dict,
    tiered_training,
)
from gangkit.workloads.traces import TraceLoad, derive_gangs, load_alibaba_openb, load_philly_runtimes, load_swf

__all__ += [
    "Bursty", "Constant", "Empirical", "Exponential", "JobClass", "Lognormal", "Poisson", "Stream", "mm_c",
    "philly_runtime", "stream_from_dict", "stream_to_dict", "tiered_training",
    "TraceLoad", "derive_gangs", "load_alibaba_openb", "load_philly_runtimes", "load_swf",
    "InstanceType", "Karpenter", "NodePool", "Stages", "default_karpenter",
    "Stability", "job_waits", "metrics", "stability", "starvation", "sweep", "utilization", "wait_table",
]
