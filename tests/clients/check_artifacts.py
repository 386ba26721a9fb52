"""Fails when a built client artifact lacks a file it must ship (scripts/test-clients runs it).

    python -m tests.clients.check_artifacts wheel|sdist|npm|jar ARTIFACT

What each must hold is derived from the sources, so a new module, message or
service is expected without editing this file:
  wheel  every tracked file of clients/python/memoryd and clients/python/memoryd_client
  sdist  the same, plus pyproject.toml and README.md
  npm    for every tracked clients/typescript/src file: its .js and .d.ts (or the .json) in dist/src
  jar    every message, enum and *Grpc stub of proto/memoryd/v1, every class of src/main/java,
         and the service config
"""

from __future__ import annotations

import re
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def tracked(*paths: str) -> list[str]:
    out = subprocess.run(["git", "ls-files", "--", *paths], cwd=ROOT, capture_output=True, text=True, check=True)
    return out.stdout.split()


def python_files() -> set[str]:
    return {path.removeprefix("clients/python/") for path in tracked("clients/python/memoryd", "clients/python/memoryd_client")}


def expected_wheel() -> set[str]:
    return python_files()


def expected_sdist() -> set[str]:
    return python_files() | {"pyproject.toml", "README.md"}


def expected_npm() -> set[str]:
    expected = {"package.json", "README.md"}
    for path in tracked("clients/typescript/src"):
        relative = path.removeprefix("clients/typescript/")
        built = "dist/" + relative
        if relative.endswith(".ts"):
            expected |= {built.removesuffix(".ts") + ".js", built.removesuffix(".ts") + ".d.ts"}
        else:
            expected.add(built)
    return expected


def expected_jar() -> set[str]:
    expected = {"memoryd/v1/memoryd_grpc_service_config.json"}
    for proto in sorted((ROOT / "proto/memoryd/v1").glob("*.proto")):
        text = proto.read_text()
        for kind, name in re.findall(r"^(message|enum|service) (\w+)", text, flags=re.M):
            expected.add(f"dev/memoryd/v1/{name}{'Grpc' if kind == 'service' else ''}.class")
    for source in tracked("clients/java/src/main/java"):
        expected.add(source.removeprefix("clients/java/src/main/java/").removesuffix(".java") + ".class")
    return expected


def contents(kind: str, artifact: Path) -> set[str]:
    if kind in ("wheel", "jar"):
        with zipfile.ZipFile(artifact) as archive:
            return set(archive.namelist())
    with tarfile.open(artifact) as archive:  # sdist: <name>-<version>/..., npm: package/...
        return {name.split("/", 1)[1] for name in archive.getnames() if "/" in name}


EXPECTED = {"wheel": expected_wheel, "sdist": expected_sdist, "npm": expected_npm, "jar": expected_jar}


def main() -> int:
    kind, artifact = sys.argv[1], Path(sys.argv[2])
    missing = sorted(EXPECTED[kind]() - contents(kind, artifact))
    if missing:
        print(f"check_artifacts: {artifact.name} lacks {len(missing)} file(s):", *missing, sep="\n  ", file=sys.stderr)
        return 1
    print(f"check_artifacts: {artifact.name}: all {len(EXPECTED[kind]())} expected files present")
    return 0


if __name__ == "__main__":
    sys.exit(main())
