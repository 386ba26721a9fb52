"""A feature whose extra is not installed answers with one line and a command that installs it.

Neither distribution is published to an index, so `pip install 'memoryd[tracing]'` resolves
nothing: the command names the checkout each was installed from (editable here). The CLIs
run in a Python whose import system refuses the extra's packages, as if they were absent.
"""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from tests import processes

REPO = Path(__file__).resolve().parents[2]

# Imports of these packages fail, as they do where the extra is not installed.
WITHOUT = """
import sys
class Absent:
    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] in {absent!r}:
            raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)
sys.meta_path.insert(0, Absent())
"""


def run_without(absent: set[str], code: str, tmp_path: Path) -> subprocess.CompletedProcess:
    script = WITHOUT.format(absent=absent) + code
    return processes.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, cwd=tmp_path)


def the_one_line(done: subprocess.CompletedProcess) -> str:
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    return lines[0]


def assert_installs_from_the_checkout(line: str, checkout: Path, extra: str) -> None:
    """The line ends with `<this python> -m pip install -e '<checkout>[extra]'`, and that checkout declares the extra."""
    command = shlex.split(line.rpartition("install it with: ")[2])
    assert command == [sys.executable, "-m", "pip", "install", "-e", f"{checkout}[{extra}]"], line
    project = tomllib.loads((checkout / "pyproject.toml").read_text())["project"]
    assert extra in project["optional-dependencies"]


@pytest.mark.parametrize("extra_args", [[], ["--workers", "2", "--vectors-enabled", "false"]])
def test_serve_with_tracing_without_its_extra(tmp_path, extra_args):
    code = ("from memoryd.cli import main; "
            f"sys.exit(main(['serve', '--tracing', '--listen', '127.0.0.1:0', '--data-dir', 'data', *{extra_args!r}]))")
    done = run_without({"opentelemetry"}, code, tmp_path)
    record = json.loads(the_one_line(done))
    assert record["event"] == "startup_refused" and record["level"] == "error"
    assert record["error"].startswith("memoryd: --tracing needs the tracing extra of memoryd (opentelemetry"), record
    assert_installs_from_the_checkout(record["error"], REPO, "tracing")
    assert not (tmp_path / "data").exists()  # refused before anything was opened


def test_memoryd_mcp_without_its_extra(tmp_path):
    done = run_without({"mcp"}, "from memoryd.cli import main; sys.exit(main(['mcp', '--target', '127.0.0.1:1']))", tmp_path)
    record = json.loads(the_one_line(done))
    assert record["event"] == "startup_refused"
    assert record["error"].startswith("memoryd mcp needs the mcp extra of memoryd-client (mcp"), record
    assert_installs_from_the_checkout(record["error"], REPO / "clients" / "python", "mcp")


def test_memoryd_mcp_command_without_its_extra(tmp_path):
    # What the memoryd-mcp script runs (its entry point, clients/python/pyproject.toml).
    entry = tomllib.loads((REPO / "clients/python/pyproject.toml").read_text())["project"]["scripts"]["memoryd-mcp"]
    module, _, function = entry.partition(":")
    done = run_without({"mcp"}, f"from {module} import {function}; sys.exit({function}())", tmp_path)
    line = the_one_line(done)
    assert line.startswith("memoryd-mcp needs the mcp extra of memoryd-client (mcp"), line
    assert_installs_from_the_checkout(line, REPO / "clients" / "python", "mcp")


def test_without_a_checkout_the_command_names_the_extras_requirements(monkeypatch):
    """Installed from an index or a wheel that is gone: the extra's own requirements, by name."""
    from memoryd_client import extras

    monkeypatch.setattr(extras, "_installed_from", lambda distribution: None)
    command = shlex.split(extras.install_command("memoryd", "tracing"))
    assert command[:4] == [sys.executable, "-m", "pip", "install"]
    assert any(r.startswith("opentelemetry-sdk") for r in command[4:]), command
    assert not any("memoryd" in r for r in command[4:]), command
