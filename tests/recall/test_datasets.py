"""The recall benchmark's question sets (the benchmark itself is not part of scripts/test)."""

from __future__ import annotations

import json

from tests.recall import kdconv, recency_set
from tests.recall.datasets import load_locomo, load_realtalk


def test_the_recency_set_is_deterministic_and_its_evidence_is_the_newest_statement():
    first, again = recency_set.generate(), recency_set.generate()
    assert [(c.turns, c.questions) for c in first] == [(c.turns, c.questions) for c in again]
    assert len(first) == recency_set.CONVERSATIONS and all(len(c.questions) == 6 for c in first)
    for conversation in first:
        turns = {t.id: t for t in conversation.turns}
        assert [t.timestamp for t in conversation.turns] == sorted(t.timestamp for t in conversation.turns)
        assert conversation.asked_at > conversation.turns[-1].timestamp
        for question in conversation.questions:
            fact = next(f for f in recency_set.FACTS if f.name == question.category)
            [evidence] = question.evidence
            newest = turns[evidence]
            value = next(v for v in fact.values if v in newest.text)
            # Earlier statements of the same fact (other values) exist: only recency decides.
            older = [t for t in conversation.turns if t.timestamp < newest.timestamp and t.role == "user"
                     and any(v in t.text and v != value for v in fact.values)]  # fmt: skip
            assert older, question
            assert newest.role == "user" and newest.speaker in question.text


def test_locomo_is_read_from_its_per_conversation_files_with_evidence_repaired(tmp_path):
    conversation = {
        "speaker_a": "Caroline",
        "speaker_b": "Melanie",
        "session_1_date_time": "1:56 pm on 8 May, 2023",
        "session_1": [
            {"speaker": "Caroline", "dia_id": "D1:1", "text": "I went to a support group."},
            {"speaker": "Melanie", "dia_id": "D1:2", "text": "Look!", "blip_caption": "a sunset over a lake"},
        ],
        "session_2_date_time": "10:37 am on 27 June, 2023",
        "session_2": [{"speaker": "Caroline", "dia_id": "D2:1", "text": "I painted a lake."}],
    }
    qa = [
        {"question": "What did Caroline go to?", "evidence": ["D1:1"], "category": 4},
        {"question": "What did they see?", "evidence": ["D1:02; D:2:1"], "category": 1},
        {"question": "Unanswerable", "evidence": ["D9:9"], "category": 5},
    ]
    (tmp_path / "26.json").write_text(json.dumps({"conversation": conversation, "qa": qa} | conversation | {"qa": qa}))
    [loaded] = load_locomo(tmp_path)
    assert [t.id for t in loaded.turns] == ["D1:1", "D1:2", "D2:1"]
    assert [t.role for t in loaded.turns] == ["user", "assistant", "user"]
    assert loaded.turns[1].content == "Melanie: Look! [shares a photo of a sunset over a lake]"
    assert loaded.turns[2].timestamp - loaded.turns[0].timestamp > 49 * 86_400_000
    # Mistyped ids are repaired; a question whose evidence is no turn is left out.
    assert [(q.evidence, q.category) for q in loaded.questions] == [(("D1:1",), "single-hop"), (("D1:2", "D2:1"), "multi-hop")]


def test_realtalk_keeps_each_messages_time_and_repairs_ranges_of_evidence(tmp_path):
    turn = {"img_file": [], "img_url": []}
    chat = {
        "name": {"speaker_1": "Emi", "speaker_2": "elise"},
        "session_1": [
            turn | {"clean_text": "Hey! How are you?", "speaker": "Emi", "date_time": "29.12.2023, 22:42:04", "dia_id": "D1:1"},
            turn | {"clean_text": "Good, just back from Miami", "speaker": "Elise", "date_time": "30.12.2023, 00:32:20",
                    "dia_id": "D1:2", "blip_caption": "a beach at sunset"},
            # D1:3 was left out of the dataset (evidence may still name it)
            turn | {"clean_text": "Nice!", "speaker": "Emi", "date_time": "30.12.2023, 00:33:00", "dia_id": "D1:4"},
        ],
        "session_1_date_time": "29.12.2023, 22:42:04",
        "events_session_1": {},
        "session_2": [turn | {"clean_text": "Back in LA", "speaker": "elise", "date_time": "03.01.2024, 09:00:00",
                              "dia_id": "D2:1"}],
        "qa": [
            {"question": "Where was Elise?", "answer": "Miami", "evidence": ["D1:2."], "category": 1},
            {"question": "When did Elise come back?", "answer": "3 Jan", "evidence": ["D1:2-D1:4; D2:1"], "category": 2},
            {"question": "Lost", "answer": "?", "evidence": ["D1:3"], "category": 3},
        ],
    }  # fmt: skip
    (tmp_path / "Chat_1_Emi_Elise.json").write_text(json.dumps(chat))
    [loaded] = load_realtalk(tmp_path)
    assert [(t.id, t.speaker, t.role) for t in loaded.turns] == [
        ("D1:1", "Emi", "user"), ("D1:2", "elise", "assistant"), ("D1:4", "Emi", "user"), ("D2:1", "elise", "assistant")
    ]  # fmt: skip
    assert loaded.turns[1].content == "elise: Good, just back from Miami [shares a photo of a beach at sunset]"
    assert loaded.turns[1].timestamp == 1_703_896_340_000  # 2023-12-30 00:32:20 UTC
    assert [(q.evidence, q.category) for q in loaded.questions] == [
        (("D1:2",), "fact"), (("D1:2", "D1:4", "D2:1"), "temporal")
    ]  # fmt: skip


def test_kdconv_chains_conversations_into_sessions_and_asks_for_stated_facts(tmp_path):
    def message(text, *attrs):
        return {"message": text, "attrs": [{"name": n, "attrname": a, "attrvalue": v} for n, a, v in attrs]}

    dialogues = [
        {"name": "我是山姆", "messages": [
            message("看过《我是山姆》吗？"),
            message("导演是谁啊？", ("我是山姆", "类型", "家庭")),  # annotated, but not stated here
            message("导演是杰茜·尼尔森。", ("我是山姆（2001年电影）", "导演", "杰茜·尼尔森")),
            message("讲的是一个父亲的故事。", ("我是山姆", "Information", "讲的是一个父亲的故事")),
        ]},
        {"name": "我是山姆", "messages": [message("杰茜·尼尔森导演的，家庭片。", ("我是山姆", "导演", "杰茜·尼尔森"),
                                              ("我是山姆", "类型", "家庭"))]},
    ] * (kdconv.SESSIONS // 2 + 1)  # fmt: skip
    for domain in kdconv.DOMAINS:
        (tmp_path / domain).mkdir()
        (tmp_path / domain / "test.json").write_text(json.dumps(dialogues, ensure_ascii=False))
    loaded = kdconv.load_kdconv(tmp_path)
    assert [c.name for c in loaded] == [f"kdconv-{d}-{n}" for d in kdconv.DOMAINS for n in (1, 2)]
    first = loaded[0]
    assert len({t.session for t in first.turns}) == kdconv.SESSIONS and len(loaded[1].turns) == 4 + 1
    assert [(t.speaker, t.role) for t in first.turns[:3]] == [("林晓", "user"), ("周航", "assistant"), ("林晓", "user")]
    starts = [t.timestamp for t in first.turns if t.id.endswith(":1")]
    assert all(2 * 86_400_000 <= b - a <= 9 * 86_400_000 for a, b in zip(starts, starts[1:]))
    by_text = {q.text: q for q in first.questions}
    assert set(by_text) == {"我是山姆的导演是什么？", "我是山姆的类型是什么？"}  # no "Information", no unstated fact
    assert by_text["我是山姆的导演是什么？"].evidence[:3] == ("D1:3", "D2:1", "D3:3")
    assert by_text["我是山姆的类型是什么？"].evidence[:2] == ("D2:1", "D4:1") and first.questions[0].category == "film"
    assert [(c.turns, c.questions) for c in loaded] == [(c.turns, c.questions) for c in kdconv.load_kdconv(tmp_path)]
