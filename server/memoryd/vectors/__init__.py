"""Vector recall: SearchMemory, vector upserts and deletes, and keeping Qdrant in step with the message store."""
