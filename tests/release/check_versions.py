"""One version for every package Strata releases: the workspace's (`[workspace.package]` in
Cargo.toml). Run by `make test-release` with Debian's Python (3.11: tomllib):

    python3 tests/release/check_versions.py

Checks the crates' inter-dependencies (pinned to it), the Python binding (Cargo.toml; the wheel
takes its version from there), the npm package (package.json, its lock and Cargo.toml), the
Maven artifact (bindings/java/pom.xml, once there), and that CHANGELOG.md has a section for it.
The C library's file name, SONAME and pkg-config versions derive from it in the Makefile; the
Go module is versioned by its git tag (bindings/go/vX.Y.Z).
"""

import json
import pathlib
import re
import sys
import tomllib
import xml.etree.ElementTree as ElementTree

ROOT = pathlib.Path(__file__).resolve().parents[2]


def toml(path):
    return tomllib.loads((ROOT / path).read_text())


def main():
    workspace = toml("Cargo.toml")
    version = workspace["workspace"]["package"]["version"]
    found = {}  # where -> the version found there

    for name, dependency in workspace["workspace"]["dependencies"].items():
        if isinstance(dependency, dict) and "path" in dependency:
            # Pinned exactly: the crates are released together.
            found[f"Cargo.toml: the {name} dependency"] = dependency.get("version", "")[1:]

    python = toml("bindings/python/Cargo.toml")["package"]["version"]
    found["bindings/python/Cargo.toml"] = python
    pyproject = toml("bindings/python/pyproject.toml")["project"]
    found["bindings/python/pyproject.toml (dynamic: Cargo.toml's)"] = (
        python if "version" in pyproject.get("dynamic", []) else pyproject.get("version")
    )

    found["bindings/node/Cargo.toml"] = toml("bindings/node/Cargo.toml")["package"]["version"]
    package = json.loads((ROOT / "bindings/node/package.json").read_text())
    found["bindings/node/package.json"] = package["version"]
    lock = json.loads((ROOT / "bindings/node/package-lock.json").read_text())
    found["bindings/node/package-lock.json"] = lock["packages"][""]["version"]

    pom = ROOT / "bindings/java/pom.xml"
    if pom.exists():
        project = ElementTree.parse(pom).getroot()
        namespace = re.match(r"\{.*\}", project.tag)
        found["bindings/java/pom.xml"] = project.findtext(
            (namespace.group(0) if namespace else "") + "version"
        )

    changelog = (ROOT / "CHANGELOG.md").read_text()
    section = re.search(rf"^## \[?{re.escape(version)}\]?(\s|$)", changelog, re.MULTILINE)
    found["CHANGELOG.md (a section)"] = version if section else None

    wrong = {where: got for where, got in found.items() if got != version}
    for where, got in wrong.items():
        print(f"check_versions: {where} has {got!r}, want {version!r}", file=sys.stderr)
    pins = [
        name
        for name, dependency in workspace["workspace"]["dependencies"].items()
        if isinstance(dependency, dict) and "path" in dependency
        and not dependency.get("version", "").startswith("=")
    ]
    for name in pins:
        print(f"check_versions: the {name} dependency is not pinned with '='", file=sys.stderr)
    if wrong or pins:
        sys.exit(1)
    print(f"check_versions: {len(found)} places at {version}: ok")


if __name__ == "__main__":
    main()
