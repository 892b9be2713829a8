"""Scale-out on Ray: parallel evaluation and tournaments, Tune sweeps, a shared league pool."""
