"""Run rec's stand-in Gemini API as a process, answering with an example's rule set.

    python examples/standin_server.py --brain home_assistant.standin_rules:home_brain \\
        --routes home_assistant.standin_rules:weather_routes

prints ``http://127.0.0.1:PORT`` on its first line and serves until interrupted (Ctrl-C or
SIGTERM). ``--brain`` and ``--routes`` name ``module:function`` under ``examples/``; the
stand-in itself is rec's ``standin`` package. Point an agent
at it with ``GOOGLE_GEMINI_BASE_URL=<url> GOOGLE_API_KEY=<any fake key>``, or record
through rec with ``rec start --upstream <url> -- ...`` (see ``examples/record.py``).
"""

from __future__ import annotations

import argparse
import importlib
import signal
import sys
import threading
from pathlib import Path
from typing import Any

EXAMPLES = Path(__file__).resolve().parent
sys.path[:0] = [str(EXAMPLES)]

from rec.standin.server import StandinGemini  # noqa: E402


def _resolve(spec: str) -> Any:
    module_name, _, function_name = spec.partition(":")
    return getattr(importlib.import_module(module_name), function_name)


def main(argv: list[str] | None = None) -> None:
    """Start the stand-in, print its URL, serve until SIGINT/SIGTERM."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--brain", required=True, help="module:function returning a responder")
    parser.add_argument(
        "--routes",
        action="append",
        default=[],
        help="module:function returning {path: responder} (repeatable)",
    )
    args = parser.parse_args(argv)
    routes: dict[str, Any] = {}
    for spec in args.routes:
        routes.update(_resolve(spec)())
    done = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: done.set())
    with StandinGemini(_resolve(args.brain)(), routes=routes) as server:
        print(server.url, flush=True)
        try:
            done.wait()
        except KeyboardInterrupt:
            pass


if __name__ == "__main__":
    main()
