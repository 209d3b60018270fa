"""Real ADK agents (and the RuleBrain rules that drive them) used by rec's tests."""
