"""Prometheus metrics (off unless a metrics port is configured)."""
