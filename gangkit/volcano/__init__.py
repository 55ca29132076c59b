"""Volcano's scheduler, laid out like its own pkg/scheduler: the session, its actions, its plugins."""
