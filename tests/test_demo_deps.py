#!/usr/bin/env python3
"""ci/demo.sh installs only what the demo needs (issue 44, item 1).

The demo builds perfgate and the example benchmark and runs perf stat: the
`build` and `runtime` sets of ci/install-deps.sh. It must not install the
test set (Chromium, PostgreSQL, clang, wrk, ...).

Two checks, with the real scripts and stand-ins around them:
1. ci/demo.sh, copied into a scratch tree beside a stand-in
   ci/install-deps.sh that records its arguments and stops the demo (exit 7),
   calls install-deps with exactly the sets `build runtime`.
2. The real ci/install-deps.sh with those sets, on a PATH whose dpkg-query
   reports nothing installed and whose apt-get records what it is asked to
   install: every package of the build and runtime sets, and none of the
   test set.

Usage: test_demo_deps.py SOURCE_DIR
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

SRC = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else ".")
failures = []


def fail(message):
    failures.append(message)
    print(f"FAIL: {message}")


def install_sets(script):
    """The package names of each set of ci/install-deps.sh, read from its arrays."""
    text = open(script).read()
    sets = {}
    for name in ("build", "runtime", "test"):
        m = re.search(rf"^{name}=\((.*?)^\)", text, re.S | re.M)
        if not m:
            fail(f"ci/install-deps.sh: no {name}=( ... ) array")
            continue
        words = []
        for line in m.group(1).splitlines():
            words += line.split("#", 1)[0].split()
        sets[name] = set(words)
    return sets


def demo_calls_install_deps_with_build_runtime(scratch):
    tree = os.path.join(scratch, "tree")
    os.makedirs(os.path.join(tree, "ci"))
    shutil.copy(os.path.join(SRC, "ci", "demo.sh"), os.path.join(tree, "ci", "demo.sh"))
    record = os.path.join(scratch, "install-deps.args")
    stub = os.path.join(tree, "ci", "install-deps.sh")
    with open(stub, "w") as f:
        f.write(f'#!/bin/sh\necho "$#:$*" > "{record}"\nexit 7\n')
    os.chmod(stub, 0o755)
    r = subprocess.run(["bash", os.path.join(tree, "ci", "demo.sh")], capture_output=True, text=True, timeout=60)
    if r.returncode != 7:
        fail(f"ci/demo.sh did not stop at its install-deps call (exit {r.returncode}): {r.stderr.strip()[:300]}")
        return
    if not os.path.exists(record):
        fail("ci/demo.sh never called ci/install-deps.sh")
        return
    args = open(record).read().strip()
    # "0:" would be no argument, i.e. install-deps' default: all (the test set too).
    if args != "2:build runtime":
        fail(f"ci/demo.sh calls ci/install-deps.sh with '{args}' (count:args), expected '2:build runtime'")


def install_deps_installs_only_build_runtime(scratch):
    sets = install_sets(os.path.join(SRC, "ci", "install-deps.sh"))
    if len(sets) != 3:
        return
    fake = os.path.join(scratch, "bin")
    os.makedirs(fake)
    asked = os.path.join(scratch, "apt-get.args")
    scripts = {
        "dpkg-query": "#!/bin/sh\nexit 1\n",  # nothing installed
        "apt-get": f'#!/bin/sh\necho "$*" >> "{asked}"\n',
        "id": "#!/bin/sh\necho 0\n",  # as root: no sudo
    }
    for name, body in scripts.items():
        path = os.path.join(fake, name)
        with open(path, "w") as f:
            f.write(body)
        os.chmod(path, 0o755)
    env = dict(os.environ, PATH=fake + os.pathsep + os.environ.get("PATH", ""))
    r = subprocess.run(["bash", os.path.join(SRC, "ci", "install-deps.sh"), "build", "runtime"],
                       capture_output=True, text=True, env=env, timeout=60)
    if r.returncode != 0:
        fail(f"ci/install-deps.sh build runtime: exit {r.returncode}: {r.stderr.strip()[:300]}")
        return
    lines = open(asked).read().splitlines() if os.path.exists(asked) else []
    installs = [line for line in lines if line.split()[:1] == ["install"]]
    if len(installs) != 1:
        fail(f"apt-get was asked {lines!r}, expected one install")
        return
    got = {w for w in installs[0].split() if not w.startswith("-") and w != "install"}
    want = sets["build"] | sets["runtime"]
    if got != want:
        fail(f"ci/install-deps.sh build runtime installs {sorted(got)}, expected {sorted(want)}")
    leaked = got & sets["test"]
    if leaked:
        fail(f"ci/install-deps.sh build runtime installs test tools: {sorted(leaked)}")


with tempfile.TemporaryDirectory(prefix="pg-demo-deps") as scratch:
    demo_calls_install_deps_with_build_runtime(scratch)
    install_deps_installs_only_build_runtime(scratch)

if failures:
    print(f"test_demo_deps: {len(failures)} failure(s)")
    sys.exit(1)
print("test_demo_deps: ci/demo.sh installs the build and runtime sets only")
