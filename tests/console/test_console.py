"""The console (/console/) in headless Chromium: every view opens and shows what the token
gets over the API, no more; write controls only with the scope; a deletion reaches the
timeline and the live view; one tenant's page never shows another's data.

Screenshots of each view (laptop and phone widths) go to the test's tmp dir; with
MEMORYD_CONSOLE_SCREENSHOTS=<dir> they are written there too (docs/console/ was made so).
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from urllib.parse import quote

import pytest

from tests.console.conftest import OTHER, OWNED, SESSION

LAPTOP = {"width": 1280, "height": 860}
PHONE = {"width": 390, "height": 844}
TOKEN_KEY = "memoryd.console.token"
SCORE_PARTS = ["score", "relevance", "semantic_score", "keyword_score", "neighbor_lift", "date_lift", "slice_lift"]


async def open_console(browser, served, who: str, route: str, viewport=LAPTOP):
    """A page of its own (a fresh context: its own sessionStorage) with `who`'s token."""
    context = await browser.new_context(viewport=viewport)
    await context.add_init_script(f"sessionStorage.setItem({json.dumps(TOKEN_KEY)}, {json.dumps(served.tokens[who])})")
    page = await context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.errors = errors
    await page.goto(f"{served.base}/console/{route}")
    await settled(page)
    return page


async def settled(page):
    await page.wait_for_selector("body[data-ready='true']")
    await page.wait_for_selector("main:not([aria-busy])")


async def go(page, route: str):
    await page.evaluate("route => { location.hash = route }", route)
    await page.wait_for_function("route => decodeURIComponent(location.hash) === decodeURIComponent(route)", arg=route)
    await settled(page)


async def texts(page, selector: str) -> list[str]:
    return await page.locator(selector).evaluate_all("els => els.map(e => e.textContent)")


async def attrs(page, selector: str, name: str) -> list[str]:
    return await page.locator(selector).evaluate_all("(els, name) => els.map(e => e.getAttribute(name))", name)


def fixed(value) -> str:
    return f"{float(value or 0):.4f}"


@pytest.fixture(scope="module")
def shots(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("console-screenshots")


async def screenshot(page, shots: Path, name: str) -> None:
    path = shots / f"{name}.png"
    await page.screenshot(path=str(path), full_page=False)
    if target := os.environ.get("MEMORYD_CONSOLE_SCREENSHOTS"):
        Path(target).mkdir(parents=True, exist_ok=True)
        shutil.copy(path, Path(target) / path.name)


VIEWS = [
    ("sessions", "#/sessions", "h2#sessions-title"),
    ("timeline", f"#/session/{SESSION}", "table[data-testid=timeline]"),
    ("recall", "#/recall?q=ryokan", "table[data-testid=hits]"),
    ("summaries", "#/recall?q=Kyoto&what=summaries", "table[data-testid=summary-hits]"),
    ("memory", "#/memory?user=ann&superseded=1", "table[data-testid=facts]"),
    ("live", "#/live?after=0", "[data-testid=events] li[data-type=EVENT_TYPE_MESSAGES_APPENDED]"),  # replayed
    ("ops", "#/ops", "table[data-testid=vector-stats]"),
]


async def test_every_view_opens_at_laptop_and_phone_width(browser, served, shots):
    for viewport_name, viewport in (("laptop", LAPTOP), ("phone", PHONE)):
        page = await open_console(browser, served, "admin", "#/sessions", viewport)
        try:
            assert "tenant acme" in await page.locator("#caller").text_content()
            for name, route, ready in VIEWS:
                await go(page, route)
                await page.wait_for_selector(ready)
                assert not await page.locator("main .error").count(), await page.locator("main").text_content()
                # nothing runs off the side: the page is no wider than the screen (wide tables
                # scroll inside their own box, and on a phone they are one card per row)
                width = await page.evaluate("() => [document.documentElement.scrollWidth, window.innerWidth]")
                assert width[0] <= width[1], (name, viewport_name, width)
                await screenshot(page, shots, f"{name}-{viewport_name}")
            assert page.errors == []
        finally:
            await page.context.close()


async def test_the_sessions_list_is_the_apis_and_leads_to_the_timeline(browser, served):
    page = await open_console(browser, served, "admin", "#/sessions")
    try:
        listed = await served.call("admin", "MemoryService/ListSessions", {"page_size": 50})
        assert await attrs(page, "tr[data-session]", "data-session") == [s["session_id"] for s in listed["sessions"]]
        # a filter is the API's filter
        await go(page, "#/sessions?user=ann")
        assert await attrs(page, "tr[data-session]", "data-session") == [OWNED]
        await go(page, "#/sessions?labels=trip%3Dkyoto")
        assert await attrs(page, "tr[data-session]", "data-session") == [SESSION]

        await page.get_by_role("link", name=SESSION).click()
        await settled(page)
        await page.wait_for_selector("table[data-testid=timeline]")
        history = await served.call("admin", "MemoryService/GetFullHistory", {"session_id": SESSION, "page_size": 100})
        assert await attrs(page, "tr[data-seq]", "data-seq") == [m["seq"] for m in history["messages"]]
        contents = await texts(page, "tr[data-seq] td.content")
        assert [c.strip() for c in contents] == [m["content"] for m in history["messages"]]  # UTF-8 as it is
        assert "我们下周去京都旅行 🚄" in contents[0] and "京都の紅葉" in contents[1]
        assert await page.locator("tr[data-seq='4'] img.thumb").count() == 1
        assert await page.locator("tr[data-seq='1'] .range.start").count() == 1  # the slice seq 1-2 over its messages
        assert await page.locator("tr[data-seq='2'] .range.end").count() == 1
        cursor = await served.call("admin", "SummaryService/GetSummaryCursor", {"session_id": SESSION})
        assert await page.get_by_test_id("cursor").text_content() == f"seq {cursor['cursor']} of {cursor['last_seq']}"
        assert page.errors == []
    finally:
        await page.context.close()


async def test_a_long_history_is_paged_with_the_apis_page_tokens(browser, served):
    page = await open_console(browser, served, "admin", f"#/session/{SESSION}?size=2")
    try:
        seen: list[str] = []
        for _ in range(5):
            seen += await attrs(page, "tr[data-seq]", "data-seq")
            following = page.locator("a[rel=next]")
            if not await following.count():
                break
            await following.click()
            await settled(page)
        history = await served.call("admin", "MemoryService/GetFullHistory", {"session_id": SESSION, "page_size": 100})
        assert seen == [m["seq"] for m in history["messages"]]
    finally:
        await page.context.close()


async def test_recall_shows_the_apis_hits_and_score_parts(browser, served):
    page = await open_console(browser, served, "reader", "#/recall")
    try:
        await page.get_by_label("Query").fill("ryokan Gion")
        await page.get_by_role("button", name="Search memory").click()
        await settled(page)
        await page.wait_for_selector("table[data-testid=hits]")
        answer = await served.call("reader", "VectorService/SearchMemory", {"query_text": "ryokan Gion"})
        assert answer["hits"], "the seeded messages are recalled"
        assert await attrs(page, "tr[data-testid=hit]", "data-message") == [
            hit.get("message_id", "") for hit in answer["hits"]
        ]
        for part in SCORE_PARTS:
            shown = await texts(page, f"tr[data-testid=hit] td[data-part={part}]")
            assert shown == [fixed(hit.get(part)) for hit in answer["hits"]], part
        assert answer["retrieval"] in await page.get_by_test_id("retrieval").text_content()

        await go(page, "#/recall?q=Kyoto&what=summaries")
        summaries = await served.call(
            "reader",
            "SummaryService/SearchSummaries",
            {"query_text": "Kyoto", "include_messages": True, "max_messages_per_hit": 5},
        )
        assert summaries["hits"]
        for part in ("score", "semantic_score", "keyword_score"):
            shown = await texts(page, f"tr[data-testid=summary-hit] td[data-part={part}]")
            assert shown == [fixed(hit.get(part)) for hit in summaries["hits"]], part
    finally:
        await page.context.close()


async def test_formed_memory_shows_the_facts_with_their_sources(browser, served):
    page = await open_console(browser, served, "admin", "#/memory?user=ann&superseded=1")
    try:
        facts = await served.call(
            "admin", "FormationService/ListFacts", {"user_id": "ann", "include_superseded": True, "page_size": 200}
        )
        assert facts["facts"], "formation formed ann's fact"
        assert await attrs(page, "tr[data-fact]", "data-fact") == [f["id"] for f in facts["facts"]]
        source = facts["facts"][0]["sources"][0]
        assert await page.locator(f"tr[data-fact] a[href='#/session/{source['session_id']}']").count()
        profile = await served.call("admin", "FormationService/GetProfile", {"user_id": "ann"})
        if profile.get("profile", {}).get("text"):
            assert profile["profile"]["text"] in await page.get_by_test_id("profile").text_content()
    finally:
        await page.context.close()


async def test_a_read_only_token_sees_no_write_controls(browser, served):
    controls = ("delete-message", "edit-message", "forget-user", "delete-fact", "correct-fact", "delete-record")
    writes = ", ".join(f"[data-testid={name}]" for name in controls)
    for who, expected in (("admin", True), ("reader", False)):
        page = await open_console(browser, served, who, "#/sessions")
        try:
            found = []
            for route in ("#/sessions", f"#/session/{SESSION}", "#/memory?user=ann"):
                await go(page, route)
                found.append(await page.locator(writes).count() > 0)
            assert all(found) if expected else not any(found), (who, found)
            if not expected:
                assert "memory:read" in await page.get_by_test_id("scopes").text_content()
        finally:
            await page.context.close()


async def test_deleting_a_message_changes_the_timeline_and_the_live_view(browser, served):
    live = await open_console(browser, served, "admin", f"#/live?session={SESSION}")
    page = await open_console(browser, served, "admin", f"#/session/{SESSION}")
    try:
        await live.wait_for_selector("[data-testid=live-state][data-live=true]")
        row = page.locator("tr[data-seq='5']")
        await row.get_by_test_id("delete-message").click()
        dialog = page.locator("dialog#confirm")
        await dialog.wait_for(state="visible")
        assert "seq 5" in await dialog.text_content() and "tea ceremony" in await dialog.text_content()
        await page.locator("#confirm-cancel").click()  # cancelled: nothing goes
        await settled(page)
        assert await page.locator("tr[data-seq='5']").count() == 1
        await row.get_by_test_id("delete-message").click()
        await page.locator("#confirm-ok").click()
        # the timeline is drawn again (it shows "Loading…" in between): seq 4 back, seq 5 gone
        await page.wait_for_function(
            "() => document.querySelector(\"tr[data-seq='4']\") && !document.querySelector(\"tr[data-seq='5']\")"
        )
        history = await served.call("admin", "MemoryService/GetFullHistory", {"session_id": SESSION, "page_size": 100})
        assert "5" not in [m["seq"] for m in history["messages"]]
        assert await attrs(page, "tr[data-seq]", "data-seq") == [m["seq"] for m in history["messages"]]
        await live.wait_for_selector(f"li[data-type=EVENT_TYPE_MESSAGES_DELETED][data-session='{SESSION}']")
    finally:
        await page.context.close()
        await live.context.close()


async def test_a_tenants_page_never_shows_another_tenants_data(browser, served):
    page = await open_console(browser, served, "globex", "#/sessions")
    try:
        assert "tenant globex" in await page.locator("#caller").text_content()
        assert await attrs(page, "tr[data-session]", "data-session") == [OTHER]
        for route in (
            f"#/session/{SESSION}",
            "#/recall?q=ryokan",
            "#/recall?q=Kyoto&what=summaries",
            "#/memory?user=ann",
        ):
            await go(page, route)
            shown = await page.locator("main").text_content()
            for acme_text in ("京都", "ryokan near Gion", "Paris", "Kyoto trip"):
                assert acme_text not in shown, (route, acme_text)
        await go(page, "#/recall?q=ryokan")
        answer = await served.call("globex", "VectorService/SearchMemory", {"query_text": "ryokan"})
        assert await attrs(page, "tr[data-testid=hit]", "data-message") == [
            h.get("message_id", "") for h in answer["hits"]
        ]
    finally:
        await page.context.close()
    page = await open_console(browser, served, "admin", "#/sessions")
    try:
        for route in ("#/sessions", f"#/session/{OTHER}", "#/recall?q=ryokan+budget"):
            await go(page, route)
            assert "globex only" not in await page.locator("main").text_content(), route
    finally:
        await page.context.close()


async def test_editing_a_messages_text_is_update_message_content(browser, served):
    page = await open_console(browser, served, "admin", f"#/session/{SESSION}")
    try:
        await page.locator("tr[data-seq='3']").get_by_test_id("edit-message").click()
        await page.get_by_label("New text of message 3").fill("Book the ryokan near Gion, thanks 🙏")
        await page.get_by_role("button", name="Save text").click()
        dialog = page.locator("dialog#confirm")
        await dialog.wait_for(state="visible")
        assert "seq 3" in await dialog.text_content()
        await page.locator("#confirm-ok").click()
        await page.wait_for_function(
            "() => document.querySelector(\"tr[data-seq='3'] td.content\")?.textContent.includes('thanks')"
        )
        history = await served.call("admin", "MemoryService/GetFullHistory", {"session_id": SESSION, "page_size": 100})
        assert [m["content"] for m in history["messages"] if m["seq"] == "3"] == [
            "Book the ryokan near Gion, thanks 🙏"
        ]
        contents = await texts(page, "tr[data-seq] td.content")
        assert [c.strip() for c in contents] == [m["content"] for m in history["messages"]]
    finally:
        await page.context.close()


async def test_a_token_bound_to_an_end_user_sees_only_that_users_memory(browser, served):
    page = await open_console(browser, served, "ann", "#/sessions")
    try:
        assert "user ann" in await page.locator("#caller").text_content()
        listed = await served.call("ann", "MemoryService/ListSessions", {"page_size": 50})
        assert (
            await attrs(page, "tr[data-session]", "data-session")
            == [s["session_id"] for s in listed["sessions"]]
            == [OWNED]
        )
        assert not await page.get_by_test_id("forget-user").count()  # forgetting a user is an operator's call
        await go(page, f"#/session/{SESSION}")  # the tenant's session, not ann's: refused, nothing of it shown
        assert "permission_denied" in await page.locator("main .error").text_content()
        assert "京都" not in await page.locator("main").text_content()
        await go(page, "#/memory")  # her own facts, without naming her
        facts = await served.call("ann", "FormationService/ListFacts", {"user_id": "ann", "page_size": 200})
        assert await attrs(page, "tr[data-fact]", "data-fact") == [f["id"] for f in facts["facts"]]
        await go(page, "#/ops")  # tenant-wide figures are not hers: each part says so in place
        assert await page.locator("main .error").count() >= 1
        assert "SERVING" in await page.locator("main").text_content()
    finally:
        await page.context.close()


async def test_a_formed_fact_is_corrected_then_deleted_after_asking(browser, served):
    page = await open_console(browser, served, "admin", "#/memory?user=ann")
    try:
        fact = page.locator("tr[data-fact]").first
        fact_id = await fact.get_attribute("data-fact")
        await fact.get_by_test_id("correct-fact").click()
        await page.get_by_label("Corrected fact").fill("user's city is Lyon")
        await page.get_by_role("button", name="Save correction").click()
        assert "Lyon" in await page.locator("dialog#confirm").text_content()
        await page.locator("#confirm-ok").click()
        await page.wait_for_function(
            "() => document.querySelector('table[data-testid=facts]')?.textContent.includes('Lyon')"
        )
        facts = await served.call("admin", "FormationService/ListFacts", {"user_id": "ann", "page_size": 200})
        assert [(f["id"], f["text"], f.get("corrected", False)) for f in facts["facts"]] == [
            (fact_id, "user's city is Lyon", True)
        ]

        await page.locator(f"tr[data-fact='{fact_id}']").get_by_test_id("delete-fact").click()
        assert "user's city is Lyon" in await page.locator("dialog#confirm").text_content()
        await page.locator("#confirm-ok").click()
        await page.wait_for_selector("main p.empty:has-text('No facts.')")
        facts = await served.call("admin", "FormationService/ListFacts", {"user_id": "ann", "page_size": 200})
        assert facts.get("facts", []) == []
    finally:
        await page.context.close()


# -- issue 41's leftovers: the time filter, the operations view, the keyboard ---------------------
async def test_the_time_filter_is_list_sessions_own(browser, served):
    listed = await served.call("admin", "MemoryService/ListSessions", {"page_size": 50})
    activity = sorted({int(s["last_activity"]) for s in listed.get("sessions", [])})
    assert len(activity) >= 2, "the seeded sessions were written at different times"
    cut = activity[-1]  # the newest session's last activity: since it, only that one; before it, the rest
    page = await open_console(browser, served, "admin", f"#/sessions?since={cut}")
    try:
        for query, body in (
            (f"since={cut}", {"active_since": str(cut)}),
            (f"before={cut}", {"active_before": str(cut)}),
            (f"since={activity[0]}&before={cut}", {"active_since": str(activity[0]), "active_before": str(cut)}),
            (f"since={cut + 1}", {"active_since": str(cut + 1)}),
        ):
            await go(page, f"#/sessions?{query}")
            answer = await served.call("admin", "MemoryService/ListSessions", {"page_size": 50, **body})
            assert await attrs(page, "tr[data-session]", "data-session") == [
                s["session_id"] for s in answer.get("sessions", [])
            ], query
        assert not answer.get("sessions", []) and await page.locator("main .empty").count()  # nothing that late
        # a range the API refuses is shown as its refusal, naming the field
        await go(page, f"#/sessions?since={cut}&before={cut}")
        assert "active_before" in await page.locator("main .error").text_content()
        # the form's fields send the same range (the browser's time zone; seconds are kept)
        await go(page, "#/sessions")
        await page.locator("input[name=since]").fill(
            await page.evaluate(
                "ms => { const d = new Date(ms); const p = x => String(x).padStart(2, '0');"
                " return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())}T${p(d.getHours())}:"
                "${p(d.getMinutes())}:${p(d.getSeconds())}` }",
                cut - cut % 1000,
            )
        )
        await page.get_by_role("button", name="Filter").click()
        await settled(page)
        answer = await served.call("admin", "MemoryService/ListSessions", {"active_since": str(cut - cut % 1000)})
        assert await attrs(page, "tr[data-session]", "data-session") == [
            s["session_id"] for s in answer.get("sessions", [])
        ]
        assert page.errors == []
    finally:
        await page.context.close()


def _pairs(rows: list[list[str]]) -> dict[str, str]:
    return {k.strip(): v.strip() for k, v in rows}


async def pair_table(page, testid: str) -> dict[str, str]:
    return _pairs(
        await page.locator(f"table[data-testid={testid}] tr").evaluate_all(
            "rows => rows.map(r => [r.cells[0].textContent, r.cells[1].textContent])"
        )
    )


async def test_operations_shows_sizes_retention_and_each_consumers_lag(browser, served):
    page = await open_console(browser, served, "admin", "#/ops")
    try:
        await page.wait_for_selector("table[data-testid=consumers]")
        stats = await served.call("admin", "MemoryService/GetMemoryStats", {})
        vectors = await served.call("admin", "VectorService/GetVectorStats", {})
        sizes = await pair_table(page, "sizes")
        assert sizes["sessions"] == str(int(stats["sessions"])) == str(len(
            (await served.call("admin", "MemoryService/ListSessions", {"page_size": 100}))["sessions"]
        ))  # fmt: skip
        assert sizes["messages"] == str(int(stats["messages"]))
        assert sizes["unarchived messages"] == str(int(stats["unarchived_messages"]))
        assert sizes["keyword points"] == str(int(vectors.get("keyword_points", 0)))
        retention = await pair_table(page, "retention")
        config = served.app.config
        assert not stats["session_retention"].get("days")  # the server's default: sessions are kept
        assert retention["session retention"] == "kept (no retention)"
        assert retention["session retention action"] == stats["session_retention"]["action"] == "delete"
        assert retention["event log max events"] == str(config.event_retention_count)
        assert retention["event log max age"] == f"{config.event_retention_seconds // 86400} days"
        # one row per consumer of the log: the recall index and each formation strategy
        status = await served.call("admin", "FormationService/GetFormationStatus", {})
        consumers = await attrs(page, "table[data-testid=consumers] tr[data-consumer]", "data-consumer")
        strategies = [s["strategy"].removeprefix("FORMATION_STRATEGY_").lower() for s in status["strategies"]]
        assert consumers == ["recall-index", *(f"formation-{name}" for name in strategies)]
        assert len(strategies) >= 3
        for row in await page.locator("table[data-testid=consumers] tr[data-consumer]").evaluate_all(
            "rows => rows.map(r => [...r.cells].slice(1, 4).map(c => Number(c.textContent)))"
        ):
            applied, newest, lag = row
            assert lag == max(0, newest - applied) and newest >= 1
        assert page.errors == []
    finally:
        await page.context.close()


async def focused(page) -> dict:
    return await page.evaluate(
        """() => { const el = document.activeElement; const style = getComputedStyle(el);
        return { tag: el.tagName, text: (el.textContent || '').trim(), name: el.getAttribute('name') || '',
                 href: el.getAttribute('href') || '', id: el.id || '', testid: el.dataset.testid || '',
                 outline: style.outlineStyle !== 'none' && parseFloat(style.outlineWidth) > 0 } }"""
    )


async def tab_to(page, wanted, *, limit: int = 150, backwards: bool = False) -> dict:
    """Presses Tab (Shift+Tab) until the focused element is `wanted`'s; every element on the
    way shows that it has the focus (a visible outline)."""
    seen = []
    for _ in range(limit):
        await page.keyboard.press("Shift+Tab" if backwards else "Tab")
        now = await focused(page)
        if now["tag"] != "BODY":
            assert now["outline"], f"no visible focus on {now}"
        seen.append(now)
        if wanted(now):
            return now
    raise AssertionError(f"not reached by Tab: {[(s['tag'], s['text'][:30]) for s in seen]}")


async def test_sessions_timeline_and_recall_are_reached_by_keyboard_alone(browser, served, shots):
    page = await open_console(browser, served, "admin", "#/sessions")
    try:
        # the skip link comes first and moves the focus to the view, not to a route of its own
        first = await tab_to(page, lambda f: True)
        assert first["text"] == "Skip to content", first
        await page.keyboard.press("Enter")
        assert (await focused(page))["id"] == "main" and page.url.endswith("#/sessions")
        # every view is a link in the navigation, in order, each operable with Enter
        await tab_to(page, lambda f: f["text"] == "Skip to content", backwards=True)  # then through the header
        names = []
        for _ in range(10):
            await page.keyboard.press("Tab")
            now = await focused(page)
            if now["href"].startswith("#/") and now["tag"] == "A":
                names.append(now["text"])
            if now["id"] == "token":
                break
        assert names == ["memoryd", "Sessions", "Recall", "Memory", "Live", "Operations"], names
        await tab_to(page, lambda f: f["text"] == "Operations", backwards=True)
        await page.keyboard.press("Enter")
        await settled(page)
        await page.wait_for_selector("table[data-testid=consumers]")
        assert "#/ops" in page.url and (await focused(page))["text"] == "Operations"
        await tab_to(page, lambda f: f["text"] == "Sessions", backwards=True)
        await page.keyboard.press("Enter")
        await settled(page)

        # sessions -> the session's timeline (Enter on its link)
        await tab_to(page, lambda f: f["href"] == f"#/session/{quote(SESSION, safe='')}")
        await page.keyboard.press("Enter")
        await settled(page)
        await page.wait_for_selector("table[data-testid=timeline]")
        assert (await focused(page))["id"] == "main"  # the view took the focus its link had
        # a write control opens its confirmation with Space; Escape closes it and nothing goes
        before = await attrs(page, "tr[data-seq]", "data-seq")
        await tab_to(page, lambda f: f["testid"] == "delete-message")
        await page.keyboard.press("Space")
        dialog = page.locator("dialog#confirm")
        await dialog.wait_for(state="visible")
        assert (await focused(page))["id"] == "confirm-cancel"  # the safe choice has the focus
        await page.keyboard.press("Escape")
        await dialog.wait_for(state="hidden")
        assert (await focused(page))["testid"] == "delete-message"  # back where it was
        assert await attrs(page, "tr[data-seq]", "data-seq") == before
        history = await served.call("admin", "MemoryService/GetFullHistory", {"session_id": SESSION, "page_size": 100})
        assert [m["seq"] for m in history["messages"]] == before

        # the timeline -> recall in this session (Enter), then a query typed and sent with Enter
        await tab_to(page, lambda f: f["text"] == "Recall in this session", backwards=True)
        await page.keyboard.press("Enter")
        await settled(page)
        await tab_to(page, lambda f: f["name"] == "q")
        await page.keyboard.type("ryokan")
        await page.keyboard.press("Enter")
        await settled(page)
        await page.wait_for_selector("table[data-testid=hits]")
        answer = await served.call(
            "admin", "VectorService/SearchMemory", {"query_text": "ryokan", "session_id": SESSION}
        )
        assert answer.get("hits", [])
        assert await attrs(page, "tr[data-testid=hit]", "data-message") == [
            h.get("message_id", "") for h in answer.get("hits", [])
        ]
        await screenshot(page, shots, "recall-keyboard-laptop")
        assert page.errors == []
    finally:
        await page.context.close()


async def test_custom_records_show_with_their_sources_and_are_deleted_after_asking(browser, served):
    page = await open_console(browser, served, "admin", "#/memory?user=ann")
    try:
        listed = await served.call("admin", "FormationService/ListCustomRecords", {"user_id": "ann"})
        records = listed.get("records", [])
        assert [r["value"] for r in records] == [{"item": "matcha"}], "the custom strategy formed ann's record"
        await page.wait_for_selector("table[data-testid=custom-records]")
        assert await attrs(page, "tr[data-record]", "data-record") == [r["id"] for r in records]
        shown = await texts(page, "tr[data-record] [data-testid=record-value]")
        assert [json.loads(text) for text in shown] == [r["value"] for r in records]
        (source,) = records[0]["sources"]
        link = page.locator(f"tr[data-record] a[href='#/session/{quote(source['session_id'], safe='')}']")
        assert await link.text_content() == f"{source['session_id']} #{source['seq']}"
        # a reader sees the record and no control to delete it
        reader = await open_console(browser, served, "reader", "#/memory?user=ann")
        try:
            assert await attrs(reader, "tr[data-record]", "data-record") == [r["id"] for r in records]
            assert not await reader.get_by_test_id("delete-record").count()
        finally:
            await reader.context.close()
        # deleting asks first, naming the strategy and the value; cancel keeps it
        await page.get_by_test_id("delete-record").click()
        dialog = page.locator("dialog#confirm")
        await dialog.wait_for(state="visible")
        assert "likes" in await dialog.text_content() and "matcha" in await dialog.text_content()
        await page.keyboard.press("Escape")
        await dialog.wait_for(state="hidden")
        assert (await served.call("admin", "FormationService/ListCustomRecords", {"user_id": "ann"})).get("records")
        await page.get_by_test_id("delete-record").click()
        await page.locator("#confirm-ok").click()
        # the view is drawn again ("Loading…" in between), from ListCustomRecords' new answer
        await page.wait_for_function("() => document.querySelector('main').textContent.includes('No custom records.')")
        assert not await page.locator("tr[data-record]").count()
        assert not (await served.call("admin", "FormationService/ListCustomRecords", {"user_id": "ann"})).get("records")
        assert page.errors == []
    finally:
        await page.context.close()
