"""The cassette's one writer: its Live media apart, then the cassette, then its side index.

:func:`save_cassette` writes a cassette so that a reader never sees half of one
(``cassettes._atomic_write``): large inline media of its Live sessions goes first to
content-addressed files beside it (``cassettes._live_media``), the cassette names them, and
its side index (``cassettes._side_index``) follows it into ``.rec/``. Every path that saves
a cassette (finalisation, ``rec import``) comes through here.
"""

from __future__ import annotations

import logging
import os
import stat
from pathlib import Path

from cassettes._atomic_write import write_atomic
from cassettes._cassette import (
    Cassette,
    JsonBody,
    LazyExchanges,
    RecordedRequest,
    request_bucket,
)
from cassettes._file_names import side_index_file
from cassettes._first_user import first_user_key
from cassettes._json_text import dump_model_indent2_bytes
from cassettes._live_media import store_media_apart, write_media
from cassettes._side_index import side_index_text

__all__ = ["save_cassette"]

log = logging.getLogger(__name__)


def save_cassette(cassette: Cassette, path: str | Path) -> Path:
    """Write a cassette atomically, then its side index (``cassettes._side_index``).

    Large inline media of its Live sessions is written first, to content-addressed files
    beside it (``cassettes._live_media``), and the cassette refers to them.

    Callers scan for secrets first (see ``redaction``). The side index is a cache: when it
    cannot be written the cassette stands alone (the next load scans it).
    """
    exchanges = list(cassette.exchanges)
    if isinstance(cassette.exchanges, LazyExchanges):
        cassette = cassette.model_copy(update={"exchanges": exchanges})
    if cassette.live is not None:
        # Large Live media goes to files beside the cassette, written before it names them.
        live, media = store_media_apart(cassette.live, path)
        write_media(path, media)
        cassette = cassette.model_copy(update={"live": live})
    data = dump_model_indent2_bytes(cassette) + b"\n"
    rows = [
        (
            e.id,
            e.origin,
            e.request.url,
            request_bucket(e.request),
            e.recorded_at,
            e.duration_ms,
            _first_user_of(e.request),
        )
        for e in exchanges
    ]
    index = side_index_text(data, rows)
    target = write_atomic(path, data)
    try:
        if index is not None:
            mode = stat.S_IMODE(os.stat(target).st_mode)
            write_atomic(side_index_file(target), index, mode=mode)
    except OSError as exc:  # an old index left behind no longer matches: it is ignored
        log.debug("no side index written for %s: %s", target, exc)
    return target


def _first_user_of(request: RecordedRequest) -> str:
    """The digest of the request's first user turn ('' for none), for the side index."""
    body = request.body
    return first_user_key(body.value) if isinstance(body, JsonBody) else ""
