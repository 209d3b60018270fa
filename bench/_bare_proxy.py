"""A pass-through HTTP proxy without rec's recording: the floor of rec's proxy stack.

The same parts rec's recorder forwards with (aiohttp's low-level server and its client
with a keep-alive pool, on uvloop where installed, ``TCP_NODELAY`` and ``TCP_QUICKACK`` on
the upstream socket through rec's own ``acknowledge_promptly``, the response streamed back
as it arrives), and nothing else: no journal, no secret scan, no exchange built, no
checks. What rec's recording costs beyond this is rec's own share; what this costs beyond
the direct path is the floor of any proxy built on these parts, on this machine::

    python bench/_bare_proxy.py --upstream http://127.0.0.1:PORT

prints its URL on the first line and forwards until killed.
"""

from __future__ import annotations

import argparse
import asyncio

import aiohttp
from aiohttp import web

from recorder._traffic import acknowledge_promptly

_HOP_BY_HOP = frozenset(
    {"connection", "keep-alive", "transfer-encoding", "content-length", "host", "upgrade"}
)


async def _serve(upstream: str) -> None:
    session = aiohttp.ClientSession(
        connector=aiohttp.TCPConnector(limit=0, ttl_dns_cache=None),
        auto_decompress=False,
        skip_auto_headers=("user-agent", "accept-encoding", "content-type"),
    )

    async def forward(request: web.BaseRequest) -> web.StreamResponse:
        body = await request.read()
        headers = {k: v for k, v in request.headers.items() if k.lower() not in _HOP_BY_HOP}
        async with session.request(
            request.method, upstream + request.raw_path, data=body, headers=headers
        ) as upstream_response:
            acknowledge_promptly(upstream_response)
            response = web.StreamResponse(status=upstream_response.status)
            for name, value in upstream_response.headers.items():
                if name.lower() not in _HOP_BY_HOP:
                    response.headers.add(name, value)
            await response.prepare(request)
            async for chunk in upstream_response.content.iter_any():
                await response.write(chunk)
            await response.write_eof()
            return response

    server = web.Server(forward)
    runner = web.ServerRunner(server)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    sockets = server_sockets = getattr(site._server, "sockets", None) or []  # noqa: SLF001
    port = server_sockets[0].getsockname()[1] if sockets else 0
    print(f"http://127.0.0.1:{port}", flush=True)
    try:
        await asyncio.Event().wait()
    finally:
        await runner.cleanup()
        await session.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--upstream", required=True)
    args = parser.parse_args()
    try:
        import uvloop
    except ImportError:
        asyncio.run(_serve(args.upstream.rstrip("/")))
    else:
        uvloop.run(_serve(args.upstream.rstrip("/")))


if __name__ == "__main__":
    main()
