"""The HTTP surface (aiohttp, on the server's own event loop): /metrics, /healthz, /readyz,
and the routes other modules add (JSON admin API, dashboard). Reads the engine only through
`beanpod.core.query`; changes go through the engine's operations like a protocol command."""
