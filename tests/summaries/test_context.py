"""AssembleContext: budget priorities, character boundaries, tool-call pairs, dedup."""

from __future__ import annotations

from memoryd.domain.context import (
    CutReason,
    Part,
    Recalled,
    SummaryText,
    assemble,
    cut_text,
    message_chars,
    safe_cut,
)
from memoryd.domain.models import Message
from memoryd.domain.summaries import ContextRequest, RecallStatus


def m(seq: int, content: str, role: str = "user", **extra) -> Message:
    return Message(role=role, content=content, timestamp=1000 + seq, id=f"id{seq}", seq=seq, **extra)


def call(seq: int, call_id: str, arguments: str = "{}") -> Message:
    return m(seq, "", "assistant", tool_calls=[{"id": call_id, "name": "f", "arguments": arguments}])


def result(seq: int, call_id: str, content: str) -> Message:
    return m(seq, content, "tool", tool_call_id=call_id)


SUMMARY = SummaryText("sum1", "S" * 20)
TAIL = [m(5, "a" * 10), m(6, "b" * 10, "assistant")]
RECENT = [m(3, "c" * 10), m(4, "d" * 10, "assistant"), *TAIL]
RECALLED = [Recalled("r1", "other", "R" * 10, 0.9), Recalled("r2", "other", "Q" * 10, 0.8)]


def ids(assembly) -> list[str]:
    return [a.message.id for a in assembly.messages]


def cut_parts(assembly) -> list[tuple[Part, CutReason, bool]]:
    return [(c.part, c.reason, c.truncated) for c in assembly.cuts]


# -- priorities -------------------------------------------------------------------
def test_everything_fits_in_prompt_order_with_dedup():
    out = assemble(summary=SUMMARY, tail=TAIL, recent=RECENT, recalled=RECALLED, budget_chars=0)
    assert out.summary_text == SUMMARY.text and not out.summary_truncated
    assert ids(out) == ["id3", "id4", "id5", "id6"]
    assert [a.part for a in out.messages] == [Part.RECENT, Part.RECENT, Part.TAIL, Part.TAIL]
    assert out.deduplicated_count == 2 and out.cuts == []
    assert out.used_chars == 20 + 40 + 20 and [r.id for r, _ in out.recalled] == ["r1", "r2"]


def test_recalled_memories_are_cut_first():
    out = assemble(summary=SUMMARY, tail=TAIL, recent=RECENT, recalled=RECALLED, budget_chars=75)
    assert ids(out) == ["id3", "id4", "id5", "id6"] and out.summary_text == SUMMARY.text
    assert [(r.id, r.text, truncated) for r, truncated in out.recalled] == [("r1", "R" * 10, False), ("r2", "Q" * 5, True)]
    assert cut_parts(out) == [(Part.RECALL, CutReason.BUDGET, True)] and out.cuts[0].cut_chars == 5
    assert out.used_chars == 75


def test_recent_messages_are_cut_before_the_summary():
    out = assemble(summary=SUMMARY, tail=TAIL, recent=RECENT, recalled=RECALLED, budget_chars=45)
    assert out.summary_text == SUMMARY.text
    # Recent messages go oldest first, whole; the first that does not fit is shortened.
    assert ids(out) == ["id4", "id5", "id6"] and out.messages[0].truncated
    assert out.messages[0].message.content == "d" * 5
    assert cut_parts(out) == [
        (Part.RECENT, CutReason.BUDGET, True),
        (Part.RECENT, CutReason.BUDGET, False),
        (Part.RECALL, CutReason.BUDGET, False),
        (Part.RECALL, CutReason.BUDGET, False),
    ]
    assert out.used_chars == 45


def test_summary_is_cut_before_the_tail():
    out = assemble(summary=SUMMARY, tail=TAIL, recent=RECENT, recalled=RECALLED, budget_chars=28)
    assert ids(out) == ["id5", "id6"] and all(a.part == Part.TAIL for a in out.messages)
    assert out.summary_text == "S" * 8 and out.summary_truncated
    assert (Part.SUMMARY, CutReason.BUDGET, True) in cut_parts(out)
    assert {c.id for c in out.cuts if c.part == Part.RECENT} == {"id3", "id4"}
    out = assemble(summary=SUMMARY, tail=TAIL, recent=RECENT, budget_chars=20)
    assert out.summary_text is None
    assert [c for c in out.cuts if c.part == Part.SUMMARY][0].cut_chars == 20


def test_tail_is_cut_oldest_first_and_the_newest_message_shortened():
    out = assemble(summary=SUMMARY, tail=TAIL, recent=[], budget_chars=10)
    assert ids(out) == ["id6"] and not out.messages[0].truncated
    assert out.messages[0].message.content == "b" * 10
    assert [c.id for c in out.cuts if c.part == Part.TAIL] == ["id5"] and out.summary_text is None
    out = assemble(summary=SUMMARY, tail=TAIL, recent=[], budget_chars=15)
    assert ids(out) == ["id5", "id6"] and out.messages[0].truncated and out.messages[0].message.content == "a" * 5
    out = assemble(summary=SUMMARY, tail=TAIL, recent=[], budget_chars=4)
    assert ids(out) == ["id6"] and out.messages[0].truncated and out.messages[0].message.content == "bbbb"
    assert cut_parts(out)[:2] == [(Part.TAIL, CutReason.BUDGET, True), (Part.TAIL, CutReason.BUDGET, False)]


def test_tail_limit_is_reported():
    out = assemble(summary=None, tail=TAIL, recent=[], tail_left_out=m(4, "old"))
    assert cut_parts(out) == [(Part.TAIL, CutReason.TAIL_LIMIT, False)] and out.cuts[0].id == "id4"


# -- character boundaries -----------------------------------------------------------
def test_cuts_never_split_a_character():
    family = "\U0001F468\u200d\U0001F469\u200d\U0001F467"  # man ZWJ woman ZWJ girl
    text = "ab" + family + "cd"
    for limit in range(len(text) + 1):
        kept = cut_text(text, limit)
        assert text.startswith(kept) and len(kept) <= limit
        assert kept in ("", "a", "ab", "ab" + family, "ab" + family + "c", text)
        kept.encode("utf-8")  # never a lone surrogate or a half sequence
    accents = "e\u0301e\u0301"  # e + combining acute, twice
    assert cut_text(accents, 1) == "" and cut_text(accents, 3) == "e\u0301"
    flags = "\U0001F1EF\U0001F1F5\U0001F1EB\U0001F1F7"  # JP FR
    assert cut_text(flags, 3) == "\U0001F1EF\U0001F1F5" and cut_text(flags, 1) == ""
    thumbs = "\U0001F44D\U0001F3FD!"  # thumbs up + skin tone
    assert cut_text(thumbs, 1) == "" and cut_text(thumbs, 2) == "\U0001F44D\U0001F3FD"
    variation = "\u2764\ufe0f!"
    assert cut_text(variation, 1) == ""
    # Surrogate pairs (text decoded with surrogatepass) are never split either.
    paired = "x\ud83d\ude00y"
    assert safe_cut(paired, 2) == 1


def test_multibyte_text_at_the_budget_boundary():
    chinese = "你好世界，这是一个测试😀"
    tail = [m(1, chinese)]
    for budget in range(1, len(chinese) + 1):
        out = assemble(summary=None, tail=tail, recent=[], budget_chars=budget)
        content = out.messages[0].message.content
        assert chinese.startswith(content) and len(content) == budget == out.used_chars
        assert content.encode("utf-8").decode("utf-8") == content
        assert content.encode("utf-16-le").decode("utf-16-le") == content
    summary = SummaryText("s", "摘要" * 10 + "e\u0301")
    out = assemble(summary=summary, tail=[], recent=[], budget_chars=21)
    assert out.summary_text == "摘要" * 10 and out.used_chars == 20


# -- tool calls ----------------------------------------------------------------------
def test_tool_call_pairs_are_kept_or_dropped_whole():
    tail = [m(1, "what is the weather?"), call(2, "c1", '{"city":"Oslo"}'), result(3, "c1", "rain" * 5), m(4, "It rains.", "assistant")]
    pair_chars = message_chars(tail[1]) + message_chars(tail[2])
    out = assemble(summary=None, tail=tail, recent=[], budget_chars=9 + pair_chars)
    assert ids(out) == ["id2", "id3", "id4"]
    out = assemble(summary=None, tail=tail, recent=[], budget_chars=9 + pair_chars - 1)
    assert ids(out) == ["id4"]  # the pair does not fit: both go, never the result alone
    assert {c.id for c in out.cuts} == {"id1", "id2", "id3"}
    out = assemble(summary=None, tail=tail, recent=[], budget_chars=12)
    assert ids(out) == ["id4"] and all(not a.truncated for a in out.messages)


def test_tool_result_without_its_call_is_dropped():
    # The recent window starts at a tool result: its assistant message is not a candidate.
    recent = [result(3, "c1", "sunny"), m(4, "It is sunny.", "assistant"), m(5, "thanks")]
    out = assemble(summary=None, tail=[], recent=recent)
    assert ids(out) == ["id4", "id5"]
    assert cut_parts(out) == [(Part.RECENT, CutReason.ORPHAN_TOOL_RESULT, False)] and out.cuts[0].id == "id3"


def test_call_in_recent_and_result_in_tail_travel_together():
    # The cursor fell between a call and its result: the pair is kept with tail priority.
    recent = [call(2, "c1"), result(3, "c1", "done"), m(4, "ok", "assistant")]
    tail = recent[1:]
    out = assemble(summary=None, tail=tail, recent=recent, budget_chars=message_chars(recent[0]) + 4 + 2)
    assert ids(out) == ["id2", "id3", "id4"]
    assert [a.part for a in out.messages] == [Part.TAIL, Part.TAIL, Part.TAIL]


def test_recalled_items_already_in_the_context_are_skipped():
    out = assemble(summary=None, tail=TAIL, recent=[], recalled=[Recalled("id5", "s", "dup", 1.0), RECALLED[0]])
    assert [r.id for r, _ in out.recalled] == ["r1"]


# -- over a store (both adapters) ------------------------------------------------------
async def test_assemble_from_the_store(memory, summaries, tenant):
    saved = await memory.save_messages(
        tenant,
        "s",
        [Message(role="user" if i % 2 else "assistant", content=f"message {i}", timestamp=2000 + i) for i in range(1, 9)],
    )
    await summaries.save(tenant, "s", 1, 5, "the first five", {})
    await memory.trim_history(tenant, "s", 4)  # archives 1-4
    result = await summaries.assemble(tenant, ContextRequest("s", recent_raw_n=4))
    out = result.assembly
    assert result.cursor == 5 and out.summary_text == "the first five"
    assert [a.message.seq for a in out.messages] == [5, 6, 7, 8]
    assert [a.part for a in out.messages] == [Part.RECENT, Part.TAIL, Part.TAIL, Part.TAIL]
    assert out.deduplicated_count == 3 and out.cuts == []
    assert result.recall_status == RecallStatus.NOT_REQUESTED
    assert [a.message.id for a in out.messages] == [m.id for m in saved.messages[4:]]

    # Budget: the tail (3 x 9 chars) wins over the summary, which wins over the recent message.
    result = await summaries.assemble(tenant, ContextRequest("s", budget_chars=27 + 14, recent_raw_n=4))
    assert [a.message.seq for a in result.assembly.messages] == [6, 7, 8]
    assert result.assembly.summary_text == "the first five"
    assert [(c.part, c.id) for c in result.assembly.cuts] == [(Part.RECENT, saved.messages[4].id)]

    # Recall without a vector service: reported, not faked.
    result = await summaries.assemble(tenant, ContextRequest("s", include_recall=True))
    assert result.recall_status == RecallStatus.UNAVAILABLE and "vector" in result.recall_detail
    empty = await summaries.assemble(tenant, ContextRequest("nobody", include_recall=True))
    assert empty.recall_status == RecallStatus.SKIPPED and empty.assembly.messages == []
    assert empty.summary is None and empty.cursor == 0


async def test_assemble_keeps_tool_pairs_over_the_store(memory, summaries, tenant):
    await memory.save_messages(
        tenant,
        "s",
        [
            Message(role="user", content="weather?", timestamp=1),
            Message(role="assistant", content="", timestamp=2, tool_calls=[{"id": "c9", "name": "w", "arguments": "{}"}]),
            Message(role="tool", content="sunny", timestamp=3, tool_call_id="c9"),
            Message(role="assistant", content="Sunny.", timestamp=4),
        ],
    )
    await summaries.save(tenant, "s", 1, 2, "asked about the weather; a tool was called", {})
    out = (await summaries.assemble(tenant, ContextRequest("s"))).assembly
    # The tail starts with the tool result; it is never sent without its call.
    assert [a.message.seq for a in out.messages] == [4]
    assert [(c.reason, c.part) for c in out.cuts] == [(CutReason.ORPHAN_TOOL_RESULT, Part.TAIL)]
    out = (await summaries.assemble(tenant, ContextRequest("s", recent_raw_n=3))).assembly
    assert [a.message.seq for a in out.messages] == [2, 3, 4] and out.cuts == []
