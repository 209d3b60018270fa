"""Serve ``tests/agents/a2a_served``'s agent with ADK's ``to_a2a`` and uvicorn on
127.0.0.1:PORT until stopped: ``python -m tests.agents.a2a_served PORT``."""

from __future__ import annotations

import sys


def main(port: int) -> None:
    import uvicorn
    from google.adk.a2a.utils.agent_to_a2a import to_a2a

    from tests.agents.a2a_served.agent import root_agent

    app = to_a2a(root_agent, host="127.0.0.1", port=port)
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning")


if __name__ == "__main__":
    main(int(sys.argv[1]))
