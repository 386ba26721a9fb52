"""GetSummaryCursor after the tenant gives its session to a user (docs/SECURITY.md "Session
ownership"), on every adapter: the user's summary_count counts only the slices saved under
its stamp, the tenant's counts every slice, and the cursor is the session's (where the next
SaveSummary starts, whoever saved the slices below it). A cursor record written before the
per-owner counts were kept is counted from the stored slices the user may read."""

from __future__ import annotations

from memoryd.domain.limits import Limits
from memoryd.domain.sessions import SessionAttributes
from memoryd.domain.summaries import COUNTS_KEY, CURSOR_NAMESPACE, Summaries, cursor_key
from tests.conformance.test_messages import msg, save


async def test_a_users_cursor_counts_only_its_slices(memory, store, tenant):
    summaries = Summaries(store, Limits())
    await save(memory, tenant, "s", msg("one", 1), msg("two", 2))
    await summaries.save(tenant, "s", 1, 1, "tenant's first", {})
    await summaries.save(tenant, "s", 2, 2, "tenant's second", {})
    await memory.update_session(tenant, "s", SessionAttributes(user_id="bob.smith"), [])
    await memory.save_messages(tenant, "s", [msg("three", 3)], claimed_by="bob.smith")
    await summaries.save(tenant, "s", 3, 3, "b's", {})

    tenants, bobs, alices = [await summaries.get_cursor(tenant, "s", reader) for reader in (None, "bob.smith", "alice")]
    assert (tenants.cursor, tenants.summary_count, tenants.latest.text) == (3, 3, "b's")
    assert (bobs.cursor, bobs.summary_count, bobs.latest.text) == (3, 1, "b's")
    assert (alices.summary_count, alices.latest) == (0, None)

    # A record without per-owner counts (written by an earlier version): the stored slices.
    entry = await store.get_metadata(tenant, CURSOR_NAMESPACE, cursor_key("s"))
    legacy = {k: v for k, v in entry.data.items() if k != COUNTS_KEY}
    await store.save_metadata(tenant, CURSOR_NAMESPACE, cursor_key("s"), legacy, 0)
    assert (await summaries.get_cursor(tenant, "s", "bob.smith")).summary_count == 1
    assert (await summaries.get_cursor(tenant, "s")).summary_count == 3
