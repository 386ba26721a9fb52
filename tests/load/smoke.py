"""5-second ghz smoke run: SaveMessage and GetHistory at once against a freshly started memoryd.

Fails (exit 1) on any non-OK response, on no responses at all, or when the server
does not start. Used by the README test command, so it stays short and self-contained.
"""

from __future__ import annotations

import sys
import tempfile
import threading
from pathlib import Path

from loadlib import SCENARIOS, GhzResult, env_float, indexing_stats, run_ghz, start_memoryd, tail


def main() -> int:
    duration = env_float("LOAD_SMOKE_DURATION", 5)
    with tempfile.TemporaryDirectory(prefix="memoryd-smoke-") as tmp:
        workdir = Path(tmp)
        results: dict[str, GhzResult] = {}
        failures: list[str] = []
        with start_memoryd("memoryd-smoke", workdir, workdir / "data") as server:

            def drive(name: str) -> None:
                try:
                    results[name] = run_ghz(
                        SCENARIOS / f"{name}.json", server.target, target="smoke", duration=duration, concurrency=8
                    )
                except Exception as exc:  # reported below; the other scenario still runs
                    failures.append(f"{name}: {exc}")

            threads = [threading.Thread(target=drive, args=(name,)) for name in ("save_message", "get_history")]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
            indexing = indexing_stats(server.target)  # saved messages get keyword points meanwhile
        print(f"smoke indexing: {indexing['keyword_points']} keyword points, {indexing['queued']} events behind")
        if results.get("save_message") and results["save_message"].count and not indexing["keyword_points"]:
            failures.append("indexing: no saved message got a keyword point")
        for name, r in sorted(results.items()):
            print(
                f"smoke {name}: {r.count} calls, {r.rps:.0f} RPS, p50 {r.p50_ms:.2f} ms, "
                f"p99 {r.p99_ms:.2f} ms, {r.errors} errors"
            )
            if r.errors:
                failures.append(f"{name}: {r.errors} errors: {r.error_samples}")
            elif r.count == 0:
                failures.append(f"{name}: no calls completed")
        if failures:
            for failure in failures:
                print(f"smoke FAILED: {failure}", file=sys.stderr)
            print(tail(server.log_path), file=sys.stderr)
            return 1
    print("smoke OK")
    return 0


if __name__ == "__main__":
    sys.exit(main())
