"""The console's files as memoryd serves them (no browser): on by default, off with
--console false, from the installed package, under a policy that lets the page load only
its own files and call only this server."""

from __future__ import annotations

import httpx

from memoryd.app import start
from memoryd.config import Config
from memoryd.transport.http.site import console_files


def test_the_package_ships_every_file_the_page_loads():
    files = console_files()
    index = files["/console/"][1].decode()
    assert 'src="app.js"' in index and 'href="console.css"' in index
    for name in (
        "app.js",
        "api.js",
        "dom.js",
        "state.js",
        "sessions.js",
        "recall.js",
        "memory.js",
        "live.js",
        "ops.js",
    ):
        assert f"/console/{name}" in files, name
        for line in files[f"/console/{name}"][1].decode().splitlines():
            if line.startswith("import "):
                target = line.rsplit('"./', 1)[1].split('"')[0]
                assert f"/console/{target}" in files, (name, target)
            assert "http://" not in line and "https://" not in line, (name, line)  # nothing from elsewhere


async def test_served_by_default_and_off_with_the_flag(tmp_path):
    for enabled in (True, False):
        app = await start(
            Config(listen="127.0.0.1:0", data_dir=tmp_path / str(enabled), log_level="warning", console=enabled)
        )
        try:
            async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{app.http_port}") as http:
                page = await http.get("/console/")
                script = await http.get("/console/app.js")
                bare = await http.get("/console")
            if not enabled:
                assert (page.status_code, script.status_code) == (404, 404)
                continue
            assert page.status_code == 200 and page.headers["content-type"] == "text/html; charset=utf-8"
            assert script.headers["content-type"] == "text/javascript; charset=utf-8"
            assert (bare.status_code, bare.headers["location"]) == (308, "/console/")
            policy = page.headers["content-security-policy"]
            assert "default-src 'none'" in policy and "connect-src 'self'" in policy and "script-src 'self'" in policy
            assert page.headers["x-content-type-options"] == "nosniff"
        finally:
            await app.stop(0)
