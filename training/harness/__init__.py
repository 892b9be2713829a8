"""What every run stands on: config, bounds, YAML files, run folder, checkpoints, records and progress.

Shared by both trainers and the data fitters; it imports only `arena` (the envs a config names).
"""
