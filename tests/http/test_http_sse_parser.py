"""_SSEParser: WHATWG event-stream parsing (digest §5.5)."""
from __future__ import annotations

import pytest

import mcpmini

Parser = mcpmini._SSEParser


def feed_all(parser, chunks):
    events = []
    for chunk in chunks:
        events += parser.feed(chunk)
    return events


STREAM = (b": comment line\n"
          b"event: greeting\n"
          b"id: 7\n"
          b"data: first\n"
          b"data:second\n"
          b"data\n"
          b"\n"
          b"data: {\"a\": 1}\n"
          b"\n")
EXPECTED = [("greeting", "first\nsecond\n", "7"), ("message", '{"a": 1}', "7")]


def test_basic_fields_multiline_data_and_comments():
    assert Parser().feed(STREAM) == EXPECTED


@pytest.mark.parametrize("eol", [b"\r\n", b"\r"])
def test_crlf_and_lone_cr_line_ends(eol):
    assert Parser().feed(STREAM.replace(b"\n", eol)) == EXPECTED


@pytest.mark.parametrize("eol", [b"\n", b"\r\n", b"\r"])
def test_every_split_point_gives_the_same_events(eol):
    data = STREAM.replace(b"\n", eol)
    for cut in range(len(data) + 1):
        assert feed_all(Parser(), [data[:cut], data[cut:]]) == EXPECTED, cut


def test_byte_by_byte_with_crlf():
    data = STREAM.replace(b"\n", b"\r\n")
    assert feed_all(Parser(), [data[i:i + 1] for i in range(len(data))]) == EXPECTED


def test_trailing_cr_then_lf_in_next_feed_is_one_line_end():
    parser = Parser()
    assert parser.feed(b"data: x\r") == []
    assert parser.feed(b"\n") == []          # the \n completes \r\n: no blank line yet
    assert parser.feed(b"\r\n") == [("message", "x", "")]


def test_lone_cr_then_blank_line_dispatches():
    parser = Parser()
    assert parser.feed(b"data: x\r") == []
    assert parser.feed(b"\r") == [("message", "x", "")]


def test_empty_data_is_not_dispatched_but_its_id_is_recorded():
    parser = Parser()
    assert parser.feed(b"id: prime-1\ndata:\n\n") == []   # a 2025-11-25 priming event
    assert parser.last_id == "prime-1"
    assert parser.feed(b"id: prime-2\ndata: \n\n") == []
    assert parser.last_id == "prime-2"
    assert parser.feed(b"data: next\n\n") == [("message", "next", "prime-2")]


def test_event_without_data_resets_type():
    parser = Parser()
    assert parser.feed(b"event: endpoint\n\ndata: x\n\n") == [("message", "x", "")]


def test_id_with_nul_is_ignored_and_empty_id_resets():
    parser = Parser()
    parser.feed(b"id: good\n\n")
    parser.feed(b"id: b\x00d\n\n")
    assert parser.last_id == "good"
    parser.feed(b"id\n\n")
    assert parser.last_id == ""


def test_retry_accepts_only_integers():
    parser = Parser()
    parser.feed(b"retry: 1500\n\n")
    assert parser.retry == 1500
    for bad in (b"retry: 15.5\n\n", b"retry: -3\n\n", b"retry: abc\n\n", b"retry:\n\n",
                b"retry: 1" + b"0" * 5000 + b"\n\n"):
        parser.feed(bad)
        assert parser.retry == 1500


def test_only_one_space_after_the_colon_is_stripped():
    assert Parser().feed(b"data:  two spaces\n\n") == [("message", " two spaces", "")]


def test_leading_bom_is_dropped_even_when_split():
    parser = Parser()
    assert parser.feed(b"\xef") == []
    assert parser.feed(b"\xbb") == []
    assert parser.feed(b"\xbfdata: x\n\n") == [("message", "x", "")]


def test_unknown_fields_are_ignored_and_utf8_decoded():
    data = "data: 杭州\nfoo: bar\n\n".encode()
    assert Parser().feed(data) == [("message", "杭州", "")]


def test_a_10_mb_event_in_small_chunks():
    payload = b"x" * (10 << 20)
    data = b"data: " + payload + b"\n\n"
    parser = Parser()
    events = []
    for start in range(0, len(data), 4096):  # linear: 2560 feeds of one growing line
        events += parser.feed(data[start:start + 4096])
    assert len(events) == 1 and len(events[0][1]) == len(payload)


def test_a_10_mb_event_in_one_chunk_with_many_lines():
    line = b"data: " + b"y" * 1000 + b"\r\n"
    data = line * 10_000 + b"\r\n"
    (event,) = Parser().feed(data)
    assert len(event[1]) == 10_000 * 1001 - 1


def test_size_limit_raises_protocol_error():
    parser = Parser(limit=1000)
    with pytest.raises(mcpmini.ProtocolError):
        parser.feed(b"data: " + b"z" * 2000)   # one unfinished line
    parser = Parser(limit=1000)
    with pytest.raises(mcpmini.ProtocolError):
        for _ in range(30):
            parser.feed(b"data: " + b"z" * 50 + b"\n")  # many data lines of one event


def test_state_carried_into_a_resumed_stream():
    parser = Parser(last_id="41", retry=250)
    assert (parser.last_id, parser.retry) == ("41", 250)
    assert parser.feed(b"data: 1\n\n") == [("message", "1", "41")]
