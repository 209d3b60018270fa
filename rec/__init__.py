"""The `rec` command line. Nothing imports this package."""
