"""Training, evaluation and the command line."""
