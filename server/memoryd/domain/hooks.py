"""What the message domain tells other subsystems (the vector index) about changes that must
take effect before the call answers: deletes and clears. Saves and rewrites need no call:
the recall index's log consumer finds them in the event log (consumers/runtime.py).

The default implementation has no vector store: vector clears report SKIPPED.
"""

from __future__ import annotations

from collections.abc import Sequence

from memoryd.domain.models import ClearOutcome, ClearResult, ClearTarget, Message


class MessageHooks:
    """The calls `Memory` makes after each message write; VectorRecall (vectors/recall.py) implements them."""

    # Whether a vector store is behind these hooks (what a clear of nothing reports).
    has_vector_store = False

    async def messages_deleted(self, tenant: str, session_id: str, removed: Sequence[Message]) -> None:
        """Called after messages were deleted or replaced (vector removal)."""

    async def summaries_deleted(self, tenant: str, session_id: str | None, cleared_at: int) -> None:
        """Called after a session's summary slices (the tenant's when session_id is None) were
        deleted with its metadata at `cleared_at` (ClearSession / ClearAll with METADATA,
        ForgetUser, retention). The event log says so too: this only makes it quicker."""

    async def clear_vectors(self, tenant: str, session_id: str | None) -> ClearResult:
        """Clear one session's vectors, or the tenant's when session_id is None."""
        return ClearResult(ClearTarget.VECTORS, ClearOutcome.SKIPPED, error="no vector store is configured")
