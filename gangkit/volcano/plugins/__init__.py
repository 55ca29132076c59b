"""Volcano's plugins: gang and proportion."""
