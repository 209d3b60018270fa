"""The thermostat team after the fix: the sub-agent keeps degrees Celsius."""

from tests.agents.thermostat_team import build

root_agent = build("Celsius")
