#!/usr/bin/env python3
"""Fails on a doctest test-case name that ctest cannot run whole.

doctest_discover_tests (tests/CMakeLists.txt) turns the output of
`--list-test-cases` into CMake lists, where ';' separates elements: a
TEST_CASE named "a; b" becomes two ctest entries, "a" and " b", that each
run `--test-case=a` / `--test-case= b`, match no test case and pass
without running anything. This check reads every tests/**/*.cpp and names
each TEST_CASE (also TEST_CASE_FIXTURE, TEST_CASE_TEMPLATE, SCENARIO) whose
name has a ';' by file and line. Use ',' or "and" instead.

Usage: check_test_names.py SOURCE_DIR
"""

import pathlib
import re
import sys

# The name argument: one or more adjacent string literals (C++ joins them).
_LITERALS = r'((?:"(?:[^"\\\n]|\\.)*"\s*)+)'
_TEST_CASE = re.compile(
    r'\b(?:TEST_CASE|TEST_CASE_TEMPLATE|SCENARIO)\s*\(\s*' + _LITERALS
    + r'|\bTEST_CASE_FIXTURE\s*\(\s*[\w:<>, ]+?\s*,\s*' + _LITERALS)
_ONE_LITERAL = re.compile(r'"((?:[^"\\\n]|\\.)*)"')
_FORBIDDEN = ';'


def test_case_names(text):
    """(line, name) of every test case in a C++ source."""
    for m in _TEST_CASE.finditer(text):
        literals = m.group(1) if m.group(1) is not None else m.group(2)
        name = ''.join(_ONE_LITERAL.findall(literals))
        yield text.count('\n', 0, m.start()) + 1, name


def main(argv):
    if len(argv) != 2:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    tests = pathlib.Path(argv[1]) / 'tests'
    sources = sorted(tests.rglob('*.cpp'))
    if not sources:
        print(f'check_test_names: no tests/**/*.cpp under {argv[1]}', file=sys.stderr)
        return 2
    bad = []
    count = 0
    for path in sources:
        for line, name in test_case_names(path.read_text(encoding='utf-8', errors='replace')):
            count += 1
            if _FORBIDDEN in name:
                bad.append(f'{path}:{line}: test case name has a {_FORBIDDEN!r}, which splits it into '
                           f'ctest entries that run nothing (use "," or "and"): "{name}"')
    if count == 0:
        print(f'check_test_names: no TEST_CASE found in {len(sources)} files under {tests}', file=sys.stderr)
        return 1
    for b in bad:
        print(b, file=sys.stderr)
    if bad:
        return 1
    print(f'check_test_names: {count} test case names in {len(sources)} files, none with {_FORBIDDEN!r}')
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
