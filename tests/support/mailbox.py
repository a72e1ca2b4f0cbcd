"""A real SMTP server for the tests: aiosmtpd on loopback, each delivered message one JSON line.

    .tools/py/bin/python tests/support/mailbox.py OUT_FILE [PORT]

Prints `listening PORT` once it accepts connections (PORT 0, the default, picks a free one), then
appends {"mail_from", "rcpt_to", "data"} per message to OUT_FILE until it is killed. Used by the
Rust tests (tests/api/mailbox.rs) and the browser tests, so both read what a mail server received.
"""

import json
import socket
import sys
import threading

from aiosmtpd.controller import Controller


class AppendJsonLines:
    def __init__(self, path):
        self.path = path
        self.lock = threading.Lock()

    async def handle_DATA(self, server, session, envelope):
        record = {
            "mail_from": envelope.mail_from,
            "rcpt_to": list(envelope.rcpt_tos),
            "data": envelope.content.decode("utf-8", errors="replace"),
        }
        with self.lock, open(self.path, "a", encoding="utf-8") as out:
            out.write(json.dumps(record) + "\n")
        return "250 OK"


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def main():
    out = sys.argv[1]
    port = int(sys.argv[2]) if len(sys.argv) > 2 else 0
    open(out, "a").close()
    controller = Controller(AppendJsonLines(out), hostname="127.0.0.1", port=port or free_port())
    controller.start()
    print(f"listening {controller.port}", flush=True)
    threading.Event().wait()


if __name__ == "__main__":
    main()
