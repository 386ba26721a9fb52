"""The recall benchmark's question sets, as conversations to save and questions to ask.

- LoCoMo (`load_locomo`): very long-term conversations between two people over many
  sessions, questions annotated with the turns that hold the evidence (`D<session>:<turn>`).
  Read from the dataset's JSON files (github snap-research/locomo, data/locomo10.json or the
  per-conversation files of data/locomo10.zip); nothing is fetched.
- REALTALK (`load_realtalk`): 21 days of real messaging-app chats between pairs of people,
  each message timestamped, with memory-probing questions annotated like LoCoMo's (the
  files of github danny911kr/REALTALK, data/Chat_*.json).
- KdConv as a memory set (kdconv.py): Chinese conversations about films, music and travel,
  chained into multi-session conversations, with questions generated from the knowledge
  each turn is annotated with.
- The recency set (recency_set.py): facts that change over a conversation; the evidence of
  a question is the newest statement.

A turn's content is saved as "<speaker>: <text>" (plus its shared photo's caption), the
form the LoCoMo paper's retrievers indexed, so the figures compare.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

# Turns of one session are this far apart (the dataset dates sessions, not turns).
TURN_GAP_MS = 30_000
DAY_MS = 86_400_000


@dataclass(frozen=True, slots=True)
class Turn:
    id: str  # the dataset's turn id, e.g. "D3:7"
    session: str
    speaker: str
    text: str
    timestamp: int  # ms since the epoch
    role: str = "user"

    @property
    def content(self) -> str:
        return f"{self.speaker}: {self.text}"


@dataclass(frozen=True, slots=True)
class Question:
    text: str
    evidence: tuple[str, ...]  # turn ids
    category: str


@dataclass(slots=True)
class Conversation:
    name: str  # saved as its own tenant: IDF and every search stay within the conversation
    turns: list[Turn] = field(default_factory=list)
    questions: list[Question] = field(default_factory=list)
    # A summary per session, where the set has them (LoCoMo's `session_N_summary`): what the
    # bench's --slices saves as a slice over the session's messages.
    summaries: dict[str, str] = field(default_factory=dict)

    @property
    def asked_at(self) -> int:
        """The questions' reference time: the day after the conversation's last turn."""
        return max(t.timestamp for t in self.turns) + DAY_MS


LOCOMO_CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}


def _session_time(text: str) -> int:
    """LoCoMo dates sessions like "1:56 pm on 8 May, 2023"."""
    moment = datetime.strptime(text.strip(), "%I:%M %p on %d %B, %Y").replace(tzinfo=timezone.utc)
    return int(moment.timestamp() * 1000)


_TURN_ID = re.compile(r"D?\s*:?\s*(\d+)\s*:\s*0*(\d+)(?:\s*-\s*D?\s*(\d+)\s*:\s*0*(\d+))?")


def _evidence(raw: list[str], known: set[str]) -> tuple[str, ...]:
    """Turn ids of the annotation, repaired where the dataset mistyped them ("D8:6; D9:17",
    "D:11:26", "D30:05", "D5:3.", "D 2:18", "23:29") or gave a range within a session
    ("D12:3-D12:5"); ids of no turn are left out."""
    found = []
    for match in _TURN_ID.finditer(" ".join(raw)):
        session, first, end_session, last = match.groups()
        end = int(last) if last is not None and end_session == session else int(first)
        found += [turn for n in range(int(first), max(end, int(first)) + 1) if (turn := f"D{session}:{n}") in known]
    return tuple(dict.fromkeys(found))


def _with_caption(text: str, turn: dict) -> str:
    """A turn's text, with the caption of the photo it shares (LoCoMo's and REALTALK's form)."""
    return f"{text} [shares a photo of {turn['blip_caption']}]" if turn.get("blip_caption") else text


def _ask(conversation: Conversation, annotated: list[dict], categories: dict[int, str]) -> None:
    """The annotated questions whose evidence names turns of the conversation (repaired ids)."""
    known = {t.id for t in conversation.turns}
    for qa in annotated:
        evidence = _evidence(qa.get("evidence") or [], known)
        if evidence:
            conversation.questions.append(Question(qa["question"], evidence, categories[qa["category"]]))


def _locomo_files(path: Path) -> list[tuple[str, dict]]:
    if path.is_dir():
        return [(p.stem, json.loads(p.read_text())) for p in sorted(path.glob("*.json"))]
    data = json.loads(path.read_text())
    items = data if isinstance(data, list) else [data]
    return [
        (str(item.get("sample_id", i)), item.get("conversation", item) | (item.get("session_summary") or {}) | {"qa": item.get("qa", [])})
        for i, item in enumerate(items)
    ]


def load_locomo(path: Path) -> list[Conversation]:
    conversations = []
    for name, data in _locomo_files(Path(path)):
        conversation = Conversation(f"locomo-{name}")
        roles = {data["speaker_a"]: "user", data["speaker_b"]: "assistant"}
        sessions = sorted(
            (int(key.split("_")[1]), key) for key, value in data.items()
            if re.fullmatch(r"session_\d+", key) and isinstance(value, list)
        )  # fmt: skip
        for number, key in sessions:
            start = _session_time(data[f"{key}_date_time"])
            for i, turn in enumerate(data[key]):
                conversation.turns.append(
                    Turn(turn["dia_id"], f"session-{number}", turn["speaker"], _with_caption(turn["text"], turn),
                         start + i * TURN_GAP_MS, roles.get(turn["speaker"], "user"))
                )  # fmt: skip
            summary = data.get(f"{key}_summary")
            if isinstance(summary, str) and summary.strip():
                conversation.summaries[f"session-{number}"] = summary
        _ask(conversation, data["qa"], LOCOMO_CATEGORIES)
        conversations.append(conversation)
    return conversations


REALTALK_CATEGORIES = {1: "fact", 2: "temporal", 3: "inference"}  # the dataset's "date" questions: temporal


def _realtalk_time(text: str) -> int:
    """REALTALK dates messages like "29.12.2023, 22:42:04" (read as UTC)."""
    moment = datetime.strptime(text.strip(), "%d.%m.%Y, %H:%M:%S").replace(tzinfo=timezone.utc)
    return int(moment.timestamp() * 1000)


def load_realtalk(path: Path) -> list[Conversation]:
    """REALTALK's conversations: a folder of its Chat_*.json files (not its locomo/ copy), or one
    file. Every message keeps its own timestamp; the first speaker is role `user`."""
    path = Path(path)
    files = sorted(path.glob("*.json")) if path.is_dir() else [path]
    conversations = []
    for file in files:
        data = json.loads(file.read_text())
        names = {name.lower(): name for name in data["name"].values()}
        first = data["name"]["speaker_1"]
        conversation = Conversation(f"realtalk-{file.stem}")
        sessions = sorted(int(key.split("_")[1]) for key in data if re.fullmatch(r"session_\d+", key))
        for number in sessions:
            for turn in data[f"session_{number}"]:
                speaker = names.get(turn["speaker"].lower(), turn["speaker"])
                conversation.turns.append(
                    Turn(turn["dia_id"], f"session-{number}", speaker, _with_caption(turn["clean_text"], turn),
                         _realtalk_time(turn["date_time"]), "user" if speaker == first else "assistant")
                )  # fmt: skip
        _ask(conversation, data["qa"], REALTALK_CATEGORIES)
        conversations.append(conversation)
    return conversations
