"""Arguments of ``call``: schema-typed key=value, key:=JSON, @file, :=@file, \\@, a JSON
object, '-' for stdin, and a repeated key. Checked on what the fake server received."""
from __future__ import annotations

import http.server
import io
import sys
import threading

import pytest


def call_typed(cli, server, *items: str) -> dict:
    r = cli("call", server.cmdline, "typed", *items)
    assert r.code == 0, r.err
    return server.arguments()


@pytest.mark.parametrize("items, expected", [
    # numeric-looking strings stay strings where the schema allows a string
    (["zip=02134", "code=600519"], {"zip": "02134", "code": "600519"}),
    (["zip=1e5", "code=true"], {"zip": "1e5", "code": "true"}),
    (["zip=null"], {"zip": "null"}),
    # the one scalar type the schema allows
    (["count=5", "ratio=0.25", "flag=true"], {"count": 5, "ratio": 0.25, "flag": True}),
    (["count=-3", "ratio=2", "flag=false"], {"count": -3, "ratio": 2, "flag": False}),
    # nullable string: "null" is null, anything else a string
    (["note=null"], {"note": None}),
    (["note=0042"], {"note": "0042"}),
    # anyOf integer|null, oneOf integer|boolean, type list integer|null
    (["limit=null"], {"limit": None}),
    (["limit=7"], {"limit": 7}),
    (["level=true"], {"level": True}),
    (["level=12"], {"level": 12}),
    (["port=8080"], {"port": 8080}),
    (["port=null"], {"port": None}),
    # enum of strings
    (["mode=fast"], {"mode": "fast"}),
    # object and array values are JSON
    (['opts={"a": [1, "2"]}', 'tags=["x", "y"]'], {"opts": {"a": [1, "2"]}, "tags": ["x", "y"]}),
    # a property that says nothing: strings
    (["untyped=00123"], {"untyped": "00123"}),
    # values may contain '=' and ':' and be empty
    (["zip=a=b:c", "code="], {"zip": "a=b:c", "code": ""}),
])
def test_key_value_is_typed_by_the_schema(cli, fake, items, expected):
    assert call_typed(cli, fake(), *items) == expected


@pytest.mark.parametrize("items, expected", [
    (["untyped:=[1, 2]"], {"untyped": [1, 2]}),
    (["note:=null", "count:=5"], {"note": None, "count": 5}),
    (['opts:={"k": "v"}'], {"opts": {"k": "v"}}),
    (['zip:="02134"'], {"zip": "02134"}),
])
def test_colon_equals_is_raw_json(cli, fake, items, expected):
    assert call_typed(cli, fake(), *items) == expected


def test_no_validate_sends_exactly_what_was_typed(cli, fake):
    """Keys the schema does not list (refused otherwise: test_cli_validation), values as typed:
    key=value a string whatever the schema says, key:=JSON as JSON; tools/list is not asked."""
    server = fake()
    args = ["count=5", "extra=42", "extra2:=1.5", "flag=yes"]
    assert cli("call", server.cmdline, "typed", *args).code == 2 and server.calls() == []
    r = cli("call", "--no-validate", server.cmdline, "typed", *args)
    assert r.code == 0, r.err
    assert server.arguments() == {"count": "5", "extra": "42", "extra2": 1.5, "flag": "yes"}
    assert [m["method"] for m in server.messages()].count("tools/list") == 1   # the refused run only


def test_at_file_reads_text_and_colon_at_reads_json(cli, fake, work):
    (work / "zip.txt").write_text("02134\nsecond line é\n", encoding="utf-8")
    (work / "opts.json").write_text('{"nested": {"n": 1}, "s": "杭州"}', encoding="utf-8")
    args = call_typed(cli, fake(), "zip=@zip.txt", "opts:=@opts.json")
    assert args == {"zip": "02134\nsecond line é\n", "opts": {"nested": {"n": 1}, "s": "杭州"}}


def test_backslash_at_is_a_literal_at(cli, fake):
    assert call_typed(cli, fake(), r"code=\@home", "zip=a@b") == {"code": "@home", "zip": "a@b"}


def test_single_json_object_is_the_whole_arguments(cli, fake):
    args = call_typed(cli, fake(), '{"zip": "02134", "count": 2, "note": null}')
    assert args == {"zip": "02134", "count": 2, "note": None}


def test_dash_reads_the_arguments_object_from_stdin(cli, fake, monkeypatch):
    monkeypatch.setattr(sys, "stdin", io.StringIO('{"code": "600519", "tags": ["a"]}'))
    assert call_typed(cli, fake(), "-") == {"code": "600519", "tags": ["a"]}


def test_no_arguments_sends_an_empty_object(cli, fake):
    assert call_typed(cli, fake()) == {}


@pytest.mark.parametrize("items, needle", [
    (["zip=1", "zip=2"], "'zip' is given twice"),
    (["zip=1", "zip:=2"], "'zip' is given twice"),
])
def test_repeated_key_is_an_error_and_nothing_is_sent(cli, fake, items, needle):
    server = fake()
    r = cli("call", server.cmdline, "typed", *items)
    assert r.code == 2
    assert needle in r.err
    assert server.calls() == []


@pytest.mark.parametrize("items, needle", [
    (["count:=[1,"], "'count': not valid JSON"),
    (["opts:=@missing.json"], "cannot read missing.json"),
    (["zip=@missing.txt"], "cannot read missing.txt"),
    (["novalue"], "is not key=value"),
    (["=v"], "is not key=value"),
    (['{"zip": '], "not valid JSON"),
    (["[1, 2]"], "is not key=value"),
])
def test_malformed_arguments_exit_2_before_sending(cli, fake, items, needle):
    server = fake()
    r = cli("call", server.cmdline, "typed", *items)
    assert r.code == 2, r
    assert needle in r.err
    assert server.calls() == []


def test_stdin_must_hold_one_object(cli, fake, monkeypatch):
    server = fake()
    monkeypatch.setattr(sys, "stdin", io.StringIO("[1, 2]"))
    r = cli("call", server.cmdline, "typed", "-")
    assert r.code == 2
    assert "one JSON object" in r.err
    assert server.calls() == []


class _Counter(http.server.BaseHTTPRequestHandler):
    hits: list[str] = []

    def do_GET(self) -> None:  # noqa: N802
        self.hits.append(self.path)
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(b'{"type": "integer"}')

    def log_message(self, *args: object) -> None:
        pass


def test_ref_is_passed_over_and_never_fetched(cli, fake):
    """A $ref'd schema would say integer; it is never fetched, so the value stays a string
    and nothing reaches the URL."""
    httpd = http.server.HTTPServer(("127.0.0.1", 0), _Counter)
    _Counter.hits = []
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{httpd.server_address[1]}/schema.json"
        server = fake("--ref-url", url)
        assert cli("tools", server.cmdline).code == 0
        assert call_typed(cli, server, "ref=12") == {"ref": "12"}
    finally:
        httpd.shutdown()
        httpd.server_close()
    assert _Counter.hits == []
