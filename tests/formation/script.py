"""The scripted model of the formation tests: a deterministic function of the prompt, so what
formation must derive is a function of the log that the tests compute on their own.

- facts (schema memoryd_facts): every user message "my <key> is <value>" states the fact
  "user's <key> is <value>" (sources: that message). A known fact Fk "user's <key> is <value>"
  with the same value makes it a duplicate of Fk; with another value it supersedes Fk; the
  same holds for a fact earlier in the same answer (target "Nk"). Other messages state nothing.
- summary (memoryd_summary): "summary: " and the texts of the new messages joined by " | ".
- profile (memoryd_profile): the fact texts joined by "; ".

`faults` is a queue of replies served before the script's own answers (one per call), so a
test scripts "the next three calls get 429, then a refusal" and so on.
"""

from __future__ import annotations

import json
import re
from collections import deque

from tests.llm_server import Call, Reply, answer

MESSAGE = re.compile(r"^(?:M(\d+) )?\[(\w+), [^\]]*\]: (.*)$")
KNOWN = re.compile(r"^F(\d+) \((\w+)\): (.*)$")
STATES = re.compile(r"^my (\w+) is (\w+)$")
FACT = re.compile(r"^user's (\w+) is (\w+)$")


def block(text: str, after: str) -> list[str]:
    """The lines of the first fenced block after the heading `after`."""
    start = text.find(after)
    if start < 0:
        return []
    open_at = text.find("<<<CONVERSATION DATA\n", start)
    close_at = text.find("\nCONVERSATION DATA>>>", open_at)
    return text[open_at + len("<<<CONVERSATION DATA\n") : close_at].split("\n")


def stated(content: str) -> tuple[str, str] | None:
    match = STATES.match(content.strip())
    return (match.group(1), match.group(2)) if match else None


def fact_text(key: str, value: str) -> str:
    return f"user's {key} is {value}"


class Model:
    def __init__(self) -> None:
        self.faults: deque[Reply] = deque()

    def __call__(self, call: Call) -> Reply:
        if self.faults:
            return self.faults.popleft()
        if call.schema_name == "memoryd_facts":
            return answer(self.facts(call.user))
        if call.schema_name == "memoryd_summary":
            texts = [m.group(3) for line in block(call.user, "New messages:") if (m := MESSAGE.match(line))]
            return answer({"summary": "summary: " + " | ".join(texts)})
        if call.schema_name == "memoryd_profile":
            facts = [line.split(") ", 1)[1] for line in block(call.user, "Facts about the user") if ") " in line]
            return answer({"profile": "; ".join(facts)})
        return Reply(status=400, raw=json.dumps({"error": {"message": "unknown schema"}}))

    @staticmethod
    def facts(prompt: str) -> dict:
        known: dict[str, tuple[str, str]] = {}  # key -> (label, value)
        for line in block(prompt, "Known facts"):
            match = KNOWN.match(line)
            if match and (fact := FACT.match(match.group(3))):
                known[fact.group(1)] = (f"F{match.group(1)}", fact.group(2))
        out = []
        for line in block(prompt, "New messages:"):
            match = MESSAGE.match(line)
            if not match or match.group(2) != "user" or not (said := stated(match.group(3))):
                continue
            key, value = said
            action, target = "new", None
            if key in known:
                label, old = known[key]
                action, target = ("duplicate" if old == value else "supersedes"), label
            known[key] = (f"N{len(out) + 1}", value)  # later messages refer to this answer's fact
            out.append(
                {
                    "text": fact_text(key, value),
                    "category": "biography",
                    "event_date": None,
                    "keywords": [key, value],
                    "sources": [int(match.group(1))],
                    "action": action,
                    "target": target,
                }
            )
        return {"facts": out}
