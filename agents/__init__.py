"""Agents that play Patchwork."""
