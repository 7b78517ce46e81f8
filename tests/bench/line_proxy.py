#!/usr/bin/env python3
"""The bridge's floor (issue 24 item 9): a bare stdio proxy that starts SERVER and copies lines
both ways, one thread per direction, no parsing, nothing else.

    python3 line_proxy.py SERVER_ARGV...
"""
from __future__ import annotations

import subprocess
import sys
import threading


def copy(source, sink) -> None:
    for line in iter(source.readline, b""):
        sink.write(line)
        sink.flush()
    sink.close()


def main(argv: list[str]) -> int:
    server = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    up = threading.Thread(target=copy, args=(sys.stdin.buffer, server.stdin), daemon=True)
    up.start()
    copy(server.stdout, sys.stdout.buffer)
    return server.wait()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
