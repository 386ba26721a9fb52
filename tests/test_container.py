"""The shipped container files, tested without a Docker engine.

- compose.yaml is loaded by compose-go (tools/composecheck), the library `docker compose`
  uses, so a file `docker compose up` cannot parse fails here.
- The Dockerfile's runtime stage is read (ENV, WORKDIR, VOLUME, USER, HEALTHCHECK,
  ENTRYPOINT); the same wheels it installs are built and installed into a fresh venv, and
  memoryd is started exactly as the ENTRYPOINT with the ENV says (paths moved under a
  temporary directory, the port moved to a free one); its HEALTHCHECK command must then
  pass, the defaults must give an authenticated server, and SIGTERM must stop it cleanly.
- The README's Docker commands: `docker run` publishes every EXPOSEd port and mounts the
  VOLUME; the commands after it run verbatim in bash against that server, with `docker exec`
  running its command here and the published ports moved as the server's were.

What this cannot test: the image build itself (base image, apt/pip inside it, file
ownership, the non-root user at run time) and Docker's own handling of HEALTHCHECK,
VOLUME and signals.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import sysconfig
import time
from pathlib import Path

import grpc
import pytest

from memoryd.v1 import memory_service_pb2 as mem
from memoryd.v1 import memory_service_pb2_grpc
from tests.conftest import free_port_pair
from tests.readme_shell import DEPLOYMENT, section_commands
from tests import processes

ROOT = Path(__file__).resolve().parent.parent
IMAGE_HOME = "/var/lib/memoryd"


# -- compose.yaml ---------------------------------------------------------------------------
@pytest.fixture(scope="module")
def composecheck(tmp_path_factory) -> Path:
    go = shutil.which("go")
    assert go, "Go is needed to load compose.yaml with compose-go (tools/composecheck)"
    binary = tmp_path_factory.mktemp("composecheck") / "composecheck"
    processes.run([go, "build", "-o", str(binary), "."], cwd=ROOT / "tools" / "composecheck", check=True, timeout=600)
    return binary


def test_compose_yaml_loads_with_compose_go(composecheck):
    env = {**os.environ, "MEMORYD_TOKENS": "acme: a-long-enough-test-token"}
    loaded = processes.run([str(composecheck), str(ROOT / "compose.yaml")], capture_output=True, text=True, env=env, timeout=60)
    assert loaded.returncode == 0, loaded.stderr
    project = json.loads(loaded.stdout)
    services = project["services"]
    assert set(services) == {"mongo", "qdrant", "memoryd"}
    memoryd = services["memoryd"]
    assert memoryd["environment"]["MEMORYD_TOKENS"] == "acme: a-long-enough-test-token"
    assert memoryd["environment"]["MEMORYD_MONGODB_URI"].endswith("replicaSet=rs0")
    assert memoryd["depends_on"]["mongo"]["condition"] == "service_healthy"
    assert "--replSet" in services["mongo"]["command"]


def test_compose_yaml_says_what_is_missing_without_tokens(composecheck):
    env = {k: v for k, v in os.environ.items() if k != "MEMORYD_TOKENS"}
    loaded = processes.run([str(composecheck), str(ROOT / "compose.yaml")], capture_output=True, text=True, env=env, timeout=60)
    assert loaded.returncode == 1
    assert "MEMORYD_TOKENS" in loaded.stderr and "tenant: token" in loaded.stderr


# -- Dockerfile -------------------------------------------------------------------------------
def _stages() -> list[str]:
    text = re.sub(r"\\\n\s*", " ", (ROOT / "Dockerfile").read_text())  # line continuations
    return text.split("\nFROM ")[1:]


def build_copies() -> list[tuple[str, str]]:
    """(source, destination) of the build stage's COPY instructions."""
    copies = []
    for line in _stages()[0].splitlines():
        if line.startswith("COPY "):
            *sources, destination = line.split()[1:]
            copies += [(source, destination) for source in sources]
    return copies


def runtime_stage() -> dict:
    """The last stage's instructions: ENV (dict), WORKDIR, USER, VOLUME, HEALTHCHECK, ENTRYPOINT."""
    stage = _stages()[-1]
    found: dict = {"ENV": {}}
    for line in stage.splitlines()[1:]:
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        instruction, _, rest = line.partition(" ")
        if instruction == "ENV":
            found["ENV"].update(dict(item.split("=", 1) for item in shlex.split(rest)))
        elif instruction in ("ENTRYPOINT", "VOLUME"):
            found[instruction] = json.loads(rest)
        elif instruction == "HEALTHCHECK":
            found[instruction] = json.loads(rest.split(" CMD ", 1)[1])
        else:
            found[instruction] = rest
    return found


def test_the_runtime_stage_is_non_root_with_data_on_a_volume():
    stage = runtime_stage()
    assert stage["USER"] == "memoryd"
    assert stage["ENV"]["MEMORYD_DATA_DIR"] in stage["VOLUME"]
    assert stage["ENV"]["MEMORYD_TOKENS_FILE"].startswith(stage["ENV"]["MEMORYD_DATA_DIR"] + "/")
    assert stage["HEALTHCHECK"][:2] == ["memoryd", "health"]


@pytest.fixture(scope="module")
def image_venv(tmp_path_factory) -> Path:
    """A fresh venv with the wheels the Dockerfile builds (memoryd-client, memoryd); their
    third-party dependencies come from the project's venv through a path entry."""
    work = tmp_path_factory.mktemp("image")
    src = work / "src"  # what the build stage COPYs, and nothing else
    for source, destination in build_copies():
        for path in (ROOT.glob(source) if "*" in source else [ROOT / source]):
            target = src / destination / path.name if destination.endswith("/") else src / destination
            if path.is_dir():
                shutil.copytree(path, target, ignore=shutil.ignore_patterns("__pycache__", "*.egg-info", "build"))
            else:
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(path, target)
    wheels = work / "wheels"
    processes.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--wheel-dir", str(wheels),
                    "./clients/python", "."], cwd=src, check=True, timeout=600)
    venv = work / "venv"
    processes.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    processes.run([str(venv / "bin" / "pip"), "install", "--quiet", "--no-deps", "--no-index",
                    *map(str, wheels.iterdir())], check=True, timeout=300)
    site = next((venv / "lib").glob("python*/site-packages"))
    (site / "zz-project-dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    return venv


def _image_env(stage: dict, home: Path, port: int) -> dict[str, str]:
    env = {key: value.replace(IMAGE_HOME, str(home)) for key, value in stage["ENV"].items()}
    env["MEMORYD_LISTEN"] = env["MEMORYD_LISTEN"].replace(":50051", f":{port}")
    keep = {k: v for k, v in os.environ.items() if not k.startswith("MEMORYD_")}
    return {**keep, **env}


def _healthcheck(venv: Path, stage: dict, env: dict[str, str]) -> subprocess.CompletedProcess:
    command = [str(venv / "bin" / stage["HEALTHCHECK"][0]), *stage["HEALTHCHECK"][1:]]
    return processes.run(command, env=env, capture_output=True, text=True, timeout=30)


def test_the_image_defaults_serve_with_authentication_and_pass_the_healthcheck(image_venv, tmp_path):
    stage = runtime_stage()
    home = tmp_path / "home"
    workdir = Path(stage["WORKDIR"].replace(IMAGE_HOME, str(home)))
    workdir.mkdir(parents=True)
    env = _image_env(stage, home, free_port_pair())
    entrypoint = [str(image_venv / "bin" / stage["ENTRYPOINT"][0]), *stage["ENTRYPOINT"][1:]]
    log = tmp_path / "stderr"
    with log.open("wb") as stderr:
        server = processes.popen(entrypoint, cwd=workdir, env=env, stdout=subprocess.DEVNULL, stderr=stderr)
    try:
        deadline = time.monotonic() + 60
        while (check := _healthcheck(image_venv, stage, env)).returncode != 0:
            assert server.poll() is None, log.read_text()
            assert time.monotonic() < deadline, check.stderr + log.read_text()
            time.sleep(0.5)
        tokens_file = Path(env["MEMORYD_TOKENS_FILE"])
        assert tokens_file.stat().st_mode & 0o777 == 0o600
        (line,) = [x for x in tokens_file.read_text().splitlines() if not x.startswith("#")]
        tenant, token = (part.strip() for part in line.split(":", 1))
        assert tenant == "default" and token not in log.read_text()
        with grpc.insecure_channel(env["MEMORYD_LISTEN"].replace("0.0.0.0", "127.0.0.1")) as channel:
            stub = memory_service_pb2_grpc.MemoryServiceStub(channel)
            with pytest.raises(grpc.RpcError) as caught:
                stub.GetHistory(mem.GetHistoryRequest(session_id="s"), timeout=10)
            assert caught.value.code() == grpc.StatusCode.UNAUTHENTICATED
            stub.GetHistory(mem.GetHistoryRequest(session_id="s"), metadata=(("authorization", f"Bearer {token}"),), timeout=10)
        assert (Path(env["MEMORYD_DATA_DIR"]) / "memoryd.db").exists()  # data on the volume
        listed = run_readme_docker_commands(stage, home, int(env["MEMORYD_LISTEN"].rsplit(":", 1)[1]), tmp_path)
        assert json.loads(listed) == {}  # ListSessions with the token read from the file: no sessions yet
        server.send_signal(signal.SIGTERM)
        assert server.wait(timeout=60) == 0
        assert _healthcheck(image_venv, stage, env).returncode == 1
    finally:
        if server.poll() is None:
            server.kill()
            server.wait(timeout=30)
    for line in log.read_text().splitlines():
        json.loads(line)  # JSON logs in the container too


def run_readme_docker_commands(stage: dict, home: Path, port: int, folder: Path) -> str:
    """The README's Docker section against the image's server: `docker build` and `docker run`
    checked against the Dockerfile, the rest run verbatim (`docker exec memoryd CMD` runs CMD
    here, image paths and published ports moved as the server's were); the last one's output."""
    build, run, *rest = section_commands("## Docker", DEPLOYMENT)
    assert build == "docker build -t memoryd ."
    argv = shlex.split(run)
    assert argv[:4] == ["docker", "run", "-d", "--name"] and argv[4] == "memoryd" and argv[-1] == "memoryd"
    published = [argv[i + 1] for i, a in enumerate(argv) if a == "-p"]
    assert published == [f"{p}:{p}" for p in stage["EXPOSE"].split()]  # gRPC and HTTP/JSON
    volume = [argv[i + 1] for i, a in enumerate(argv) if a == "-v"]
    assert [v.split(":", 1)[1] for v in volume] == stage["VOLUME"]
    moved = {IMAGE_HOME: str(home), "127.0.0.1:50051": f"127.0.0.1:{port}", "127.0.0.1:50052": f"127.0.0.1:{port + 1}"}
    script = 'set -eu\ndocker() { [ "$1 $2" = "exec memoryd" ] || { echo "docker $*: not emulated" >&2; return 99; }; shift 2; "$@"; }\n'
    for command in rest:
        for shown, here in moved.items():
            command = command.replace(shown, here)
        script += command + "\n"
    (folder / "readme-docker.sh").write_text(script)
    done = processes.run(["bash", str(folder / "readme-docker.sh")], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout
