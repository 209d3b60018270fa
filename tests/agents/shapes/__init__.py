"""Small ADK agents of the shapes real agents use (AgentTool, Loop, Parallel, callbacks, ...).

Each subpackage is an agent folder ``adk eval`` and ``rec replay`` load (``root_agent``);
``tests/agents/shapes_brain.py`` scripts the stand-in model for all of them. Each folder is
self-contained (``adk eval`` imports it as a top-level package).
"""
