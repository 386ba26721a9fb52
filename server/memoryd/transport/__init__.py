"""Transport layer: gRPC servicers, validation, authentication and status mapping."""
