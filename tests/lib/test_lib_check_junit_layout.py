"""``check --junit`` (issue 25, item 11): indented XML ending in a newline; a testcase's
classname is the server's name (its config name, or the command's program) and the era."""
from __future__ import annotations

import shlex
import sys
import xml.etree.ElementTree as ET

from harness import WEATHER, write_json


def classnames(path) -> list[str]:
    return sorted({case.get("classname") for case in ET.parse(path).getroot().iter("testcase")})


def test_junit_is_indented_ends_in_a_newline_and_names_the_program(cli, tmp_path):
    junit = tmp_path / "junit.xml"
    r = cli("check", shlex.join([sys.executable, str(WEATHER)]), "--junit", str(junit))
    assert r.code == 0, r.err
    text = junit.read_text()
    assert text.endswith("</testsuites>\n") and "\n  <testsuite " in text and "\n    <testcase " in text
    assert classnames(junit) == ["weather_server.py.legacy", "weather_server.py.modern"]


def test_a_configured_server_is_named_by_its_config_name(cli, tmp_path):
    config = write_json(tmp_path / "c.json", {"mcpServers": {"weather": {
        "command": sys.executable, "args": [str(WEATHER)], "protocol": "legacy"}}})
    junit = tmp_path / "junit.xml"
    assert cli("--config", str(config), "check", "weather", "--junit", str(junit)).code == 0
    assert classnames(junit) == ["weather.legacy"]


def test_an_unreachable_server_keeps_its_program_name(cli, tmp_path):
    junit = tmp_path / "junit.xml"
    assert cli("check", "/nonexistent/dir/server -v", "--junit", str(junit)).code == 3
    assert classnames(junit) == ["server.auto"]
