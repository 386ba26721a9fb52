"""README.md tells the truth about configuration: its table is the one the code generates."""

from __future__ import annotations

from pathlib import Path

from memoryd.config import markdown_table

README = Path(__file__).resolve().parents[1] / "README.md"


def test_readme_configuration_table_matches_the_code():
    text = README.read_text()
    table = text.split("<!-- config-table:start -->\n", 1)[1].split("\n<!-- config-table:end -->", 1)[0]
    assert table == markdown_table(), "run scripts/config-table and paste its output into README.md"


def test_readme_quickstart_names_the_two_commands():
    text = README.read_text()
    assert "scripts/serve" in text and "scripts/test" in text
