"""Built-in scenarios, by name: the small stories the lessons tell, and a synthetic stream.

- ``three-workers``: the smallest deadlock-shaped story. Two nodes of two
  GPUs; job Z (one pod, 2 GPUs) runs from t=0 to t=600 s; job X has three
  sync workers of one GPU each; job Y (one GPU) arrives at t=60 s. Pod by
  pod, X's workers A and B bind, C waits, and X holds two GPUs idle while Y
  waits too. Gang by gang, X waits whole and Y starts at once.
- ``two-gangs-deadlock``: four nodes of one GPU and two sync jobs of four
  workers, submitted together. Pod by pod each job binds two workers and
  waits for ever for the other two; gang by gang they run one after the other.
- ``mixed``: a seeded stream of training jobs (Poisson arrivals; 1, 2, 4, 8,
  16 and 32-GPU jobs; heavy-tailed lognormal run times) on a few hundred
  8-GPU nodes.
"""

from __future__ import annotations

import math
import random

from gangkit.model.errors import problem
from gangkit.model.jobs import Job, PodSet, job
from gangkit.model.nodes import nodes
from gangkit.model.scenario import RunSettings, Scenario

NAMES = ("three-workers", "two-gangs-deadlock", "mixed")

#: ``mixed``: (GPUs per job, pods, GPUs per pod, probability). Most jobs are small, as in
#: public GPU cluster traces; the 16 and 32-GPU gangs span several 8-GPU nodes.
MIXED_CLASSES = (
    (1, 1, 1, 0.45),
    (2, 1, 2, 0.15),
    (4, 1, 4, 0.15),
    (8, 1, 8, 0.15),
    (16, 2, 8, 0.06),
    (32, 4, 8, 0.04),
)
#: ``mixed`` run times: lognormal with this median (seconds) and sigma (a heavy right tail),
#: cut at :data:`MIXED_MAX_RUN_TIME` as clusters cut jobs at a maximum run time.
MIXED_MEDIAN_RUN_TIME = 1800.0
MIXED_SIGMA = 1.2
MIXED_MAX_RUN_TIME = 12 * 3600.0


def _capped_lognormal_mean(median: float, sigma: float, cap: float) -> float:
    """E[min(X, cap)] for X lognormal with this median and sigma (to set the arrival rate exactly)."""
    mu = math.log(median)
    phi = lambda z: 0.5 * (1.0 + math.erf(z / math.sqrt(2.0)))  # noqa: E731 - standard normal CDF
    z = (math.log(cap) - mu) / sigma
    return math.exp(mu + sigma**2 / 2) * phi(z - sigma) + cap * (1.0 - phi(z))


def three_workers(**settings) -> Scenario:
    """Z holds one node; X's three workers find room for two; Y arrives at t=60 s."""
    jobs = [
        job("Z", pods=1, gpus=2, run_time=600),
        Job("X", [PodSet("workers", 3, 1)], run_time=300),
        job("Y", pods=1, gpus=1, run_time=300, submit_time=60),
    ]
    return Scenario(nodes(2, gpus=2), jobs, RunSettings(**settings), name="three-workers",
                    description="2 nodes x 2 GPUs; Z (2 GPUs) runs 0-600 s; X = 3 sync workers x 1 GPU at t=0; Y (1 GPU) at t=60 s")


def two_gangs_deadlock(**settings) -> Scenario:
    """Two four-worker sync jobs on four one-GPU nodes, submitted together.

    Its stack is ``pod`` unless ``settings`` say otherwise: the deadlock is
    the pod-by-pod scheduler's story (as in ``examples/two-gangs-deadlock.yaml``,
    which also runs 30 days at most, the default horizon).
    """
    jobs = [job("A", pods=4, gpus=1, run_time=600), job("B", pods=4, gpus=1, run_time=600)]
    return Scenario(nodes(4, gpus=1), jobs, RunSettings(**{"stack": "pod", **settings}), name="two-gangs-deadlock",
                    description="4 nodes x 1 GPU; two sync jobs of 4 workers x 1 GPU submitted together")


def mixed(n_jobs: int = 5000, n_nodes: int = 256, load: float = 0.85, seed: int = 0, gpus_per_node: int = 8,
          **settings) -> Scenario:
    """A seeded synthetic stream whose offered load is ``load`` times the cluster's GPUs.

    Arrivals are Poisson with the rate that makes the mean offered GPU demand
    equal ``load`` x capacity; sizes follow :data:`MIXED_CLASSES`; run times
    are lognormal (median :data:`MIXED_MEDIAN_RUN_TIME`, sigma
    :data:`MIXED_SIGMA`), cut at :data:`MIXED_MAX_RUN_TIME` and rounded to
    whole seconds. Same seed, same stream.

    The figures of a whole run include the drain after the last arrival,
    when the cluster empties; use many jobs (or few nodes) for a busy cluster.
    """
    if not isinstance(n_jobs, int) or n_jobs < 1:
        raise problem("Scenario mixed", "n_jobs", f"expected a whole number >= 1, got {n_jobs!r}")
    if not isinstance(n_nodes, int) or n_nodes < 1:
        raise problem("Scenario mixed", "n_nodes", f"expected a whole number >= 1, got {n_nodes!r}")
    if not isinstance(load, (int, float)) or not 0 < load:
        raise problem("Scenario mixed", "load", f"expected a load > 0, got {load!r}")
    rng = random.Random(seed)
    mean_gpus = sum(g * p for g, _, _, p in MIXED_CLASSES)
    mean_run = _capped_lognormal_mean(MIXED_MEDIAN_RUN_TIME, MIXED_SIGMA, MIXED_MAX_RUN_TIME)
    rate = load * n_nodes * gpus_per_node / (mean_gpus * mean_run)
    weights = [p for *_, p in MIXED_CLASSES]
    mu = math.log(MIXED_MEDIAN_RUN_TIME)
    t = 0.0
    jobs = []
    pod_sets = {(pods, per_pod): PodSet("workers", pods, per_pod) for _, pods, per_pod, _ in MIXED_CLASSES}  # frozen: shared
    for i in range(n_jobs):
        _, pods, per_pod, _ = rng.choices(MIXED_CLASSES, weights)[0]
        run = max(1.0, round(min(rng.lognormvariate(mu, MIXED_SIGMA), MIXED_MAX_RUN_TIME)))
        jobs.append(Job(f"job-{i:06d}", [pod_sets[pods, per_pod]], run_time=run, submit_time=round(t, 3)))
        t += rng.expovariate(rate)
    return Scenario(nodes(n_nodes, gpus=gpus_per_node), jobs, RunSettings(seed=seed, **settings), name="mixed",
                    description=f"{n_jobs} jobs, Poisson arrivals at load {load}, on {n_nodes} x {gpus_per_node}-GPU nodes")


def load(name: str, seed: int | None = None, **kwargs) -> Scenario:
    """A built-in scenario by name (``seed`` only changes the ``mixed`` stream)."""
    if name == "three-workers":
        return three_workers(**({"seed": seed} if seed is not None else {}), **kwargs)
    if name == "two-gangs-deadlock":
        return two_gangs_deadlock(**({"seed": seed} if seed is not None else {}), **kwargs)
    if name == "mixed":
        return mixed(seed=0 if seed is None else seed, **kwargs)
    raise problem(f"Scenario {name}", "name", f"unknown built-in scenario; expected one of {', '.join(NAMES)} or a YAML file")
