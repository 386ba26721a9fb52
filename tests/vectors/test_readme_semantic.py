"""README's semantic-memory section: a text query on a fresh server with no embedder (keyword
recall), its commands run verbatim (tests/readme_shell.py), once each: the searches wait for
the save's event_seq (read-your-writes), so they find it on their first try."""

from __future__ import annotations

import json
import shutil

import pytest

from tests.readme_shell import GUIDE, can_unshare, run_verbatim, section_commands


@pytest.mark.skipif(not can_unshare() or shutil.which("jq") is None, reason="needs unshare -n (root), ip, curl and jq")
def test_readme_text_query_without_an_embedder_works_verbatim(tmp_path):
    commands = section_commands("## Semantic memory", GUIDE)
    curls = [c for c in commands if c.startswith(("curl ", "seq=$(curl "))]
    assert len(curls) == 3, commands
    # No retries: each search passes the save's event_seq and so sees the save.
    saved, english, chinese = run_verbatim(curls, tmp_path)
    assert saved == ""  # the save's answer went to jq, which kept its event_seq in $seq
    found = json.loads(english)
    assert found["retrieval"] == "RECALL_RETRIEVAL_KEYWORD"
    [hit] = found["hits"]
    assert hit["text"] == "We went hiking in the Alps" and hit["keyword_match"]
    assert [c["message"]["content"] for c in hit["after"]] == ["我们去山里徒步旅行了"]
    assert [h["text"] for h in json.loads(chinese)["hits"]] == ["我们去山里徒步旅行了"]
