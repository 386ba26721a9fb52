"""MongoDB storage adapter (PyMongo's native async API)."""

from memoryd.storage.mongo.store import MongoStore

__all__ = ["MongoStore"]
