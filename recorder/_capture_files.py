"""The JSON-lines files rec's capture appends to while a recording runs.

The model exchanges go to the journal (``journal``), the tools' own HTTP calls and the MCP
sessions to files named after the ADK capture file ``.rec/NAME.adk.jsonl``
(:func:`evalfiles.adk_capture_path`), which is the one path rec's ADK plugin is told:
``recorder._recording_state.CaptureFiles`` names them. Each file holds one pydantic model per line,
appended and flushed as it completes (:func:`append_json_line`), and is read back with a
line torn by a crash skipped (:func:`read_json_lines`).
"""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel, ValidationError

from cassettes._atomic_write import file_mode, private_folder
from cassettes._errors import InputError

__all__ = [
    "append_json_line",
    "append_text",
    "read_json_lines",
    "read_json_lines_and_text",
]

log = logging.getLogger(__name__)

_Line = TypeVar("_Line", bound=BaseModel)


def append_json_line(path: Path, line: BaseModel, *, what: str) -> bool:
    """Append ``line`` as one JSON line and flush it; False (and a warning) if it failed.

    A capture file that cannot be written never breaks the user's agent or tool: the
    failure is logged, naming ``what`` the file holds, and the caller counts the loss.
    """
    return append_text(path, line.model_dump_json(exclude_none=True) + "\n", what=what)


def append_text(path: Path, text: str, *, what: str) -> bool:
    """Append ``text`` to ``path`` in one write; False (and a warning) if it failed.

    A capture file holds prompts, answers and session state, so it is created private like
    every file rec writes (``0600`` or ``REC_FILE_MODE``, in private folders); a file that
    exists keeps its mode.
    """
    try:
        private_folder(path.parent)
        created = not path.exists()
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, file_mode())
        try:
            if created:
                os.fchmod(fd, file_mode())  # the umask filtered os.open's mode
            os.write(fd, text.encode("utf-8"))
        finally:
            os.close(fd)
    except (OSError, InputError) as exc:
        log.warning("rec: cannot write the %s %s (%s)", what, path, exc)
        return False
    return True


def read_json_lines(path: str | Path, model: type[_Line], *, what: str) -> tuple[list[_Line], int]:
    """The lines of ``path`` as ``model`` (missing file: none), and how many were torn.

    A line that does not validate (cut short by a crash mid-write) is skipped with a
    warning naming the file, the line number and ``what`` the file holds.
    """
    lines, torn = read_json_lines_and_text(path, model, what=what)
    return [line for line, _ in lines], torn


def read_json_lines_and_text(
    path: str | Path, model: type[_Line], *, what: str
) -> tuple[list[tuple[_Line, bytes]], int]:
    """:func:`read_json_lines`, each line with the JSON text it was read from."""
    file = Path(path)
    if not file.exists():
        return [], 0
    lines: list[tuple[_Line, bytes]] = []
    torn = 0
    with open(file, "rb") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                lines.append((model.model_validate_json(line), line))
            except ValidationError:
                torn += 1
                log.warning("%s:%d: skipped an incomplete %s line", file, number, what)
    return lines, torn
