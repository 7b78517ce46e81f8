"""Issue 25, items 5–7: errors that teach. A typed key close to a missing one, misspelled
commands, choices and options get a did-you-mean; `--protocol modern` (decision #30); an
address without its scheme; resource hints never echo the input and know templates; `check`
finds SERVER after --call; an unwritable -o fails before the server is asked."""
from __future__ import annotations

import shlex
import sys

import pytest

from harness import WEATHER, write_json

WEATHER_CMD = shlex.join([sys.executable, str(WEATHER)])


def test_a_key_close_to_a_missing_one_is_named_first(cli):
    r = cli("call", WEATHER_CMD, "get_forecast", "cty=Tokyo")
    assert r.code == 2
    assert r.error_lines == ["mcpmini: error: get_forecast: unknown argument 'cty'; did you mean 'city'? "
                             "(required: 'city' (string))"]


def test_a_missing_key_with_no_close_one_is_still_missing(cli):
    r = cli("call", WEATHER_CMD, "get_forecast", "days=2")
    assert r.code == 2 and "missing required argument 'city'" in r.error_lines[0]


@pytest.mark.parametrize("argv, hint", [
    (["tool", "x"], "invalid choice: 'tool'; did you mean 'tools'?"),
    (["cal", "x"], "invalid choice: 'cal'; did you mean 'call'?"),
    (["--jsn", "servers"], "unrecognized arguments: --jsn; did you mean '--json'"),
    (["call", "x", "t", "--no-valdate"], "did you mean '--no-validate'"),
    (["--protocol", "moder", "servers"], "invalid choice: 'moder'; did you mean 'modern'?"),
])
def test_misspelled_commands_choices_and_options_get_a_did_you_mean(cli, argv, hint):
    r = cli(*argv)
    assert r.code == 2
    [line] = r.error_lines
    assert hint in line and "choose from" not in line, line
    assert line.count("'--json'") <= 1


def test_a_word_with_nothing_close_keeps_the_list_of_choices(cli):
    r = cli("zzzzqq")
    assert r.code == 2 and "choose from" in r.error_lines[0] and "did you mean" not in r.error_lines[0]


def test_protocol_modern_is_2026_07_28_on_the_flag_and_in_a_config(cli, work):
    r = cli("--protocol", "modern", "--json", "info", WEATHER_CMD)
    assert r.code == 0 and '"protocolVersion": "2026-07-28"' in r.out
    config = write_json(work / "c.json", {"mcpServers": {"w": {"command": sys.executable, "args": [str(WEATHER)],
                                                              "protocol": "modern"}}})
    r = cli("--config", config, "--json", "info", "w")
    assert r.code == 0 and '"protocolVersion": "2026-07-28"' in r.out and "pinned" in r.out


@pytest.mark.parametrize("spec", ["127.0.0.1:8000/mcp", "localhost:3000", "example.com/mcp"])
def test_an_address_without_its_scheme_gets_http_suggested(cli, spec):
    r = cli("--timeout", "3", "info", spec)
    assert r.code == 2
    assert r.error_lines == [f"mcpmini: error: {spec!r} is an address without its scheme; "
                             f"did you mean http://{spec}?"]


def test_a_command_line_with_a_slash_is_still_a_command_line(cli, work):
    r = cli("--timeout", "3", "info", "./server.py")
    assert r.code == 3 and "cannot start" in r.error_lines[0]


@pytest.mark.parametrize("uri, shown, hidden", [
    ("weather://cities/", "did you mean 'weather://cities'", "'weather://cities/'"),
    ("weather://forecast/Atlantis", "it fits the template weather://forecast/{city}", "did you mean"),
])
def test_a_resource_hint_never_echoes_the_input_and_knows_templates(cli, uri, shown, hidden):
    r = cli("read", WEATHER_CMD, uri)
    assert r.code == 1
    [line] = r.error_lines
    assert shown in line and hidden not in line.partition(";")[2], line


@pytest.mark.parametrize("argv", [
    ["check", "--call", "get_forecast", "city=Hangzhou", WEATHER_CMD],
    ["check", "--call", "get_forecast", "city=Hangzhou", "--", WEATHER_CMD],
    ["check", WEATHER_CMD, "--call", "get_forecast", "city=Hangzhou"],
    ["check", "--prompt", "umbrella_advice", "city=Hangzhou", WEATHER_CMD, "--protocol", "legacy"],
])
def test_check_finds_the_server_wherever_it_stands(cli, argv):
    r = cli(*argv)
    assert r.code == 0, r.err
    assert r.out.count(WEATHER_CMD) == 1 + ("--protocol" not in argv)   # one suite per era
    assert "PASS  call get_forecast" in r.out or "PASS  prompt umbrella_advice" in r.out


def test_check_without_a_server_says_how_to_write_it(cli):
    r = cli("check", "--call", "get_forecast", "city=Hangzhou")
    assert r.code == 2
    assert "mcpmini check SERVER --call TOOL ARG..." in r.error_lines[0] and "-- SERVER" in r.error_lines[0]


def test_read_checks_the_output_path_before_asking_the_server(cli, fake):
    server = fake()
    r = cli("read", server.cmdline, "fake://text", "-o", "/nonexistent/dir/x.json")
    assert r.code == 2 and "cannot write /nonexistent/dir/x.json" in r.error_lines[0]
    assert server.messages() == []   # never started


def test_completion_still_offers_servers_after_check(cli, work):
    config = write_json(work / "c.json", {"mcpServers": {"weather": {"command": "/nonexistent/weather"}}})
    r = cli("completion", "--line", f"mcpmini --config {config} check ")
    assert r.code == 0 and r.out.split() == ["weather"]
