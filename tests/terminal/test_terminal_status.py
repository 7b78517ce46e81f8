"""Waiting and colour on a real pty (issue 14, items 3 and 12; decision #13): a wait over a
second shows one self-erasing status line on stderr with the server's progress; colour for
errors and names; neither when opted out or not on a terminal."""
from __future__ import annotations

import subprocess

import pytest


def test_a_long_call_shows_the_status_line_with_progress(screen, fake):
    s = screen("call", fake().cmdline, "progress", "pause:=1.5", stdout=subprocess.PIPE)
    s.expect("\r\x1b[2mwaiting for progress · 1 s 1/2 50% step 1\x1b[0m\x1b[K")
    s.expect(" 2/2 100% step 2")
    assert s.wait() == 0
    assert s.proc.stdout.read() == b"done after 2 steps\n"     # never on stdout
    assert s.text.endswith("\r\x1b[K")                 # erased before the end


def test_a_short_call_shows_nothing(screen, fake):
    s = screen("call", fake().cmdline, "progress")
    s.expect("done after 2 steps")
    assert s.wait() == 0
    assert s.text == "done after 2 steps\n"


@pytest.mark.parametrize("opt_out", [["--quiet"], ["--json"], ["env", "TERM=dumb"]])
def test_no_status_line_when_opted_out(screen, fake, opt_out):
    env = dict([opt_out[1].split("=")]) if opt_out[0] == "env" else {}
    argv = [] if env else opt_out
    s = screen(*argv, "call", fake().cmdline, "progress", "pause:=1.2",
               env=env)
    assert s.wait() == 0
    assert "waiting" not in s.text and "\x1b[" not in s.text


def test_no_status_line_when_stderr_is_not_a_terminal(screen, fake):
    s = screen("call", fake().cmdline, "progress", "pause:=1.2",
               stderr=subprocess.PIPE)
    assert s.wait() == 0
    assert s.proc.stderr.read() == b"" and s.text == "done after 2 steps\n"


def test_starting_a_server_that_hangs_says_so(screen, fake):
    s = screen("--timeout", "2", "info", fake("--silent").cmdline)
    s.expect("starting python")
    assert s.wait() == 124


def test_colour_on_a_terminal_and_never_inside_the_error_prefix(screen, fake):
    s = screen("call", fake().cmdline, "nope")
    assert s.wait() == 2
    assert "\x1b[1;31mmcpmini: error:\x1b[0m python has no tool 'nope'" in s.text
    s = screen("tools", fake().cmdline)
    assert s.wait() == 0
    assert "\x1b[1mstrict\x1b[0m city=<string>" in s.text


@pytest.mark.parametrize("env, argv, coloured", [
    ({"NO_COLOR": "1"}, [], False), ({}, ["--no-color"], False), ({"TERM": "dumb"}, [], False),
    ({"FORCE_COLOR": "1", "TERM": "dumb"}, [], True)])
def test_colour_opt_out_and_force(screen, fake, env, argv, coloured):
    s = screen(*argv, "call", fake().cmdline, "nope", env=env)
    assert s.wait() == 2
    assert ("\x1b[" in s.text) == coloured and "mcpmini: error:" in s.text


def test_force_color_colours_a_pipe(proc, fake):
    p = proc("call", fake().cmdline, "nope", env={"FORCE_COLOR": "1"})
    assert p.stderr.startswith(b"\x1b[1;31mmcpmini: error:\x1b[0m ")


def test_tools_wrap_to_the_terminal_width(screen, fake):
    s = screen("tools", fake().cmdline, columns=60)
    assert s.wait() == 0
    assert max(len(line) for line in s.text.replace("\x1b[1m", "").replace("\x1b[0m", "").splitlines()) <= 60
    assert "\n" + " " * 32 + "(URL elicitation)." in s.text    # continued under its column
    assert "\n    [ratio=<number>]" in s.text                     # a long signature wrapped
