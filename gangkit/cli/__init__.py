"""The gangkit command."""

from gangkit.cli.main import main

__all__ = ["main"]
