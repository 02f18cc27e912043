"""Holding the server's edge: memory and connection limits, the allow-list and protected
mode, TLS, unix-socket permissions and the audit log (docs/security.md)."""
