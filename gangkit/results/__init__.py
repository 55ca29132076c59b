"""What a run leaves behind: Result, per-layer metrics, wait metrics, diagnosis, plots."""
