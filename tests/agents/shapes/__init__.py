"""Small ADK agents of the shapes real agents use (AgentTool, Loop, Parallel, callbacks, ...).

Each subpackage is an agent folder ``adk eval`` and ``rec replay`` load (``root_agent``);
``tests/agents/shapes_brain.py`` scripts the stand-in model for all of them. ``adk eval``
imports each folder as a top-level package; the tools and model they share come from
``tests.agents.shapes.toolbox`` by its full name (the repository is on ``PYTHONPATH``).
"""
