"""examples/assemble_context.py runs as documented and prints a valid prompt."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from tests import processes

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "assemble_context.py"


def test_example_builds_a_prompt():
    done = processes.run([sys.executable, str(EXAMPLE)], capture_output=True, text=True, timeout=90, check=True)
    out = done.stdout
    prompt = json.loads(out[out.index("[\n") : out.index("\n]\n") + 2])
    assert prompt[0]["role"] == "system" and "art museums" in prompt[0]["content"]
    assert prompt[1]["content"].startswith("Summary of the earlier conversation:")
    assert prompt[-1] == {"role": "user", "content": "Thanks. Any museum you'd recommend? 🏛️"}
    # A tool result never appears without the assistant message that called it.
    calls = {c["id"] for m in prompt for c in m.get("tool_calls", [])}
    assert all(m["tool_call_id"] in calls for m in prompt if "tool_call_id" in m)
    assert "used 160 of 160 characters" in out and "CUT_REASON_BUDGET" in out
