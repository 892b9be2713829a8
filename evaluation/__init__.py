"""Evaluation of agents: seat-rotated deals, win rates and the statistics that say how sure they are."""
