"""Real workload traces, mapped into gangkit jobs and nodes.

Synthetic streams (Poisson arrivals, exponential run times) teach the
mechanics; real traces show what clusters actually see: most GPU tasks are
small, run times span six orders of magnitude, and a few big jobs hold most
of the GPU time. This module reads three public traces. None of them ships
with gangkit: every loader takes a *path*, and the data stays where you put it.

**Alibaba GPU cluster trace 2023 ("openb")** - :func:`load_alibaba_openb`.
Published with the FGD paper (Weng et al., "Beware of Fragmentation",
USENIX ATC 2023; github.com/alibaba/clusterdata, cluster-trace-gpu-v2023).
A pod list (one row per *pod*: CPU, memory, GPUs, a GPU fraction, allowed
GPU models, QoS class, phase, creation/scheduling/deletion times in seconds)
and a node list (GPUs and GPU model per node) of a heterogeneous cluster.

- What it can say: the *shape* of GPU demand (most tasks ask for one GPU or
  a fraction of one; a few ask for 8), the node mix, the time each pod held
  its resources.
- What it cannot say: **this trace has single pods, not gangs.** There is no
  job id tying pods together, so it says nothing about which pods must start
  together. Every pod becomes a one-pod gangkit Job; a gang mix must be
  *derived* by a rule you choose (:func:`derive_gangs`).
  The times span about 149 days and pods still ``Running`` at the end are
  cut off (censored) at the trace end; the FGD paper itself uses the lists
  as a placement workload, not as a timed arrival stream. Fractional-GPU
  pods (GPU sharing) have no exact counterpart in gangkit, which counts
  whole GPUs: you choose a mapping.

**Microsoft Philly run times** - :func:`load_philly_runtimes`. One column,
``runtime``, in seconds: 83k run times of DNN training jobs on Microsoft's
Philly cluster (Jeon et al., USENIX ATC 2019), as extracted by Alibaba's
PAI analysis. No GPU counts, no arrival times: use it as an *empirical
run-time distribution* (sample from it), not as a replayable stream.

**Standard Workload Format (SWF)** - :func:`load_swf`. The format of the
Parallel Workloads Archive (Feitelson et al.): logs of HPC supercomputers
whose jobs are *rigid*: a job asks for N processors and runs only when all N
are given at once - the HPC ancestor of gang scheduling. 18 whitespace-
separated fields per line, ``-1`` meaning "unknown"; header comments (``;``)
give the machine size (``MaxNodes``, ``MaxProcs``). Each processor becomes
one pod with one "GPU" (a stand-in: the logs predate GPUs), so a job is a
gang of that many pods.

The Alibaba and SWF loaders return a :class:`TraceLoad` that carries a *mapping report*:
how many rows were mapped as they are, mapped with a change, or dropped, and
why. Print it before trusting a result built on the trace.

:func:`derive_gangs` groups the Alibaba single pods into gang jobs by a
stated, seeded rule: an *invented* gang mix, not something the trace says.

The loaders live one per trace (:mod:`gangkit.workloads.alibaba`, :mod:`gangkit.workloads.swf`, and
Philly's here), the mapping report in :mod:`gangkit.workloads.trace_load`, the gang rule in
:mod:`gangkit.workloads.gang_rules`; every name is importable from this module.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from gangkit.model.quantity import MAX_DURATION_S
from gangkit.workloads.alibaba import GPU_MODEL_LABEL, load_alibaba_nodes, load_alibaba_openb
from gangkit.workloads.gang_rules import derive_gangs
from gangkit.workloads.swf import SWF_FIELDS, load_swf, read_swf
from gangkit.workloads.trace_load import TraceLoad, file_problem, numeric_column, read_csv, require_columns

__all__ = [
    "GPU_MODEL_LABEL", "SWF_FIELDS", "TraceLoad", "derive_gangs", "load_alibaba_nodes", "load_alibaba_openb",
    "load_philly_runtimes", "load_swf", "read_swf",
]


def load_philly_runtimes(path, column: str = "runtime") -> pd.Series:
    """Philly job run times in **seconds**, as a float Series named ``run_time_s``.

    The file (``philly_runtime.csv``) has one column, ``runtime``. Empty
    cells are dropped; a non-numeric or negative value is an error. Zero
    run times are kept (they are in the trace: jobs that failed at once);
    gangkit Jobs need ``run_time > 0``, so sample from ``s[s > 0]``::

        s = load_philly_runtimes(path)
        run_times = s[s > 0].sample(1000, replace=True, random_state=1).to_numpy()
    """
    df = read_csv(path)
    require_columns(df, path, (column,))
    s = numeric_column(df, path, column, allow_missing=True, maximum=MAX_DURATION_S).dropna()
    if (s < 0).any():
        i = int((s < 0).to_numpy().nonzero()[0][0])
        raise file_problem(path, column, f"expected seconds >= 0, got {s.iloc[i]!r}")
    return s.reset_index(drop=True).rename("run_time_s")


if __name__ == "__main__":  # python -m gangkit.workloads.traces <traces folder>: print the mapping reports
    import sys

    root = Path(sys.argv[1] if len(sys.argv) > 1 else "../shared/traces")
    ali = root / "alibaba-openb-2023"
    for pods in ("openb_pod_list_default.csv", "openb_pod_list_gpuspec33.csv"):
        load = load_alibaba_openb(ali / pods, ali / "openb_node_list_all_node.csv")
        print(load.summary())
        gangs = derive_gangs(load.jobs, seed=0)
        sizes = pd.Series([j.pod_count for j in gangs]).value_counts().sort_index()
        print(f"  derive_gangs(seed=0): {len(gangs)} jobs; pods per job: {sizes.to_dict()}", end="\n\n")
    print(load_alibaba_openb(ali / "openb_pod_list_multigpu50.csv", ali / "openb_node_list_all_node.csv",
                             run_time=3600.0).summary(), end="\n\n")
    for swf in sorted((root / "nasa-ipsc-1993-swf").glob("*.swf*")):
        print(load_swf(swf).summary(), end="\n\n")
    s = load_philly_runtimes(root / "philly" / "philly_runtime.csv")
    print(f"philly_runtime.csv: {len(s)} run times (s), {int((s == 0).sum())} zero; "
          f"median {s.median():.0f} s, mean {s.mean():.0f} s, p99 {s.quantile(0.99):.0f} s, max {s.max():.0f} s")
