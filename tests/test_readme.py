"""The README names the two commands; docs/DEPLOYMENT.md's configuration table is the one the code generates."""

from __future__ import annotations

from pathlib import Path

from memoryd.config import markdown_table

README = Path(__file__).resolve().parents[1] / "README.md"
DEPLOYMENT = README.parent / "docs" / "DEPLOYMENT.md"


def test_configuration_table_matches_the_code():
    text = DEPLOYMENT.read_text()
    table = text.split("<!-- config-table:start -->\n", 1)[1].split("\n<!-- config-table:end -->", 1)[0]
    assert table == markdown_table(), "run scripts/config-table and paste its output into docs/DEPLOYMENT.md"


def test_readme_quickstart_names_the_two_commands():
    text = README.read_text()
    assert "scripts/serve" in text and "scripts/test" in text


def test_readme_stays_a_front_door():
    """What memoryd is, the two commands, first calls and links: the rest lives in docs/."""
    assert len(README.read_text().splitlines()) <= 250
