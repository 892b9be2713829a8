"""Evaluation: seat-rotated hands and matches between agents, tournaments, and their statistics.

`evaluate.evaluate` and `tournament.tournament` are the entry points; the
Ray versions (`cardlab.cluster.parallel_evaluation`) play the same `evaluate.play_deals`.
"""
