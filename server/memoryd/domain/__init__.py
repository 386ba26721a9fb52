"""Domain layer: memory semantics, independent of gRPC and of any database."""
