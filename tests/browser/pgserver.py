"""A real perfgate server for the browser tests: perfgate serve --public-read on 127.0.0.1 with an
ephemeral port, over a fresh SQLite database, with a token of project "demo". No Selenium here, so a test
imports it before deciding to skip."""
import os
import re
import subprocess
import sys
import unittest


class Server:
    def __init__(self, perfgate, workdir, db_name):
        self.db = os.path.join(workdir, db_name)
        out = subprocess.run([perfgate, "token", "create", "--db", self.db, "--project", "demo", "--name", "t"],
                             check=True, capture_output=True, text=True).stdout
        self.token = out.strip().splitlines()[-1]
        self.log = open(os.path.join(workdir, "server.log"), "w")
        self.proc = subprocess.Popen([perfgate, "serve", "--db", self.db, "--listen", "127.0.0.1:0", "--public-read"],
                                     stdout=subprocess.PIPE, stderr=self.log, text=True)
        m = re.search(r"listening on (http://\S+)", self.proc.stdout.readline())
        if not m:
            raise RuntimeError("perfgate serve did not start")
        self.url = m.group(1)

    def stop(self):
        self.proc.terminate()
        self.proc.wait(timeout=20)
        self.log.close()


def run_tests(parser, set_args):
    """A browser script's main: parses its options (set_args receives them before any test runs), runs
    the module's unittest cases; exit 1 on a failure, 77 (ctest's skip) when everything that ran passed
    but a case skipped (no browser)."""
    args, rest = parser.parse_known_args()
    set_args(args)
    result = unittest.main(module="__main__", argv=[sys.argv[0]] + rest, verbosity=2, exit=False).result
    if not result.wasSuccessful():
        sys.exit(1)
    if result.skipped:
        sys.exit(77)
