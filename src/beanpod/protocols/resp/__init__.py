"""The Redis-protocol (RESP) door onto the qless engine: what qless's own clients send
(docs/qless.md "Using qless's own clients")."""
