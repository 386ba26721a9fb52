"""The recall benchmark's question sets (the benchmark itself is not part of scripts/test)."""

from __future__ import annotations

import json

from tests.recall import recency_set
from tests.recall.datasets import load_locomo


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
