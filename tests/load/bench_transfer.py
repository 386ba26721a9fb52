"""Benchmark of `memoryd export` and `memoryd import` (not a test): throughput and peak RSS.

1. Seeds N messages (default 1,000,000) in S sessions (default 1,000) of an embedded data dir
   through the store API, chat-sized (about 200 characters, a third in Chinese, a platform in
   their metadata, every tenth with a tool call), with session attributes.
2. `memoryd export --data-dir D --output F` in its own process, its RSS sampled every 0.1 s.
3. `memoryd import --input F` into a fresh data dir (or, with --import-mongodb-uri, a MongoDB
   database), sampled the same way.
Prints one JSON line per step: seconds, messages/s, MB/s of the stream, peak RSS (MiB).

    .venv/bin/python tests/load/bench_transfer.py                       # 1,000,000 messages
    .venv/bin/python tests/load/bench_transfer.py --messages 100000 --tmp /dev/shm
    .venv/bin/python tests/load/bench_transfer.py --import-mongodb-uri mongodb://127.0.0.1:27017/?replicaSet=rs0
"""

from __future__ import annotations

import argparse
import asyncio
import json
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path

from memoryd.app import open_store
from memoryd.config import Config
from memoryd.domain.models import DEFAULT_TENANT, Message, now_ms
from memoryd.domain.sessions import SessionAttributes, SessionUpdate

BATCH = 1000
TEXT = "We talked about the hiking trip and the weather in the Alps, the lake and the trains. "
CHINESE = "我们聊了去阿尔卑斯山徒步旅行的计划、湖边的天气和火车时刻表。"


def message(i: int, stamp: int) -> Message:
    text = (CHINESE * 3 if i % 3 == 0 else TEXT * 2)[: 150 + i % 100]
    calls = [{"id": f"c{i}", "name": "weather", "arguments": '{"city": "Lyon"}'}] if i % 10 == 0 else []
    return Message(
        role="user" if i % 2 else "assistant",
        content=text,
        timestamp=stamp + i,
        metadata={"platform": "web", "sender": {"id": f"u{i % 7}"}},
        tool_calls=calls,
    )


async def seed(data_dir: Path, messages: int, sessions: int) -> float:
    store = open_store(Config(data_dir=data_dir))
    await store.open()
    started, stamp = time.perf_counter(), now_ms()
    try:
        per_session = -(-messages // sessions)
        written = 0
        for s in range(sessions):
            update = SessionUpdate(SessionAttributes(f"user-{s % 50}", "bench", {"n": str(s)}))
            for start in range(0, per_session, BATCH):
                batch = [message(written + i, stamp) for i in range(min(BATCH, per_session - start, messages - written))]
                if not batch:
                    break
                await store.append(DEFAULT_TENANT, f"session-{s:05}", batch, None, now_ms(), update)
                written += len(batch)
    finally:
        await store.close()
    return time.perf_counter() - started


def rss_mib(pid: int) -> float:
    try:
        with open(f"/proc/{pid}/status") as status:
            for line in status:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
    except FileNotFoundError:
        pass
    return 0.0


def measured(command: list[str]) -> dict:
    """Run `command`, sampling its RSS; its seconds, peak RSS and the done line it logged."""
    started = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    peak, stop = [0.0], threading.Event()

    def sample() -> None:
        while not stop.wait(0.1):
            peak[0] = max(peak[0], rss_mib(process.pid))

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    _, err = process.communicate()
    seconds = time.perf_counter() - started
    stop.set()
    sampler.join()
    if process.returncode:
        sys.exit(f"{command[1]} failed:\n{err.decode()[-3000:]}")
    done = [json.loads(line) for line in err.decode().splitlines() if line.strip()][-1]
    return {"seconds": round(seconds, 1), "peak_rss_mib": round(peak[0], 1), "done": done}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--messages", type=int, default=1_000_000)
    parser.add_argument("--sessions", type=int, default=1_000)
    parser.add_argument("--tmp", default=None, help="where the data dirs and the export go (default: the system's)")
    parser.add_argument("--import-mongodb-uri", default="", help="import into this MongoDB instead of a data dir")
    args = parser.parse_args()
    memoryd = str(Path(sys.executable).with_name("memoryd"))
    with tempfile.TemporaryDirectory(dir=args.tmp) as tmp:
        source, export = Path(tmp) / "source", Path(tmp) / "export.jsonl"
        seconds = asyncio.run(seed(source, args.messages, args.sessions))
        print(json.dumps({"step": "seed", "messages": args.messages, "sessions": args.sessions, "seconds": round(seconds, 1)}))
        steps = {
            "export": [memoryd, "export", "--data-dir", str(source), "--output", str(export)],
            "import": [memoryd, "import", "--input", str(export)]
            + (["--mongodb-uri", args.import_mongodb_uri, "--mongodb-database", f"bench_{uuid.uuid4().hex[:8]}"]
               if args.import_mongodb_uri else ["--data-dir", str(Path(tmp) / "target")]),
        }  # fmt: skip
        for step, command in steps.items():
            result = measured(command)
            done = result.pop("done")
            assert done["messages"] == args.messages, done
            megabytes = export.stat().st_size / 1e6
            print(json.dumps({
                "step": step, "messages": done["messages"], **result,
                "messages_per_second": round(args.messages / result["seconds"]),
                "stream_mb": round(megabytes, 1), "mb_per_second": round(megabytes / result["seconds"], 1),
            }), flush=True)  # fmt: skip


if __name__ == "__main__":
    main()
