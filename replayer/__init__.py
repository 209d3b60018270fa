"""rec's playback and judgement: the replay server, the model source of each record mode,
the agent runners, mock tools, the scorers (ADK's numbers to the bit) and the reports.

Internal: every module is private. Users import from :mod:`rec`.
"""
