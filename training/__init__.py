"""Training, in five rooms, each importing only the rooms listed before it.

- `arena`: where training hands are played: the league, self-play over the batched engines, the
  Gymnasium envs (one seat, or a batch), the match reward.
- `harness`: what every run stands on: its config and bounds, YAML files, run folder, checkpoints,
  evaluation records, progress and placement.
- `data`: what agents read that is fitted from played hands: hand readers and their labelled
  positions, match-equity tables, teach labels.
- `trainers`: the lean masked PPO (actors, rollouts, model, loss), the MaskablePPO trainer, imitation,
  expert iteration, and the shipped bots they make.
- `best_response`: exploitability, a best responder trained or searched against a frozen agent.
"""
