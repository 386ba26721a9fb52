"""The opt-in end-to-end run's memoryd half (tools/llama_optin.sh starts the model's server):
starts `memoryd serve` with formation on against `--llm-url`, saves a small conversation,
waits for formation (WaitForFormation), and prints what formed: the facts with their source
messages, the summary slices, the profile, and the model's calls and tokens per strategy.

    .venv/bin/python tools/llama_optin.py --llm-url http://127.0.0.1:18080/v1 --llm-model gemma3-270m

Any OpenAI-compatible server works. Exits 1 when formation has not caught up within
--timeout (the status then shows each strategy's last error).
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import tempfile
import time
from pathlib import Path

import grpc

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
from memoryd.v1 import formation_service_pb2 as fpb  # noqa: E402
from memoryd.v1 import (  # noqa: E402
    formation_service_pb2_grpc,
    memory_service_pb2,
    memory_service_pb2_grpc,
    message_pb2,
    summary_service_pb2_grpc,  # noqa: E402
)
from memoryd.v1 import summary_service_pb2 as spb  # noqa: E402
from tests.processes import ServerProcess  # noqa: E402

USER = "alice"
SESSION = "optin-1"
CONVERSATION = [
    ("user", "Hi! I'm Alice. I live in Lyon and I work as a nurse at the children's hospital."),
    ("assistant", "Nice to meet you, Alice! How can I help today?"),
    ("user", "I'm vegetarian, so please only suggest meatless recipes."),
    ("assistant", "Noted: meatless recipes only."),
    ("user", "My daughter Mia turns 7 on 12 June 2026 and she loves dinosaurs."),
    ("assistant", "A dinosaur party could be fun for Mia's birthday."),
    ("user", "Actually, I moved from Lyon to Paris last month."),
    ("assistant", "Congratulations on the move to Paris!"),
]
STRATEGIES = {1: "summary", 2: "facts", 3: "profile", 4: "custom"}


def main() -> int:
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # a stop still stops memoryd (finally)
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--llm-url", required=True)
    parser.add_argument("--llm-model", required=True)
    parser.add_argument("--llm-api-key-file", default="")
    parser.add_argument("--timeout", type=float, default=900.0, help="seconds to wait for formation")
    args = parser.parse_args()
    workdir = Path(tempfile.mkdtemp(prefix="memoryd-llama-optin-"))
    argv = [str(Path(sys.executable).parent / "memoryd"), "serve", "--listen", "127.0.0.1:0",
            "--data-dir", str(workdir / "data"), "--vectors-enabled", "false",
            "--llm-url", args.llm_url, "--llm-model", args.llm_model, "--llm-timeout-seconds", "600",
            "--formation-concurrency", "1", "--formation-summary-max-messages", "8",
            *(["--llm-api-key-file", args.llm_api_key_file] if args.llm_api_key_file else [])]  # fmt: skip
    server = ServerProcess(argv, workdir, name="memoryd", cwd=REPO)
    server.start(120)
    try:
        return run(server.target, args.timeout, server.log_path)
    finally:
        server.stop()


def run(target: str, timeout: float, log: Path) -> int:
    with grpc.insecure_channel(target) as channel:
        grpc.channel_ready_future(channel).result(timeout=60)
        memory = memory_service_pb2_grpc.MemoryServiceStub(channel)
        formation = formation_service_pb2_grpc.FormationServiceStub(channel)
        summaries = summary_service_pb2_grpc.SummaryServiceStub(channel)
        saved = memory.SaveMessages(
            memory_service_pb2.SaveMessagesRequest(
                session_id=SESSION,
                messages=[message_pb2.Message(role=r, content=c) for r, c in CONVERSATION],
                session_attributes=message_pb2.SessionAttributes(user_id=USER),
            )
        )
        number = {m.id: n for n, m in enumerate(saved.messages, 1)}
        started = time.monotonic()
        caught_up = False
        while not caught_up:  # WaitForFormation waits at most 600 s a call
            wait = max(1.0, min(600.0, timeout - (time.monotonic() - started)))
            try:
                formation.WaitForFormation(
                    fpb.WaitForFormationRequest(event_seq=saved.event_seq, timeout_ms=int(wait * 1000)),
                    timeout=wait + 10,
                )
                caught_up = True
            except grpc.RpcError as error:
                if error.code() != grpc.StatusCode.DEADLINE_EXCEEDED or time.monotonic() - started >= timeout:
                    print(f"formation did not catch up: {error.code().name} {error.details()}")
                    break
        print(f"formation took {time.monotonic() - started:.1f} s (caught up: {caught_up})")
        status = formation.GetFormationStatus(fpb.GetFormationStatusRequest())
        facts = formation.ListFacts(fpb.ListFactsRequest(user_id=USER, include_superseded=True)).facts
        slices = summaries.ListSummaries(spb.ListSummariesRequest(session_id=SESSION)).summaries
        profile = formation.GetProfile(fpb.GetProfileRequest(user_id=USER)).profile
    print("\nconversation:")
    for n, (role, content) in enumerate(CONVERSATION, 1):
        print(f"  M{n} [{role}] {content}")
    print(f"\nfacts about {USER} ({len(facts)}):")
    for f in facts:
        sources = ",".join(f"M{number.get(s.message_id, '?')}" for s in f.sources)
        state = " (superseded)" if f.valid_to else ""
        print(f"  - [{f.category}] {f.text}  <- {sources}{state}")
    print(f"\nsummary slices ({len(slices)}):")
    for s in slices:
        print(f"  [{s.from_seq}..{s.to_seq}] {s.text}")
    print(f"\nprofile: {profile.text or '(none)'}")
    spent = {
        STRATEGIES.get(s.strategy, str(s.strategy)): {
            "calls": s.llm_calls, "failures": s.llm_failures, "prompt_tokens": s.prompt_tokens,
            "completion_tokens": s.completion_tokens, "lag": s.lag, "last_error": s.last_error,
        }
        for s in status.strategies
    }  # fmt: skip
    print("\nmodel calls per strategy:")
    print(json.dumps(spent, indent=1))
    print(f"\nmemoryd log: {log}")
    return 0 if caught_up else 1


if __name__ == "__main__":
    sys.exit(main())
