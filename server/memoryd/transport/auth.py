"""Who is calling: maps the call's credentials to a tenant."""

from __future__ import annotations

import grpc

from memoryd.domain.models import DEFAULT_TENANT


class Authenticator:
    """Without configured tokens every caller is the default tenant.

    The server refuses to listen beyond loopback in that mode (see app.py), so an
    unauthenticated deployment is reachable only from the same machine.
    """

    def tenant(self, context: grpc.aio.ServicerContext) -> str:
        return DEFAULT_TENANT
