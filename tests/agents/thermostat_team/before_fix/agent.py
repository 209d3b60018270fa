"""The thermostat team before the fix: the sub-agent converts to Fahrenheit."""

from tests.agents.thermostat_team import build

root_agent = build("Fahrenheit")
