#!/usr/bin/env python3
"""Counts the functions of perfgate's own sources and those longer than a
limit (default 80 lines, from the function's signature line to its closing
brace): the figure the code reviews quote. A brace matcher over the code
with comments, strings and character literals blanked: a function is a
brace block, not nested in another function, whose head ends with ')' and
its qualifiers (const, noexcept, override, -> T, a member-initializer
list) and is not a control statement. Lambdas and local classes count as
part of the function that holds them.

Usage: ci/function_lengths.py REPO [--limit 80] [--list] [--max-over N]

--max-over N fails (exit 1) when more than N functions are over the limit:
the ctest function_lengths keeps the figure the reviews reached from drifting.
"""
import os
import re
import sys

FOLDERS = ["model", "stats", "capture", "gate", "report", "profile", "store", "service", "api", "server",
           "client", "github", "gitlab", "runner", "cli"]
CONTROL = re.compile(r"\b(if|for|while|switch|catch|do|else|try)\s*(\(.*\))?\s*$", re.S)


def blank(text):
    """Comments, strings and char literals replaced by spaces (newlines kept)."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif text.startswith('R"', i) and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            m = re.match(r'R"([^(]*)\(', text[i:])
            end = text.find(")" + m.group(1) + '"', i) if m else -1
            j = n if end < 0 else end + len(m.group(1)) + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            out.append(" " * (j + 1 - i))
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def functions(path):
    with open(path, encoding="utf-8") as f:
        code = blank(f.read())
    found = []
    stack = []  # ("function" | "other", start line)
    head_start = 0
    for i, c in enumerate(code):
        if c == "{":
            head = code[head_start:i].strip()
            in_function = any(kind == "function" for kind, _ in stack)
            is_function = False
            if not in_function and not head.startswith(("namespace", "class", "struct", "enum", "union")) \
                    and "=" not in head.split("(")[0]:
                simple = re.sub(r"\s+", " ", head)
                # strip a member-initializer list: ") : a(x), b{y}"
                simple = re.sub(r"\)\s*:\s*[\w:<>,\s(){}.]*$", ")", simple)
                simple = re.sub(r"(const|noexcept(\(.*?\))?|override|final|mutable|->\s*[\w:<>,&*\s]+)\s*$", "",
                                simple).strip()
                simple = re.sub(r"(const|noexcept|override|final)\s*$", "", simple).strip()
                if simple.endswith(")") and not CONTROL.search(simple) and "(" in simple:
                    is_function = True
            line = code.count("\n", 0, i) + 1
            head_line = code.count("\n", 0, head_start + (len(code[head_start:i]) - len(code[head_start:i].lstrip()))) + 1
            stack.append(("function" if is_function else "other", head_line if is_function else line))
            head_start = i + 1
        elif c == "}":
            if stack:
                kind, start = stack.pop()
                if kind == "function":
                    found.append((start, code.count("\n", 0, i) + 1))
            head_start = i + 1
        elif c == ";":
            head_start = i + 1
    return found


def main():
    repo = sys.argv[1]
    limit = int(sys.argv[sys.argv.index("--limit") + 1]) if "--limit" in sys.argv else 80
    total, long = 0, []
    for folder in FOLDERS:
        for root, _, names in os.walk(os.path.join(repo, folder)):
            for name in sorted(names):
                if not name.endswith((".cpp", ".hpp")):
                    continue
                path = os.path.join(root, name)
                for start, end in functions(path):
                    total += 1
                    if end - start + 1 > limit:
                        long.append((end - start + 1, os.path.relpath(path, repo), start))
    if "--list" in sys.argv:
        for n, path, start in sorted(long, reverse=True):
            print(f"{path}:{start}: {n} lines")
    print(f"function_lengths: {total} functions, {len(long)} over {limit} lines "
          f"({100 * len(long) / max(total, 1):.1f}%)")
    if "--max-over" in sys.argv:
        most = int(sys.argv[sys.argv.index("--max-over") + 1])
        if len(long) > most:
            print(f"function_lengths: {len(long)} functions over {limit} lines, at most {most} allowed: "
                  "split the new long ones (--list names them), or raise the ctest's --max-over on purpose")
            sys.exit(1)


if __name__ == "__main__":
    main()
