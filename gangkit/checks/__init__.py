"""Check functions for the exercises: a patient teaching assistant looking over your shoulder.

Picture a teaching assistant who walks past your desk. If your page is still blank, they do not
mark it wrong; they say "not done yet" and point at where to start. If you wrote the right kind
of thing in the wrong place (a word where a number belongs), they say what kind of answer the
question wants. If your number is off, they say what your number probably *is* (the allocated
utilization instead of the effective one, when Y starts instead of how long it waited) and where
to look. If you are right, they say why in one sentence.

Every exercise cell in ``solutions/`` and ``exercises/`` has the same shape::

    answer = None
    ### BEGIN SOLUTION
    ...your code, computing the answer with gangkit...
    answer = ...
    ### END SOLUTION
    check_01_held_idle(answer)

The exercise notebooks are generated from the solutions by clearing the region between the
markers, so an untouched exercise still runs to the end: ``answer`` stays ``None`` and each check
prints ``Exercise N: not done yet — <a hint>`` and returns ``False``.

Rules every check follows:

- the expected answer is computed *from the simulator* (never typed in), so the checks stay right
  when the model changes; simulations are cached with :func:`functools.lru_cache`, so a check
  runs in milliseconds after the first call;
- messages are plain ``print`` output and deterministic (the notebooks' stored outputs are
  compared exactly by nbval);
- each check returns ``True`` for a right answer and ``False`` otherwise.

Tolerances: counts of GPUs, nodes and jobs must be whole numbers (``4.0`` counts as ``4``);
times are accepted within 0.5 s (the small scenarios only have whole-second events); the
utilization is accepted within 0.005 of the summary figure (so ``0.667`` and ``2/3`` are right).
gangkit reports utilization as a fraction from 0 to 1; a percentage (``66.7``) is accepted too,
with a note, because it is the same understanding written in other units.

Where the checks are: :mod:`gangkit.checks.common` reads an answer and holds what several lessons'
checks share; ``lesson00`` to ``lesson08`` hold each lesson's checks, with the constants and cached
simulations only they use. This package re-exports every check, so a notebook imports it from
``gangkit.checks``.
"""

from gangkit.checks.lesson00 import check_00_jobs_finished
from gangkit.checks.lesson01 import check_01_effective_utilization, check_01_held_idle, check_01_min_nodes
from gangkit.checks.lesson02 import (
    check_02_best_ordering,
    check_02_gang_finishes,
    check_02_hard_timeout,
    check_02_y_wait_strict,
)
from gangkit.checks.lesson03 import check_03_lending_limit, check_03_preempted_workload, check_03_strategy_for_big_job
from gangkit.checks.lesson04 import check_04_policy_for_big_gangs, check_04_saturation_load, check_04_starved_gang_wait
from gangkit.checks.lesson05 import check_05_classify_waits, check_05_node_initialization, check_05_start_alone
from gangkit.checks.lesson06 import (
    check_06_deactivated_at,
    check_06_nine_of_ten,
    check_06_start_with_image_pull,
    check_06_warm_nodes,
)
from gangkit.checks.lesson07 import check_07_independent_saving, check_07_pods_ready_timeout
from gangkit.checks.lesson08 import check_08_design, check_08_node_down

__all__ = [
    "check_00_jobs_finished",
    "check_01_held_idle",
    "check_01_min_nodes",
    "check_01_effective_utilization",
    "check_02_y_wait_strict",
    "check_02_gang_finishes",
    "check_02_best_ordering",
    "check_02_hard_timeout",
    "check_03_lending_limit",
    "check_03_preempted_workload",
    "check_03_strategy_for_big_job",
    "check_04_saturation_load",
    "check_04_policy_for_big_gangs",
    "check_04_starved_gang_wait",
    "check_05_classify_waits",
    "check_05_node_initialization",
    "check_05_start_alone",
    "check_06_start_with_image_pull",
    "check_06_warm_nodes",
    "check_06_deactivated_at",
    "check_06_nine_of_ten",
    "check_07_pods_ready_timeout",
    "check_07_independent_saving",
    "check_08_design",
    "check_08_node_down",
]
