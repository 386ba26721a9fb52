"""Qdrant adapter of the vector index."""
