"""The write-ahead log: segment files of CRC-checked records (knows records, not jobs)."""
