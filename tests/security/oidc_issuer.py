"""An OIDC issuer on loopback for the tests: its discovery document and JWKS served over HTTP
from a thread, signing keys the test makes (RSA and EC), and tokens it signs (PyJWT).

`jwks_requests` counts the reads of the key set (the rate limit's test); `hang` makes every
request wait until released (a stuck issuer: reads must time out without blocking the server);
`jwks_answer`, when set, is served instead of the key set (a broken issuer); a key added with
`publish_alg=False` is published without its `alg`, as some issuers do.
`GET /mint?tenant=..&lifetime=..` answers a fresh token as text: the Go, TypeScript and Java
client tests get their JWTs there (run as `python -m tests.security.oidc_issuer --port-file F`,
as they run the fault proxy), so no test outside Python signs a JWT itself.
"""

from __future__ import annotations

import argparse
import json
import os
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

import jwt
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from jwt.algorithms import ECAlgorithm, RSAAlgorithm

AUDIENCE = "memoryd-test"


def rsa_key() -> rsa.RSAPrivateKey:
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


def public_jwk(key: Any, kid: str, alg: str | None) -> dict[str, Any]:
    """The public JWK of a private key; without `alg` when it is None."""
    to_jwk = ECAlgorithm.to_jwk if isinstance(key, ec.EllipticCurvePrivateKey) else RSAAlgorithm.to_jwk
    return {**json.loads(to_jwk(key.public_key())), "kid": kid, "use": "sig", **({"alg": alg} if alg else {})}


class Issuer:
    def __init__(self) -> None:
        self.keys: dict[str, tuple[Any, str]] = {}  # kid -> (private key, alg)
        self.unpublished_alg: set[str] = set()  # kids published without their alg
        self.jwks_answer: Any = None  # set: served instead of the key set (any JSON value)
        self.jwks_requests = 0
        self.hang = threading.Event()  # set: requests wait until `release`
        self._release = threading.Event()
        issuer = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 - http.server's name
                if issuer.hang.is_set():
                    issuer._release.wait(60)
                url = urlsplit(self.path)
                if url.path == "/mint":
                    query = {k: v[0] for k, v in parse_qs(url.query).items()}
                    lifetime = int(query.pop("lifetime", "600"))
                    token = issuer.token(exp=int(time.time()) + lifetime, **query).encode()
                    self.send_response(200)
                    self.send_header("content-type", "text/plain")
                    self.send_header("content-length", str(len(token)))
                    self.end_headers()
                    self.wfile.write(token)
                    return
                if self.path == "/.well-known/openid-configuration":
                    body = {"issuer": issuer.url, "jwks_uri": f"{issuer.url}/jwks.json"}
                elif self.path == "/jwks.json":
                    issuer.jwks_requests += 1
                    body = issuer.jwks() if issuer.jwks_answer is None else issuer.jwks_answer
                else:
                    self.send_error(404)
                    return
                data = json.dumps(body).encode()
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: Any) -> None:
                pass

        class Server(ThreadingHTTPServer):
            daemon_threads = True

            def handle_error(self, request: Any, client_address: Any) -> None:
                pass  # a reader that gave up (the stuck-issuer test) closed the connection

        self._server = Server(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, name="test-oidc-issuer", daemon=True)
        self._thread.start()
        self.add_key("rsa-1", rsa_key(), "RS256")

    def add_key(self, kid: str, key: Any, alg: str, *, publish_alg: bool = True) -> None:
        self.keys[kid] = (key, alg)
        if not publish_alg:
            self.unpublished_alg.add(kid)

    def remove_key(self, kid: str) -> None:
        del self.keys[kid]
        self.unpublished_alg.discard(kid)

    def jwks(self) -> dict[str, Any]:
        published = {kid: (key, None if kid in self.unpublished_alg else alg) for kid, (key, alg) in self.keys.items()}
        return {"keys": [public_jwk(key, kid, alg) for kid, (key, alg) in published.items()]}

    def claims(self, **overrides: Any) -> dict[str, Any]:
        now = int(time.time())
        claims = {
            "iss": self.url,
            "aud": AUDIENCE,
            "sub": f"client-{uuid.uuid4().hex[:6]}",
            "iat": now,
            "exp": now + 600,
            "tenant": "acme",
            "scope": "memory:read memory:write",
        }
        claims.update(overrides)
        return {k: v for k, v in claims.items() if v is not None}  # None: leave the claim out

    def token(self, *, kid: str = "rsa-1", key: Any = None, alg: str | None = None, **claims: Any) -> str:
        """A token signed with the key of `kid` (or `key`), claims as `claims()` with overrides."""
        own_key, own_alg = self.keys.get(kid, (None, "RS256"))
        return jwt.encode(self.claims(**claims), key or own_key, algorithm=alg or own_alg, headers={"kid": kid})

    def release(self) -> None:
        self._release.set()

    def close(self) -> None:
        self.release()
        self._server.shutdown()
        self._server.server_close()


def main() -> None:
    parser = argparse.ArgumentParser(description="A loopback OIDC issuer for the client tests")
    parser.add_argument("--port-file", required=True)
    args = parser.parse_args()
    issuer = Issuer()
    with open(args.port_file + ".tmp", "w") as out:
        out.write(issuer.url.rsplit(":", 1)[1])
    os.replace(args.port_file + ".tmp", args.port_file)
    threading.Event().wait()  # until killed


if __name__ == "__main__":
    main()
