"""Many runs: comparisons of stacks, sweeps, and Kueue's decision on a snapshot."""
