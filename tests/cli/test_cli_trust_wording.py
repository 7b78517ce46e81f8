"""The trust prompt's wording (issue 25, item 11): the file's path once (its real path only
when it differs), and "has changed since you approved it"."""
from __future__ import annotations

import json


def test_the_path_is_printed_once(proc, work):
    (work / ".mcp.json").write_text(json.dumps({"mcpServers": {"a": {"command": "a"}}}))
    r = proc("trust")   # no terminal: it shows the file, then says how to approve
    err = r.stderr.decode()
    assert err.count(".mcp.json") == 2 and f"{work / '.mcp.json'} is not yet approved" in err, err


def test_a_symlinked_file_shows_where_it_points(proc, work):
    (work / "real.json").write_text(json.dumps({"mcpServers": {"a": {"command": "a"}}}))
    (work / ".mcp.json").symlink_to(work / "real.json")
    err = proc("trust").stderr.decode()
    assert f"{work / '.mcp.json'} ({work / 'real.json'}) is not yet approved" in err, err


def test_a_changed_file_has_changed(proc, work):
    path = work / ".mcp.json"
    path.write_text(json.dumps({"mcpServers": {"a": {"command": "a"}}}))
    assert proc("trust", "--yes").returncode == 0
    path.write_text(json.dumps({"mcpServers": {"a": {"command": "b"}}}))
    assert "has changed since you approved it (changed a)" in proc("trust").stderr.decode()
    assert "has changed since you approved it" in proc("servers").stderr.decode()
