"""cluster-autoscaler's expander: which node group to scale up when several could help.

Picture a shop with several sizes of box. An order can be packed into a few
big boxes or many small ones; the clerk picks the option that leaves the
least empty space. cluster-autoscaler does the same with node groups: for
each group that could take some of the pending pods it simulates the new
nodes (an *option*: the group, how many nodes, which pods they would hold),
and its *expander* (``--expander``) picks one option:

- ``least-waste``, CA's default since 1.33 (``config/flags/flags.go``; up to
  1.32 it was ``random``): the option whose new nodes waste the smallest
  fraction of CPU plus fraction of memory (:func:`waste`; GPUs do not count),
  a tie drawn from the run's seeded generator, as CA's expander chain ends in
  a random choice (``expander/factory/chain.go``);
- ``random``: any option, from the run's seeded generator;
- ``most-pods``: the option that helps the most pods;
- ``price``: the lowest price of the new nodes.

Simplified: ``most-pods`` and ``price`` break ties by group name where CA
draws at random, and CA's ``price`` also weighs a preferred node size;
``priority``, ``least-nodes``, ``grpc`` and comma-separated chains are not
modelled.
"""

from __future__ import annotations

EXPANDERS = ("random", "least-waste", "most-pods", "price")
#: ``--expander``'s default: ``least-waste`` since cluster-autoscaler 1.33 (``random`` up to 1.32).
DEFAULT_EXPANDER = "least-waste"


def fraction_wasted(capacity: float, count: int, requested: float) -> float:
    """The share of ``count`` nodes' ``capacity`` that ``requested`` leaves unused (0 without capacity)."""
    avail = capacity * count
    return (avail - requested) / avail if avail else 0.0


def waste(g, count: int, reqs: list) -> float:
    """The ``least-waste`` score of scaling node group ``g`` up by ``count`` nodes for ``reqs``: CA's rule.

    ``reqs`` are the requests ``(gpus, cpu, memory, selector)`` of the pods the
    option helps. CA (``cluster-autoscaler/expander/waste/waste.go``, the same
    rule in 1.30 to 1.36) adds the wasted fraction of CPU, ``(capacity x nodes
    - requested) / (capacity x nodes)`` in millicores, to the wasted fraction
    of memory in bytes, using the template node's capacity and the requests of
    the pods the option helps; GPUs do not count. A pod with no request asks
    for 0, as in CA. gangkit's instance types may leave CPU or memory unstated
    (a GPU-only scenario): a resource the type does not state is scored with
    the GPU fraction instead, as if the type's CPU and memory and the pods'
    requests were proportional to GPUs (so a GPU-only option scores twice its
    idle-GPU fraction). That stand-in is gangkit's, not CA's. A resource with
    no capacity at all scores 0 (CA would divide by zero).
    """
    it = g.instance_type
    gpus = fraction_wasted(it.gpus, count, sum(r[0] for r in reqs))
    cpu = gpus if it.cpu is None else fraction_wasted(round(it.cpu * 1000), count,
                                                      sum(round((r[1] or 0.0) * 1000) for r in reqs))
    memory = gpus if it.memory is None else fraction_wasted(it.memory, count, sum(r[2] or 0 for r in reqs))
    return cpu + memory


def choose(expander: str, options: list[tuple], rng):
    """The expander's choice among scale-up options ``(group, nodes, requests helped, least-waste score)``.

    ``least-waste`` keeps the options with the lowest score (exact equality
    makes a tie, as in CA) and, when more than one is left, draws one with
    ``rng`` (the run's seeded generator).
    """
    if expander == "random":
        return options[rng.randrange(len(options))] if len(options) > 1 else options[0]
    if expander == "least-waste":
        best = min(o[3] for o in options)
        tied = [o for o in options if o[3] == best]
        return tied[rng.randrange(len(tied))] if len(tied) > 1 else tied[0]
    if expander == "most-pods":
        key = lambda o: (-len(o[2]), o[0].name)  # noqa: E731
    else:  # price
        key = lambda o: (o[1] * o[0].instance_type.price_per_hour, o[0].name)  # noqa: E731
    return min(options, key=key)
