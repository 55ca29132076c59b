"""Which of gangkit's exact shortcuts a run takes: one frozen value on the run settings.

A *fast path* is gangkit's own, not the real system's: a memo, a count or a
lean loop that reaches the very result the plain algorithm reaches, with less
work. Every layer reads the real system's rules (Kueue's cycle, Volcano's
allocate, kube-scheduler's queue) and marks in one line where a shortcut
hooks in; what each shortcut keeps and why it changes nothing is told where
it lives (:mod:`gangkit.kueue.shortcuts`, :mod:`gangkit.volcano.shortcuts`
and the modules named below).

``FastPaths()`` (the default of :attr:`gangkit.model.scenario.RunSettings.fast_paths`)
takes every shortcut; ``FastPaths.none()`` runs the plain algorithms, step by
step. A run with any of them gives the same figures, tables and metrics to
the last bit (``tests/engine/test_fast_paths.py`` compares each case both ways and
checks that each shortcut saves work on a case made for it)::

    simulate(sc, stack="kueue+gang", fast_paths=FastPaths.none())
    simulate(sc, fast_paths=FastPaths(fast_park=False))

:func:`gangkit.stacks.build_stack` hands the value to the layers it builds;
the layers of a :class:`~gangkit.stacks.Stack` made by hand take theirs as
the ``fast_paths`` argument of their constructors (all on by default).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass


@dataclass(frozen=True)
class FastPaths:
    """Each field one exact shortcut; True takes it (see the module doc)."""

    # -- the engine (gangkit.engine)
    #: the ``engine="auto"`` setting's lean engines for the plainest one-pod gang runs (gangkit.engine.lean)
    lean_engine: bool = True
    #: arrivals as one callback event per submit time, not a SimPy process waiting from batch to batch
    arrival_callbacks: bool = True
    # -- kube-scheduler (gangkit.placement)
    #: without preemption, the queue kept by groups of pods (gangkit.placement.kube_queue), not pod by pod
    grouped_queue: bool = True
    # -- Volcano (gangkit.volcano.shortcuts)
    #: a job whose trial failed is not tried again in a session while nothing it needs has come free
    skip_repeated_failures: bool = True
    #: a failed job's shortfall (the GPUs it needs at the least) is kept until capacity grows by that much
    remember_shortfall: bool = True
    #: a trial that fits is bound with what it took, not given back and taken again
    keep_trials: bool = True
    #: a gang of identical GPU pods is refused without a trial when the free GPUs cannot hold it in pieces
    count_fits: bool = True
    #: with keep_trials, the gang check and the commit of a kept trial in one pass
    direct_commit: bool = True
    #: a job's shape (its pods' requests) kept until its pods may change
    keep_shapes: bool = True
    #: the PodGroups' lines counted as jobs come and go, not gathered anew per session
    count_lines: bool = True
    #: a session in which nothing changed since the last (no job, no capacity) is skipped
    skip_clean_sessions: bool = True
    #: backfilling's reservation book: memos per shape and the cheap tests before the search
    reservation_shortcuts: bool = True
    # -- Kueue (gangkit.kueue.shortcuts)
    #: a pending workload's scheduling hash computed once
    cache_scheduling_hash: bool = True
    #: a nomination that needs preemption reuses the victims the flavor assigner just asked for
    reuse_targets: bool = True
    #: a class's last failed flavor assignment replayed while its quota checks come out the same
    fast_reject: bool = True
    #: with fast_reject, a class's last fitting assignment replayed the same way
    fast_fit: bool = True
    #: with fast_reject, a BestEffortFIFO head whose class's failure replays is parked where it stands
    fast_park: bool = True

    @classmethod
    def none(cls) -> "FastPaths":
        """No shortcut: the plain algorithms."""
        return cls(**{f.name: False for f in dataclasses.fields(cls)})

    def problems(self) -> list[str]:
        """What is wrong with the value: each field must be True or False."""
        return [f"{f.name}: expected True or False, got {getattr(self, f.name)!r}"
                for f in dataclasses.fields(self) if not isinstance(getattr(self, f.name), bool)]


#: every shortcut taken: the default of the run settings and of the layers' constructors
ALL_ON = FastPaths()
