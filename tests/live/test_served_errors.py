"""What the server answers itself, before the app sees a request (a request line too long,
a header with a character not allowed), as served by ``gin-rummy serve`` and by the nginx
of ``deploy/nginx.conf`` in front of it: problem documents, like every other error."""

from __future__ import annotations

import json
import re
import signal
import socket
import subprocess
import tempfile
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.scale.cluster import LOOPBACK, free_port, http_status, nginx_binary, tail, wait_for

DEPLOY_NGINX = Path(__file__).resolve().parents[2] / "deploy" / "nginx.conf"
SECRET = "a-seat-token-that-must-not-be-echoed"


def raw(port: int, request: bytes) -> tuple[int, dict, bytes]:
    """Send bytes as they are; the status, headers and body of the answer."""
    with socket.create_connection((LOOPBACK, port), timeout=10) as sock:
        sock.sendall(request)
        data = b""
        while b"\r\n\r\n" not in data or len(data) < _expected_length(data):
            chunk = sock.recv(65536)
            if not chunk:
                break
            data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    headers = {name.lower(): value.strip() for name, _, value in (line.partition(":") for line in lines[1:])}
    return int(lines[0].split(" ")[1]), headers, body


def _expected_length(data: bytes) -> int:
    head, found, _ = data.partition(b"\r\n\r\n")
    match = re.search(rb"(?im)^content-length:\s*(\d+)", head)
    return len(head) + len(found) + int(match.group(1)) if found and match else 1 << 62


def problem(answer, status: int, code: str) -> dict:
    got, headers, body = answer
    assert got == status, (got, headers, body[:300])
    assert headers["content-type"] == "application/problem+json", headers
    document = json.loads(body)
    assert document["status"] == status and document["code"] == code, document
    assert document["type"] == f"/problems/{code}" and document["title"] and document["detail"]
    assert SECRET not in body.decode(), "the request's text came back in the answer"
    return document


def get(path: str, *headers: str) -> bytes:
    return ("\r\n".join([f"GET {path} HTTP/1.1", "Host: localhost", *headers, "Connection: close"]) + "\r\n\r\n").encode("latin-1")


BAD_HEADER = get("/health", f"Authorization: Bearer {SECRET}\x01")


def test_the_servers_own_refusals_are_problem_documents(serve):
    port = serve(workers=1).port
    # gunicorn's limit_request_line is 4094 bytes.
    long_line = problem(raw(port, get("/health?pad=" + "x" * 5000)), 414, "uri_too_long")
    assert "4094" in long_line["detail"]
    problem(raw(port, BAD_HEADER), 400, "bad_request")
    problem(raw(port, get("/health", f"Bad Name: {SECRET}")), 400, "bad_request")
    problem(raw(port, f"GET /health?{SECRET} HTTP/9.9\r\nHost: x\r\n\r\n".encode()), 400, "bad_request")
    many = [f"X-Header-{n}: {n}" for n in range(120)]
    problem(raw(port, get("/health", *many)), 431, "headers_too_large")
    # The process serves on as before.
    assert raw(port, get("/health/live"))[0] == 200


class Nginx:
    """nginx with ``deploy/nginx.conf`` as it is, but for its upstream (one instance here)
    and the address it listens on; or with the ``site`` given (``{port}`` in it is its own)."""

    def __init__(self, folder: Path, upstream_port: int, site: str | None = None):
        self.folder = folder
        self.port = free_port()
        if site is None:
            site = DEPLOY_NGINX.read_text()
            assert "server api:8000;" in site and "listen 80;" in site, "deploy/nginx.conf changed: update this test"
            site = site.replace("server api:8000;", f"server {LOOPBACK}:{upstream_port};")
            site = site.replace("listen 80;", f"listen {LOOPBACK}:{self.port};")
        else:
            site = site.replace("{port}", str(self.port))
        (folder / "site.conf").write_text(site)
        (folder / "nginx.conf").write_text(
            f"daemon off;\npid {folder}/nginx.pid;\nerror_log {folder}/error.log warn;\n"
            "events { worker_connections 256; }\n"
            f"http {{\n  access_log off;\n  client_body_temp_path {folder}/body;\n  proxy_temp_path {folder}/proxy;\n"
            f"  fastcgi_temp_path {folder}/fastcgi;\n  uwsgi_temp_path {folder}/uwsgi;\n  scgi_temp_path {folder}/scgi;\n"
            f"  include {folder}/site.conf;\n}}\n"
        )
        self.process = subprocess.Popen(
            [nginx_binary(), "-p", str(folder), "-c", str(folder / "nginx.conf"), "-e", str(folder / "error.log")],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
        )

        def ready():
            if self.process.poll() is not None:
                raise RuntimeError(f"nginx exited with {self.process.returncode}:\n{tail(folder / 'error.log')}")
            return http_status(self.port, "/health/live") == 200

        wait_for(ready, 30, "nginx")

    def stop(self):
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGQUIT)
            self.process.wait(15)


@contextmanager
def nginx(upstream_port: int, site: str | None = None):
    if nginx_binary() is None:
        pytest.skip("nginx is not installed (apt-get install nginx): the proxy's errors are not checked")
    with tempfile.TemporaryDirectory(prefix="gin-rummy-nginx-") as folder:
        Path(folder).chmod(0o755)  # nginx's workers run as another user
        proxy = Nginx(Path(folder), upstream_port, site)
        try:
            yield proxy
        finally:
            proxy.stop()


@pytest.fixture
def nginx_in_front(serve):
    if nginx_binary() is None:
        pytest.skip("nginx is not installed (apt-get install nginx): deploy/nginx.conf is not checked")
    instance = serve(workers=1)
    with nginx(instance.port) as proxy:
        yield instance, proxy


def test_behind_the_deployments_nginx_every_refusal_is_a_problem_document_too(nginx_in_front):
    instance, proxy = nginx_in_front
    port = proxy.port
    # nginx's own: beyond its header buffers (8 KiB), a request line it cannot read, a
    # body over client_max_body_size, the hidden /metrics.
    problem(raw(port, get("/health?pad=" + "x" * 9000)), 414, "uri_too_long")
    problem(raw(port, f"GARBAGE {SECRET}\r\n\r\n".encode()), 400, "bad_request")
    problem(raw(port, get("/health", "X-Big: " + "x" * 20000)), 431, "headers_too_large")
    too_large = "POST /matches/import HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 17000000\r\n\r\n"
    problem(raw(port, too_large.encode()), 413, "body_too_large")
    problem(raw(port, get("/metrics")), 404, "not_found")
    # Passed on by nginx, refused by gunicorn: gunicorn's problem document, as it is.
    assert "4094" in problem(raw(port, get("/health?pad=" + "x" * 5000)), 414, "uri_too_long")["detail"]
    problem(raw(port, BAD_HEADER), 400, "bad_request")
    # The service's own answers pass through untouched.
    unknown = problem(raw(port, get("/matches/00000000-0000-4000-8000-000000000000")), 401, "unauthorized")
    assert unknown["detail"] != json.loads(raw(port, get("/metrics"))[2])["detail"]
    # No instance to pass a request to.
    instance.stop()
    gone = raw(port, get("/health"))
    problem(gone, 502, "service_unreachable")
    assert gone[1]["retry-after"] == "5"


#: What ingress-nginx makes of an Ingress with ``custom-http-errors`` and a
#: ``default-backend`` (its nginx.tmpl: an ``error_page`` per code in each location, and a
#: named location per code that sets ``X-Code``, rewrites the path to ``/`` and passes the
#: request, method and all, to the default backend), with the service as that backend, as
#: deploy/k8s/gin-rummy.yaml configures it.  ``/gone/`` stands for a replica that is down.
INGRESS_SITE = """
server {{
    listen 127.0.0.1:{{port}};
    client_max_body_size 4m;
    location / {{
        proxy_pass http://127.0.0.1:{app};
        proxy_intercept_errors on;
{error_pages}
    }}
    location /gone/ {{
        proxy_pass http://127.0.0.1:{gone};
        proxy_intercept_errors on;
{error_pages}
    }}
{named}
}}
"""
CUSTOM_ERROR = """
    location @custom_gin-rummy_{code} {{
        internal;
        proxy_intercept_errors off;
        proxy_set_header X-Code {code};
        proxy_set_header X-Format $http_accept;
        proxy_set_header X-Original-URI $request_uri;
        rewrite (.*) / break;
        proxy_pass http://127.0.0.1:{app};
    }}"""


def ingress_codes() -> list[str]:
    manifest = (DEPLOY_NGINX.parent / "k8s" / "gin-rummy.yaml").read_text()
    found = re.search(r'custom-http-errors: "([0-9,]+)"', manifest)
    assert found and "default-backend: gin-rummy" in manifest, "the Ingress no longer sends its errors to the service"
    return found.group(1).split(",")


def test_behind_an_ingress_its_own_errors_are_the_services_problem_documents(serve):
    port = serve(workers=1).port
    codes = ingress_codes()
    assert {"413", "502", "504"} <= set(codes)
    site = INGRESS_SITE.format(
        app=port, gone=free_port(),
        error_pages="\n".join(f"        error_page {code} = @custom_gin-rummy_{code};" for code in codes),
        named="".join(CUSTOM_ERROR.format(code=code, app=port) for code in codes),
    )
    with nginx(port, site) as proxy:
        # No replica behind the path: the ingress's 502, told by the service.
        gone = raw(proxy.port, get(f"/gone/matches?token={SECRET}"))
        problem(gone, 502, "service_unreachable")
        assert gone[1]["retry-after"] == "5"
        # A POST handed over (the method is kept): a body over the service's 64 KiB.
        body = json.dumps({"seats": [{"name": "x" * 70000}]})
        request = (f"POST /matches HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                   f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n{body}")
        problem(raw(proxy.port, request.encode()), 413, "body_too_large")
        # The service's other answers pass through untouched.
        unknown = problem(raw(proxy.port, get("/matches/00000000-0000-4000-8000-000000000000")), 401, "unauthorized")
        assert "proxy" not in unknown["detail"]
        assert raw(proxy.port, get("/"))[1]["content-type"].startswith("text/html")
