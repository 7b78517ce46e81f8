"""Output: every command's human form, terminal safety, --json, a closed stdout pipe, and
UTF-8 whatever the locale."""
from __future__ import annotations

import datetime
import json
import os
import subprocess
import sys

import pytest

from fake_server import BLOB, NASTY, NASTY_RAW, UNICODE_TEXT
from harness import ROOT, WEATHER, alive, running, wait_until, write_json

WEATHER_CMD = f"{sys.executable} {WEATHER}"


def assert_safe(text: str) -> None:
    for raw in NASTY_RAW:
        assert raw not in text, repr(raw)
    assert "\r" not in text


# -- Commands against the weather example --------------------------------------------------------

def test_tools_signature_lines(cli):
    r = cli("tools", WEATHER_CMD)
    assert r.code == 0, r.err
    assert r.out.startswith("get_forecast city=<string>  Tomorrow's weather forecast for a city.")
    assert r.out.count("\n") == 1


def test_tools_signatures_of_varied_schemas(cli, fake):
    """Calls to copy: required key=<type>, optional [key=<type>], enum choices and ranges; the
    first line of each description in one aligned column (not wrapped: stdout is no terminal)."""
    r = cli("tools", fake().cmdline)
    assert r.code == 0, r.err
    lines = {line.split(" ")[0]: line for line in r.out.splitlines()}
    assert lines["strict"].startswith("strict city=<string> [days=<integer>]  ")
    assert lines["strict"].endswith("  Needs a city; nothing else allowed.")
    assert len({line.index(" Needs") for line in r.out.splitlines() if " Needs" in line} |
               {lines["whoami"].index(" argv")}) == 1   # aligned
    typed = lines["typed"]
    for part in ("[zip=<string>]", "[note=<null|string>]", "[limit=<integer|null>]",
                 "[level=<boolean|integer>]", "[mode=<fast|slow>]", "[opts=<object>]", "[tags=<array>]",
                 "[untyped=<any>]"):
        assert part in typed
    assert "\x1b" not in r.out and "\\x1b]0;pwned-title" in lines["controls"]


def test_one_tool_in_full_with_an_example(cli, fake, work):
    cfg = write_json(work / "c.json", {"mcpServers": {"f": fake().entry()}})
    r = cli("--config", cfg, "tools", "f", "book")
    assert r.code == 0, r.err
    r = cli("--config", cfg, "tools", "f", "visit")
    assert r.out.splitlines()[0] == "visit url=<string>"
    assert "  url  string, required" in r.out
    assert r.out.splitlines()[-2:] == ["example:", f"  mcpmini --config {cfg} call f visit url=text"]
    r = cli("--config", cfg, "tools", "f", "typed")
    assert "  code     string — a stock code such as 600519" in r.out   # names aligned
    assert "  mode     fast|slow" in r.out
    r = cli("--config", cfg, "tools", "f", "vist")
    assert r.code == 2 and "has no tool 'vist'; did you mean 'visit'?" in r.error_lines[0]
    r = cli("--config", cfg, "--json", "tools", "f", "visit")
    assert json.loads(r.out)["inputSchema"]["required"] == ["url"]   # the raw entry


def test_tools_json(cli):
    r = cli("tools", WEATHER_CMD, "--json")
    assert r.code == 0
    [tool] = json.loads(r.out)
    assert tool["name"] == "get_forecast" and tool["inputSchema"]["required"] == ["city"]


def test_call_weather(cli):
    r = cli("call", WEATHER_CMD, "get_forecast", "city=Hangzhou")
    assert r.code == 0, r.err
    tomorrow = (datetime.date.today() + datetime.timedelta(days=1)).isoformat()
    assert r.out.startswith(f"[DEMO DATA, not a real forecast] Tomorrow ({tomorrow}) in Hangzhou (杭州): light rain")
    assert r.err == ""


def test_call_weather_json_is_the_whole_result(cli):
    r = cli("--json", "call", WEATHER_CMD, "get_forecast", "city=杭州")
    assert r.code == 0
    result = json.loads(r.out)
    assert result["structuredContent"]["city"] == "Hangzhou" and result["isError"] is False


def test_call_weather_unknown_city_is_error_result(cli):
    r = cli("call", WEATHER_CMD, "get_forecast", "city=Atlantis")
    assert r.code == 1
    assert "Unknown city 'Atlantis'" in r.out and len(r.error_lines) == 1


def test_resources(cli):
    r = cli("resources", WEATHER_CMD)
    assert r.code == 0, r.err
    assert r.out == "weather://cities  cities — The cities this demo server has forecasts for.\n"


def test_templates(cli):
    r = cli("templates", WEATHER_CMD)
    assert r.code == 0, r.err
    assert r.out.startswith("weather://forecast/{city}  forecast — A made-up forecast as plain text")


def test_read_text(cli):
    r = cli("read", WEATHER_CMD, "weather://forecast/Hangzhou")
    assert r.code == 0, r.err
    assert "in Hangzhou (杭州)" in r.out
    r = cli("read", WEATHER_CMD, "weather://cities")
    assert json.loads(r.out)["demo_data"] is True


def test_read_unknown_resource_is_remote_error(cli):
    r = cli("read", WEATHER_CMD, "weather://nowhere")
    assert r.code == 1 and "Resource not found" in r.error_lines[0]


def test_read_blob_to_file(cli, fake, work):
    r = cli("read", fake().cmdline, "fake://blob", "-o", "out.bin")
    assert r.code == 0, r.err
    assert (work / "out.bin").read_bytes() == BLOB
    assert r.out == "" and f"wrote {len(BLOB)} bytes to out.bin" in r.err


def test_read_to_an_unwritable_file_is_one_error_line(proc, fake, work):
    p = proc("read", fake().cmdline, "fake://blob", "-o", work / "no-such-dir" / "out.bin")
    err = p.stderr.decode()
    assert b"Traceback" not in p.stderr, err
    assert p.returncode == 2, err
    assert err.count("\n") == 1 and err.startswith("mcpmini: error: ") and "no-such-dir" in err


def test_read_blob_without_file_is_a_placeholder(cli, fake):
    r = cli("read", fake().cmdline, "fake://blob")
    assert r.code == 0
    assert r.out.startswith("[blob: application/octet-stream") and "-o FILE" in r.out


def test_read_text_to_file(cli, fake, work):
    r = cli("read", fake().cmdline, "fake://text", "--output", work / "t.txt")
    assert r.code == 0, r.err
    assert (work / "t.txt").read_text(encoding="utf-8") == "text resource: " + UNICODE_TEXT


def test_prompts(cli):
    r = cli("prompts", WEATHER_CMD)
    assert r.code == 0, r.err
    assert r.out.startswith("umbrella_advice city=<string>  Asks whether to take an umbrella tomorrow")


def test_prompts_optional_arguments(cli, fake):
    r = cli("prompts", fake().cmdline)
    assert r.out == "greet name=<string> [style=<string>]  Says hello.\n"
    r = cli("prompts", fake().cmdline, "greet")
    assert "  name   string, required" in r.out and r.out.endswith(" greet name=text\n")


def test_prompt(cli):
    r = cli("prompt", WEATHER_CMD, "umbrella_advice", "city=Hangzhou")
    assert r.code == 0, r.err
    lines = r.out.splitlines()
    assert lines[0] == "user: Should I take an umbrella in Hangzhou tomorrow? Answer in one or two sentences."
    assert lines[1] == "user: [resource: weather://forecast/Hangzhou]"


def test_prompt_arguments_are_strings(cli, fake):
    server = fake()
    r = cli("prompt", server.cmdline, "greet", "name=007", "style=0")
    assert r.code == 0, r.err
    assert r.out == "user: Hello, 007! (0)\n"
    [get] = [m for m in server.messages() if m.get("method") == "prompts/get"]
    assert get["params"]["arguments"] == {"name": "007", "style": "0"}


@pytest.mark.parametrize("argv, needle", [
    (["umbrella_advice"], "umbrella_advice: missing required argument 'city' (string); usage: "
                          "umbrella_advice city=<string>"),
    (["umbrella_advice", "city=Paris", "cty=x"], "unknown argument 'cty'; did you mean 'city'?"),
    (["umbrela_advice"], "has no prompt 'umbrela_advice'; did you mean 'umbrella_advice'?"),
])
def test_prompt_arguments_and_names_are_checked_before_sending(cli, argv, needle):
    r = cli("prompt", WEATHER_CMD, *argv)
    assert r.code == 2 and needle in r.error_lines[0], r.err


def test_prompt_no_validate_sends_what_was_typed(cli, fake):
    server = fake()
    r = cli("prompt", "--no-validate", server.cmdline, "greet", "name=x", "extra=1")
    assert r.code == 0, r.err
    [get] = [m for m in server.messages() if m.get("method") == "prompts/get"]
    assert get["params"]["arguments"] == {"name": "x", "extra": "1"}
    assert "prompts/list" not in [m.get("method") for m in server.messages()]


def test_info(cli):
    r = cli("info", WEATHER_CMD)
    assert r.code == 0, r.err
    lines = r.out.splitlines()
    assert lines[0] == "server:       weather-demo 1.0.0"
    assert lines[1].startswith("era:          2026-07-28 (server/discover answered")
    assert lines[2] == "protocol:     2026-07-28"
    assert lines[3] == "capabilities: tools, resources, prompts"
    assert lines[4].startswith("instructions: Demo weather server")


def test_info_legacy_and_json(cli):
    r = cli("info", WEATHER_CMD, "--protocol", "legacy", "--json")
    assert r.code == 0, r.err
    info = json.loads(r.out)
    assert info["era"] == "legacy" and info["protocolVersion"] == "2025-11-25"
    assert info["serverInfo"] == {"name": "weather-demo", "version": "1.0.0"}
    assert "legacy era pinned" in info["era_reason"]


def test_servers_lists_name_transport_target_file_trust(cli, fake, work, user_config):
    write_json(user_config, {"mcpServers": {"mine": {"command": "python3", "args": ["srv.py", "a b"]}}})
    write_json(work / ".mcp.json", {"mcpServers": {"theirs": {"url": "https://example.invalid/mcp",
                                                              "type": "sse"}}})
    r = cli("servers")
    assert r.code == 0
    rows = sorted(line.split("\t") for line in r.out.splitlines())
    assert rows == [["mine", "stdio", "python3 srv.py 'a b'", str(user_config), "trusted"],
                    ["theirs", "sse", "https://example.invalid/mcp", str(work / ".mcp.json"),
                     "NOT APPROVED (mcpmini trust)", "not logged in"]]


# -- Terminal safety ------------------------------------------------------------------------------

@pytest.mark.parametrize("argv", [
    ["call", "{fake}", "controls"],
    ["tools", "{fake}"],
    ["info", "{fake}"],
    ["resources", "{fake}"],
])
def test_human_output_makes_control_characters_visible(cli, fake, argv):
    server = fake("--name", "name" + NASTY)
    r = cli(*[a.replace("{fake}", server.cmdline) for a in argv])
    assert r.code == 0, r.err
    assert_safe(r.out + r.err)
    assert "\\x1b]0;pwned-title\\x07" in r.out and "\\u202e" in r.out and "\\x9b" in r.out


def test_json_output_is_valid_json_with_controls_escaped(cli, fake):
    r = cli("--json", "call", fake().cmdline, "controls")
    assert r.code == 0
    assert_safe(r.out)
    assert json.loads(r.out)["content"][0]["text"] == NASTY  # the exact text, recoverable
    assert "\\u001b" in r.out and "\\u202e" in r.out and "\\u009b" in r.out


@pytest.mark.parametrize("command", ["tools", "info", "resources"])
def test_json_listings_escape_controls(cli, fake, command):
    r = cli("--json", command, fake("--name", NASTY).cmdline)
    assert r.code == 0
    assert_safe(r.out)
    json.loads(r.out)


def test_errors_from_the_server_are_made_visible(cli, fake):
    server = fake("--say", NASTY)
    r = cli("--json", "call", server.cmdline, "crash")
    assert r.code == 3
    assert_safe(r.err)
    assert "\\x1b]0;pwned-title" in r.error_lines[0]
    json.loads(r.err.splitlines()[-1])


def test_unknown_tool_name_from_the_user_is_made_visible(cli, fake):
    r = cli("call", fake().cmdline, "x\x1b]0;t\x07")
    assert r.code == 2
    assert_safe(r.err)


def test_prompt_output_is_made_visible(cli, fake):
    server = fake()
    r = cli("prompt", server.cmdline, "greet", "name=" + NASTY)
    assert r.code == 0
    assert_safe(r.out)


def test_crlf_is_a_line_break_but_a_bare_cr_is_shown(cli, fake):
    r = cli("call", fake().cmdline, "controls")
    assert r.out.endswith("H\nY\n") and "\\rE" in r.out


# -- Pipes and locales (real processes) -------------------------------------------------------------

def pipe_to_head(argv: list[str]) -> tuple[int, bytes, bytes]:
    """``python3 mcpmini.py ARGV | head -1``: mcpmini's exit status, head's output, stderr."""
    with running(*argv) as writer:
        head = subprocess.Popen(["head", "-1"], stdin=writer.stdout, stdout=subprocess.PIPE)
        writer.stdout.close()  # only head holds the read end now
        try:
            first, _ = head.communicate(timeout=60)
        finally:
            if head.poll() is None:
                head.kill()
        err = writer.stderr.read()
        return writer.wait(timeout=60), first, err


@pytest.mark.skipif(os.name != "posix", reason="head(1)")
@pytest.mark.parametrize("extra", [[], ["--json"]])
def test_closed_stdout_pipe_ends_quietly(fake, extra):
    server = fake()
    code, first, err = pipe_to_head(["call", server.cmdline, "lines", "count:=200000", *extra])
    assert first in (b"line 0\n", b"{\n")
    assert b"Traceback" not in err and b"BrokenPipe" not in err and b"Exception" not in err, err
    assert err == b"", err
    assert code == 0
    assert wait_until(lambda: not any(map(alive, server.pids())))


@pytest.mark.skipif(os.name != "posix", reason="head(1)")
def test_closed_stdout_pipe_on_a_listing(fake):
    code, first, err = pipe_to_head(["tools", fake().cmdline])
    assert first.startswith(b"typed [zip=<string>]") and err == b"" and code == 0


def run_with_closed_stdout(argv: list[str]) -> tuple[int, bytes]:
    """mcpmini with a stdout pipe whose reader is already gone: every write fails (EPIPE)."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        with running(*argv, stdout=write_end) as p:
            _, err = p.communicate(timeout=60)
    finally:
        os.close(write_end)
    return p.returncode, err


@pytest.mark.skipif(os.name != "posix", reason="pipes and EPIPE")
@pytest.mark.parametrize("argv", [
    ["call", "{fake}", "unicode"],
    ["--json", "call", "{fake}", "lines", "count:=50000"],
    ["tools", "{fake}"],
    ["servers", "--config", "{many}"],
])
def test_stdout_reader_gone_before_output_ends_quietly(fake, work, argv):
    server = fake()
    many = write_json(work / "many.json", {"mcpServers": {f"s{i}": {"command": "x"} for i in range(3000)}})
    argv = [a.replace("{fake}", server.cmdline).replace("{many}", str(many)) for a in argv]
    code, err = run_with_closed_stdout(argv)
    assert err == b"", err
    assert code == 0
    assert wait_until(lambda: not any(map(alive, server.pids())))


@pytest.mark.parametrize("env", [
    {"LANG": "C"},
    {"LC_ALL": "C"},
    {"LC_ALL": "C", "LANG": "C", "PYTHONUTF8": "0"},
    {"LC_ALL": "POSIX", "PYTHONCOERCECLOCALE": "0", "PYTHONUTF8": "0"},
])
def test_non_ascii_output_is_utf8_whatever_the_locale(proc, fake, env):
    unset = ("PYTHONIOENCODING", "LC_ALL", "LC_CTYPE", "LANG", "PYTHONUTF8")
    p = proc("call", fake().cmdline, "unicode", env=env, unset=unset)
    assert p.returncode == 0, p.stderr
    assert p.stdout.decode("utf-8") == UNICODE_TEXT + "\n"
    # a result from the server, and a diagnostic on stderr, both naming the cities in Chinese
    p = proc("call", WEATHER_CMD, "get_forecast", "city=Atlantis", env=env, unset=unset)
    assert p.returncode == 1
    assert "Hangzhou (杭州)" in p.stdout.decode("utf-8")
    p = proc("prompt", WEATHER_CMD, "umbrella_advice", "city=Atlantis", env=env, unset=unset)
    assert p.returncode == 1
    assert "Hangzhou (杭州)" in p.stderr.decode("utf-8")


def test_readme_first_command(proc):
    """python3 mcpmini.py --config examples/mcp.json call weather get_forecast city=Hangzhou"""
    p = proc("--config", "examples/mcp.json", "call", "weather", "get_forecast", "city=Hangzhou", cwd=ROOT)
    assert p.returncode == 0, p.stderr
    assert "Hangzhou (杭州)" in p.stdout.decode("utf-8") and p.stderr == b""
