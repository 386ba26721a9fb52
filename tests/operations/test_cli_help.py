"""`memoryd --version`, and each subcommand's --help: its own arguments first, then the server
settings it shares with `serve` under their own heading (memoryd.cli, config.add_arguments)."""

from __future__ import annotations

from importlib import metadata

import pytest

from memoryd import cli
from memoryd.config import SETTINGS_TITLE

OWN = {
    "export": ["--tenant", "--output", "--vectors"],
    "import": ["--input", "--vectors"],
    "forget-user": ["user_id", "--tenant"],
    "reindex": ["--tenant"],
}


def help_of(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    with pytest.raises(SystemExit) as done:
        cli.main([*argv, "--help"])
    assert done.value.code == 0
    return capsys.readouterr().out


@pytest.mark.parametrize("command", sorted(OWN))
def test_a_commands_help_shows_its_own_options_first(capsys, command):
    text = help_of(capsys, command)
    usage, settings = text.split("\n\n", 1)[0], text.index(f"{SETTINGS_TITLE}:")
    # The usage line names the command's own arguments, and the shared settings as one word.
    assert usage.startswith(f"usage: memoryd {command} [-h]") and usage.rstrip().endswith("[settings]")
    assert "--listen" not in usage and "--data-dir" not in usage
    for name in OWN[command]:
        assert name in usage and text.index(name) < settings, name
    assert text.index("--listen") > settings and text.index("--data-dir") > settings


def test_serve_lists_the_settings_and_version_is_the_distributions(capsys):
    text = help_of(capsys, "serve")
    assert "usage: memoryd serve [-h] [settings]" in text and "--mongodb-uri" in text
    with pytest.raises(SystemExit) as done:
        cli.main(["--version"])
    assert done.value.code == 0
    assert capsys.readouterr().out.strip() == f"memoryd {metadata.version('memoryd')}"
