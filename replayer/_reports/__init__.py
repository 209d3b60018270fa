"""Reports: console text, JUnit XML, HTML and ADK-shaped EvalSetResult JSON.

Import each from its module (``console``, ``junit``, ``html``, ``results``, ``set_report``,
``timeline``, ``progress``): a command imports only the reports it writes.
"""
