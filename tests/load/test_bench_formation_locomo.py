"""The LoCoMo formation benchmark still runs end to end, on a conversation written here in
LoCoMo's format (no dataset, no network; toy sizes, timings not asserted)."""

from __future__ import annotations

import json

import pytest
from loadlib import run_bench

from tests import processes

pytestmark = pytest.mark.timeout(processes.SMOKE_TEST_TIMEOUT)

SAID = [
    ("Ana", "I just adopted a puppy named Biscuit last weekend!"),
    ("Ben", "Congrats! What breed is Biscuit?"),
    ("Ana", "A golden retriever. I also started pottery classes on Tuesdays."),
    ("Ben", "Nice, I have been training for a marathon in Lisbon."),
]


def conversation() -> dict:
    sessions = {}
    for n, when in enumerate(["1:56 pm on 8 May, 2023", "10:15 am on 20 May, 2023"], 1):
        sessions[f"session_{n}_date_time"] = when
        sessions[f"session_{n}"] = [
            {"speaker": speaker, "dia_id": f"D{n}:{i}", "text": f"Day {n}: {text}"}
            for i, (speaker, text) in enumerate(SAID, 1)
        ]
    return {
        "sample_id": "toy-1",
        "conversation": {"speaker_a": "Ana", "speaker_b": "Ben", **sessions},
        "qa": [
            {"question": "What is the name of Ana's puppy?", "answer": "Biscuit", "evidence": ["D1:1"], "category": 4},
            {
                "question": "When does Ana take pottery classes?",
                "answer": "Tuesdays",
                "evidence": ["D2:3"],
                "category": 4,
            },
            {"question": "Where is Ben's marathon?", "answer": "Lisbon", "evidence": ["D1:4"], "category": 4},
        ],
    }


def test_locomo_replay_spends_calls_and_tokens_and_forms_memory(tmp_path):
    data = tmp_path / "locomo_toy.json"
    data.write_text(json.dumps([conversation()]))
    result = run_bench(
        "bench_formation_locomo.py", "--locomo", str(data), "--every-message", "--recall",
        "--summary-max-messages", "4", "--workdir", str(tmp_path / "work"),
    )  # fmt: skip
    assert result["messages"] == 8 and result["sessions"] == 2
    per = result["per_1000_messages"]
    assert per["facts"]["calls"] > 0 and per["facts"]["prompt_tokens"] > 0 and per["facts"]["failures"] == 0
    assert per["summary"]["calls"] > 0 and per["profile"]["calls"] > 0
    # Ana's 4 turns state a fact each; each session's 4 turns became a slice (the
    # tenant's threshold of 4 messages).
    assert result["formed"] == {"facts": 4, "slices": 2, "profiles": 1}
    recall = result["recall"]
    assert recall["questions"] == 3 and recall["evidence_spoken_by_owner"] == 66.7  # Ana's, Ana's, Ben's turn
    assert set(recall["recall_at_k"]) == {"messages", "formed_slices_first", "formed_slices_fused", "formed_facts"}
    # The keyword search finds the puppy's turn, and so do the facts (Ana's turn is a fact's source).
    assert recall["recall_at_k"]["messages"]["5"] > 0 and recall["recall_at_k"]["formed_facts"]["5"] > 0
