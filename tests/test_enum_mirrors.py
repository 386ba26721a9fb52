"""Enums the domain keeps as plain Python (`# Values mirror memoryd.v1.X`) match the proto's:
the same names (without the proto's prefix) and numbers, none missing on either side."""

from __future__ import annotations

import importlib
import pkgutil
import re
from pathlib import Path

from google.protobuf import descriptor_pool

import memoryd.v1
from memoryd.v1 import event_pb2
from memoryd.domain.models import EventType

DOMAIN = Path(__file__).resolve().parents[1] / "server" / "memoryd" / "domain"
MIRROR = re.compile(r"class (\w+)\(enum\.IntEnum\):\n(?:\s+\"\"\".*?\"\"\"\n)?\s+# Values mirror memoryd\.v1\.(\w+)", re.S)


def _mirrors() -> list[tuple[str, str, str]]:
    """(domain module, class, proto enum) for every mirrored enum of the domain."""
    found = []
    for path in sorted(DOMAIN.glob("*.py")):
        for cls, proto in MIRROR.findall(path.read_text()):
            found.append((f"memoryd.domain.{path.stem}", cls, proto))
    return found


def _prefix(enum_name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", enum_name).upper() + "_"


def test_every_mirrored_enum_matches_the_proto():
    for module in pkgutil.iter_modules(memoryd.v1.__path__, "memoryd.v1."):
        importlib.import_module(module.name)
    mirrors = _mirrors()
    assert len(mirrors) >= 8, mirrors  # the scan finds them (a reworded comment would hide one)
    for module, cls, proto in mirrors:
        domain = {member.name: member.value for member in getattr(importlib.import_module(module), cls)}
        values = descriptor_pool.Default().FindEnumTypeByName(f"memoryd.v1.{proto}").values
        contract = {v.name.removeprefix(_prefix(proto)): v.number for v in values if v.number != 0}
        # The zero value may have a domain name of its own (RecallStatus.NOT_REQUESTED).
        assert {name: n for name, n in domain.items() if n != 0} == contract, f"{module}.{cls} vs memoryd.v1.{proto}"


def test_every_event_type_names_its_payload_field():
    oneof = {field.name for field in event_pb2.Event.DESCRIPTOR.oneofs_by_name["payload"].fields}
    assert {t.payload_field for t in EventType} == oneof
