"""Lesson 05's story: one workload through every stack, and where it gets stuck in each.

Two nodes of 8 GPUs and four jobs of one team. ``train-a`` and ``train-b`` are gangs of two 8-GPU
workers, submitted together; ``eval-c`` (one 4-GPU pod) comes a minute later; ``train-d``, a gang
of four 8-GPU workers (32 GPUs), comes at t=120 s and is bigger than the whole cluster. The same
jobs and seed go through each stack (:func:`gangkit.analysis.compare`); the story is in where each stack
makes them wait.

The Kueue stacks use Kueue's default set-up in gangkit (one ClusterQueue ``cluster-queue`` whose
quota is every GPU the stack can have: the nodes' 16, plus what Karpenter may add); the
``+karpenter`` stack uses one NodePool without limits, ``kueue+provreq+autoscaler`` Kueue's
ProvisioningRequest admission check in front of cluster-autoscaler's default node groups; both use
the same stage defaults (launch to registered 60 s, to initialized 90 s more; assumptions, see
``docs/reference/provisioning.md``).
"""

from __future__ import annotations

from gangkit.model.nodes import nodes
from gangkit.model.scenario import Scenario
from gangkit.model.jobs import job

#: The stacks of the lesson, from plain kube-scheduler to the full layered stack.
STACKS = ("pod", "gang", "kueue+gang", "kueue+gang+karpenter", "kueue+provreq+autoscaler")
#: The reasons exercise 5.1 chooses from (codes of gangkit.results.diagnosis).
REASONS = ("Unschedulable", "PartiallyPlaced", "GangCannotFit", "QuotaExhausted", "QuotaTooSmall", "WaitingForNodes")
#: Where each run ends at the latest (simulated seconds): four hours.
HORIZON = 4 * 3600.0
#: The jobs whose waits exercise 5.1 classifies: (stack, job, time in seconds).
CLASSIFY = (
    ("pod", "train-b", 300.0),
    ("pod", "eval-c", 300.0),
    ("gang", "train-b", 300.0),
    ("kueue+gang", "eval-c", 300.0),
    ("kueue+gang", "train-d", 300.0),
    ("kueue+gang+karpenter", "train-d", 200.0),
)


def layered_story() -> Scenario:
    """The workload of lesson 05 (see the module docstring)."""
    jobs = [
        job("train-a", pods=2, gpus=8, run_time=1800),
        job("train-b", pods=2, gpus=8, run_time=1800),
        job("eval-c", pods=1, gpus=4, run_time=600, submit_time=60),
        job("train-d", pods=4, gpus=8, run_time=1200, submit_time=120),
    ]
    return Scenario(nodes(2, gpus=8), jobs, name="layered-story",
                    description="2 nodes x 8 GPUs; train-a, train-b: 2 x 8 GPUs at t=0; eval-c: 4 GPUs at t=60 s; "
                                "train-d: 4 x 8 GPUs at t=120 s").with_settings(horizon=HORIZON)
