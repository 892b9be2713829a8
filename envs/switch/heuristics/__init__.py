"""What Switch's heuristics know of the game, apart from the agents (`cardlab.agents.heuristics.switch`):
the compiled kernels of the greedy and the expert (`kernels`), which the game's fast paths
(`cardlab.envs.switch.fast`) call too."""
