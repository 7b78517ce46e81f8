"""Failures of the model endpoint (issue 5, item 7; openai-compat §4): bounded retries with
Retry-After, no retry for quota errors or client errors, 401/403 as AuthError with the key
masked, timeouts, unreachable endpoints."""
from __future__ import annotations

import socket

import pytest

import mcpmini
from agent_fakes import ScriptedModel, answer, raw
from harness import run

KEY = "sk-proj-abcdefghijklmnop0123456789WXYZ"


pytestmark = pytest.mark.usefixtures("quick_backoff")


def agent(base_url, **options):
    return run(mcpmini.run_agent("q", [], model="m", base_url=base_url, **options))


def error(message, code=None, kind="invalid_request_error"):
    return {"error": {"message": message, "type": kind, "param": None, "code": code}}


def test_429_then_success_honours_retry_after():
    script = [raw(429, error("Rate limit reached", "rate_limit_exceeded"), {"Retry-After": "1"}),
              answer("ok")]
    with ScriptedModel(script) as model:
        transcript = agent(model.base_url)
    assert transcript["answer"] == "ok"
    assert len(model.requests) == 2 and model.bodies[0] == model.bodies[1]
    assert transcript["steps"][0]["retries"] == [{"attempt": 1, "delay": 1.0, "reason": "HTTP 429"}]


def test_retry_after_ms_wins_and_5xx_are_retried_twice():
    script = [raw(503, error("overloaded"), {"retry-after-ms": "20", "Retry-After": "30"}),
              raw(502, b"<html>bad gateway</html>"), answer("ok")]
    with ScriptedModel(script) as model:
        transcript = agent(model.base_url)
    assert transcript["answer"] == "ok" and len(model.requests) == 3
    assert [r["delay"] for r in transcript["steps"][0]["retries"]][0] == 0.02


def test_retries_are_bounded():
    with ScriptedModel([raw(503, error("overloaded"))] * 5) as model:
        with pytest.raises(mcpmini._ModelError, match="HTTP 503: overloaded"):
            agent(model.base_url)
    assert len(model.requests) == 1 + mcpmini.AGENT_RETRIES


def test_500_is_retried_at_most_once():
    with ScriptedModel([raw(500, error("Jinja Exception: bad template", kind="server_error"))] * 3) as model:
        with pytest.raises(mcpmini._ModelError, match="Jinja Exception"):
            agent(model.base_url)
    assert len(model.requests) == 2


@pytest.mark.parametrize("reply", [
    raw(429, error("You exceeded your current quota", "insufficient_quota", "insufficient_quota")),
    raw(503, error("no"), {"x-should-retry": "false"}),
    raw(400, error("Invalid schema for function 'x'", "invalid_function_parameters")),
    raw(422, error("unexpected property")),
])
def test_no_retry_for_quota_client_errors_or_when_the_server_says_so(reply):
    with ScriptedModel([reply, answer("never")]) as model:
        with pytest.raises(mcpmini._ModelError) as info:
            agent(model.base_url)
    assert len(model.requests) == 1
    assert f"HTTP {reply['status']}" in str(info.value) and model.base_url in str(info.value)
    assert (info.value).kind == "remote"


def test_404_names_the_model_and_the_url():
    with ScriptedModel([raw(404, b"404 page not found")]) as model:
        with pytest.raises(mcpmini._ModelError) as info:
            agent(model.base_url)
    text = str(info.value)
    assert "404 page not found" in text and "'m'" in text and "/v1" in text


def test_stream_options_refused_is_retried_once_without_it():
    script = [raw(400, error("stream_options is not supported")), answer("ok")]
    with ScriptedModel(script) as model:
        assert agent(model.base_url)["answer"] == "ok"
    first, second = model.bodies
    assert "stream_options" in first and "stream_options" not in second and second["stream"] is True


@pytest.mark.parametrize("status", [401, 403])
def test_401_and_403_are_auth_errors_with_the_key_masked(status):
    with ScriptedModel([raw(status, error("Incorrect API key provided.", "invalid_api_key"))] * 3) as model:
        with pytest.raises(mcpmini.AuthError) as info:
            agent(model.base_url, api_key=KEY)
    exc = info.value
    assert len(model.requests) == 1
    assert exc.status == status and exc.url == model.base_url + "/chat/completions"
    assert KEY not in str(exc) and "sk-…WXYZ" in str(exc)
    assert model.base_url in str(exc) and "Incorrect API key" in str(exc)
    assert mcpmini.EXIT_CODES[(exc).kind] == 4


def test_a_slow_endpoint_times_out():
    with ScriptedModel([raw(200, {"choices": []}, delay=3)]) as model:
        with pytest.raises(mcpmini.RequestTimeout) as info:
            agent(model.base_url, stream=False, timeout=0.3)
    assert "0.3 s" in str(info.value) and len(model.requests) == 1


def test_an_unreachable_endpoint_is_a_connection_error_after_retries():
    with socket.socket() as s:      # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(mcpmini.ConnectionClosed) as info:
        agent(f"http://127.0.0.1:{port}/v1")
    assert len(info.value.transcript["steps"][0]["retries"]) == mcpmini.AGENT_RETRIES
    assert info.value.transcript["error"]["kind"] == "connection"


def test_no_choices_is_a_protocol_error():
    with ScriptedModel([raw(200, {"choices": []})]) as model:
        with pytest.raises(mcpmini.ProtocolError, match="without choices"):
            agent(model.base_url, stream=False)
