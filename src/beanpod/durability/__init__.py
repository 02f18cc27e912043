"""The write-ahead log's own room, between the server and the engine + byte log.

What the engine's mutations become on disk and how they come back: the record codec
(records.py), restore and the snapshot format (restore.py, snapshot.py), the journal the
engine writes through (journal.py), group commit (commit.py), compaction (compactor.py),
start-up replay and its progress (startup.py, replay.py, progress.py), checkpoints and
their builder process (checkpoint.py, snapshot_builder.py), all put together by wal.py.
storage/ below stays the job-blind byte log; the server names this package only where it
composes itself (server/app.py). docs/wal.md describes the format.
"""
