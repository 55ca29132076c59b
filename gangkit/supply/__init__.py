"""Node suppliers: Karpenter and cluster-autoscaler."""
