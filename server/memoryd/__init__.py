"""memoryd: conversation memory for LLM agents over gRPC."""

__version__ = "0.1.0"
