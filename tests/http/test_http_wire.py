"""The HTTP/1.1 client on the wire (asyncio, no threads): chunked bodies with trailers, interim
1xx answers, bodiless answers (HEAD, 204, 304), close-delimited bodies, header limits and
malformed answers, a server that trickles one byte a second, clear connection errors (refused,
TLS certificate problems), and no thread at all in the process that makes the requests."""
from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import textwrap
import time

import pytest

from http_fakes import FakeHTTPServer, MCPFake, RawServer, Reply, make_certificates, server_tls_context
import mcpmini
from harness import ROOT, run


async def fetch(method, url, **options):
    resp = await mcpmini._http_request(method, url, **options)
    try:
        return resp.status, await resp.read(), resp.headers
    finally:
        resp.close()


def answer(status_line: bytes, *fields: bytes, body: bytes = b"") -> bytes:
    return status_line + b"\r\n" + b"".join(f + b"\r\n" for f in fields) + b"\r\n" + body


OK = answer(b"HTTP/1.1 200 OK", b"Content-Length: 2", body=b"ok")


def test_a_chunked_body_with_extensions_and_trailers_keeps_the_connection():
    chunked = answer(b"HTTP/1.1 200 OK", b"Transfer-Encoding: chunked",
                     body=b"5;name=value\r\nhello\r\n6\r\n world\r\n0\r\nX-Checksum: 1\r\nX-More: 2\r\n\r\n")
    with RawServer(lambda head: [chunked[:30], 0.02, chunked[30:]], keep=True) as server:
        async def go():
            pool = mcpmini._ConnectionPool()
            try:
                first = await fetch("GET", server.url(), pool=pool)
                return first, await fetch("GET", server.url(), pool=pool)
            finally:
                pool.close()
        (status, body, _), (status2, body2, _) = run(go())
    assert (status, body, status2, body2) == (200, b"hello world", 200, b"hello world")
    assert server.connections == 1   # the trailers were read: the connection went on


def test_interim_1xx_answers_are_skipped():
    early = answer(b"HTTP/1.1 100 Continue") + answer(b"HTTP/1.1 103 Early Hints", b"Link: </style.css>")
    with RawServer(lambda head: [early, 0.05, answer(b"HTTP/1.1 201 Created", b"Content-Length: 2",
                                                     b"X-Final: yes", body=b"ok")]) as server:
        status, body, headers = run(fetch("POST", server.url(), body=b"{}"))
    assert (status, body, headers.get("x-final"), headers.get("link")) == (201, b"ok", "yes", None)


@pytest.mark.parametrize("method,status", [("HEAD", 200), ("GET", 204), ("GET", 304)])
def test_answers_without_a_body_are_not_waited_for(method, status):
    # a Content-Length on these describes no bytes on the wire (RFC 9110 §6.4.1)
    bodiless = answer(b"HTTP/1.1 %d X" % status, b"Content-Length: 100")
    with RawServer(lambda head: bodiless if not head.startswith(b"GET /next") else OK, keep=True) as server:
        async def go():
            pool = mcpmini._ConnectionPool()
            try:
                first = await fetch(method, server.url(), pool=pool, timeout=5)
                return first, await fetch("GET", server.url("/next"), pool=pool, timeout=5)
            finally:
                pool.close()
        (got, body, _), (_, after, _) = run(go())
    assert (got, body, after) == (status, b"", b"ok")
    assert server.connections == 1


def test_a_close_delimited_body_and_http_1_0():
    with RawServer(lambda head: answer(b"HTTP/1.0 200 OK", b"Content-Type: text/plain",
                                       body=b"until the end")) as server:
        async def go():
            pool = mcpmini._ConnectionPool()
            try:
                return [await fetch("GET", server.url(), pool=pool) for _ in range(2)]
            finally:
                pool.close()
        results = run(go())
    assert [r[1] for r in results] == [b"until the end"] * 2
    assert server.connections == 2   # never reused: its end was the connection's end


def test_repeated_fields_are_joined_and_names_are_case_insensitive():
    reply = answer(b"HTTP/1.1 401 Unauthorized", b'WWW-Authenticate: Basic realm="a"',
                   b'www-authenticate: Bearer scope="s"', b"Content-Length: 0")
    with RawServer(lambda head: reply) as server:
        _, _, headers = run(fetch("GET", server.url()))
    assert headers.get("WWW-Authenticate") == 'Basic realm="a", Bearer scope="s"'
    assert mcpmini._bearer_params(headers.get("www-authenticate")) == {"scope": "s"}


@pytest.mark.parametrize("reply,needle", [
    (answer(b"HTTP/1.1 200 OK", *[b"X-%d: v" % i for i in range(101)]), "more than 100 fields"),
    (answer(b"HTTP/1.1 200 OK", b"X-Long: " + b"v" * (65 << 10)), "line over 64 KiB"),
    (answer(b"HTTP/1.1 200 OK", *[b"X-%d: " % i + b"v" * (4 << 10) for i in range(70)]), "exceeded 256 KiB"),
    (answer(b"HTTP/1.1 100 Continue") * 30_000, "exceeded 256 KiB"),
    (answer(b"HTTP/1.1 200 OK", b"X-Folded: a", b" b", b"Content-Length: 0"), "malformed HTTP header"),
    (answer(b"HTTP/1.1 200 OK", b"No colon here", b"Content-Length: 0"), "malformed HTTP header"),
    (b"SSH-2.0-OpenSSH_9.6\r\n\r\n", "not an HTTP/1.x response"),
    (answer(b"HTTP/1.1 200 OK", b"Content-Length: 1, 2"), "invalid Content-Length"),
    (answer(b"HTTP/1.1 200 OK", b"Transfer-Encoding: chunked", body=b"0x5\r\nhello\r\n0\r\n\r\n"),
     "malformed chunk size"),
    (answer(b"HTTP/1.1 200 OK", b"Transfer-Encoding: chunked", body=b"2\r\nhello\r\n0\r\n\r\n"),
     "longer than its size"),
])
def test_malformed_or_oversized_heads_are_protocol_errors(reply, needle):
    with RawServer(lambda head: reply) as server:
        async def go():
            resp = await mcpmini._http_request("GET", server.url(), timeout=10)
            try:
                await resp.read()
            finally:
                resp.close()
        with pytest.raises(mcpmini.ProtocolError, match=needle):
            run(go())


def test_a_body_cut_short_is_a_broken_connection():
    with RawServer(lambda head: answer(b"HTTP/1.1 200 OK", b"Content-Length: 10", body=b"12345")) as server:
        with pytest.raises(mcpmini.ConnectionClosed, match="broke off: the server closed the connection 5 bytes early"):
            run(fetch("GET", server.url()))


@pytest.mark.parametrize("where", ["head", "body"])
def test_a_server_trickling_one_byte_a_second_is_ended_by_the_deadline(where):
    """Slowloris: every read gets a byte in time; only the one deadline ends the exchange."""
    reply = answer(b"HTTP/1.1 200 OK", b"Content-Length: 100", body=b"x" * 100)
    start = reply.index(b"\r\n\r\n") + 4 if where == "body" else 5
    with RawServer(lambda head: [reply[:start], *[b for i in range(start, len(reply))
                                                  for b in (1.0, reply[i:i + 1])]]) as server:
        started = time.monotonic()
        with pytest.raises(mcpmini.RequestTimeout, match="timed out after 2.5 s"):
            run(fetch("GET", server.url(), timeout=2.5))
        elapsed = time.monotonic() - started
        print(f"trickling {where}: ended after {elapsed:.2f} s (deadline 2.5 s)")
        assert elapsed < 15
        assert server.closed.wait(10)   # the connection was closed, not left to trickle


def test_refused_names_the_host_and_port():
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()
    with pytest.raises(mcpmini._NotSent, match=f"connection refused by 127.0.0.1 port {port}"):
        run(fetch("POST", f"http://127.0.0.1:{port}/mcp", body=b"{}"))


def test_a_server_that_never_accepts_is_given_up_after_the_connect_timeout(monkeypatch):
    """A listen queue that is full drops the SYN: the connect hangs, as behind a firewall."""
    monkeypatch.setattr(mcpmini, "CONNECT_TIMEOUT", 0.5)
    with socket.create_server(("127.0.0.1", 0), backlog=0) as listener:
        port = listener.getsockname()[1]
        fillers = [socket.socket() for _ in range(4)]
        for filler in fillers:
            filler.setblocking(False)
            filler.connect_ex(("127.0.0.1", port))
        try:
            url = f"http://127.0.0.1:{port}/mcp"
            with pytest.raises(mcpmini._NotSent, match="no answer within 0.5 s"):
                run(fetch("POST", url, body=b"{}", timeout=None))   # no deadline of its own
            with pytest.raises(mcpmini.RequestTimeout, match="timed out after 0.2 s"):
                run(fetch("POST", url, body=b"{}", timeout=0.2))    # its deadline comes first
        finally:
            for filler in fillers:
                filler.close()


def test_speaking_tls_to_a_plain_server_says_so():
    with FakeHTTPServer(MCPFake()) as server:
        with pytest.raises(mcpmini.ConnectionClosed, match="does not speak TLS"):
            run(fetch("GET", server.url().replace("http:", "https:")))


# -- TLS certificate problems -------------------------------------------------------------------


@pytest.fixture(scope="module")
def pki(tmp_path_factory):
    """The test CA and, signed by it, an expired certificate and one for another name; a
    self-signed one besides."""
    if shutil.which("openssl") is None:
        pytest.skip("openssl is needed to make test certificates")
    d = tmp_path_factory.mktemp("pki")
    ca, cert, key = make_certificates(d)

    def openssl(*args: str) -> None:
        subprocess.run(["openssl", *args], cwd=d, check=True, capture_output=True, timeout=60)

    (d / "other.ext").write_text("basicConstraints=critical,CA:FALSE\nsubjectAltName=DNS:other.example\n"
                                 "keyUsage=critical,digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth\n"
                                 "authorityKeyIdentifier=keyid\nsubjectKeyIdentifier=hash\n")
    openssl("req", "-new", "-key", "server.key", "-out", "other.csr", "-subj", "/CN=other.example")
    openssl("x509", "-req", "-in", "other.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial",
            "-out", "other.pem", "-days", "2", "-extfile", "other.ext")
    openssl("req", "-x509", "-new", "-key", "server.key", "-out", "self.pem", "-days", "2",
            "-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1")
    # expired: signed by the CA with a validity that ended yesterday
    (d / "index.txt").write_text("")
    (d / "ca.cnf").write_text(textwrap.dedent(f"""
        [ca]
        default_ca = test
        [test]
        database = {d}/index.txt
        new_certs_dir = {d}
        serial = {d}/serial
        default_md = sha256
        policy = anything
        copy_extensions = copy
        [anything]
        commonName = supplied
        """))
    (d / "serial").write_text("1000\n")
    openssl("req", "-new", "-key", "server.key", "-out", "expired.csr", "-subj", "/CN=localhost",
            "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1")
    openssl("ca", "-batch", "-config", "ca.cnf", "-cert", "ca.pem", "-keyfile", "ca.key", "-in", "expired.csr",
            "-out", "expired.pem", "-startdate", "20200101000000Z", "-enddate", "20200102000000Z",
            "-extfile", "server.ext")
    return {"ca": ca, "key": key, "other": d / "other.pem", "self": d / "self.pem", "expired": d / "expired.pem"}


@pytest.mark.parametrize("which,trust,needle", [
    ("expired", "ca", "certificate of 127.0.0.1 has expired"),
    ("self", "ca", "is self-signed: to trust it, point SSL_CERT_FILE at it"),
    ("other", "ca", "not valid for the address 127.0.0.1"),
    ("other", "self", "unknown authority: to trust a private CA, point SSL_CERT_FILE at its certificate"),
])
def test_a_tls_failure_says_which_certificate_problem(pki, monkeypatch, which, trust, needle):
    monkeypatch.setenv("SSL_CERT_FILE", str(pki[trust]))
    with FakeHTTPServer(lambda request: Reply(200, b"ok"), tls=server_tls_context(pki[which], pki["key"])) as server:
        with pytest.raises(mcpmini._NotSent, match=f"cannot reach {server.url()}: .*{needle}"):
            run(fetch("GET", server.url()))


# -- no threads ---------------------------------------------------------------------------------

CLIENT = textwrap.dedent("""
    import asyncio, json, sys, threading
    import mcpmini
    counts = []
    async def main():
        async with mcpmini.Client(sys.argv[1], era_cache=False, timeout=5) as client:
            for i in range(5):
                await client.call_tool("echo", {"text": str(i)})
                counts.append(threading.active_count())
        resp = await mcpmini._http_request("GET", sys.argv[1], timeout=0.2)
        try:
            await resp.read()
        except mcpmini.RequestTimeout:
            pass
        resp.close()
        counts.append(threading.active_count())
    asyncio.run(main())
    counts.append(threading.active_count())
    print(json.dumps(counts))
""")


def test_no_thread_is_started_for_requests_nor_left_after_them():
    fake = MCPFake()

    def handler(request):
        if request.method == "GET":   # a stream that is still talking at the deadline
            return Reply(200, chunks=[b"x", 0.05] * 100, content_type="text/plain")
        return fake(request)

    with FakeHTTPServer(handler) as server:
        proc = subprocess.run([sys.executable, "-c", CLIENT, server.url()], capture_output=True, text=True,
                              env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=60)   # this mcpmini
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == [1] * 7   # the main thread alone, throughout
