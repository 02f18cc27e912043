"""A cluster node's tuning defaults, in one place for the CLI, the server's config and
the node's settings (this module imports nothing: a single node loads no cluster code)."""

CHECKPOINT_BATCHES = 1000  # with -b DIR, a checkpoint every this many batches
TRIM_EVERY = 10.0  # s: the leader trims the log at most this often
DEFRAG_EVERY = 3600.0  # s: ... and defragments etcd's members at most this often (0: never)
