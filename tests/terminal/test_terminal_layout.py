"""Layout by display width, the status line on resize and NO_COLOR, the stop notice (issue 25,
items 8, 9, 10; decisions 29, 29b), on a real pty."""
from __future__ import annotations

import fcntl
import os
import re
import signal
import struct
import subprocess
import termios
import time
import unicodedata

import pytest

from harness import running, wait_until

SGR = re.compile(r"\x1b\[[0-9;]*m")
LONG = ("Get the weather forecast for a city such as Hangzhou, 东京 or 北京市朝阳区, for up to seven "
        "days, with the temperature, the wind and the chance of rain for each day. ") * 6
OBJECT = {"type": "object", "properties": {"city": {"type": "string", "description": "城市 " * 30}}}
TOOLS = [{"name": "forecast", "description": LONG, "does": "text", "text": "ok", "inputSchema": OBJECT},
         {"name": "a_tool_with_a_rather_long_name_indeed", "description": "短い", "does": "text",
          "text": "ok", "inputSchema": {"type": "object"}}]


def columns(line: str) -> int:
    return sum(0 if unicodedata.category(c) in ("Mn", "Me") else 2 if unicodedata.east_asian_width(c) in "WF"
               else 1 for c in line)


def lines_of(text: str) -> list[str]:
    return SGR.sub("", text).splitlines()


@pytest.mark.parametrize("width", [40, 61, 120])
def test_a_listing_fits_the_terminal_in_columns_and_breaks_no_word(screen, fake, width):
    s = screen("tools", fake(tools=TOOLS).cmdline, columns=width)
    assert s.wait() == 0
    lines = lines_of(s.text)
    assert max(map(columns, lines)) <= width, "\n".join(lines)
    words = " ".join(line.strip() for line in lines).split()
    assert "Hangzhou," in words and "东京" in words           # wrapped at spaces, never inside a word
    other = next(i for i, line in enumerate(lines) if line.startswith("a_tool"))
    description = [line for line in lines[:other] if "Get the" in line or line.startswith(" ")]
    assert len(description) <= 6 and description[-1].endswith("…")   # cut: at most 6 lines
    assert any(line.startswith("a_tool_with_a_rather_long_name_indeed") for line in lines)


def test_the_one_tool_view_shows_it_all_wrapped_at_spaces(screen, fake):
    s = screen("tools", fake(tools=TOOLS).cmdline, "forecast", columns=50)
    assert s.wait() == 0
    lines = lines_of(s.text)
    prose = [line for line in lines if not line.startswith("  mcpmini ")]   # the example may run past
    assert max(map(columns, prose)) <= 50, "\n".join(lines)
    words = " ".join(lines).split()
    assert words.count("Hangzhou,") == 6 and "…" not in s.text      # the whole text
    assert all(len(line) - len(line.lstrip()) == len("  city  ") for line in lines
               if line.strip().startswith("城市"))                  # continued under its column


def test_check_keeps_its_columns_aligned(screen, fake):
    s = screen("check", fake(tools=TOOLS).cmdline, columns=200)
    s.wait()
    rows = [line for line in lines_of(s.text) if re.match(r"  (PASS|WARN|FAIL)  ", line)]
    assert any("a_tool_with_a_rather_long_name_indeed" in line for line in rows)
    assert len({line.index(" s  ") if " s  " in line else line.rindex(" s") for line in rows}) == 1, rows


def resize(s, width: int) -> None:
    fcntl.ioctl(s.master, termios.TIOCSWINSZ, struct.pack("HHHH", 30, width, 0, 0))


def test_the_status_line_is_redrawn_cleanly_when_the_terminal_narrows(screen, fake):
    s = screen("call", fake().cmdline, "progress", "steps:=40", "delay:=0.1", stdout=subprocess.PIPE)
    s.expect("waiting for progress · 1 s")
    resize(s, 12)                               # the line (now wider than the terminal) has wrapped
    assert wait_until(lambda: "\x1b[J" in s.text[s.text.rindex("waiting for progress · "):], 10)
    assert s.wait() == 0
    after = s.text[s.text.rindex("waiting for progress · "):]
    drawn = [SGR.sub("", part).replace("\x1b[K", "") for part in re.split(r"\r(?:\x1b\[\d+A)?(?:\x1b\[J)?", after)]
    assert all(columns(d) <= 11 for d in drawn[1:] if d), drawn   # never wider than the terminal now
    assert re.search(r"\r\x1b\[[1-9]\d*A\x1b\[J", after)


@pytest.mark.parametrize("argv, env", [(["--no-color"], {}), ([], {"NO_COLOR": "1"})])
def test_no_color_keeps_the_status_line_without_any_sgr(screen, fake, argv, env):
    s = screen(*argv, "call", fake().cmdline, "progress", "pause:=1.5", env=env, stdout=subprocess.PIPE)
    s.expect("waiting for progress · 1 s")
    assert s.wait() == 0
    assert not SGR.search(s.text), repr(s.text)


def test_a_server_slow_to_stop_after_ctrl_c_is_said_to_be_stopping(fake):
    server = fake("--stubborn")
    with running("call", server.cmdline, "slow") as process:
        assert wait_until(lambda: process.poll() is not None or server.calls(), 30)
        time.sleep(0.2)
        os.kill(process.pid, signal.SIGINT)
        _, err = process.communicate(timeout=60)
    assert process.returncode == 130
    text = err.decode()
    assert "mcpmini: stopping the server" in text and text.index("stopping") < text.index("interrupted")


@pytest.mark.parametrize("argv, env", [(["--quiet"], {}), (["--json"], {}), ([], {"TERM": "dumb"})])
def test_quiet_json_and_dumb_turn_off_colour_and_the_status_line(screen, fake, argv, env):
    waiting = screen(*argv, "call", fake().cmdline, "progress", "pause:=1.2", env=env)
    assert waiting.wait() == 0 and "waiting" not in waiting.text
    failing = screen(*argv, "call", fake().cmdline, "nope", env=env)
    assert failing.wait() == 2 and "mcpmini: error:" in failing.text
    assert "\x1b[" not in waiting.text + failing.text, repr(failing.text)
