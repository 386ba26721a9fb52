"""A Chinese memory set built from KdConv (docs/RECALL.md, "KdConv-memory"): multi-session
conversations whose questions ask for a fact one of the turns stated.

KdConv (github thu-coai/KdConv, Apache-2.0) is 4,500 crowd-sourced Chinese conversations
about films, music and travel; every turn is annotated with the knowledge triples it uses
(entity, attribute, value). From its test split (data/<domain>/test.json; nothing is fetched):

- each domain's 150 conversations, in file order, become 5 memory conversations of 30
  sessions each (one KdConv conversation per session); sessions are 2 to 9 days apart
  (a seeded RNG), turns of a session 30 s apart; two fixed speakers alternate, the first
  role `user`;
- a fact is an (entity, attribute) pair some turn states, i.e. a turn annotated with one of
  its triples whose value appears in the turn's text ("Information", a free-text summary,
  is no fact); its evidence is every such turn of the conversation;
- up to `QUESTIONS` facts per conversation (a seeded sample) are asked as
  "<entity>的<attribute>是什么？", the entity without its disambiguation in brackets.

The evidence turn often does not name the entity: it answers a question about it in the
turn before ("导演是谁啊？" — "导演是杰茜·尼尔森。"), as in a real conversation. The
questions are templated; the turns are people's words.
"""

from __future__ import annotations

import json
import random
import re
from collections import defaultdict
from pathlib import Path

from tests.recall.datasets import DAY_MS, TURN_GAP_MS, Conversation, Question, Turn

DOMAINS = ("film", "music", "travel")
SEED = 20_260_301
SESSIONS = 30
QUESTIONS = 60
SESSION_GAP_DAYS = (2, 9)
START_MS = 1_677_628_800_000  # 2023-03-01
SPEAKERS = ("林晓", "周航")
NOT_A_FACT = "Information"


def entity_name(name: str) -> str:
    """The entity without KdConv's disambiguation ("消失的爱人（美国2014年大卫·芬奇执导电影）")."""
    return re.sub(r"[（(][^）)]*[）)]", "", name).strip()


def _stated(message: dict) -> list[tuple[str, str]]:
    """The (entity, attribute) facts a turn states: annotated, and the value in its text."""
    text = message["message"]
    return [
        (entity_name(a["name"]), a["attrname"])
        for a in message.get("attrs") or ()
        if a["attrname"] != NOT_A_FACT and a["attrvalue"].strip() and a["attrvalue"].strip() in text
    ]


def _conversation(name: str, dialogues: list[dict], rng: random.Random) -> Conversation:
    conversation = Conversation(name)
    evidence: dict[tuple[str, str], list[str]] = defaultdict(list)
    start = START_MS
    for number, dialogue in enumerate(dialogues, start=1):
        for i, message in enumerate(dialogue["messages"]):
            speaker = SPEAKERS[i % 2]
            turn = Turn(f"D{number}:{i + 1}", f"session-{number}", speaker, message["message"], start + i * TURN_GAP_MS,
                        "user" if i % 2 == 0 else "assistant")  # fmt: skip
            conversation.turns.append(turn)
            for fact in dict.fromkeys(_stated(message)):
                evidence[fact].append(turn.id)
        start += rng.randint(*SESSION_GAP_DAYS) * DAY_MS
    facts = sorted(evidence)
    domain = name.split("-")[1]
    for entity, attribute in sorted(rng.sample(facts, min(QUESTIONS, len(facts)))):
        conversation.questions.append(Question(f"{entity}的{attribute}是什么？", tuple(evidence[entity, attribute]), domain))
    return conversation


def load_kdconv(path: Path) -> list[Conversation]:
    """The memory conversations of KdConv's test split; `path` is the repository's data/ folder
    (data/film/test.json, data/music/test.json, data/travel/test.json)."""
    conversations = []
    for domain in DOMAINS:
        dialogues = json.loads((Path(path) / domain / "test.json").read_text())
        for part, first in enumerate(range(0, len(dialogues), SESSIONS), start=1):
            name = f"kdconv-{domain}-{part}"
            rng = random.Random(f"{SEED}-{name}")
            conversations.append(_conversation(name, dialogues[first : first + SESSIONS], rng))
    return conversations
