"""README's semantic-memory section: a text query on a fresh server with no embedder (keyword
recall), its commands run verbatim (tests/readme_shell.py)."""

from __future__ import annotations

import json

import pytest

from tests.readme_shell import GUIDE, can_unshare, run_verbatim, section_commands


@pytest.mark.skipif(not can_unshare(), reason="needs unshare -n (root), ip and curl")
def test_readme_text_query_without_an_embedder_works_verbatim(tmp_path):
    commands = section_commands("## Semantic memory", GUIDE)
    curls = [c for c in commands if c.startswith("curl ")]
    assert len(curls) == 3, commands
    # The messages are indexed in the background: a search is repeated until it has hits.
    saved, english, chinese = run_verbatim(curls, tmp_path, until={1: '"hits"', 2: '"hits"'})
    assert len(json.loads(saved)["messages"]) == 3
    found = json.loads(english)
    assert found["retrieval"] == "RECALL_RETRIEVAL_KEYWORD"
    [hit] = found["hits"]
    assert hit["text"] == "We went hiking in the Alps" and hit["keyword_match"]
    assert [c["message"]["content"] for c in hit["after"]] == ["我们去山里徒步旅行了"]
    assert [h["text"] for h in json.loads(chinese)["hits"]] == ["我们去山里徒步旅行了"]
