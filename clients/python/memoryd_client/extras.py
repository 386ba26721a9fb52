"""What to say when a feature's extra is not installed: one line, with a command that works.

memoryd and memoryd-client are not published to a package index, so `pip install
'memoryd[tracing]'` resolves nothing. The command names the source the distribution was
installed from instead (PEP 610's direct_url.json: a checkout, editable or not, or a wheel
file), run by this very Python; installed some other way, it names the extra's own
requirements, which the index has.

`mcp_main` is the `memoryd-mcp` command (and `memoryd mcp`): the MCP server, or that line
when the `mcp` extra is missing.
"""

from __future__ import annotations

import importlib.metadata
import json
import shlex
import sys
from collections.abc import Callable
from pathlib import Path
from urllib.parse import unquote, urlparse


def _installed_from(distribution: str) -> tuple[Path, bool] | None:
    """(source path, editable) of a distribution installed from a local directory or file that still exists."""
    try:
        text = importlib.metadata.distribution(distribution).read_text("direct_url.json")
    except importlib.metadata.PackageNotFoundError:
        return None
    if not text:
        return None
    origin = json.loads(text)
    url = urlparse(origin.get("url", ""))
    path = Path(unquote(url.path))
    if url.scheme != "file" or not path.exists():
        return None
    return path, bool(origin.get("dir_info", {}).get("editable"))


def _requirements(distribution: str, extra: str) -> list[str]:
    """The extra's requirements, as the distribution's metadata lists them."""
    try:
        requires = importlib.metadata.requires(distribution) or []
    except importlib.metadata.PackageNotFoundError:
        return []
    marker = f'extra == "{extra}"'
    return [r.split(";")[0].strip() for r in requires if marker in r.replace("'", '"')]


def install_command(distribution: str, extra: str) -> str:
    """The shell command that installs `distribution`'s `extra` into this Python's environment."""
    pip = f"{shlex.quote(sys.executable)} -m pip install"
    source = _installed_from(distribution)
    if source is not None:
        path, editable = source
        return f"{pip} {'-e ' if editable else ''}{shlex.quote(f'{path}[{extra}]')}"
    requirements = _requirements(distribution, extra)
    if requirements:
        return f"{pip} {' '.join(shlex.quote(r) for r in requirements)}"
    return f"{pip} '{distribution}[{extra}]'"  # nothing better known: the name, from wherever it is published


def missing(feature: str, distribution: str, extra: str, error: ImportError) -> str:
    """One line: what needs which extra, what is missing, and the command that installs it."""
    return (
        f"{feature} needs the {extra} extra of {distribution} ({error.name or error} is not installed); "
        f"install it with: {install_command(distribution, extra)}"
    )


def _refuse(line: str) -> None:
    print(line, file=sys.stderr)


def mcp_main(
    argv: list[str] | None = None, *, prog: str = "memoryd-mcp", refuse: Callable[[str], None] = _refuse
) -> int:
    """Run the MCP server (memoryd_client.mcp_server); exit code 2 with one line from
    `missing` when its extra is not installed."""
    try:
        from . import mcp_server
    except ModuleNotFoundError as error:
        if (error.name or "").partition(".")[0] in ("memoryd", "memoryd_client"):
            raise  # a broken install of memoryd-client itself, not a missing extra
        refuse(missing(prog, "memoryd-client", "mcp", error))
        return 2
    return mcp_server.main(argv, prog=prog)
