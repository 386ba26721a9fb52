"""The scripted model of the formation tests: a deterministic function of the prompt, so what
formation must derive is a function of the log that the tests compute on their own.

- facts (schema memoryd_facts): every user message "my <key> is <value>" states the fact
  "user's <key> is <value>" (sources: that message). A known fact Fk "user's <key> is <value>"
  with the same value makes it a duplicate of Fk; with another value it supersedes Fk; the
  same holds for a fact earlier in the same answer (target "Nk"). Other messages state nothing.
- summary (memoryd_summary): "summary: " and the texts of the new messages joined by " | ",
  cut to SUMMARY_CHARS (the length the summary prompt asks for).
- profile (memoryd_profile): the fact texts joined by "; ", cut to the length the profile
  prompt asks for ("Stay under N characters").
- custom strategies (memoryd_custom_<name>, the tests' schema {"item": string}): every user
  message "i like <thing>" gives the record {"item": "<thing>"} (sources: that message);
  `bad_values` queues values answered instead (schema violations, oversize values).
- `every_message=True` (the LoCoMo benchmark's model, `python -m tests.formation.script
  --every-message`): each other user message also states one fact, "user said: " and its first
  FACT_WORDS words (category other, keywords its three longest words; a duplicate of a known
  fact with that text). Any conversation then forms facts, a profile and their costs.

Every answer is valid under its schema whatever the prompt holds (bounded lengths and counts).

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
LIKES = re.compile(r"^i like (\w+)$")
LIMIT = re.compile(r"Stay under (\d+) characters")
SUMMARY_CHARS = 1500
FACT_WORDS = 12


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


def said_text(content: str) -> str:
    return "user said: " + " ".join(content.split()[:FACT_WORDS])


def cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


class Model:
    def __init__(self, every_message: bool = False) -> None:
        self.faults: deque[Reply] = deque()
        self.bad_values: deque[dict] = deque()
        self.every_message = every_message

    def __call__(self, call: Call) -> Reply:
        if self.faults:
            return self.faults.popleft()
        if call.schema_name == "memoryd_facts":
            return answer(self.facts(call.user, every_message=True) if self.every_message else self.facts(call.user))
        if call.schema_name == "memoryd_summary":
            texts = [m.group(3) for line in block(call.user, "New messages:") if (m := MESSAGE.match(line))]
            return answer({"summary": cut("summary: " + " | ".join(texts), SUMMARY_CHARS)})
        if call.schema_name == "memoryd_profile":
            facts = [line.split(") ", 1)[1] for line in block(call.user, "Facts about the user") if ") " in line]
            limit = LIMIT.search(call.system)
            return answer({"profile": cut("; ".join(facts), int(limit.group(1)) if limit else 2000) or "-"})
        if call.schema_name.startswith("memoryd_custom_"):
            return answer({"records": self.custom(call.user)})
        return Reply(status=400, raw=json.dumps({"error": {"message": "unknown schema"}}))

    def custom(self, prompt: str) -> list[dict]:
        records = []
        for line in block(prompt, "Messages:"):
            match = MESSAGE.match(line)
            if match and match.group(2) == "user" and (liked := LIKES.match(match.group(3).strip())):
                value = self.bad_values.popleft() if self.bad_values else {"item": liked.group(1)}
                records.append({"value": value, "sources": [int(match.group(1))]})
        return records

    @staticmethod
    def facts(prompt: str, every_message: bool = False) -> dict:
        known: dict[str, tuple[str, str]] = {}  # key -> (label, value)
        texts: dict[str, str] = {}  # text -> label ("user said: ..." facts)
        for line in block(prompt, "Known facts"):
            match = KNOWN.match(line)
            if match and (fact := FACT.match(match.group(3))):
                known[fact.group(1)] = (f"F{match.group(1)}", fact.group(2))
            elif match:
                texts[match.group(3)] = f"F{match.group(1)}"
        out: list[dict] = []
        for line in block(prompt, "New messages:"):
            match = MESSAGE.match(line)
            if not match or match.group(2) != "user" or len(out) >= 20:
                continue
            if not (said := stated(match.group(3))):
                if every_message and (text := said_text(match.group(3))) != "user said: ":
                    label = texts.get(text)
                    texts.setdefault(text, f"N{len(out) + 1}")
                    longest = sorted(
                        {w.strip(".,!?;:'\"()") for w in match.group(3).split()}, key=lambda w: (-len(w), w)
                    )
                    out.append(
                        {
                            "text": text,
                            "category": "other",
                            "event_date": None,
                            "keywords": [w for w in longest[:3] if w],
                            "sources": [int(match.group(1) or 0)],
                            "action": "duplicate" if label else "new",
                            "target": label,
                        }
                    )
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


def main() -> None:
    """`python -m tests.formation.script --port-file FILE [--every-message]`: serve this model
    (tests/llm_server.py) until killed: the LoCoMo benchmark's instant model, in a process of
    its own (tests/load/bench_formation_locomo.py)."""
    import argparse
    import threading
    from pathlib import Path

    from tests.llm_server import ScriptedLLM

    parser = argparse.ArgumentParser(description=main.__doc__)
    parser.add_argument("--port-file", required=True)
    parser.add_argument("--every-message", action="store_true")
    args = parser.parse_args()
    with ScriptedLLM(Model(every_message=args.every_message)) as llm:
        Path(args.port_file).write_text(str(llm._server.server_address[1]))
        threading.Event().wait()


if __name__ == "__main__":
    main()
