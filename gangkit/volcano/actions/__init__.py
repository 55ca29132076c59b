"""Volcano's actions: enqueue, allocate, backfill, preempt and reclaim."""
