"""Training: the trainers (MaskablePPO, the lean PPO of `ppo.py`), self-play, leagues, imitation and bots."""
