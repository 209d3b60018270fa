"""Write files so that a reader never sees half of one.

Every file rec writes goes through :func:`write_atomic`: the bytes go to a temporary
file in the same folder, are flushed and fsynced, and the temporary file is renamed
over the target (an atomic operation on POSIX and Windows). :func:`locked` takes a
cross-process lock beside the target so that concurrent writers (pytest-xdist
workers, two recorders) queue instead of clobbering each other.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

from filelock import FileLock

__all__ = ["locked", "write_atomic"]


def write_atomic(path: str | Path, data: bytes | str) -> Path:
    """Write ``data`` to ``path`` atomically (temporary file + rename).

    Creates the parent folder if needed. Returns the path written.
    """
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    payload = data.encode("utf-8") if isinstance(data, str) else data
    fd, tmp_name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(payload)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp_name, 0o666 & ~_UMASK)
        os.replace(tmp_name, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp_name)
        raise
    return target


def _read_umask() -> int:
    current = os.umask(0o022)
    os.umask(current)
    return current


_UMASK = _read_umask()  # read once at import: os.umask is process-wide, not thread-safe


@contextlib.contextmanager
def locked(
    path: str | Path, *, timeout: float = 60.0, lock_dir: str | Path | None = None
) -> Iterator[None]:
    """Hold a cross-process lock for ``path``.

    The lock is a ``.<name>.lock`` file beside ``path``, or in ``lock_dir`` when given
    (recordings keep theirs in ``.rec/`` so the folder stays clean).
    """
    target = Path(path)
    folder = Path(lock_dir) if lock_dir is not None else target.parent
    folder.mkdir(parents=True, exist_ok=True)
    lock = FileLock(str(folder / f".{target.name}.lock"), timeout=timeout)
    with lock:
        yield
