#!/usr/bin/env python3
"""Hostile-load test of `perfgate serve`: real clients next to abusive ones.

    python3 bench/e2e/bench_hostile.py BUILD_DIR [--seconds 300] [--keep]

Needs only python3 (standard library) and BUILD_DIR/bin/perfgate; talks to the
server over loopback only. It

 1. creates a database and token in a temporary directory and starts
    `perfgate serve --listen 127.0.0.1:0 --threads 2 --no-access-log
    --max-connections 256`;
 2. for --seconds (default 300) runs, all at once:
      - legit clients (keep-alive, with the token): POST .../runs (baseline and
        candidate, body = tests/data/perf-stat/appended-10-runs.csv), POST
        .../compare of the two new runs, GET .../history;
      - hostile clients (see the Hostile class for why each one exists):
        slowloris, idle floods, slow oversized bodies without a valid token,
        garbage bytes, slow no-token dashboard forms, and cache-busting
        series reads (the server runs with --public-read); together they hold well over 256 connections so the
        server spends the whole run at its connection cap;
      - a /healthz prober: one GET on a fresh connection every 100 ms; a probe
        that fails, answers non-200 or takes over 5 s is a failure;
 3. samples the server's RSS and open descriptors every 10 s;
 4. prints a summary and "PASS"/"FAIL" for "/healthz p99 < 50 ms and no
    failed probe", then stops the server with SIGTERM and checks it exits 0.

Exit status: 0 if /healthz passed and the server exited 0 on SIGTERM, 1 if
not, 2 if the server could not be started. Latencies are measured by Python
clients on the same machine: on a busy or 2-core box they include client-side
scheduling delay, so read a FAIL together with the load average. Each group
of clients (prober, legit, hostile) runs in its own process so that one
group's Python work does not hold up another's timing (the GIL).
"""
import argparse
import asyncio
import collections
import http.client
import json
import multiprocessing as mp
import os
import random
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

HOST = "127.0.0.1"
PROJECT = "bench"
REPO = Path(__file__).resolve().parents[2]
PERF_CSV = REPO / "tests/data/perf-stat/appended-10-runs.csv"

MAX_CONNECTIONS = 256
HEALTHZ_PERIOD_S = 0.1
HEALTHZ_FAIL_S = 5.0
HEALTHZ_P99_LIMIT_MS = 50.0
SAMPLE_PERIOD_S = 10.0


def percentile(values, p):
    """Nearest-rank percentile (p in 0..100) of a non-empty list."""
    s = sorted(values)
    k = max(0, min(len(s) - 1, int(round(p / 100.0 * len(s) + 0.5)) - 1))
    return s[k]


def ms(seconds):
    return f"{seconds * 1000:.1f} ms"


def status_of(head: bytes):
    """'HTTP/1.1 503 ...' -> '503'; anything else -> 'non-HTTP reply'."""
    parts = head.split(b" ", 2)
    if len(parts) >= 2 and parts[0].startswith(b"HTTP/") and parts[1].isdigit():
        return parts[1].decode()
    return "non-HTTP reply"


# --------------------------------------------------------------------------
# /healthz prober (own process)
# --------------------------------------------------------------------------

def read_http_response(sock, deadline):
    """Reads one response (header + Content-Length body) or until EOF; returns its status line's code."""
    buf = b""
    while b"\r\n\r\n" not in buf:
        sock.settimeout(max(0.001, deadline - time.monotonic()))
        chunk = sock.recv(65536)
        if not chunk:
            raise ConnectionError("closed before a full header")
        buf += chunk
    head, _, body = buf.partition(b"\r\n\r\n")
    length = 0
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value.strip())
    while len(body) < length:
        sock.settimeout(max(0.001, deadline - time.monotonic()))
        chunk = sock.recv(65536)
        if not chunk:
            raise ConnectionError("closed inside the body")
        body += chunk
    return status_of(head)


def healthz_prober(port, deadline, out):
    """GET /healthz on a fresh connection every 100 ms: a fresh connection so
    that each probe goes through accept() and the connection cap, as a load
    balancer's or orchestrator's liveness check would."""
    latencies, failures = [], collections.Counter()
    next_at = time.monotonic()
    while True:
        now = time.monotonic()
        if now >= deadline:
            break
        if now < next_at:
            time.sleep(next_at - now)
        next_at = max(next_at + HEALTHZ_PERIOD_S, time.monotonic())
        t0 = time.monotonic()
        probe_deadline = t0 + HEALTHZ_FAIL_S
        try:
            with socket.create_connection((HOST, port), timeout=HEALTHZ_FAIL_S) as s:
                s.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
                status = read_http_response(s, probe_deadline)
            dt = time.monotonic() - t0
            if status != "200":
                failures[f"HTTP {status}"] += 1
            elif dt > HEALTHZ_FAIL_S:
                failures["slower than 5 s"] += 1
        except socket.timeout:
            failures["no answer within 5 s"] += 1
        except OSError as e:
            failures[type(e).__name__] += 1
        latencies.append(time.monotonic() - t0)  # failed probes too: max shows how long they hung
    out.put(("healthz", {"latencies": latencies, "failures": failures}))


# --------------------------------------------------------------------------
# Legit clients (own process, one thread per client)
# --------------------------------------------------------------------------

class LegitClient:
    """The traffic the server exists for: CI jobs uploading a baseline and a
    candidate run, asking for the comparison and reading a history, over one
    keep-alive connection (reopened when the server closes it)."""

    def __init__(self, port, token, csv_text, stats, lock):
        self.port, self.stats, self.lock = port, stats, lock
        self.headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
        self.csv_text = csv_text
        self.conn = None

    def request(self, kind, method, path, body=None):
        """One request; records latency and outcome; returns the parsed JSON body on 2xx, else None."""
        payload = json.dumps(body).encode() if body is not None else None
        t0 = time.monotonic()
        try:
            if self.conn is None:
                self.conn = http.client.HTTPConnection(HOST, self.port, timeout=30)
            self.conn.request(method, path, body=payload, headers=self.headers)
            resp = self.conn.getresponse()
            data = resp.read()
            outcome = str(resp.status)
            if resp.will_close:
                self.conn.close()
                self.conn = None
        except (OSError, http.client.HTTPException) as e:
            # e.g. the keep-alive connection was closed by the server at the cap
            outcome = type(e).__name__
            data = None
            if self.conn is not None:
                self.conn.close()
            self.conn = None
        dt = time.monotonic() - t0
        with self.lock:
            self.stats["latency"][kind].append(dt)
            self.stats["outcome"][outcome] += 1
        if outcome.startswith("2"):
            try:
                return json.loads(data)
            except ValueError:
                return None
        return None

    def post_run(self, role):
        body = {"benchmark": "b1", "role": role, "git_sha": "abc", "branch": "main",
                "testbed": {"name": "t", "cpu": "c", "cores": 2, "kernel": "k"},
                "perf_csv": self.csv_text}
        doc = self.request("POST runs", "POST", f"/api/v1/projects/{PROJECT}/runs", body)
        return doc.get("run_id") if isinstance(doc, dict) else None

    def run(self, deadline):
        while time.monotonic() < deadline:
            base = self.post_run("baseline")
            cand = self.post_run("candidate")
            if base and cand and time.monotonic() < deadline:
                self.request("POST compare", "POST", f"/api/v1/projects/{PROJECT}/compare",
                             {"baseline_run": base, "candidate_run": cand})
            if time.monotonic() < deadline:
                self.request("GET history", "GET",
                             f"/api/v1/projects/{PROJECT}/history?benchmark=b1&counter=task-clock")
        if self.conn is not None:
            self.conn.close()


def legit_clients(port, token, csv_text, n, deadline, out):
    stats = {"latency": collections.defaultdict(list), "outcome": collections.Counter()}
    lock = threading.Lock()
    threads = [threading.Thread(target=LegitClient(port, token, csv_text, stats, lock).run, args=(deadline,))
               for _ in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    out.put(("legit", {"latency": dict(stats["latency"]), "outcome": stats["outcome"]}))


# --------------------------------------------------------------------------
# Hostile clients (own process, one asyncio loop)
# --------------------------------------------------------------------------

class Hostile:
    """Abusive clients. Each kind keeps its pressure up for the whole run:
    when the server drops one of its connections, it opens another after
    RECONNECT_S. Outcomes per kind: 'opened', 'closed by server', 'HTTP nnn',
    'refused'/errors, so the summary shows how the server defended itself."""

    RECONNECT_S = 1.0

    def __init__(self, port, deadline, args):
        self.port, self.deadline, self.args = port, deadline, args
        self.stats = collections.defaultdict(collections.Counter)
        self.close_after = collections.defaultdict(list)  # kind -> seconds the server took to drop it

    def left(self):
        return self.deadline - time.monotonic()

    async def connect(self, kind):
        try:
            r, w = await asyncio.wait_for(asyncio.open_connection(HOST, self.port), timeout=5)
        except (OSError, asyncio.TimeoutError) as e:
            self.stats[kind][f"connect: {type(e).__name__}"] += 1
            return None, None
        self.stats[kind]["opened"] += 1
        return r, w

    def record_end(self, kind, data, t0):
        """data is what the server sent before closing (b'' = closed without a word)."""
        self.stats[kind]["closed by server" if not data else f"HTTP {status_of(data)}"] += 1
        self.close_after[kind].append(time.monotonic() - t0)

    @staticmethod
    def close(w):
        if w is not None:
            w.transport.abort()  # RST, no lingering: we are the abusive side

    async def slowloris(self, i):
        """Slowloris: a request header that never ends, one byte every few
        seconds. Each such connection pins a slot of the 256-connection cap for
        as long as the server lets it; with ~300 of them the cap is exceeded, and
        the server must evict the oldest slow headers (or time them out) rather
        than turn away /healthz and the legit clients."""
        await asyncio.sleep(i * 0.02)  # ramp up over a few seconds
        trickle = b"X-Slow-" + str(i).encode() + b": " + b"a" * 10_000
        while self.left() > 0:
            r, w = await self.connect("slowloris")
            if r is None:
                await asyncio.sleep(self.RECONNECT_S)
                continue
            t0 = time.monotonic()
            try:
                w.write(f"POST /api/v1/projects/{PROJECT}/runs HTTP/1.1\r\nHost: x\r\n".encode())
                pos = 0
                while self.left() > 0:
                    try:
                        data = await asyncio.wait_for(r.read(4096),
                                                      timeout=min(self.left(), random.uniform(2.0, 4.0)))
                    except asyncio.TimeoutError:
                        w.write(trickle[pos:pos + 1])  # one more header byte, never the blank line
                        pos = (pos + 1) % len(trickle)
                        continue
                    self.record_end("slowloris", data, t0)
                    break
            except OSError as e:
                self.stats["slowloris"][type(e).__name__] += 1
            finally:
                self.close(w)
            await asyncio.sleep(self.RECONNECT_S)

    async def idle(self, i):
        """Idle flood: connect and send nothing. The cheapest way to eat
        connection slots and descriptors (port scanners, half-dead clients,
        a misconfigured pool); the server must time these out or evict them."""
        await asyncio.sleep(i * 0.02)
        while self.left() > 0:
            r, w = await self.connect("idle")
            if r is None:
                await asyncio.sleep(self.RECONNECT_S)
                continue
            t0 = time.monotonic()
            try:
                data = await asyncio.wait_for(r.read(4096), timeout=max(0.001, self.left()))
                self.record_end("idle", data, t0)
            except asyncio.TimeoutError:
                pass
            except OSError as e:
                self.stats["idle"][type(e).__name__] += 1
            finally:
                self.close(w)
            await asyncio.sleep(self.RECONNECT_S)

    async def oversize(self, i):
        """Oversized body without a valid token: POST runs announcing an 8 MB
        body (just under the default --max-body, so size alone does not refuse
        it), with a bad token or none, sent slowly (4 KiB / 100 ms). An
        unauthenticated client must not get to make the server read, buffer or
        parse megabytes: expect a 401 at the header stage, before the body."""
        auth = b"Authorization: Bearer pg_" + b"0" * 64 + b"\r\n" if i % 2 == 0 else b""
        while self.left() > 0:
            r, w = await self.connect("oversize")
            if r is None:
                await asyncio.sleep(self.RECONNECT_S)
                continue
            t0, sent = time.monotonic(), 0
            try:
                w.write(f"POST /api/v1/projects/{PROJECT}/runs HTTP/1.1\r\nHost: x\r\n"
                        "Content-Type: application/json\r\nContent-Length: 8000000\r\n".encode() + auth + b"\r\n")
                chunk = b"{" + b" " * 4095
                while self.left() > 0 and sent < 8_000_000:
                    try:
                        data = await asyncio.wait_for(r.read(4096), timeout=min(self.left(), 0.1))
                    except asyncio.TimeoutError:
                        w.write(chunk)
                        await asyncio.wait_for(w.drain(), timeout=max(0.001, self.left()))
                        sent += len(chunk)
                        continue
                    self.record_end("oversize", data, t0)
                    self.stats["oversize"]["body KiB sent before the answer (sum)"] += sent // 1024
                    break
            except (OSError, asyncio.TimeoutError) as e:
                # A write can fail because the server answered and closed
                # meanwhile: pick up that answer if it is there.
                try:
                    data = await asyncio.wait_for(r.read(4096), timeout=1)
                    self.record_end("oversize", data, t0)
                except (OSError, asyncio.TimeoutError):
                    self.stats["oversize"][f"write: {type(e).__name__}"] += 1
            finally:
                self.close(w)
            await asyncio.sleep(self.RECONNECT_S)

    async def slowform(self, i):
        """Slow dashboard forms: POST /p/{project}/signin needs no token, so a
        client without one can send a 16 KiB form a byte a second. Each such
        connection must be cut at the form deadline (5 s) or evicted at the
        cap, never hold a slot for the API's 30 s read timeout."""
        await asyncio.sleep(i * 0.02)
        while self.left() > 0:
            r, w = await self.connect("slowform")
            if r is None:
                await asyncio.sleep(self.RECONNECT_S)
                continue
            t0 = time.monotonic()
            try:
                w.write(f"POST /p/{PROJECT}/signin HTTP/1.1\r\nHost: x\r\n"
                        "Content-Type: application/x-www-form-urlencoded\r\nContent-Length: 16000\r\n\r\n".encode())
                while self.left() > 0:
                    try:
                        data = await asyncio.wait_for(r.read(4096), timeout=min(self.left(), 1.0))
                    except asyncio.TimeoutError:
                        w.write(b"t")
                        continue
                    self.record_end("slowform", data, t0)
                    break
            except OSError as e:
                self.stats["slowform"][type(e).__name__] += 1
            finally:
                self.close(w)
            await asyncio.sleep(self.RECONNECT_S)

    async def cachebust(self, i):
        """Cache-busting reads under --public-read, no token: the series page
        with a new `from` each time, as fast as the server answers. Keyed by
        the raw address, each one was a full render of the series; the page
        cache must serve them all from one entry (and the per-address
        allowance answer 429 beyond it)."""
        rng = random.Random(1000 + i)
        while self.left() > 0:
            r, w = await self.connect("cachebust")
            if r is None:
                await asyncio.sleep(self.RECONNECT_S)
                continue
            t0 = time.monotonic()
            try:
                while self.left() > 0:
                    w.write(f"GET /p/{PROJECT}/series?benchmark=b1&counter=task-clock&from={rng.randint(0, 10**9)} "
                            "HTTP/1.1\r\nHost: x\r\n\r\n".encode())
                    head = await asyncio.wait_for(r.readuntil(b"\r\n\r\n"), timeout=max(0.001, min(self.left(), 30)))
                    self.stats["cachebust"][f"HTTP {status_of(head)}"] += 1
                    length = 0
                    for line in head.split(b"\r\n"):
                        if line.lower().startswith(b"content-length:"):
                            length = int(line.split(b":", 1)[1])
                    await asyncio.wait_for(r.readexactly(length), timeout=max(0.001, min(self.left(), 30)))
                    self.close_after["cachebust"].append(time.monotonic() - t0)
                    t0 = time.monotonic()
                    if b"Connection: close" in head:
                        break
            except (OSError, asyncio.TimeoutError, asyncio.IncompleteReadError, asyncio.LimitOverrunError) as e:
                self.stats["cachebust"][type(e).__name__] += 1
            finally:
                self.close(w)

    async def garbage(self, i):
        """Garbage bytes: random binary, or a broken request line, on fresh
        connections. The parser must answer 400 or close, never crash, hang or
        leak the connection."""
        rng = random.Random(i)
        junk_lines = [b"GET\r\n\r\n", b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03",  # a TLS ClientHello start
                      b"GET / HTTP/9.9\r\n\r\n", b"POST /x HTTP/1.1\r\nContent-Length: -1\r\n\r\n",
                      b"GET /healthz HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n"]
        while self.left() > 0:
            r, w = await self.connect("garbage")
            if r is None:
                await asyncio.sleep(self.RECONNECT_S)
                continue
            t0 = time.monotonic()
            try:
                if rng.random() < 0.5:
                    w.write(rng.randbytes(rng.randint(1, 2000)))
                else:
                    w.write(rng.choice(junk_lines))
                data = await asyncio.wait_for(r.read(4096), timeout=max(0.001, min(self.left(), 35)))
                self.record_end("garbage", data, t0)
            except asyncio.TimeoutError:
                self.stats["garbage"]["no answer"] += 1
            except OSError as e:
                self.stats["garbage"][type(e).__name__] += 1
            finally:
                self.close(w)
            await asyncio.sleep(0.05)

    async def main(self):
        a = self.args
        tasks = ([self.slowloris(i) for i in range(a.slowloris)] + [self.idle(i) for i in range(a.idle)] +
                 [self.oversize(i) for i in range(a.oversize)] + [self.garbage(i) for i in range(a.garbage)] +
                 [self.slowform(i) for i in range(a.slowform)] + [self.cachebust(i) for i in range(a.cachebust)])
        await asyncio.gather(*tasks)


def hostile_clients(port, deadline, args, out):
    h = Hostile(port, deadline, args)
    asyncio.run(h.main())
    out.put(("hostile", {"stats": dict(h.stats), "close_after": dict(h.close_after)}))


# --------------------------------------------------------------------------
# Server and sampling
# --------------------------------------------------------------------------

def start_server(perfgate, workdir):
    db = workdir / "b.db"
    token = subprocess.run([perfgate, "token", "create", "--db", db, "--project", PROJECT],
                           check=True, capture_output=True, text=True).stdout.strip()
    out_path, err_path = workdir / "serve.out", workdir / "serve.err"
    with open(out_path, "w") as out, open(err_path, "w") as err:
        proc = subprocess.Popen([perfgate, "serve", "--db", db, "--listen", f"{HOST}:0", "--threads", "2",
                                 "--no-access-log", "--max-connections", str(MAX_CONNECTIONS), "--public-read"],
                                stdout=out, stderr=err, stdin=subprocess.DEVNULL)
    # stdout goes to a file, not a pipe, so the server can never block on it.
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        first = out_path.read_text().partition("\n")
        if first[1]:
            prefix = "perfgate: listening on http://"
            if not first[0].startswith(prefix):
                break
            return proc, token, int(first[0].rsplit(":", 1)[1]), err_path
        if proc.poll() is not None:
            break
        time.sleep(0.05)
    proc.kill()
    proc.wait()
    sys.stderr.write(f"bench_hostile: server did not start:\n{out_path.read_text()}{err_path.read_text()}")
    sys.exit(2)


def sample(pid):
    """(VmRSS in KiB, open descriptors) of pid."""
    rss = 0
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                rss = int(line.split()[1])
    return rss, len(os.listdir(f"/proc/{pid}/fd"))


def stop_server(proc):
    """SIGTERM, then up to 30 s for a clean exit. Returns (exit code or None, seconds)."""
    t0 = time.monotonic()
    proc.send_signal(signal.SIGTERM)
    try:
        code = proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        code = None
    return code, time.monotonic() - t0


# --------------------------------------------------------------------------
# Summary
# --------------------------------------------------------------------------

def fmt_counter(c):
    return ", ".join(f"{k}: {v}" for k, v in sorted(c.items(), key=lambda kv: (-kv[1], kv[0]))) or "none"


def summarize(args, results, samples, elapsed):
    legit, hostile, hz = results["legit"], results["hostile"], results["healthz"]
    print(f"=== perfgate serve under hostile load: {elapsed:.0f} s, --threads 2, "
          f"--max-connections {MAX_CONNECTIONS}, load average {os.getloadavg()[0]:.2f} at the end")
    print(f"clients: {args.legit} legit, {args.slowloris} slowloris, {args.idle} idle, "
          f"{args.oversize} oversize, {args.garbage} garbage, {args.slowform} slowform, "
          f"{args.cachebust} cachebust, 1 /healthz prober")

    total = sum(len(v) for v in legit["latency"].values())
    print(f"\nlegit: {total} requests, {total / elapsed:.1f} req/s")
    for kind in ("POST runs", "POST compare", "GET history"):
        lat = legit["latency"].get(kind, [])
        if lat:
            print(f"  {kind:<13} {len(lat):>6}  {len(lat) / elapsed:7.1f}/s  p50 {ms(percentile(lat, 50)):>10}"
                  f"  p99 {ms(percentile(lat, 99)):>10}  max {ms(max(lat)):>10}")
        else:
            print(f"  {kind:<13}      0")
    errors = collections.Counter({k: v for k, v in legit["outcome"].items() if not k.startswith("2")})
    print(f"  outcomes: {fmt_counter(legit['outcome'])}")
    print(f"  errors:   {fmt_counter(errors)}")

    print("\nhostile (what the server did with them; 'after' = time until it answered or dropped them):")
    for kind in ("slowloris", "idle", "oversize", "garbage", "slowform", "cachebust"):
        st = hostile["stats"].get(kind, collections.Counter())
        after = hostile["close_after"].get(kind, [])
        timing = (f"; after p50 {ms(percentile(after, 50))}, max {ms(max(after))}") if after else ""
        print(f"  {kind:<10} {fmt_counter(st)}{timing}")

    lat, failures = hz["latencies"], hz["failures"]
    nfail = sum(failures.values())
    p99 = percentile(lat, 99) if lat else float("inf")
    print(f"\n/healthz: {len(lat)} probes, p50 {ms(percentile(lat, 50)) if lat else '-'}, p99 {ms(p99)}, "
          f"max {ms(max(lat)) if lat else '-'}, failures {nfail}" + (f" ({fmt_counter(failures)})" if nfail else ""))

    rss = [s[1] for s in samples]
    fds = [s[2] for s in samples]
    print(f"server RSS: min {min(rss) / 1024:.1f} MiB, max {max(rss) / 1024:.1f} MiB; "
          f"fds: min {min(fds)}, max {max(fds)}")
    print("  samples (s: RSS MiB / fds): " + ", ".join(f"{t:.0f}: {r / 1024:.1f}/{f}" for t, r, f in samples))

    ok = bool(lat) and p99 * 1000 < HEALTHZ_P99_LIMIT_MS and nfail == 0
    print(f"\n{'PASS' if ok else 'FAIL'}: /healthz p99 {ms(p99)} (limit {HEALTHZ_P99_LIMIT_MS:.0f} ms), "
          f"{nfail} failed probe(s) (limit 0)")
    return ok


# --------------------------------------------------------------------------

def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("build_dir", help="build directory holding bin/perfgate")
    ap.add_argument("--seconds", type=float, default=300, help="length of the load (default 300)")
    ap.add_argument("--legit", type=int, default=4, help="legit client threads (default 4)")
    ap.add_argument("--slowloris", type=int, default=300, help="slowloris connections (default 300)")
    ap.add_argument("--idle", type=int, default=100, help="idle connections (default 100)")
    ap.add_argument("--oversize", type=int, default=4, help="slow oversized-body clients (default 4)")
    ap.add_argument("--garbage", type=int, default=2, help="garbage-bytes clients (default 2)")
    ap.add_argument("--slowform", type=int, default=100, help="slow no-token dashboard forms (default 100)")
    ap.add_argument("--cachebust", type=int, default=4, help="cache-busting series readers (default 4)")
    ap.add_argument("--keep", action="store_true", help="keep the temporary directory (database, server stderr)")
    args = ap.parse_args()

    perfgate = Path(args.build_dir).resolve() / "bin" / "perfgate"
    if not os.access(perfgate, os.X_OK):
        sys.exit(f"bench_hostile: no executable {perfgate}")
    csv_text = PERF_CSV.read_text()
    workdir = Path(tempfile.mkdtemp(prefix="perfgate-hostile."))
    proc, token, port, err_path = start_server(perfgate, workdir)
    print(f"server {perfgate} pid {proc.pid} on {HOST}:{port}, files in {workdir}", flush=True)

    ctx = mp.get_context("fork")
    out = ctx.Queue()
    start = time.monotonic()
    deadline = start + args.seconds
    workers = [ctx.Process(target=healthz_prober, args=(port, deadline, out)),
               ctx.Process(target=legit_clients, args=(port, token, csv_text, args.legit, deadline, out)),
               ctx.Process(target=hostile_clients, args=(port, deadline, args, out))]
    server_code = None
    try:
        for w in workers:
            w.start()
        samples = []
        next_sample = start
        while time.monotonic() < deadline:
            now = time.monotonic()
            if now >= next_sample:
                rss, fds = sample(proc.pid)
                samples.append((now - start, rss, fds))
                print(f"  t={now - start:5.0f} s  RSS {rss / 1024:6.1f} MiB  fds {fds}", flush=True)
                next_sample += SAMPLE_PERIOD_S
            if proc.poll() is not None:
                raise RuntimeError(f"server exited with {proc.returncode} during the load")
            time.sleep(min(0.5, max(0.0, min(next_sample, deadline) - time.monotonic())))
        rss, fds = sample(proc.pid)
        samples.append((time.monotonic() - start, rss, fds))

        # Workers stop by themselves at the deadline (a legit request in flight
        # may take up to its 30 s timeout); read results before join() so a
        # full queue pipe cannot deadlock.
        results = {}
        for _ in workers:
            name, data = out.get(timeout=120)
            results[name] = data
        for w in workers:
            w.join(timeout=30)
        elapsed = args.seconds
        ok = summarize(args, results, samples, elapsed)
    finally:
        for w in workers:
            if w.is_alive():
                w.kill()
        if proc.poll() is None:
            server_code, stop_s = stop_server(proc)
        else:
            server_code, stop_s = proc.returncode, 0.0

    clean = server_code == 0
    print(f"shutdown: SIGTERM -> {'exit 0' if clean else f'exit {server_code}' if server_code is not None else 'no exit in 30 s (killed)'}"
          f" after {stop_s:.2f} s {'OK' if clean else 'FAIL'}")
    err_lines = err_path.read_text(errors="replace").splitlines()
    print(f"server stderr: {len(err_lines)} line(s)" + (f", last: {err_lines[-1]}" if err_lines else ""))
    if not args.keep and ok and clean:
        for p in sorted(workdir.rglob("*"), reverse=True):
            p.unlink()
        workdir.rmdir()
    else:
        print(f"kept {workdir}")
    sys.exit(0 if ok and clean else 1)


if __name__ == "__main__":
    main()
