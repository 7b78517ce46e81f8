"""Issue 24 item 6: a server that stops reading its stdin after a burst of pings. mcpmini answers
them with bounded concurrency (reading pauses), so its memory stays flat (measured by
tests/bench/flood.py --deaf, not here); the run still ends at --timeout, on SIGTERM and on Ctrl-C."""
from __future__ import annotations

import os
import signal

import pytest

import mcpmini
from harness import running, wait_until

DEAF = {"flood": 20000, "deaf": True, "raw_result": {"content": []}, "sent": None,
        "tools": [{"name": "t", "inputSchema": {"type": "object"}}]}


def test_a_deaf_flood_is_answered_with_bounded_concurrency_and_the_run_ends_at_timeout(fake, cli, monkeypatch):
    # a small write buffer: the answers fill it long before the flood ends, as 40,000+ pings
    # fill the real one; then no more than MAX_SERVER_REQUESTS answers may be under way
    monkeypatch.setattr(mcpmini, "STDIN_BUFFER", 4096)
    most, start = [0], mcpmini._Session._start_answer

    def counted(self, message):
        start(self, message)
        most[0] = max(most[0], len(self._answering))
    monkeypatch.setattr(mcpmini._Session, "_start_answer", counted)
    server = fake("legacy", **DEAF)
    code, out, err = cli("--timeout", "3", "call", server.cmdline, "t")
    assert code == 124, err
    assert "tools/call timed out after 3 s" in err
    assert 0 < most[0] <= mcpmini.MAX_SERVER_REQUESTS


@pytest.mark.skipif(os.name != "posix", reason="POSIX signals")
@pytest.mark.parametrize("sig, status", [(signal.SIGTERM, 143), (signal.SIGINT, 130)])
def test_a_deaf_flood_does_not_hold_up_sigterm_or_ctrl_c(fake, sig, status):
    server = fake("legacy", **DEAF)
    with running("--timeout", "120", "call", server.cmdline, "t") as process:
        assert wait_until(lambda: process.poll() is not None or server.calls(), 30)
        assert process.poll() is None, process.communicate(timeout=10)
        os.kill(process.pid, sig)
        _, err = process.communicate(timeout=30)
    assert process.returncode == status, err
    assert b"Traceback" not in err
