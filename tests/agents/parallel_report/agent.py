"""``report``: a ParallelAgent of ``weather_branch`` and ``news_branch``, then ``merger``.

The merger's request carries the branches' outputs in the order the branches finished
(ADK appends each branch's events to the session as they complete), so it depends on
which branch the model answered first. (ADK 2 deprecates ParallelAgent and SequentialAgent
in favour of Workflow, but agents in the wild use them.)
"""

from __future__ import annotations

import warnings

from google.adk.agents import LlmAgent, ParallelAgent, SequentialAgent

MODEL = "gemini-2.0-flash"

weather_branch = LlmAgent(
    name="weather_branch", model=MODEL, instruction="You are weather_branch. Report the weather."
)
news_branch = LlmAgent(
    name="news_branch", model=MODEL, instruction="You are news_branch. Report the news."
)
merger = LlmAgent(
    name="merger", model=MODEL, instruction="You are merger. Merge the reports into one."
)

with warnings.catch_warnings():  # ADK 2 deprecates them for Workflow; agents still use them
    warnings.simplefilter("ignore", DeprecationWarning)
    root_agent = SequentialAgent(
        name="report",
        sub_agents=[
            ParallelAgent(name="research", sub_agents=[weather_branch, news_branch]),
            merger,
        ],
    )
