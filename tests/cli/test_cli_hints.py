"""Mistakes get a useful answer and the help teaches (issue 14, items 4, 5, 8 and 10): the
wording of each hint, checked in-process."""
from __future__ import annotations

import http.server
import sys
import threading

import pytest

from harness import WEATHER, write_json

WEATHER_CMD = f"{sys.executable} {WEATHER}"


class _NotMCP(http.server.BaseHTTPRequestHandler):
    answer: tuple[int, str] = (404, "text/plain")

    def _any(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        status, media = self.answer
        body = b"<html><body>Welcome</body></html>" if media == "text/html" else b"nope"
        self.send_response(status)
        self.send_header("Content-Type", media)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    do_GET = do_POST = do_DELETE = _any

    def log_message(self, *args: object) -> None:
        pass


@pytest.mark.parametrize("answer, shown", [((404, "text/plain"), "HTTP 404"), ((405, "text/plain"), "HTTP 405"),
                                           ((501, "text/plain"), "HTTP 501"), ((200, "text/html"), "text/html")])
def test_a_url_without_an_mcp_endpoint_says_where_to_look(cli, answer, shown):
    _NotMCP.answer = answer
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _NotMCP)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{httpd.server_address[1]}"
    try:
        r = cli("--timeout", "10", "tools", base + "/")
        r2 = cli("--timeout", "10", "tools", base + "/mcp")
    finally:
        httpd.shutdown()
        httpd.server_close()
    assert r.code == 3 and r.err == (f"mcpmini: error: no MCP endpoint at {base}/ ({shown}); MCP servers "
                                     f"usually serve /mcp — try {base}/mcp\n")
    assert r2.code == 3 and r2.err == f"mcpmini: error: no MCP endpoint at {base}/mcp ({shown}); check the URL\n"


def test_an_unknown_server_names_the_files_searched_and_the_closest_name(cli, fake, work, user_config):
    write_json(user_config, {"mcpServers": {"weather": fake().entry(), "wiki": fake().entry()}})
    write_json(work / "team.json", {"mcpServers": {}})
    r = cli("--config", "team.json", "tools", "wether")
    assert r.code == 2
    [line] = r.error_lines
    assert "unknown server 'wether'; did you mean 'weather'?" in line
    assert f"{user_config} (found)" in line and f"{work / '.mcp.json'} (missing)" in line
    assert f"{work / 'mcp.json'} (missing)" in line and "team.json (found)" in line
    assert "a command line in quotes" in line and "--config FILE" in line


def test_an_unknown_resource_is_still_sent_and_the_error_gets_the_closest_uri(cli):
    r = cli("read", WEATHER_CMD, "weather://citie")
    assert r.code == 1   # the server's own error (decision #5)
    assert "Resource not found" in r.error_lines[0] and "did you mean 'weather://cities' or" in r.error_lines[0]


@pytest.mark.parametrize("how", ["cmdline", "config", "url"])
def test_no_trust_warning_when_the_project_file_is_not_used(cli, fake, work, how):
    write_json(work / ".mcp.json", {"mcpServers": {"proj": fake().entry()}})
    other = write_json(work / "other.json", {"mcpServers": {"proj": fake(label="o").entry()}})
    argv = {"cmdline": ["call", fake(label="c").cmdline, "whoami"],
            "config": ["--config", other, "call", "proj", "whoami"],
            "url": ["--timeout", "3", "info", "http://127.0.0.1:9/mcp"]}[how]
    r = cli(*argv)
    assert "approved" not in r.err and ".mcp.json" not in r.err


def test_the_trust_warning_of_ask_names_each_file_once(cli, fake, work, user_config):
    write_json(work / ".mcp.json", {"mcpServers": {"proj": fake().entry()}})
    r = cli("ask", "q", "--model", "m", "--base-url", "http://127.0.0.1:9/v1")
    assert r.code == 2 and r.err.count(".mcp.json") == 1 and "not yet approved" in r.err


@pytest.mark.parametrize("command", ["info", "tools", "call", "resources", "templates", "read", "prompts",
                                     "prompt", "servers", "login", "logout", "trust", "completion", "ask"])
def test_each_command_help_has_examples_and_no_global_options(cli, command):
    r = cli(command, "--help")
    assert r.code == 0
    assert "examples:\n  mcpmini " in r.out and "see mcpmini --help" in r.out
    assert "--timeout" not in r.out and "--trace" not in r.out
    if command not in ("servers", "trust", "completion", "ask"):   # positionals are described
        assert "positional arguments:\n  SERVER " in r.out and "a configured name, an http(s)://" in r.out


def test_the_top_level_help_keeps_the_global_options_under_one_heading(cli):
    r = cli("--help")
    assert r.out.count("global options") == 1 and "--timeout S" in r.out and "--no-color" in r.out


@pytest.mark.parametrize("url, origin, host, warnings", [
    ("https://example.com/a", "https://example.com/mcp", "example.com", []),
    ("https://login.example.org/a", "https://example.com/mcp", "login.example.org", ["not the server's own host"]),
    ("https://exаmple.com/a", None, "xn--exmple-4nf.com", ["punycode"]),
    ("https://bücher.example/a", "https://bücher.example/mcp", "xn--bcher-kva.example", ["punycode"]),
])
def test_a_url_to_open_shows_its_ascii_host_and_warns(url, origin, host, warnings):
    import mcpmini
    text = mcpmini._url_text(url, origin)
    assert f"  host: {host}" in text
    assert [w for w in ("punycode", "not the server's own host") if w in text] == warnings


def test_long_values_are_folded_with_the_count_hidden():
    import mcpmini
    folded = mcpmini._fold({"a": "x" * 30, "b": ["y" * 5, {"c": "z" * 12}], "n": 7}, 10)
    assert folded == {"a": "x" * 10 + "… [20 more characters]", "b": ["y" * 5, {"c": "z" * 10 + "… [2 more characters]"}],
                      "n": 7}
