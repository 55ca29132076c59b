"""gangkit: why distributed training jobs stall in shared GPU clusters, and how gang admission fixes it.

The public surface the lessons use::

    import gangkit as gk
    sc = gk.Scenario(gk.nodes(4, gpus=1), [gk.job("A", pods=4), gk.job("B", pods=4)])
    gk.simulate(sc, stack="pod").deadlock      # True: each job holds half of what it needs
    gk.simulate(sc, stack="gang").deadlock     # False: all or nothing

Where things live (one package per part of the architecture; README, "Contributing"):
``model`` (plain data), ``engine`` (the run and its sockets), the layers ``placement``,
``volcano``, ``kueue`` and ``supply``, ``workloads`` and ``manifests`` (what goes in),
``results`` (what comes out), ``simulate`` and ``stacks`` (the wiring), ``analysis``
(many runs), ``lessons`` and ``checks`` (the course), ``cli``.
"""

from gangkit.analysis.compare import compare
from gangkit.analysis.sweep import sweep
from gangkit.consistency import check_manifests
from gangkit.engine.sockets import AdmissionLayer, NodeSupplier, PlacementLayer
from gangkit.manifests import dump_manifests, load_file, load_manifests
from gangkit.model.errors import Problem, ScenarioError
from gangkit.model.fast_paths import FastPaths
from gangkit.model.jobs import Job, PodSet, job
from gangkit.model.nodes import Node, nodes
from gangkit.model.reasons import Reason
from gangkit.model.scenario import RunSettings, Scenario
from gangkit.results.diagnosis import Diagnosis
from gangkit.results.result import Result
from gangkit.results.waiting import (
    Stability,
    batch_means,
    job_waits,
    metrics,
    mmc_wait,
    stability,
    starvation,
    utilization,
    wait_table,
)
from gangkit.simulate import simulate
from gangkit.stacks import STACKS, Stack, build_stack
from gangkit.supply import InstanceType, Karpenter, KarpenterSetup, NodePool, Stages, default_karpenter
from gangkit.workloads import scenarios
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

__version__ = "0.1.0"

__all__ = [
    # scenarios and runs
    "FastPaths", "Job", "Node", "PodSet", "Problem", "Result", "RunSettings", "STACKS", "Scenario", "ScenarioError", "Stack",
    "build_stack", "job", "nodes", "scenarios", "simulate",
    # manifests
    "check_manifests", "dump_manifests", "load_file", "load_manifests",
    # your own layers
    "AdmissionLayer", "NodeSupplier", "PlacementLayer", "Reason",
    # diagnosis, comparison and sweeps (lessons 04 and 05)
    "Diagnosis", "compare", "sweep",
    # workload generators and real traces
    "Bursty", "Constant", "Empirical", "Exponential", "JobClass", "Lognormal", "Poisson", "Stream", "mm_c",
    "philly_runtime", "stream_from_dict", "stream_to_dict", "tiered_training",
    "TraceLoad", "derive_gangs", "load_alibaba_openb", "load_philly_runtimes", "load_swf",
    # node supply
    "InstanceType", "Karpenter", "KarpenterSetup", "NodePool", "Stages", "default_karpenter",
    # waiting metrics
    "Stability", "batch_means", "job_waits", "metrics", "mmc_wait", "stability", "starvation", "utilization",
    "wait_table",
]


def __getattr__(name: str):
    """``gk.plots`` and ``gk.checks`` load on first use (matplotlib and ipywidgets are slow to import)."""
    lazy = {"plots": "gangkit.results.plots", "checks": "gangkit.checks"}
    if name in lazy:
        import importlib

        return importlib.import_module(lazy[name])
    raise AttributeError(f"module 'gangkit' has no attribute {name!r}")
