#!/usr/bin/env python3
"""Every repository path named in a comment or a document exists (ctest
stale_paths): a map that names a moved or deleted file misleads the next
reader. Checks C/C++ comments, CMake, shell and Python files, and Markdown
pages, for words like `gate/compare.hpp` or `docs/http-api.md` that start
with one of the repository's top-level folders and end in a file
extension. A path under a build directory (BUILD/, build/...) or with a
placeholder (NAME, *, {...}) is not a repository path, nor one that follows
another project's name ("valgrind's docs/internals/...") or lies in a
folder this repository does not have (the kernel's tools/perf/util/...):
what is checked is a missing file in a folder that exists. CHANGELOG.md is
history and names files as they were.

Usage: check_paths.py REPO [--list]   (--list: every stale reference, then a count)
"""
import os
import re
import subprocess
import sys

EXTENSIONS = "hpp|cpp|h|c|md|py|sh|cmake|json|yml|yaml|txt|js|css|csv|svg|inc|def"
SOURCE_SUFFIXES = (".hpp", ".cpp", ".h", ".c", ".cmake", ".sh", ".py", ".md", ".txt", ".yml", ".yaml", ".js")


def tracked_files(repo):
    out = subprocess.run(["git", "-C", repo, "ls-files"], check=True, capture_output=True, text=True).stdout
    return [f for f in out.splitlines() if f.endswith(SOURCE_SUFFIXES) or os.path.basename(f) == "CMakeLists.txt"]


def comment_text(path, text):
    """The parts of a file a reader takes as prose: C++ comments, # comments, all of Markdown."""
    if path.endswith((".md", ".txt")) and not path.endswith("CMakeLists.txt"):
        return text
    if path.endswith((".hpp", ".cpp", ".h", ".c", ".js", ".css")):
        parts = re.findall(r"//[^\n]*|/\*.*?\*/", text, flags=re.S)
        return "\n".join(parts)
    return "\n".join(line[line.index("#"):] for line in text.splitlines() if "#" in line)


def main():
    repo = sys.argv[1]
    list_all = "--list" in sys.argv
    top = sorted(d for d in os.listdir(repo) if os.path.isdir(os.path.join(repo, d)) and not d.startswith(".")
                 and not d.startswith("build"))
    word = re.compile(r"(?<![\w./$-])((?:%s)/[\w./+-]*?\.(?:%s))(?![\w/-])" % ("|".join(map(re.escape, top)), EXTENSIONS))
    stale = []
    for f in tracked_files(repo):
        if f == "CHANGELOG.md":  # history: it names files as they were
            continue
        try:
            with open(os.path.join(repo, f), encoding="utf-8") as fh:
                text = fh.read()
        except (UnicodeDecodeError, FileNotFoundError):
            continue
        prose = comment_text(f, text)
        for m in word.finditer(prose):
            name = m.group(1).rstrip(".")
            # Another project's file ("Otava's tests/analysis_test.py").
            if re.search(r"\w's `?$", prose[max(0, m.start() - 40):m.start()]):
                continue
            if any(p in name for p in ("NAME", "*", "{", "XXX")):
                continue
            here = os.path.join(repo, name)
            beside = os.path.join(repo, os.path.dirname(f), name)
            if os.path.exists(here) or os.path.exists(beside):
                continue
            # A folder this repository does not have: another project's
            # path (the kernel's tools/perf/util/stat.c), not a stale one.
            if not os.path.isdir(os.path.dirname(here)) and not os.path.isdir(os.path.dirname(beside)):
                continue
            stale.append(f"{f}: names {name}, which does not exist")
    for s in stale:
        print(s)
    print(f"check_paths: {len(stale)} stale path reference(s)")
    return 1 if stale and not list_all else 0


if __name__ == "__main__":
    sys.exit(main())
