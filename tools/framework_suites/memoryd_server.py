"""One `memoryd serve` for a framework suite's plugin: `Server()` starts it on a loopback
port, its data in a temporary directory; `stop()` (the plugin's pytest_unconfigure) ends its
process group and removes the directory. The plugins of this directory swap a framework's store
or service for memoryd's and leave the framework's tests unchanged."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path


class Server:
    def __init__(self, *args: str) -> None:
        self.work = Path(tempfile.mkdtemp(prefix="memoryd-suite-"))
        port = self.work / "port"
        self.process = subprocess.Popen(
            [
                str(Path(sys.executable).with_name("memoryd")),
                "serve",
                "--listen",
                "127.0.0.1:0",
                "--http-listen",
                "off",
                "--data-dir",
                str(self.work / "data"),
                "--port-file",
                str(port),
                "--log-level",
                "warning",
                *args,
            ],
            stdout=open(self.work / "log", "wb"),  # noqa: SIM115 (the server's log, open for its life)
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        try:
            while not (port.exists() and port.read_text().strip()):
                if self.process.poll() is not None:
                    raise RuntimeError((self.work / "log").read_text()[-3000:])
                time.sleep(0.1)
        except BaseException:
            self.stop()
            raise
        self.target = f"127.0.0.1:{port.read_text().strip()}"

    def stop(self) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, 15)
            self.process.wait(30)
        shutil.rmtree(self.work, ignore_errors=True)
