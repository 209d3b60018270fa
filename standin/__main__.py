"""``python -m standin``: run the stand-in Gemini API from a shell."""

from .server import main

main()
