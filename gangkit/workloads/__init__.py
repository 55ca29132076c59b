"""Workloads: built-in scenarios, generators and real traces."""
