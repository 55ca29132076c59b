"""Scenarios written as Kubernetes manifests: reading, the kinds gangkit knows, writing."""
