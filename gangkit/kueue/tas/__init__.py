"""Kueue's Topology-Aware Scheduling (TAS, Kueue v0.19): admission that counts the room on the nodes.

Three modules, one concept each: :mod:`.search` finds where one pod set fits
in a Topology (Kueue's ``tas_flavor_snapshot.go``); :mod:`.cache` keeps the
TAS flavors' nodes and the room TAS workloads hold, and does Kueue's TAS
steps in a scheduling cycle (``tas_cache.go``, ``tas_flavorassigner.go``);
:mod:`.manifests` reads and writes Topologies, TAS flavors and the pod
templates' topology annotations. ``docs/reference/kueue.md`` (section
"Topology-Aware Scheduling") lists the rules and every simplification.
"""
