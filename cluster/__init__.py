"""Scale-out on Ray (the optional ``ray`` extra): what runs on many cores or machines.

- `cardlab.cluster.parallel_evaluation`: evaluation and tournaments as Ray tasks over blocks of deals, equal
  to the serial results record for record (``cardlab eval/tournament --workers N --ray-address ADDR``);
- `cardlab.cluster.sweep`: ``cardlab sweep``, a Ray Tune experiment over a training config;
- `cardlab.cluster.pool`: a population's snapshots shared through Ray's object store;
- `cardlab.cluster.botfiles`: bots sent as their files' bytes and checked on arrival;
- `cardlab.cluster.runtime`: importing Ray, starting a local one or joining a cluster.

Nothing here imports Ray until it is used, so cardlab runs without the extra.
"""
