"""deploy/compose.cluster.yaml, the production topology in miniature (3 memoryd replicas, a
3-node Qdrant cluster, a 3-member MongoDB replica set), tested without a Docker engine like
compose.yaml (tests/test_container.py):

- compose-go (tools/composecheck, the library `docker compose` uses) loads it, and refuses it
  without MEMORYD_TOKENS;
- the MongoDB members and the replica set memoryd's URI names are the same three services;
- the Qdrant nodes form one cluster: one starts it, the others bootstrap from its peer
  address, each announces its own service name and the configured peer-to-peer port, and
  memoryd's URL lists every node; the image is the version the tests run
  (../shared/bin/qdrant, when present);
- each replica's environment loads through memoryd's own configuration (every variable a
  setting, every value within bounds) into a layout the cluster can hold (2 copies on 3 nodes);
  the replicas publish distinct ports, and the round-robin target in the header lists them.

What this cannot test: the images, Docker's networking and DNS, healthchecks and start order.
The cluster's behaviour under a node loss is tests/faults/test_qdrant_cluster.py's.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from memoryd import config
from tests import processes
from tests.qdrant_server import binary
from tests.test_container import composecheck  # noqa: F401 - the compose-go loader, a fixture

ROOT = Path(__file__).resolve().parent.parent
COMPOSE = ROOT / "deploy" / "compose.cluster.yaml"
TOKENS = "acme: a-long-enough-test-token"


@pytest.fixture(scope="module")
def project(composecheck) -> dict:  # noqa: F811 - the fixture imported above
    env = {**os.environ, "MEMORYD_TOKENS": TOKENS}
    loaded = processes.run([str(composecheck), str(COMPOSE)], capture_output=True, text=True, env=env, timeout=60)
    assert loaded.returncode == 0, loaded.stderr
    return json.loads(loaded.stdout)


def _named(services: dict, prefix: str) -> list[str]:
    return sorted(name for name in services if re.fullmatch(rf"{prefix}\d", name))


def test_the_topology_is_three_of_each(project):
    services = project["services"]
    assert set(services) == {f"{kind}{n}" for kind in ("memoryd", "qdrant", "mongo") for n in (1, 2, 3)}


def test_it_says_what_is_missing_without_tokens(composecheck):  # noqa: F811
    env = {k: v for k, v in os.environ.items() if k != "MEMORYD_TOKENS"}
    loaded = processes.run([str(composecheck), str(COMPOSE)], capture_output=True, text=True, env=env, timeout=60)
    assert loaded.returncode == 1
    assert "MEMORYD_TOKENS" in loaded.stderr


def test_the_mongodb_members_are_the_replica_set_memoryd_names(project):
    services = project["services"]
    members = _named(services, "mongo")
    for name in members:
        command = services[name]["command"]
        assert command[:1] == ["mongod"] and command[command.index("--replSet") + 1] == "rs0"
    initiate = " ".join(services["mongo1"]["healthcheck"]["test"])
    assert re.findall(r"host: '([\w.-]+):27017'", initiate) == members
    assert "_id: 'rs0'" in initiate
    for name in _named(services, "memoryd"):
        uri = urlsplit(services[name]["environment"]["MEMORYD_MONGODB_URI"])
        assert sorted(host.split(":")[0] for host in uri.netloc.split(",")) == members
        assert uri.query == "replicaSet=rs0"
        assert services[name]["depends_on"]["mongo1"]["condition"] == "service_healthy"


def _flag(command: list[str], flag: str) -> str | None:
    return command[command.index(flag) + 1] if flag in command else None


def test_the_qdrant_nodes_form_one_cluster(project):
    services = project["services"]
    nodes = _named(services, "qdrant")
    founders = [name for name in nodes if _flag(services[name]["command"], "--bootstrap") is None]
    assert founders == ["qdrant1"]
    founder_uri = _flag(services["qdrant1"]["command"], "--uri")
    volumes = set()
    for name in nodes:
        service = services[name]
        env = service["environment"]
        assert env["QDRANT__CLUSTER__ENABLED"] == "true"
        assert _flag(service["command"], "--uri") == f"http://{name}:{env['QDRANT__CLUSTER__P2P__PORT']}"
        if name != "qdrant1":
            assert _flag(service["command"], "--bootstrap") == founder_uri
            assert service["depends_on"]["qdrant1"]["condition"] == "service_healthy"
        [volume] = service["volumes"]
        assert volume["target"] == "/qdrant/storage"
        volumes.add(volume["source"])
    assert len(volumes) == len(nodes)  # each node its own storage
    images = {services[name]["image"] for name in nodes}
    assert len(images) == 1
    tested = binary()
    if tested is not None and os.access(tested, os.X_OK):
        version = subprocess.run([str(tested), "--version"], capture_output=True, text=True, timeout=30).stdout.split()
        assert images == {f"qdrant/qdrant:v{version[-1]}"}  # the version the tests run


def test_each_replica_loads_through_memoryds_configuration_into_a_layout_the_cluster_holds(project):
    services = project["services"]
    replicas = _named(services, "memoryd")
    nodes = _named(services, "qdrant")
    known = {f"MEMORYD_{name.upper()}" for name, *_ in config._settings()} | {
        f"MEMORYD_{name.upper()}" for name, *_ in config._limits()
    }
    published: list[int] = []
    for name in replicas:
        service = services[name]
        environment = service["environment"]
        assert set(environment) <= known, set(environment) - known
        loaded = config.load(environ=environment)  # bounds and the write-consistency rule
        assert loaded.tokens == TOKENS
        assert [urlsplit(url).hostname for url in loaded.qdrant_url.split(",")] == nodes  # every node
        assert 2 <= loaded.qdrant_replication_factor <= len(nodes)  # a node can be lost
        assert loaded.qdrant_shards >= len(nodes)  # every node holds shards
        assert 1 <= loaded.qdrant_write_consistency <= loaded.qdrant_replication_factor
        for node in nodes:
            assert service["depends_on"][node]["condition"] == "service_healthy"
        listen_port = int(loaded.listen.rsplit(":", 1)[1])
        targets = {int(port["target"]): int(port["published"]) for port in service["ports"]}
        assert set(targets) == {listen_port, listen_port + 1}  # gRPC, and HTTP/JSON (auto: + 1)
        published += targets.values()
        grace = float(re.fullmatch(r"(\d+)s", service["stop_grace_period"])[1])  # type: ignore[index]
        assert grace > loaded.grace_seconds  # the stop drains before Docker's SIGKILL
        assert service["build"]["context"] == str(ROOT)
    assert len(set(published)) == len(published)
    header = COMPOSE.read_text().split("\nservices:", 1)[0]
    [target] = re.findall(r"ipv4:\S+", header)
    grpc_ports = [int(services[name]["ports"][0]["published"]) for name in replicas]
    assert target == "ipv4:" + ",".join(f"127.0.0.1:{port}" for port in grpc_ports)
