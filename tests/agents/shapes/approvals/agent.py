"""A long-running tool: ``ask_for_approval`` returns a pending ticket; the user resumes the
run by sending the approval as a function response, and the agent then reimburses."""

from __future__ import annotations

from typing import Any

from google.adk.tools.long_running_tool import LongRunningFunctionTool

from tests.agents.shapes.toolbox import llm_agent


def ask_for_approval(amount: float) -> dict[str, Any]:
    """Ask a manager to approve a reimbursement.

    Args:
        amount: The amount in EUR.
    """
    return {"status": "pending", "amount": amount, "ticket": "T-1"}


def reimburse(amount: float) -> dict[str, Any]:
    """Pay a reimbursement.

    Args:
        amount: The amount in EUR.
    """
    return {"status": "paid", "amount": amount}


root_agent = llm_agent(
    name="approvals",
    description="Handles reimbursements.",
    instruction="Ask for approval with ask_for_approval, then reimburse once approved.",
    tools=[LongRunningFunctionTool(ask_for_approval), reimburse],
)
