"""Reads of the clock, randomness and ids by an agent's code, seen one by one.

While :func:`reads_patched` is entered, every wall-clock read (the clock patch beside this module),
``uuid.uuid4()``, draw of ``random``'s module functions and ``secrets`` call goes through
:func:`_take`. A read counts when the asking context runs an invocation (a
:class:`ReadSession` is set: :func:`begin_invocation`) and the code asking is the
agent's own, not ADK's, google-genai's or a library under them (:func:`_agent_reading`).
Such a read goes to the session, which records it (:class:`RecordingReads`, while
recording) or serves it (replay); every other read is the real one.

The session keeps reads per *reader* (``cassettes._reads``): ADK's callbacks move the
reader as an invocation runs (:func:`enter_reader`, :func:`enter_tool`,
:func:`leave_tool`). ``random`` and ``secrets`` are reached through their module functions
(``random.random()``, ``random.randint(...)``, ``secrets.token_hex()``; a function taken
with ``from random import random`` before the patch is not seen); ``uuid.uuid4`` is seen
however it was imported. ``time.monotonic`` and ``time.perf_counter`` are never touched.
"""

from __future__ import annotations

import contextvars
import os
import random
import secrets
import threading
import types
import uuid
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from typing import TypeVar

from cassettes._reads import InvocationReads, Read, ReadKind
from recorder._traffic._clock_patch import clock_patched, set_read_hook
from recorder._traffic._compat import caller_frame, module_generators
from recorder._traffic._shared_patch import SharedPatch

_Value = TypeVar("_Value", int, float, str)

_SESSION: contextvars.ContextVar[ReadSession | None] = contextvars.ContextVar(
    "rec_read_session", default=None
)
_READER: contextvars.ContextVar[str] = contextvars.ContextVar("rec_reader", default="run")
"""The main flow's reader (moved by the agent and model callbacks)."""
_TOOL: contextvars.ContextVar[str | None] = contextvars.ContextVar("rec_tool_reader", default=None)
"""The reader of the tool call the context runs (None: none)."""

# Modules that carry a read from the agent's code to the clock or the generator: skipped
# when finding who asked.
_PLUMBING = frozenset(
    {"random", "secrets", "uuid", "time_machine", __name__, "recorder._traffic._clock_patch"}
)
# Top-level packages whose reads are never the agent's: the frameworks, rec, the standard
# library's machinery and the network stack under them.
_NOT_AGENT = frozenset(
    {
        "google", "rec", "recorder", "replayer", "cassettes", "asyncio", "concurrent",
        "threading", "logging", "tempfile", "email", "http", "ssl", "socket", "selectors",
        "aiohttp", "httpx", "httpcore", "h11", "h2", "anyio", "sniffio", "urllib3", "requests",
        "pydantic", "pydantic_core", "opentelemetry", "websockets", "mcp", "a2a", "starlette",
        "uvicorn", "fastapi", "sqlalchemy", "tenacity", "grpc", "litellm", "openai",
        "anthropic", "multidict", "yarl", "uvloop", "importlib", "zipfile", "shutil", "typing",
        "contextlib", "functools", "json", "warnings", "traceback", "inspect", "weakref",
    }
)  # fmt: skip


class ReadSession:
    """The reads of one invocation: labels its readers, and takes each read."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._counts: dict[str, int] = {}

    def label(self, base: str) -> str:
        """The next reader named ``base`` in this invocation (``model:NAME#2``)."""
        with self._lock:
            count = self._counts.get(base, 0)
            self._counts[base] = count + 1
        return f"{base}#{count}"

    def take(self, reader: str, kind: ReadKind, real: Callable[[], _Value]) -> _Value:
        """The value ``reader`` reads (``real`` gives the one it would read unrecorded)."""
        raise NotImplementedError


class RecordingReads(ReadSession):
    """While recording: each read is the real one, kept in order per reader."""

    def __init__(self, invocation_id: str) -> None:
        super().__init__()
        self.reads = InvocationReads(invocation_id=invocation_id, zone=local_zone())

    def take(self, reader: str, kind: ReadKind, real: Callable[[], _Value]) -> _Value:
        value = real()
        with self._lock:
            self.reads.readers.setdefault(reader, []).append(Read(kind=kind, value=value))
        return value


def local_zone() -> str | None:
    """The process's local time zone as a ``TZ`` value (None when it cannot be told)."""
    zone = os.environ.get("TZ")
    if zone:
        return zone
    try:
        link = os.readlink("/etc/localtime")
    except OSError:
        return None
    _, found, name = link.partition("zoneinfo/")
    return name if found and name else None


# --- the reader of a context --------------------------------------------------------------


def begin_invocation(session: ReadSession) -> None:
    """The current context runs an invocation whose reads go to ``session``."""
    _SESSION.set(session)
    _READER.set("run")
    _TOOL.set(None)


def end_invocation() -> None:
    """The current context's invocation is over: its reads are real again."""
    _SESSION.set(None)


def current_session() -> ReadSession | None:
    """The session of the current context's invocation, if any."""
    return _SESSION.get()


def enter_reader(base: str) -> None:
    """The main flow moves on to the next reader named ``base`` (an agent or model call)."""
    session = _SESSION.get()
    if session is not None and _TOOL.get() is None:
        _READER.set(session.label(base))


def enter_tool(name: str) -> None:
    """A call of tool ``name`` starts in the current context (a run started inside it reads
    as the tool)."""
    session = _SESSION.get()
    if session is not None and _TOOL.get() is None:
        _TOOL.set(session.label(f"tool:{name}"))


def in_tool() -> bool:
    """Whether the current context runs a tool call of an invocation."""
    return _TOOL.get() is not None


def leave_tool() -> None:
    """The tool call of the current context is over."""
    _TOOL.set(None)


def _agent_reading() -> bool:
    """Whether the code asking (past the read's own plumbing) is the agent's."""
    frame = caller_frame(2)
    while frame is not None and frame.f_globals.get("__name__", "") in _PLUMBING:
        frame = frame.f_back
    if frame is None:
        return False
    module = str(frame.f_globals.get("__name__", ""))
    return module.partition(".")[0] not in _NOT_AGENT


def _take(kind: ReadKind, real: Callable[[], _Value]) -> _Value:
    session = _SESSION.get()
    if session is None or not _agent_reading():
        return real()
    return session.take(_TOOL.get() or _READER.get(), kind, real)


# --- the patches --------------------------------------------------------------------------


def _clock_read(otherwise: Callable[[], int]) -> int:
    return _take("clock", otherwise)


class _ReadRandom(random.Random):
    """``random``'s module instance, its draws taken through :func:`_take`. (The base
    class is named, not ``super()``: a method bound while patched stays callable after.)"""

    def random(self) -> float:
        return _take("random", lambda: random.Random.random(self))

    def getrandbits(self, k: int, /) -> int:
        return _take("bits", lambda: random.Random.getrandbits(self, k))


class _ReadSystemRandom(random.SystemRandom):
    """``secrets``' generator, its draws taken through :func:`_take`."""

    def random(self) -> float:
        return _take("random", lambda: random.SystemRandom.random(self))

    def getrandbits(self, k: int, /) -> int:
        return _take("bits", lambda: random.SystemRandom.getrandbits(self, k))

    def randbytes(self, n: int) -> bytes:
        drawn = _take("bytes", lambda: random.SystemRandom.randbytes(self, n).hex())
        return bytes.fromhex(drawn)


_REAL_UUID4 = types.FunctionType(uuid.uuid4.__code__, uuid.__dict__, "uuid4")


def _uuid4() -> uuid.UUID:
    return uuid.UUID(hex=_take("uuid4", lambda: _REAL_UUID4().hex))


def _uuid4_code() -> types.CodeType:
    """Code for ``uuid.uuid4`` that asks :func:`_uuid4` (swapped into the function itself,
    so ``from uuid import uuid4`` taken earlier is seen too)."""

    def uuid4() -> uuid.UUID:
        found: uuid.UUID = __rec_uuid4__()  # type: ignore[name-defined]  # noqa: F821
        return found

    return uuid4.__code__


_PATCHES = SharedPatch()
"""Process-wide: the patches in place while at least one block needs them."""


def _swap_class(instance: object, cls: type, undo: ExitStack) -> None:
    before = type(instance)
    instance.__class__ = cls
    undo.callback(setattr, instance, "__class__", before)


def _set(owner: object, name: str, value: object, undo: ExitStack) -> None:
    undo.callback(setattr, owner, name, getattr(owner, name))
    setattr(owner, name, value)


def _apply() -> ExitStack:
    undo = ExitStack()
    generator, system = module_generators()
    _swap_class(generator, _ReadRandom, undo)
    for name in ("random", "getrandbits"):
        _set(random, name, getattr(generator, name), undo)
    _swap_class(system, _ReadSystemRandom, undo)
    _set(secrets, "randbits", system.getrandbits, undo)
    uuid.__dict__["__rec_uuid4__"] = _uuid4
    undo.callback(uuid.__dict__.pop, "__rec_uuid4__", None)
    _set(uuid.uuid4, "__code__", _uuid4_code(), undo)
    set_read_hook(_clock_read)
    undo.callback(set_read_hook, None)
    return undo


@contextmanager
def reads_patched() -> Iterator[None]:
    """Route the clock, ``random``, ``secrets`` and ``uuid.uuid4`` through the current
    context's session while the block runs; any number of blocks may be in at once.

    Raises:
        RuntimeError: freezegun has frozen the clock (time-machine cannot start then).
    """
    with clock_patched(), _PATCHES.active(lambda: _apply().close):
        yield
