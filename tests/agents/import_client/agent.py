"""An agent whose module creates its google-genai client at import (as Google's google_search
sample does), and pins its model to it: replay must have the placeholder key and the
proxy's base URL in place before this module is imported.
"""

from __future__ import annotations

from google import genai
from google.adk.agents import LlmAgent
from google.adk.models import Gemini

client = genai.Client()

root_agent = LlmAgent(
    name="pinned_client_agent",
    model=Gemini(model="gemini-2.0-flash", client=client),
    instruction="Answer in one short sentence.",
)
