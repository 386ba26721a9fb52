"""The HTTP/JSON transport: memoryd's contract over the Connect protocol (see docs/HTTP.md)."""
