"""What Huit's heuristics know of the game, apart from the agents (`cardlab.agents.heuristics.huit`): the
expert's legality model and tables (`tables`), its compiled kernels and the greedy's (`kernels`), and the
arrays they read (`arrays`). The game's fast paths (`cardlab.envs.huit.fast`) call the kernels too."""
