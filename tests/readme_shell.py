"""Runs a README (or docs/) section's shell commands verbatim against `memoryd serve` on its default
addresses (127.0.0.1:50051 and :50052). Those may be taken on a shared machine, so the
server and the commands run in a private network namespace (`unshare -n`, root only)."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path
from tests import processes

README = Path(__file__).resolve().parents[1] / "README.md"
GUIDE = README.parent / "docs" / "GUIDE.md"
DEPLOYMENT = README.parent / "docs" / "DEPLOYMENT.md"
MEMORYD = Path(sys.executable).parent / "memoryd"
MARK = "=== next command ==="


def section_commands(heading: str, doc: Path = README) -> list[str]:
    """The shell commands of `doc`'s section under `heading`, continuation lines joined."""
    section = doc.read_text().split(heading + "\n", 1)[1].split("\n## ", 1)[0]
    commands = []
    for block in section.split("```sh\n")[1:]:
        command = ""
        for line in block.split("```", 1)[0].splitlines():
            command += line + "\n"
            if not line.endswith("\\"):
                commands.append(command.strip())
                command = ""
    return commands


def can_unshare() -> bool:
    if shutil.which("unshare") is None or shutil.which("ip") is None or shutil.which("curl") is None:
        return False
    return processes.run(["unshare", "-n", "true"], capture_output=True).returncode == 0


def run_verbatim(commands: list[str], folder: Path, *, until: dict[int, str] | None = None) -> list[str]:
    """Each command's output (asserting it exited 0). `until`: command index -> a text its
    output must contain; that command is repeated (up to 10 s) until it does, for what the
    server does in the background."""
    until = until or {}
    steps = []
    for i, command in enumerate(commands):
        if i in until:
            wanted = until[i].replace("'", "'\\''")
            step = (
                f"for _ in $(seq 100); do out=$({command}); status=$?;"
                f" case \"$out\" in *'{wanted}'*) break;; esac; sleep 0.1; done; printf '%s' \"$out\""
            )
        else:
            step = f"{command}\nstatus=$?"
        steps.append(f"echo '{MARK}'\n{step}\necho\necho \"exit=$status\"\n")
    script = folder / "readme.sh"
    script.write_text(
        "set -u\n"
        "ip link set lo up\n"
        f"'{MEMORYD}' serve --data-dir '{folder / 'data'}' --port-file '{folder / 'port'}' 2>'{folder / 'log'}' &\n"
        "server=$!\n"
        f"for _ in $(seq 300); do [ -s '{folder / 'port'}' ] && break; sleep 0.1; done\n"
        + "".join(steps)
        + "kill $server; wait $server\n"
    )
    run = processes.run(["unshare", "-n", "bash", str(script)], cwd=folder, capture_output=True, text=True, timeout=120)
    outputs = run.stdout.split(MARK + "\n")[1:]
    assert len(outputs) == len(commands), (run.stdout, run.stderr, (folder / "log").read_text())
    results = []
    for output in outputs:
        body, _, status = output.rstrip("\n").rpartition("\n")
        assert status == "exit=0", output
        results.append(body)
    return results
