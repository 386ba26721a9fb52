"""Sweeps of SearchMemory's ranking knobs over every question set at once, in the offline
replica (tests/recall/replica.py): one indexing of each set, vectors cached on disk, so a
grid of settings costs seconds per setting instead of a server run each.

    .venv/bin/python -m tests.recall.sweep --locomo <dir> --realtalk <dir> --kdconv <dir> \\
        --cache ~/.cache/memoryd-recall/minilm.sqlite --grid defaults --grid neighbor_weight

Grids (--grid, repeatable; `--list` names them): the server's defaults per retrieval, and one
knob at a time around them. docs/RECALL.md has the results and the choices they justify; the
bench (tests/recall/bench.py) measures the chosen defaults through a real server.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import qdrant_edge as qe

from memoryd.domain import keywords, recall
from tests.recall import embedder, recency_set
from tests.recall.datasets import Conversation, Turn, load_locomo, load_realtalk
from tests.recall.kdconv import load_kdconv
from tests.recall.replica import EmbeddingCache, KeywordDocument, QuestionSet, server_document

KS = (5, 10, 25)
DAY_HOURS = 24.0
RETRIEVALS = {"dense": {"keyword_weight": 0.0}, "keyword": {"keyword_weight": 1.0}, "hybrid": {}}

@dataclass(frozen=True)
class Setting:
    """A row: the request fields it sets, the keyword points it searches, and the ranking
    constants of domain/recall.py it changes (to measure a rule against its absence)."""

    name: str
    fields: dict[str, Any] = field(default_factory=dict)
    document: tuple[str, KeywordDocument] = ("server", server_document)
    constants: dict[str, Any] = field(default_factory=dict)

    @contextmanager
    def applied(self) -> Iterator[None]:
        saved = {name: getattr(recall, name) for name in self.constants}
        for name, value in self.constants.items():
            setattr(recall, name, value)
        try:
            yield
        finally:
            for name, value in saved.items():
                setattr(recall, name, value)


def bm25_document(b: float) -> KeywordDocument:
    """The server's keyword points with BM25's b changed (everything else as keywords.py)."""
    model = qe.Bm25(
        qe.Bm25Config(k=keywords.K1, b=b, avg_len=keywords.AVG_LEN, tokenizer=qe.TokenizerType.Multilingual,
                      language="english",
                      stopwords=qe.StopwordsSet(languages={qe.Language.English, qe.Language.Chinese}))
    )  # fmt: skip

    def document(turn: Turn) -> keywords.Sparse:
        vector = model.embed_document(turn.content)
        return keywords.Sparse(list(vector.indices), list(vector.values))

    return document


NO_AGREEMENT_CHECK = {"AGREEMENT_FULL": 0.0}


def grid_defaults() -> list[Setting]:
    return [Setting(f"{name}, defaults", fields) for name, fields in RETRIEVALS.items()]


def grid_keyword_weight() -> list[Setting]:
    return [Setting(f"hybrid, keyword_weight {w}", {"keyword_weight": w}) for w in (0.3, 0.4, 0.6, 0.7)]


def grid_fusion() -> list[Setting]:
    return [Setting(f"hybrid, rrf, keyword_weight {w}", {"fusion": 2, "keyword_weight": w}) for w in (0.3, 0.5, 0.7)]


def grid_neighbor_weight() -> list[Setting]:
    made = []
    for w in (0.0, 0.1, 0.2, 0.4, 0.5):
        for name, fields in RETRIEVALS.items():
            made.append(Setting(f"{name}, neighbor_weight {w}", {**fields, "neighbor_weight": w}))
    return made


def grid_time() -> list[Setting]:
    made = []
    for weight, days in ((0.0, 90), (0.02, 90), (0.1, 90), (0.05, 30), (0.05, 365)):
        for name in ("hybrid", "dense"):
            fields = {**RETRIEVALS[name], "time_weight": weight, "half_life_hours": days * DAY_HOURS}
            made.append(Setting(f"{name}, tw {weight}, half-life {days} d", fields))
    return made


def grid_b() -> list[Setting]:
    made = []
    for b in (0.0, 0.15, 0.5, 0.75):
        document = (f"b {b}", bm25_document(b))
        for name in ("hybrid", "keyword"):
            made.append(Setting(f"{name}, b {b}", RETRIEVALS[name], document))
    return made


def grid_date_weight() -> list[Setting]:
    made = [Setting(f"hybrid, date_weight {w}", {"date_weight": w}) for w in (0.0, 0.3, 0.5, 1.0)]
    made += [Setting(f"hybrid, date_weight 0.5, WHEN_SHARE {s}", constants={"WHEN_SHARE": s}) for s in (0.0, 0.3, 1.0)]
    return made


def grid_rules() -> list[Setting]:
    """Each rule of this round against its absence, and the ranking before them."""
    made = [Setting(f"{name}, date_weight 0", {**fields, "date_weight": 0.0}) for name, fields in RETRIEVALS.items()]
    made.append(Setting("hybrid, named periods only (WHEN_SHARE 0)", constants={"WHEN_SHARE": 0.0}))
    made.append(Setting("hybrid, no agreement check", constants=NO_AGREEMENT_CHECK))
    made.append(Setting("hybrid, neither (the previous release)", {"date_weight": 0.0}, constants=NO_AGREEMENT_CHECK))
    return made


GRIDS: dict[str, Callable[[], list[Setting]]] = {
    "defaults": grid_defaults,
    "keyword_weight": grid_keyword_weight,
    "fusion": grid_fusion,
    "neighbor_weight": grid_neighbor_weight,
    "time": grid_time,
    "b": grid_b,
    "date_weight": grid_date_weight,
    "rules": grid_rules,
}


def sets(args: argparse.Namespace) -> list[tuple[str, list[Conversation]]]:
    made = []
    if args.locomo:
        made.append(("LoCoMo", load_locomo(args.locomo)))
    if not args.no_recency:
        made.append(("recency set", recency_set.generate()))
    if args.realtalk:
        made.append(("REALTALK", load_realtalk(args.realtalk)))
    if args.kdconv:
        made.append(("KdConv-memory", load_kdconv(args.kdconv)))
    return made


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--locomo", type=Path, help="LoCoMo: per-conversation JSON files, or locomo10.json")
    parser.add_argument("--realtalk", type=Path, help="REALTALK: its data/ folder (Chat_*.json)")
    parser.add_argument("--kdconv", type=Path, help="KdConv: its data/ folder (film/, music/, travel/)")
    parser.add_argument("--no-recency", action="store_true", help="skip the recency set")
    parser.add_argument("--cache", type=Path, default=Path.home() / ".cache" / "memoryd-recall" / "minilm.sqlite",
                        help="the vectors' cache (outside the repository)")  # fmt: skip
    parser.add_argument("--grid", action="append", choices=sorted(GRIDS), help="grids to run (repeatable)")
    parser.add_argument("--out", type=Path, help="also write every number as JSON here")
    args = parser.parse_args()
    model: list[Any] = []

    def embed(texts: list[str]) -> Any:
        if not model:
            with tempfile.TemporaryDirectory(prefix="memoryd-minilm-") as unpacked:
                model.append(embedder.Embedder(embedder.load_model(Path(unpacked))))
        return model[0].encode(texts)

    cache = EmbeddingCache(args.cache, embed)
    started = time.monotonic()
    loaded = [QuestionSet.build(name, conversations, cache) for name, conversations in sets(args)]
    print(f"sets ready in {time.monotonic() - started:.0f} s: "
          + ", ".join(f"{s.name} {s.questions} questions" for s in loaded), file=sys.stderr)  # fmt: skip
    settings = [s for grid in (args.grid or ["defaults"]) for s in GRIDS[grid]()]
    report: dict[str, Any] = {}
    header = "| setting | " + " | ".join(f"{s.name} R@5 / 10 / 25" for s in loaded) + " |"
    lines = [header, "|---|" + "---|" * len(loaded)]
    for setting in settings:
        cells = []
        for question_set in loaded:
            with setting.applied():
                outcomes = {k: question_set.measure(setting.fields, k, setting.document) for k in KS}
            report.setdefault(question_set.name, {})[setting.name] = {
                str(k): {"all": o.mean(), **{c: o.mean(c) for c in sorted(o.recall)}} for k, o in outcomes.items()
            }
            cells.append(" / ".join(f"{outcomes[k].mean():.1f}" for k in KS))
        lines.append(f"| {setting.name} | " + " | ".join(cells) + " |")
        print(lines[-1], file=sys.stderr)
        if args.out:
            args.out.write_text(json.dumps(report, indent=1))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
