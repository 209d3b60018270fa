"""``python -m rec.standin``: run the stand-in Gemini API from a shell."""

from rec.standin.server import main

main()
