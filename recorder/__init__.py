"""rec's live capture: the loopback server, the forwarder, the crash-safe journal, the
recording lifecycle (``rec start`` / ``stop`` / ``status``), the ADK capture plugin, the seams
that see tools' own traffic, and the importers that turn sessions into EvalSets.

Internal: every module is private. Users import from :mod:`rec`.
"""
