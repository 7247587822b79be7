#!/usr/bin/env python3
"""ci/action-install.sh (the action's install step) against fake machines.

Each case runs the real script with a PATH whose uname, apt-get, apt-cache,
dpkg-query and perf are stand-ins: uname reports the case's kernel, apt-cache
knows the case's package names, dpkg-query reports nothing installed, perf is
Ubuntu's wrapper without its kernel tools (it fails), and apt-get records what
it was asked to install. The release tarball is a local file (file:// URL)
holding a stand-in perfgate. Checked: for Debian 12, Ubuntu 22.04 and
Ubuntu 24.04 on an Azure kernel and each backend, exactly the packages that
backend runs are installed (none for native and rusage, never a test tool);
the checksum is enforced; a missing release or a branch ref falls back to a
source build with the build set of ci/install-deps.sh only.

Usage: test_action_install.py SOURCE_DIR
"""
import hashlib
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile

SRC = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else ".")
SCRIPT = os.path.join(SRC, "ci", "action-install.sh")
VERSION = "0.1.0"

MACHINES = {
    "debian12": {
        "os_release": 'ID=debian\nVERSION_ID="12"\n',
        "kernel": "6.1.0-18-amd64",
        "known": ["linux-perf", "valgrind"],
    },
    "ubuntu2204": {
        "os_release": 'ID=ubuntu\nVERSION_ID="22.04"\n',
        "kernel": "6.5.0-1025-azure",
        "known": ["linux-tools-6.5.0-1025-azure", "linux-tools-azure", "linux-tools-generic", "valgrind"],
    },
    # A kernel newer than the archive's tools: the exact package is unknown.
    "ubuntu2404-azure": {
        "os_release": 'ID=ubuntu\nVERSION_ID="24.04"\n',
        "kernel": "6.8.0-1099-azure",
        "known": ["linux-tools-azure", "linux-tools-generic", "valgrind"],
    },
}

EXPECTED_PERF = {
    "debian12": "linux-perf",
    "ubuntu2204": "linux-tools-6.5.0-1025-azure",
    "ubuntu2404-azure": "linux-tools-azure",
}

TEST_TOOLS = {"chromium", "chromium-driver", "postgresql", "python3-selenium", "wrk", "doctest-dev",
              "libbenchmark-dev", "clang", "clang-format", "clang-tidy", "libclang-rt-dev", "ccache"}

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def write_exec(path, body):
    with open(path, "w") as f:
        f.write("#!/bin/sh\n" + body)
    os.chmod(path, 0o755)


def fake_bin(root, machine):
    b = os.path.join(root, "bin")
    os.makedirs(b)
    log = os.path.join(root, "apt.log")
    known = os.path.join(root, "known")
    with open(known, "w") as f:
        f.write("\n".join(machine["known"]) + "\n")
    write_exec(os.path.join(b, "uname"),
               f'case "$1" in -m) echo x86_64 ;; -r) echo {machine["kernel"]} ;; *) echo Linux ;; esac\n')
    write_exec(os.path.join(b, "apt-get"), f'echo "apt-get $*" >> {log}\n')
    write_exec(os.path.join(b, "apt-cache"),
               f'[ "$1" = show ] && grep -qx -- "$2" {known} && {{ echo "Package: $2"; exit 0; }}\nexit 100\n')
    write_exec(os.path.join(b, "dpkg-query"), "exit 1\n")
    write_exec(os.path.join(b, "perf"), 'echo "WARNING: perf not found for kernel" >&2\nexit 2\n')
    write_exec(os.path.join(b, "sudo"), '"$@"\n')
    return b, log


def release_dir(root, corrupt=False, sums=None):
    """A release folder like the GitHub release's: tarball and checksum.
    sums(digest, name) -> the .sha256 file's text, when given."""
    d = os.path.join(root, "release")
    name = f"perfgate-{VERSION}-linux-x86_64"
    stage = os.path.join(root, "stage", name, "bin")
    os.makedirs(stage)
    write_exec(os.path.join(stage, "perfgate"), f'echo "perfgate {VERSION} (0123abc)"\n')
    os.makedirs(d)
    tarball = os.path.join(d, name + ".tar.gz")
    with tarfile.open(tarball, "w:gz") as t:
        t.add(os.path.join(root, "stage", name), arcname=name)
    digest = hashlib.sha256(open(tarball, "rb").read()).hexdigest()
    if corrupt:
        digest = "0" * 64
    with open(tarball + ".sha256", "w") as f:
        f.write(sums(digest, name + ".tar.gz") if sums else f"{digest}  {name}.tar.gz\n")
    return d


def run(machine_name, backend, ref="v" + VERSION, release=True, corrupt=False, from_source="false", sums=None):
    machine = MACHINES[machine_name]
    root = tempfile.mkdtemp(prefix="perfgate-action-install-")
    try:
        b, log = fake_bin(root, machine)
        osr = os.path.join(root, "os-release")
        with open(osr, "w") as f:
            f.write(machine["os_release"])
        rel = release_dir(root, corrupt, sums) if release else os.path.join(root, "no-release")
        out = os.path.join(root, "github_output")
        env = {
            "PATH": b + ":/usr/bin:/bin",
            "HOME": root,
            "IN_BACKEND": backend,
            "IN_BUILD_FROM_SOURCE": from_source,
            "ACTION_REF": ref,
            "ACTION_REPOSITORY": "octo/perfgate",
            "GITHUB_SERVER_URL": "https://github.example",
            "PERFGATE_RELEASE_URL": "file://" + rel,
            "PERFGATE_OS_RELEASE": osr,
            "RUNNER_TEMP": root,
            "GITHUB_OUTPUT": out,
        }
        p = subprocess.run(["bash", SCRIPT], env=env, capture_output=True, text=True, timeout=120)
        apt = open(log).read().splitlines() if os.path.exists(log) else []
        outputs = dict(line.split("=", 1) for line in open(out).read().splitlines()) if os.path.exists(out) else {}
        installs = []
        for line in apt:
            m = re.match(r"apt-get install (.*)", line)
            if m:
                installs += [w for w in m.group(1).split() if not w.startswith("-")]
        return p, apt, installs, outputs
    finally:
        shutil.rmtree(root, ignore_errors=True)


def build_set():
    text = open(os.path.join(SRC, "ci", "install-deps.sh")).read()
    block = re.search(r"^build=\((.*?)^\)", text, re.S | re.M).group(1)
    return {w for line in block.splitlines() for w in line.split("#")[0].split()}


for machine in MACHINES:
    for backend in ["perf", "native", "callgrind", "rusage"]:
        what = f"{machine}/{backend}"
        p, apt, installs, outputs = run(machine, backend)
        check(p.returncode == 0, f"{what}: exit {p.returncode}: {p.stderr.strip()}")
        want = {"perf": [EXPECTED_PERF[machine]], "callgrind": ["valgrind"]}.get(backend, [])
        check(installs == want, f"{what}: installed {installs}, expected {want}")
        if not want:
            check(apt == [], f"{what}: apt-get ran although nothing was needed: {apt}")
        check(outputs.get("source-build") == "false", f"{what}: source-build={outputs.get('source-build')}")
        check(outputs.get("perfgate", "").endswith(f"perfgate-{VERSION}-linux-x86_64/bin/perfgate"),
              f"{what}: perfgate={outputs.get('perfgate')}")
        check(f"perfgate {VERSION}" in p.stdout, f"{what}: the step does not say which perfgate: {p.stdout}")

# A tarball that does not match its checksum is refused, never used.
p, apt, installs, outputs = run("debian12", "rusage", corrupt=True)
check(p.returncode == 1 and "does not match" in p.stderr, f"corrupt tarball: exit {p.returncode}, {p.stderr}")
check("perfgate" not in outputs, "corrupt tarball: a perfgate output was written")

# The checksum is bound to the tarball: `sha256sum -c` alone verified
# whatever file the line named, so a line naming /dev/null (with its hash)
# passed and a tampered tarball ran. Refused, whatever the tarball holds.
EMPTY_SHA256 = hashlib.sha256(b"").hexdigest()
for case, sums in [
        ("names /dev/null", lambda digest, name: f"{EMPTY_SHA256}  /dev/null\n"),
        ("names another file", lambda digest, name: f"{digest}  other.tar.gz\n"),
        ("a second line", lambda digest, name: f"{digest}  {name}\n{EMPTY_SHA256}  /dev/null\n"),
        ("no name", lambda digest, name: f"{digest}\n"),
        ("not a hash", lambda digest, name: f"{digest[:40]}  {name}\n")]:
    for corrupt in [False, True]:
        p, apt, installs, outputs = run("debian12", "rusage", corrupt=corrupt, sums=sums)
        what = f"checksum file {case} (tarball {'tampered' if corrupt else 'intact'})"
        check(p.returncode == 1 and "is not one line 'SHA256  perfgate-" in p.stderr,
              f"{what}: exit {p.returncode}, {p.stderr}")
        check("perfgate" not in outputs, f"{what}: a perfgate output was written")
# sha256sum's binary-mode line ("HEX *NAME") is the same hash and reads.
p, apt, installs, outputs = run("debian12", "rusage", sums=lambda digest, name: f"{digest} *{name}\n")
check(p.returncode == 0 and outputs.get("source-build") == "false", f"binary-mode line: exit {p.returncode}, {p.stderr}")

# The install lines of README.md and docs/deployment.md check the tarball
# itself, never `sha256sum -c FILE.sha256` (which trusts the name inside).
for doc in ["README.md", os.path.join("docs", "deployment.md")]:
    text = open(os.path.join(SRC, doc)).read()
    check(not re.search(r"sha256sum\s+-c\s+\S+\.sha256", text), f"{doc}: sha256sum -c on a .sha256 file")

# Every example and doc uses the action at main, a placeholder or a release
# tag the install step downloads (vX.Y.Z): `@v0` never matched, so the
# examples always built from source.
release_ref = re.compile(r"^v?[0-9]+\.[0-9]+\.[0-9]+$")
check("^v?([0-9]+\\.[0-9]+\\.[0-9]+)$" in open(SCRIPT).read(), "action-install.sh's release pattern changed")
docs = [os.path.join("ci", "examples", f) for f in sorted(os.listdir(os.path.join(SRC, "ci", "examples")))]
docs += ["README.md"] + [os.path.join("docs", f) for f in sorted(os.listdir(os.path.join(SRC, "docs")))
                         if f.endswith(".md")]
uses = 0
for doc in docs:
    for ref in re.findall(r"uses:\s*\S*perfgate/ci@([A-Za-z0-9_.<>/-]*[A-Za-z0-9_>])", open(os.path.join(SRC, doc)).read()):
        uses += 1
        check(ref in ("main", "REF", "<ref>") or release_ref.match(ref),
              f"{doc}: uses perfgate/ci@{ref}, which is neither main nor a release tag vX.Y.Z")
check(uses >= 6, f"only {uses} uses of perfgate/ci found in the examples and docs")

# No release for this tag, a branch ref, or build-from-source: a source build,
# with the build set and the backend's packages, never a test tool.
builds = build_set()
check({"cmake", "libsqlite3-dev", "libboost-dev"} <= builds, f"install-deps.sh build set: {sorted(builds)}")
for case, kwargs in [("no release", {"release": False}), ("branch ref", {"ref": "main"}),
                     ("local action", {"ref": ""}), ("forced", {"from_source": "true"})]:
    p, apt, installs, outputs = run("ubuntu2204", "callgrind", **kwargs)
    check(p.returncode == 0, f"source build ({case}): exit {p.returncode}: {p.stderr}")
    check(outputs.get("source-build") == "true", f"source build ({case}): source-build={outputs.get('source-build')}")
    check(outputs.get("perfgate") == "", f"source build ({case}): perfgate={outputs.get('perfgate')}")
    check(set(installs) == builds | {"valgrind"},
          f"source build ({case}): installed {sorted(set(installs))}, expected the build set and valgrind")
    check(not (set(installs) & TEST_TOOLS), f"source build ({case}): test tools installed: {set(installs) & TEST_TOOLS}")

# Ubuntu without any tools package apt knows: a clear failure, not a broken install.
MACHINES["ubuntu-bare"] = {"os_release": "ID=ubuntu\n", "kernel": "6.9.0-1-custom", "known": []}
p, apt, installs, outputs = run("ubuntu-bare", "perf")
check(p.returncode == 1 and "none of linux-tools-6.9.0-1-custom linux-tools-generic" in p.stderr,
      f"ubuntu without tools: exit {p.returncode}, {p.stderr}")
check(installs == [], f"ubuntu without tools: installed {installs}")

# An unknown backend is refused.
p, apt, installs, outputs = run("debian12", "oprofile")
check(p.returncode == 1 and "unknown backend" in p.stderr, f"unknown backend: exit {p.returncode}, {p.stderr}")

if failures:
    print(f"test_action_install: {len(failures)} failure(s)")
    sys.exit(1)
print("test_action_install: 3 machines x 4 backends, checksum bound to the tarball, release refs in the examples, "
      "4 source-build cases, errors: OK")
