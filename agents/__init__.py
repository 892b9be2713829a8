"""Agents: one interface for random, heuristic and trained players."""
