"""The trainers: the lean masked PPO, the MaskablePPO trainer, imitation, expert iteration, shipping.

The lean trainer is split into actors, rollouts, its model and the PPO loss; `train` picks a trainer.
"""
