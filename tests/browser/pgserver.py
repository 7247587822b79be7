"""A real perfgate server for the browser tests: perfgate serve --public-read on 127.0.0.1 with an
ephemeral port, over a fresh SQLite database, with a token of project "demo". No Selenium here, so a test
imports it before deciding to skip."""
import os
import re
import subprocess


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
