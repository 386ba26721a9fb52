"""The recency-sensitive question set: facts that change over a conversation, where the
newest statement is the right answer (docs/RECALL.md, "The recency set").

Generated, never stored: `generate()` is deterministic (a seeded RNG and fixed templates), so
every run asks the same questions about the same conversations. Each conversation is a year
of weekly chats between a person and a friend. Some of the person's facts (where they live,
their job, car, phone, ...) change several times; each change is stated in a session, in one
of several phrasings, among small talk and passing mentions of earlier values. The question
"where does <name> live now?" is asked the day after the last session; its evidence is the
newest statement of that fact. Every older statement matches the question as well by words
and by meaning: only recency tells them apart.

    .venv/bin/python -m tests.recall.recency_set --print 3     # look at a conversation
"""

from __future__ import annotations

import argparse
import random
from dataclasses import dataclass

from tests.recall.datasets import DAY_MS, TURN_GAP_MS, Conversation, Question, Turn

SEED = 20_251_201
CONVERSATIONS = 24
SESSIONS = 40
SESSION_GAP_DAYS = (5, 11)  # days between sessions, uniformly
START_MS = 1_672_531_200_000  # 2023-01-01


@dataclass(frozen=True, slots=True)
class Fact:
    name: str
    question: str  # "{name}": the person
    statements: tuple[str, ...]  # "{value}": the new value; "{old}": the previous one
    mentions: tuple[str, ...]  # passing mentions of a value that are not a change
    values: tuple[str, ...]


FACTS = (
    Fact(
        "city",
        "Where does {name} live now?",
        ("I just moved to {value}! The boxes are everywhere.", "We finally settled in {value}, goodbye {old}.",
         "Big news: I'm living in {value} now.", "The move to {value} is done, I love the new neighbourhood."),
        ("My cousin is visiting {value} next month.", "I saw a documentary about {value} yesterday."),
        ("Lisbon", "Denver", "Osaka", "Toronto", "Melbourne", "Prague", "Austin", "Dublin", "Seoul", "Cape Town"),
    ),
    Fact(
        "job",
        "Where does {name} work these days?",
        ("I accepted the offer from {value}, I start on Monday.", "First week at {value} went well, the team is kind.",
         "I left {old}; I'm working at {value} now.", "Switched jobs: my new employer is {value}."),
        ("A recruiter from {value} emailed me again.", "{value} was in the news today."),
        ("Northwind", "Globex", "Initech", "Umbrella Labs", "Stark Logistics", "Wayne Foods", "Acme Robotics",
         "Hooli", "Vandelay Imports", "Soylent Energy"),
    ),
    Fact(
        "car",
        "What car does {name} drive now?",
        ("I sold the {old} and bought a {value}.", "Picked up my new {value} today, it drives so smoothly.",
         "My car now is a {value}.", "Traded in the old car; I'm driving a {value} these days."),
        ("My neighbour has a {value} too.", "I saw a {value} in the parking lot and thought of you."),
        ("Honda Civic", "Subaru Outback", "Tesla Model 3", "Ford Focus", "Mazda CX-5", "Toyota Prius",
         "Volvo XC40", "Kia Niro", "Hyundai Ioniq", "Jeep Wrangler"),
    ),
    Fact(
        "phone",
        "Which phone does {name} use at the moment?",
        ("I got a {value}, finally replaced the {old}.", "My new phone is a {value}.",
         "Switched to a {value} this week, the camera is great.", "Dropped my phone, so now I use a {value}."),
        ("My dad wants a {value} for his birthday.", "The {value} ad is everywhere."),
        ("Pixel 8", "iPhone 15", "Galaxy S23", "OnePlus 11", "Fairphone 5", "Xperia 1", "Moto Edge", "Nothing Phone",
         "iPhone SE", "Pixel 7a"),
    ),
    Fact(
        "sport",
        "Which sport is {name} training for currently?",
        ("I signed up for {value} lessons, three evenings a week.", "I quit {old}; I'm doing {value} now.",
         "These days my training is all about {value}.", "Started {value} this month and I'm hooked."),
        ("There was a {value} match on TV last night.", "My coworker talks about {value} all the time."),
        ("climbing", "rowing", "fencing", "judo", "swimming", "tennis", "boxing", "cycling", "archery", "squash"),
    ),
    Fact(
        "book",
        "What book is {name} reading right now?",
        ("I'm reading {value} now, can't put it down.", "Finished {old}, started {value} last night.",
         "My current book is {value}.", "Just began {value} on the train this morning."),
        ("The library had {value} on display.", "Someone on the bus was reading {value}."),
        ("Dune", "Middlemarch", "The Hobbit", "Beloved", "Neuromancer", "Persuasion", "Ulysses", "Solaris",
         "Rebecca", "Emma"),
    ),
    Fact(
        "pet",
        "What is the name of {name}'s dog?",
        ("We adopted a puppy and named her {value}.", "Sadly we had to rehome {old}; our new dog is called {value}.",
         "Meet {value}, the newest member of the family.", "{value} is our dog now, she loves the park."),
        ("The dog next door is also called {value}.", "{value} is such a popular dog name at the park."),
        ("Biscuit", "Luna", "Pepper", "Maple", "Ziggy", "Nala", "Olive", "Rosie", "Juniper", "Mochi"),
    ),
    Fact(
        "language",
        "Which language is {name} learning at the moment?",
        ("I started learning {value} with an app.", "I gave up on {old} and switched to {value} classes.",
         "My evening course is {value} now.", "Practising {value} every morning these days."),
        ("A colleague speaks {value} fluently.", "I heard a song in {value} on the radio."),
        ("Portuguese", "Japanese", "German", "Korean", "Italian", "Arabic", "Dutch", "Polish", "Greek", "Swahili"),
    ),
)

NAMES = ("Avery", "Blake", "Casey", "Dana", "Elliot", "Frankie", "Harper", "Jordan", "Kendall", "Morgan",
         "Parker", "Quinn", "Riley", "Sawyer", "Taylor")  # fmt: skip
FRIENDS = ("Sam", "Alex", "Jamie", "Robin", "Charlie", "Drew")
SMALL_TALK = (
    "The weather has been strange this week, sunny one day and rainy the next.",
    "I cooked a big pot of soup on Sunday and ate it all week.",
    "Work was busy, lots of meetings but nothing exciting.",
    "I watched a movie last night, it was fine but a bit long.",
    "My plants are finally growing again after the cold spell.",
    "I went for a long walk by the river this morning.",
    "Did you see the game on Saturday? What a finish.",
    "I'm thinking about repainting the kitchen, maybe green.",
    "My sister called, she says hello.",
    "I tried a new bakery downtown, the croissants were amazing.",
    "I slept badly, the neighbours had a party.",
    "We played board games with friends on Friday.",
    "I finally cleaned out the garage, found so many old things.",
    "The train was late again, I read on the platform.",
    "I'm planning a small trip for the long weekend.",
)
REPLIES = (
    "That sounds great!", "Oh nice, tell me more.", "Haha, I know what you mean.", "How do you feel about it?",
    "Wow, that's a big change.", "Good for you!", "I'm happy to hear that.", "Same here, honestly.",
    "Really? I didn't expect that.", "Sounds like a good week.",
)


def _conversation(number: int, rng: random.Random) -> Conversation:
    name, friend = NAMES[number % len(NAMES)], FRIENDS[number % len(FRIENDS)]
    conversation = Conversation(f"recency-{number}")
    facts = rng.sample(FACTS, 6)
    # Each fact changes 3 to 7 times, in distinct sessions spread over the year.
    changes: dict[int, list[tuple[Fact, int]]] = {}
    histories: dict[str, list[str]] = {}
    for fact in facts:
        count = rng.randint(3, 7)
        values = rng.sample(fact.values, count)
        histories[fact.name] = values
        for index, session in enumerate(sorted(rng.sample(range(SESSIONS), count))):
            changes.setdefault(session, []).append((fact, index))
    newest: dict[str, str] = {}  # fact -> turn id of its newest statement
    day = START_MS
    for session in range(SESSIONS):
        day += rng.randint(*SESSION_GAP_DAYS) * DAY_MS
        # Exchanges (a line of the person's and the friend's reply) in random order.
        exchanges: list[tuple[str, str | None]] = []  # (the person's line, the fact it states)
        for fact, index in changes.get(session, []):
            values = histories[fact.name]
            templates = fact.statements if index else [t for t in fact.statements if "{old}" not in t]
            exchanges.append((rng.choice(templates).format(value=values[index], old=values[index - 1]), fact.name))
        exchanges += [(text, None) for text in rng.sample(SMALL_TALK, 3)]
        if rng.random() < 0.5:  # a passing mention of some value, not a change
            fact = rng.choice(facts)
            exchanges.append((rng.choice(fact.mentions).format(value=rng.choice(histories[fact.name])), None))
        lines: list[tuple[str, str, str | None]] = [
            (friend, rng.choice(("Hey! How was your week?", "Hi! What's new?", "Hello again!")), None)
        ]
        for text, stated in rng.sample(exchanges, len(exchanges)):
            lines += [(name, text, stated), (friend, rng.choice(REPLIES), None)]
        for i, (speaker, text, stated) in enumerate(lines):
            turn_id = f"D{session + 1}:{i + 1}"
            role = "user" if speaker == name else "assistant"
            conversation.turns.append(Turn(turn_id, f"session-{session + 1}", speaker, text, day + i * TURN_GAP_MS, role))
            if stated:
                newest[stated] = turn_id
    for fact in facts:
        conversation.questions.append(Question(fact.question.format(name=name), (newest[fact.name],), fact.name))
    return conversation


def generate() -> list[Conversation]:
    rng = random.Random(SEED)
    return [_conversation(number, rng) for number in range(CONVERSATIONS)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--print", type=int, default=0, metavar="N", help="print conversation N and its questions")
    args = parser.parse_args()
    conversations = generate()
    print(f"{len(conversations)} conversations, {sum(len(c.turns) for c in conversations)} turns, "
          f"{sum(len(c.questions) for c in conversations)} questions")  # fmt: skip
    conversation = conversations[args.print]
    for turn in conversation.turns[:60]:
        print(f"  {turn.id:>7} {turn.content}")
    for question in conversation.questions:
        print(f"  Q: {question.text} -> {question.evidence[0]}")


if __name__ == "__main__":
    main()
