"""Placement layers that bind pods to nodes: kube-scheduler, the Permit waiting room, coscheduling, kube-gang, YuniKorn."""
