"""Kueue's quota over a run, as tables: what each ClusterQueue reserves, borrows and lends, and the cohort tree.

The data :func:`gangkit.plots.quota` draws (and ``gk.plots`` re-exports):
:func:`quota_table` per ClusterQueue, flavor and instant, :func:`cohort_tree`
the ClusterQueues under their Cohorts with their quotas, and
:func:`cohort_tree_text` the tree as lines of text. Kueue v0.19's rules,
from ``pkg/cache/scheduler/resource_node.go`` (``localQuota``,
``SubtreeQuota``, ``addUsage``), ``clusterqueue_snapshot.go``
(``BorrowingWith``: usage above nominal is borrowing) and ``cache.go``
(``getUsage``: the status's ``borrowed``); "lent" is gangkit's own
attribution, as Kueue records no lender (see :func:`quota_table`).
"""

from __future__ import annotations

import math

import pandas as pd

#: The metric :func:`quota_table` reads (gangkit.kueue.metrics).
_RESERVATION = "kueue_cluster_queue_resource_reservation"
#: The columns of :func:`quota_table`.
QUOTA_TABLE_COLUMNS = ["time_s", "kind", "name", "cohort", "flavor", "resource", "nominal", "reserved", "borrowed",
                       "lendable", "lent", "borrowing_limit", "lending_limit"]
#: The columns of :func:`cohort_tree`.
COHORT_TREE_COLUMNS = ["tree", "kind", "name", "parent", "flavor", "resource", "nominal", "borrowing_limit",
                       "lending_limit", "subtree_quota"]


def _kueue_setup(result_or_setup, resource: str):
    """The Kueue objects a run used: a KueueSetup as given, a Scenario's or a Result's scenario's, or, for a
    ``kueue+`` run of a scenario without Kueue objects, gangkit's default ClusterQueue (its quota read from
    the run's reservation metric)."""
    from gangkit.kueue.layer import default_objects
    from gangkit.kueue.objects import KueueSetup

    if isinstance(result_or_setup, KueueSetup):
        return result_or_setup
    metrics = getattr(result_or_setup, "metrics", None)
    if metrics is not None and _RESERVATION not in metrics:
        raise ValueError(f"Result {result_or_setup.scenario_name!r} (stack {result_or_setup.stack!r}): metrics has "
                         f"no {_RESERVATION!r}: the run had no Kueue layer; quota pictures need a kueue+ stack "
                         "(for example stack='kueue+gang')")
    scenario = getattr(result_or_setup, "scenario", result_or_setup)
    setup = getattr(scenario, "kueue", None)
    if setup is not None:
        return setup
    if metrics is None:
        raise ValueError(f"{type(result_or_setup).__name__}: expected a Result of a kueue+ stack, a Scenario with "
                         "Kueue objects (scenario.kueue) or a KueueSetup")
    m = metrics[_RESERVATION]
    nominal = m.loc[m["resource"] == resource, "nominal"]
    return default_objects(scenario, int(nominal.iloc[0]) if len(nominal) else None)


def _limit(value):
    return None if value is None else int(value)


def cohort_tree(result_or_setup, resource: str = "nvidia.com/gpu") -> pd.DataFrame:
    """The cohort tree: every Cohort with the Cohorts and ClusterQueues under it, and their quotas of ``resource``.

    ``result_or_setup`` is a :class:`gangkit.Result` of a ``kueue+`` stack, a
    :class:`gangkit.Scenario` with Kueue objects or a
    :class:`gangkit.kueue.objects.KueueSetup`. One row per node and flavor of
    ``resource``, depth first, parents before children (a node without quota of
    ``resource`` has one row with flavor ``""`` and nominal 0); a ClusterQueue
    without a cohort is a tree of its own. Columns (:data:`COHORT_TREE_COLUMNS`):
    ``tree`` (the name indented under its parent), ``kind`` (``Cohort`` or
    ``ClusterQueue``), ``name``, ``parent``, ``flavor``, ``resource``,
    ``nominal`` (``nominalQuota``), ``borrowing_limit`` and ``lending_limit``
    (``borrowingLimit`` and ``lendingLimit``; None when unset, which Kueue's
    ``kueue_cluster_queue_borrowing_limit`` and ``kueue_cluster_queue_lending_limit``
    report as +Inf), and ``subtree_quota``: the node's quota plus what its
    children lend up, each child capped by its lendingLimit, as Kueue's
    ``resource_node.go`` (v0.19) computes ``SubtreeQuota`` and
    ``kueue_cohort_subtree_quota`` reports it for a Cohort. Cohorts named by a
    ClusterQueue but never created are Kueue's implicit cohorts, without quota.
    """
    from gangkit.kueue.quota import QuotaTree

    setup = _kueue_setup(result_or_setup, resource)
    tree = QuotaTree(setup.cluster_queues, setup.cohorts)
    roots = sorted({n.root() for n in list(tree.cq.values()) + list(tree.cohort.values())}, key=_root_key(setup))
    rows: list[tuple] = []

    def walk(node, depth: int, last: bool, prefix: str) -> None:
        label = node.name if depth == 0 else prefix + ("└─ " if last else "├─ ") + node.name
        kind = "ClusterQueue" if node.is_cluster_queue else "Cohort"
        parent = node.parent.name if node.parent is not None else None
        frs = sorted(fr for fr in (node.quotas if node.is_cluster_queue else node.subtree) if fr[1] == resource)
        frs = frs or [("", resource)]
        for fr in frs:
            q = node.quotas.get(fr)
            rows.append((label, kind, node.name, parent, fr[0], resource, q.nominal if q else 0,
                         _limit(q.borrowing_limit) if q else None, _limit(q.lending_limit) if q else None,
                         int(node.subtree.get(fr, 0))))
        children = node.children
        deeper = "" if depth == 0 else prefix + ("   " if last else "│  ")
        for i, child in enumerate(children):
            walk(child, depth + 1, i == len(children) - 1, deeper)

    for root in roots:
        walk(root, 0, True, "")
    return _frame(rows, COHORT_TREE_COLUMNS, ("parent", "borrowing_limit", "lending_limit"))


def _frame(rows: list[tuple], columns: list[str], nullable: tuple[str, ...]) -> pd.DataFrame:
    """``rows`` as a DataFrame whose ``nullable`` columns keep None and integers as given (not NaN and floats)."""
    out = pd.DataFrame(rows, columns=columns)
    for name in nullable:
        i = columns.index(name)
        out[name] = pd.Series([r[i] for r in rows], index=out.index, dtype=object)
    return out


def _root_key(setup):
    """Trees in the order of the setup's ClusterQueues (the first ClusterQueue of each tree decides)."""
    order = {q.name: i for i, q in enumerate(setup.cluster_queues)}

    def key(root):
        stack, best = [root], len(order)
        while stack:
            n = stack.pop()
            if n.is_cluster_queue:
                best = min(best, order.get(n.name, len(order)))
            stack.extend(n.children)
        return best, root.name

    return key


class _Lender:
    """A part of a cohort that can lend: a ClusterQueue's, or a Cohort's own, unused quota (a leaf), or a
    child Cohort (its parts). :meth:`give` takes ``x`` from it, a Cohort's ``x`` shared among its parts in
    proportion to what each has left."""

    __slots__ = ("name", "kind", "spare", "lent", "parts")

    def __init__(self, name: str, kind: str, spare: float, parts: list | None = None):
        self.name, self.kind, self.spare, self.lent, self.parts = name, kind, spare, 0.0, parts

    def give(self, x: float) -> None:
        if x <= 0:
            return
        self.spare -= x
        if self.parts is None:
            self.lent += x
            return
        _share(self.parts, x)


def _share(parts: list, x: float) -> None:
    """Take ``x`` from ``parts`` in proportion to what each has left."""
    total = sum(p.spare for p in parts)
    shares = [x * p.spare / total for p in parts]  # all shares first: give() changes spare
    for p, s in zip(parts, shares):
        p.give(s)


def _settle(node, fr, reserved: dict, leaves: dict) -> tuple[float, _Lender | None]:
    """What ``node`` borrows from its parent and what it can lend it, at one instant, for one (flavor, resource).

    A ClusterQueue borrows ``reserved - nominal`` when positive and can lend
    its unused nominal quota up to its lendingLimit. A Cohort first serves
    its children's borrowing from its own quota and its children's lendable
    quota, each part giving in proportion to what it can lend; what is left
    unserved it borrows from its parent, and what is left unlent it can lend
    its parent, up to its own lendingLimit. ``leaves`` collects the leaf
    lenders by (kind, name).
    """
    q = node.quotas.get(fr)
    nominal = q.nominal if q else 0
    cap = math.inf if q is None or q.lending_limit is None else q.lending_limit
    if node.is_cluster_queue:
        used = reserved.get(node.name, 0)
        leaf = _Lender(node.name, "ClusterQueue", max(0.0, min(nominal - used, cap)))
        leaves[("ClusterQueue", node.name)] = leaf
        return max(0.0, used - nominal), leaf
    parts = []
    if nominal > 0:
        own = leaves[("Cohort", node.name)] = _Lender(node.name, "Cohort", float(nominal))
        parts.append(own)
    need = 0.0
    for child in node.children:
        child_need, lender = _settle(child, fr, reserved, leaves)
        need += child_need
        if lender is not None and lender.spare > 0:
            parts.append(lender)
    have = sum(p.spare for p in parts)
    served = min(need, have)
    if served > 0:
        _share(parts, served)
    return need - served, _Lender(node.name, "Cohort", min(have - served, cap), parts)


def _reservations(result, resource: str) -> pd.DataFrame:
    """The reservation metric of ``resource``: one column per (ClusterQueue, flavor), one row per instant
    at which one changed (its last value of the instant), carried forward; zero before a first row."""
    m = result.metrics[_RESERVATION]
    m = m[m["resource"] == resource]
    wide = (m.assign(time_s=m["time_s"].astype(float))
            .groupby(["time_s", "cluster_queue", "flavor"], sort=True)["reserved"].last()
            .unstack(["cluster_queue", "flavor"]).ffill().fillna(0))
    if wide.empty or float(wide.index[0]) > 0:
        wide = pd.concat([pd.DataFrame(0, index=[0.0], columns=wide.columns), wide])
    same = (wide.diff().abs().sum(axis=1) == 0) & (wide.index > wide.index[0])  # an instant's changes undone
    return wide[~same]


def quota_table(result, *, resource: str = "nvidia.com/gpu", until: float | None = None,
                cluster_queues=None) -> pd.DataFrame:
    """What :func:`gangkit.plots.quota` draws: per ClusterQueue (and Cohort with quota of its own), flavor and instant, its
    nominal quota, what it reserves, borrows and lends.

    ``result`` is a :class:`gangkit.Result` of a ``kueue+`` stack (a clear
    error otherwise). One row per node and flavor of ``resource`` at time 0,
    at every instant at which some ClusterQueue's reservation changed, and at
    the end of the picture (``until``, default the end of the run); each row
    holds until the next. Columns (:data:`QUOTA_TABLE_COLUMNS`):

    - ``kind`` (``ClusterQueue``, or ``Cohort`` for a Cohort's own quota),
      ``name``, ``cohort`` (its parent Cohort), ``flavor``, ``resource``;
    - ``nominal``: its ``nominalQuota`` (Kueue's gauge
      ``kueue_cluster_queue_nominal_quota``);
    - ``reserved``: the quota its admitted workloads reserve (Kueue's gauge
      ``kueue_cluster_queue_resource_reservation``, as
      ``result.metrics`` holds it);
    - ``borrowed``: ``reserved - nominal`` where positive and the
      ClusterQueue is in a cohort, else 0: the ClusterQueue's
      ``status.flavorsReservation[].resources[].borrowed``
      (``pkg/cache/scheduler/cache.go``, v0.19; Kueue exports no metric of it);
    - ``lendable``: its unused nominal quota that its cohort may use:
      ``min(nominal - reserved, lendingLimit)``, at least 0 (with a
      lendingLimit, ``nominal - lendingLimit`` stays its own: Kueue's
      ``localQuota`` in ``resource_node.go``);
    - ``lent``: gangkit's own figure, since Kueue records no lender for a
      cohort's borrowing (a ClusterQueue's usage beyond its ``localQuota``,
      ``nominal - lendingLimit``, 0 without a lendingLimit, is charged to its
      Cohort's pooled quota as one sum: ``addUsage`` in ``resource_node.go``;
      borrowing itself is usage above nominal, ``BorrowingWith``). Each Cohort serves its ClusterQueues' (and child
      Cohorts') borrowing from its own quota and their ``lendable`` quota,
      every lender giving in proportion to what it can lend; what a Cohort
      cannot serve it borrows from its parent, served the same way one level
      up. So ``lent <= lendable``, ``lent + min(reserved, nominal) <= nominal``,
      and at each instant the lenders of a cohort tree lend together what
      its ClusterQueues borrow;
    - ``borrowing_limit``, ``lending_limit``: ``borrowingLimit`` and
      ``lendingLimit`` (None when unset).

    ``cluster_queues`` keeps the rows of those ClusterQueues (all lenders are
    still counted). Simulated seconds; nothing depends on the wall clock.
    """
    from gangkit.kueue.quota import QuotaTree

    setup = _kueue_setup(result, resource)
    tree = QuotaTree(setup.cluster_queues, setup.cohorts)
    wide = _reservations(result, resource)
    end = float(result.figures["makespan_s"]) if until is None else float(until)
    wide = wide[wide.index <= end]
    if float(wide.index[-1]) < end:
        wide = pd.concat([wide, wide.iloc[[-1]].set_axis([end])])
    keep = None if cluster_queues is None else set(_known_queues(cluster_queues, tree))
    frs = sorted({fr for node in list(tree.cq.values()) + list(tree.cohort.values()) for fr in node.quotas
                  if fr[1] == resource})
    roots = sorted({n.root() for n in tree.cq.values()}, key=lambda n: n.name)
    rows: list[tuple] = []
    for t, values in zip(wide.index, wide.to_numpy(dtype=float)):
        for fr in frs:
            reserved = {cq: v for (cq, flavor), v in zip(wide.columns, values) if flavor == fr[0]}
            leaves: dict = {}
            for root in roots:
                _settle(root, fr, reserved, leaves)
            rows.extend(_quota_rows(float(t), fr, tree, reserved, leaves, keep))
    out = _frame(rows, QUOTA_TABLE_COLUMNS, ("cohort", "borrowing_limit", "lending_limit"))
    return out.sort_values(["time_s", "kind", "name", "flavor"], kind="stable", key=_kind_first).reset_index(drop=True)


def _kind_first(col: pd.Series) -> pd.Series:
    """Sort ClusterQueue rows before Cohort rows."""
    return col.map({"ClusterQueue": 0, "Cohort": 1}) if col.name == "kind" else col


def _known_queues(names, tree) -> list[str]:
    names = [names] if isinstance(names, str) else list(names)
    unknown = [n for n in names if n not in tree.cq]
    if unknown:
        raise ValueError(f"cluster_queues: no ClusterQueue {', '.join(map(repr, unknown))} in this run; "
                         f"expected some of {', '.join(map(repr, tree.cq))}")
    return names


def _quota_rows(t: float, fr, tree, reserved: dict, leaves: dict, keep) -> list[tuple]:
    """The rows of one instant and one (flavor, resource): every ClusterQueue with quota of it, and every
    Cohort with quota of its own."""
    rows = []
    for name, node in tree.cq.items():
        q = node.quotas.get(fr)
        if q is None or (keep is not None and name not in keep):
            continue
        used = reserved.get(name, 0.0)
        leaf = leaves.get(("ClusterQueue", name))
        in_cohort = node.parent is not None
        lendable = max(0.0, min(q.nominal - used, math.inf if q.lending_limit is None else q.lending_limit))
        rows.append((t, "ClusterQueue", name, node.parent.name if in_cohort else None, fr[0], fr[1], q.nominal,
                     used, max(0.0, used - q.nominal) if in_cohort else 0.0, lendable if in_cohort else 0.0,
                     round(leaf.lent, 9) if leaf is not None else 0.0, _limit(q.borrowing_limit),
                     _limit(q.lending_limit)))
    if keep is None:
        for name, node in tree.cohort.items():
            q = node.quotas.get(fr)
            leaf = leaves.get(("Cohort", name))
            if q is None or q.nominal <= 0 or leaf is None:
                continue
            rows.append((t, "Cohort", name, node.parent.name if node.parent is not None else None, fr[0], fr[1],
                         q.nominal, 0.0, 0.0, float(q.nominal), round(leaf.lent, 9), _limit(q.borrowing_limit),
                         _limit(q.lending_limit)))
    return rows


def cohort_tree_text(tree: pd.DataFrame) -> str:
    """The cohort tree as lines of text: each node with its nominal quota and limits (``-``: unset)."""
    def show(v) -> str:
        return "-" if v is None or (isinstance(v, float) and math.isnan(v)) else f"{int(v)}"

    width = max(len(s) for s in tree["tree"])
    lines = []
    for row in tree.itertuples(index=False):
        flavor = f" [{row.flavor}]" if row.flavor else ""
        words = (f"nominal {row.nominal}, borrowingLimit {show(row.borrowing_limit)}, "
                 f"lendingLimit {show(row.lending_limit)}")
        if row.kind == "Cohort":
            words = f"Cohort, subtree quota {row.subtree_quota}" + (f"; own {words}" if row.nominal else "")
        lines.append(f"{row.tree:<{width}}  {words}{flavor}")
    return "\n".join(lines)
