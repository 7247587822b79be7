#!/usr/bin/env python3
"""Fails when a folder includes a header of a folder its target does not link.

Every top-level library folder X is one CMake target perfgate::X. All targets
share the repository root as include directory, so the compiler cannot tell
that store/ reaching into server/ is a layering leak; this check can. It reads
each folder's CMakeLists.txt (target_link_libraries with perfgate::Y, PUBLIC
or PRIVATE), closes the graph over PUBLIC links, and then checks every
`#include "Y/..."` of the folder's sources against it.

Usage: check_layering.py [repository-root]. Exit 0 clean, 1 with a list of
violations (file:line: X includes Y/... but perfgate::X does not link
perfgate::Y), 2 when the CMake files cannot be read.
"""
import pathlib
import re
import sys

# Folders that are not libraries: their own CMake decides what they link.
NOT_LIBRARIES = {"tests", "bench", "examples", "ci", "docs", "build", "tools"}

LINK_RE = re.compile(r"target_link_libraries\(\s*perfgate_(\w+)(.*?)\)", re.S)
INCLUDE_RE = re.compile(r'^\s*#\s*include\s+"([a-z_]+)/')


def read_links(root: pathlib.Path):
    """{folder: (public deps, private deps)} for every library folder."""
    links = {}
    for cmake in sorted(root.glob("*/CMakeLists.txt")):
        folder = cmake.parent.name
        if folder in NOT_LIBRARIES or folder.startswith("build"):
            continue
        text = re.sub(r"#[^\n]*", "", cmake.read_text())
        public, private = set(), set()
        for target, body in LINK_RE.findall(text):
            if target != folder:
                continue
            scope = public
            for word in body.split():
                if word in ("PUBLIC", "INTERFACE"):
                    scope = public
                elif word == "PRIVATE":
                    scope = private
                elif word.startswith("perfgate::"):
                    scope.add(word.split("::", 1)[1])
        links[folder] = (public, private)
    return links


def reachable(links, folder):
    """The folders whose headers `folder` may include: itself, what it links,
    and everything those link PUBLIC, transitively."""
    allowed = {folder}
    public, private = links.get(folder, (set(), set()))
    todo = list(public | private)
    while todo:
        dep = todo.pop()
        if dep in allowed:
            continue
        allowed.add(dep)
        todo.extend(links.get(dep, (set(), set()))[0])
    return allowed


def main() -> int:
    root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else ".").resolve()
    links = read_links(root)
    if not links:
        print(f"check_layering: no library CMakeLists.txt under {root}", file=sys.stderr)
        return 2
    violations = []
    for folder in sorted(links):
        allowed = reachable(links, folder)
        for source in sorted((root / folder).rglob("*")):
            if source.suffix not in (".cpp", ".hpp", ".in") or not source.is_file():
                continue
            for number, line in enumerate(source.read_text(errors="replace").splitlines(), 1):
                m = INCLUDE_RE.match(line)
                if not m or m.group(1) in allowed:
                    continue
                if not (root / m.group(1)).is_dir():
                    continue   # a system header with a slash: not ours
                violations.append(f"{source.relative_to(root)}:{number}: {folder}/ includes "
                                  f"{m.group(1)}/ but perfgate::{folder} does not link perfgate::{m.group(1)}")
    for v in violations:
        print(v)
    print(f"check_layering: {len(links)} library folders, {len(violations)} violations")
    return 1 if violations else 0


if __name__ == "__main__":
    sys.exit(main())
