"""The one table of what a secret is, and the one function that masks it in text.

A secret is known by its shape (Google API keys, OAuth access and refresh tokens, JWTs,
``sk_live_``/``sk-`` keys, GitHub, Slack, AWS, PEM private keys, an ``api-key:`` header's
value, URL passwords, ...), by its name (the header, query parameter, flag or variable
that carries it: :func:`is_secret_name`; in a URL: :func:`split_url`) or by its value
(one a recording saw sent as a credential: :class:`CredentialRegistry`), in each of the
spellings rec looks for (as is, percent-encoded, hex, base64: :func:`spellings_of`).
:func:`mask`, through which every log line, message and report rec writes passes, masks
with this table; :mod:`cassettes._secret_scan` finds with it and
:mod:`cassettes._redaction` removes and refuses with it.
"""

from __future__ import annotations

import base64
import contextlib
import contextvars
import functools
import json
import re
import threading
from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from typing import Any, AnyStr, NamedTuple
from urllib.parse import parse_qsl, quote, unquote, urlencode, urlsplit, urlunsplit

from cassettes._secret_walk import map_strings

__all__ = [
    "API_KEY",
    "BYTES_KEYS",
    "BYTES_OPENING_KEYS",
    "CREDENTIALS_HEADER",
    "INLINE_DATA_KEYS",
    "JSON_ESCAPED",
    "MIN_SECRET_LENGTH",
    "TEXT_HINTS",
    "URL_PASSWORD",
    "CredentialRegistry",
    "KnownSpellings",
    "credential_scope",
    "credentials_from_header",
    "credentials_header_value",
    "current_credentials",
    "found_at",
    "has_secret_param",
    "has_url_password",
    "is_masked",
    "is_secret_name",
    "known_credentials",
    "mask",
    "mask_json",
    "percent_decoded_holds",
    "remember_credentials",
    "shape_matches",
    "SplitUrl",
    "spellings_of",
    "split_url",
    "url_credentials",
    "without_credentials",
]

MIN_SECRET_LENGTH = 8
"""Shorter credential values are not searched for in bodies: they would match ordinary text."""

# Every pattern starts where no base64 or key character precedes it: long base64 blobs
# (thoughtSignature, inline data) can contain "AIza" or "sk-" by chance, never after a
# quote or a space.
_START = r"(?<![0-9A-Za-z+/_-])"
_END = r"(?![0-9A-Za-z_-])"
_GITHUB = r"(?:gh[pousr]_[0-9A-Za-z]{36,}|github_pat_[0-9A-Za-z_]{22,})"
_JWT = r"eyJ[0-9A-Za-z_-]{8,}\.eyJ[0-9A-Za-z_-]{8,}\.[0-9A-Za-z_-]*"
# Azure OpenAI keys are 32 hex digits, no prefix: found as the header that sends them.
_API_KEY_HEADER = (
    r"(?<![0-9A-Za-z_-])(?:[Xx]-)?(?:[Aa]pi|API)-(?:[Kk]ey|KEY)[\"']?\s*[:=]\s*[\"']?"
    r"[0-9A-Za-z_-]{16,}"
)
_URL_USERINFO = r"(?<=[A-Za-z0-9+.-])://[^\s/?#@:\"']*:[^\s/?#@\"']+@"
"""scheme://user:password@host: the password part."""
_SHAPES: tuple[tuple[str, str, str], ...] = (
    # (kind, pattern, marker prefix)
    ("Google API key", rf"{_START}AIza[0-9A-Za-z_-]{{35}}{_END}", "AIza"),
    ("OAuth access token", rf"{_START}ya29\.[0-9A-Za-z_\-.]+", "ya29."),
    ("OAuth refresh token", rf"{_START}1//0[0-9A-Za-z_-]{{20,}}", "1//"),
    # A bearer credential is token68 (RFC 7235). Requiring 16+ characters keeps prose such
    # as "Bearer tokens expire" from counting while catching every real token.
    ("bearer token", r"Bearer\s+[0-9A-Za-z._~+/-]{16,}=*", "Bearer "),
    ("JSON web token", _START + _JWT, "eyJ"),
    ("Stripe secret key", rf"{_START}(?:sk|rk)_(?:live|test)_[0-9A-Za-z]{{16,}}", "sk_"),
    ("secret key", rf"{_START}sk-[0-9A-Za-z_-]{{20,}}", "sk-"),
    ("GitHub token", _START + _GITHUB, "gh"),
    ("GitLab token", rf"{_START}glpat-[0-9A-Za-z_-]{{20,}}", "glpat-"),
    ("Slack token", rf"{_START}xox[abposr]-[0-9A-Za-z-]{{10,}}", "xox"),
    ("AWS access key", rf"{_START}(?:AKIA|ASIA)[0-9A-Z]{{16}}(?![0-9A-Za-z])", "AKIA"),
    ("private key", r"-----BEGIN [A-Z ]*PRIVATE KEY-----", "-----BEGIN "),
    ("OAuth client secret", rf"{_START}GOCSPX-[0-9A-Za-z_-]{{20,}}", "GOCSPX-"),
    ("npm token", rf"{_START}npm_[0-9A-Za-z]{{36}}{_END}", "npm_"),
    ("Hugging Face token", rf"{_START}hf_[0-9A-Za-z]{{30,}}{_END}", "hf_"),
    ("SendGrid key", rf"{_START}SG\.[0-9A-Za-z_-]{{16,}}\.[0-9A-Za-z_-]{{16,}}", "SG."),
    ("Shopify token", rf"{_START}shp(?:at|ss|ca|pa)_[0-9a-fA-F]{{32}}", "shp"),
    ("API key header", _API_KEY_HEADER, "api-key: "),
    ("URL password", _URL_USERINFO, ""),
)
_SHAPE = re.compile("|".join(f"(?P<s{n}>{pattern})" for n, (_, pattern, _m) in enumerate(_SHAPES)))
"""Every shape in one alternation, run only where :data:`_HINT` found a start."""
_HINT = re.compile(
    r"AIza|ya29\.|1//|Bearer|eyJ|_live_|_test_|sk-|gh[pousr]_|github_pat_|glpat-|xox|AKIA|ASIA"
    r"|PRIVATE KEY|GOCSPX-|npm_|hf_|SG\.|shp|pi-[Kk]ey|PI-KEY|://"
)
"""The literal start of every shape: one cheap pass (a few µs for a paragraph; Python's
engine is slow on the full alternation) rules out nearly every string."""
_KIND = {f"s{n}": kind for n, (kind, _, _m) in enumerate(_SHAPES)}
_MARKER = {f"s{n}": marker for n, (_, _p, marker) in enumerate(_SHAPES)}

_LONG = 64 * 1024
"""From this length on a string is scanned from its literal hints (:func:`shape_matches`)."""
_HINT_LITERALS = (
    *("AIza", "ya29.", "1//", "Bearer", "eyJ", "_live_", "_test_", "sk-", "github_pat_"),
    *("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "glpat-", "xox", "AKIA", "ASIA", "GOCSPX-"),
    *("npm_", "hf_", "SG.", "shp", "pi-Key", "pi-key", "PI-KEY", "://", "-----BEGIN "),
)
""":data:`_HINT` spelled out as literals, plus the start of a private key block."""
_HINT_OFFSETS = (0, 1, 2, 3)
"""Where a shape can start before its hint: ``rk_live_`` (2), ``Api-Key`` (1),
``X-Api-Key`` (3); every other shape starts at its hint."""


API_KEY = re.compile(_SHAPES[0][1])
"""A whole Google API key: the one shape that counts inside base64 bytes too."""
URL_PASSWORD = re.compile(_URL_USERINFO)
TEXT_HINTS = tuple(h for h in (*_HINT_LITERALS, "PRIVATE KEY") if h != "://")
"""Every literal :data:`_HINT` alternates, spelled out, but ``://``: every URL has one, so
the one shape it starts (:data:`URL_PASSWORD`) is searched for instead. A text without
any of these, a ``name=value`` parameter and a URL password holds no shape."""
BYTES_KEYS = frozenset({"thoughtSignature", "thought_signature", "base64"})
"""Keys whose string values are base64 bytes: random bytes spell hints by chance, so only
a whole :data:`API_KEY` counts there, and known credentials are looked for decoded."""
INLINE_DATA_KEYS = ("inlineData", "inline_data")
"""Keys of an object whose ``data`` is base64 bytes."""
BYTES_OPENING_KEYS = (*sorted(BYTES_KEYS), *INLINE_DATA_KEYS)
"""Every key that opens a base64 bytes value: as its value, or as its object's ``data``."""
JSON_ESCAPED = re.compile(r'["\\\x00-\x1f]')
"""The characters JSON text spells differently than the string holding them."""


def found_at(
    text: AnyStr,
    literals: Sequence[AnyStr],
    pattern: re.Pattern[AnyStr],
    start: int = 0,
    end: int | None = None,
    *,
    find: Callable[[AnyStr, int, int], int] | None = None,
) -> bool:
    """Whether ``pattern`` matches at an occurrence of one of ``literals`` (where it can
    start) in ``text[start:end]``: ``find`` (``text.find`` unless given) skips to each
    occurrence, where the engine would try the pattern at every position (an alternation
    or a lookbehind: seconds on a 50 MB string)."""
    search = text.find if find is None else find
    stop = len(text) if end is None else end
    match = pattern.match
    for literal in literals:
        at = search(literal, start, stop)
        while at >= 0:
            if match(text, at):
                return True
            at = search(literal, at + 1, stop)
    return False


def _find_all(text: str, literal: str) -> Iterator[int]:
    at = text.find(literal)
    while at >= 0:
        yield at
        at = text.find(literal, at + 1)


def shape_matches(text: str) -> Iterator[re.Match[str]]:
    """``_SHAPE.finditer(text)``, in time proportional to the text.

    Python's engine tries the whole alternation at every position (about a second a
    megabyte), so a long string (a large body) is matched only where a shape can start:
    at and just before each occurrence of a hint literal, found with ``str.find``. Matches
    are leftmost and non-overlapping, as ``finditer`` gives them.
    """
    if len(text) < _LONG:
        if _HINT.search(text):
            yield from _SHAPE.finditer(text)
        return
    starts = sorted(
        {
            at - offset
            for literal in _HINT_LITERALS
            for at in _find_all(text, literal)
            for offset in _HINT_OFFSETS
            if at - offset >= 0
        }
    )
    end = 0
    for start in starts:
        if start < end:
            continue
        match = _SHAPE.match(text, start)
        if match is not None and match.end() > match.start():
            end = match.end()
            yield match


def _shapes_masked(text: str) -> str:
    """``text`` with every credential shape replaced by its marker."""
    parts: list[str] = []
    end = 0
    for match in shape_matches(text):
        parts += (text[end : match.start()], _shape_marker(match))
        end = match.end()
    return "".join(parts) + text[end:] if parts else text


_SECRET_NAME = re.compile(
    r"key(?![a-z])|token(?!s)|secret|passw|auth(?!or)|credential|cookie|signature|^sig$",
    re.IGNORECASE,
)
_NOT_SECRET_NAME = re.compile(r"(?:page|sync|continuation|resume)token", re.IGNORECASE)
_SECRET_WORDS = frozenset({"bearer", "jwt", "pass", "passphrase", "pat", "pwd"})
"""Credential words too short to look for inside a longer word (``pat`` in ``path``)."""
_WORD = re.compile(r"[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])")
# A query parameter named like a credential, in a URL inside any text.
_SECRET_PARAM = re.compile(
    r"(?P<lead>[?&;])(?P<name>[A-Za-z0-9_.\-\[\]]+)=(?P<value>[^&#\s\"'<>]{8,})"
)


@functools.lru_cache(maxsize=4096)  # the same header and parameter names, every request
def is_secret_name(name: str) -> bool:
    """Whether a header, query parameter, flag or variable named ``name`` carries a credential.

    The one rule for names: any name that says key, token, secret, password, auth,
    credential, cookie or signature (``X-Api-Key``, ``apikey``, ``access_token``,
    ``client_secret``, ``GITHUB_TOKEN``), or holds the word pass, pwd, pat, jwt or bearer
    (``DB_PASS``, ``--pat``); page and sync tokens are cursors, not credentials.
    """
    if _NOT_SECRET_NAME.search(name.replace("_", "").replace("-", "")):
        return False
    if _SECRET_NAME.search(name):
        return True
    return any(word.lower() in _SECRET_WORDS for word in _WORD.findall(name))


class SplitUrl(NamedTuple):
    """A URL read for credentials (:func:`split_url`)."""

    stored: str
    """The URL fit to store or print."""
    userinfo: str
    """What stood before the host's ``@`` (empty without one)."""
    password: str
    """The userinfo's password (empty without one)."""
    params: frozenset[str]
    """Every non-empty value of a credential-named query parameter."""


@functools.lru_cache(maxsize=1024)  # a recording's calls go to a few URLs, again and again
def split_url(
    url: str, *, drop: frozenset[str] = frozenset(), marker: str | None = None
) -> SplitUrl:
    """``url`` fit to store or print, and the credentials it carries: the one reading of
    a URL's credentials.

    The stored URL has no userinfo and no query parameter named like a credential
    (:func:`is_secret_name`) or in ``drop``; with a ``marker`` such a parameter is kept
    with the marker as its value (an empty value is kept empty) and the query is always
    encoded again.
    """
    parts = urlsplit(url)
    userinfo = ""
    if "@" in parts.netloc:
        userinfo, _, host = parts.netloc.rpartition("@")
        parts = parts._replace(netloc=host)
    query = parse_qsl(parts.query, keep_blank_values=True) if parts.query else []
    found: set[str] = set()
    kept: list[tuple[str, str]] = []
    for name, value in query:
        secret = is_secret_name(name)
        if secret and value:
            found.add(value)
        if not (secret or name in drop):
            kept.append((name, value))
        elif marker is not None:
            kept.append((name, marker if value else value))
    if marker is not None or len(kept) != len(query):
        parts = parts._replace(query=urlencode(kept, safe="<>" if marker else ""))
    password = userinfo.partition(":")[2]
    return SplitUrl(urlunsplit(parts), userinfo, password, frozenset(found))


def url_credentials(url: str) -> set[str]:
    """The credentials in ``url`` long enough to search for (:func:`split_url`): its
    userinfo and password, as written and percent-decoded (``https://user:PASS@host``),
    and its credential-named parameters' values (``?key=...``)."""
    split = split_url(url)
    if not split.userinfo and not split.params:
        return set()
    spelled = {split.userinfo, split.password}
    found = spelled | {unquote(value) for value in spelled} | split.params
    return {value for value in found if len(value) >= MIN_SECRET_LENGTH}


def without_credentials(url: str) -> str:
    """``url`` fit to store or print (:func:`split_url`).

    ``--upstream https://user:PASS@gateway`` is kept that way for forwarding (httpx sends
    the userinfo as basic auth), but a cassette, the state file and rec's messages name it
    as ``https://gateway``.
    """
    return split_url(url).stored


def spellings_of(secret: str) -> set[str]:
    """The spellings of ``secret`` rec may store: as is, percent-encoded, hex, and base64.

    Base64 at each of the three byte alignments (``base64("user:" + KEY)`` puts the key at
    offset 2): the characters that depend on the secret's bytes alone, in the standard and
    the URL-safe alphabet, plus the whole encoding of the secret on its own.
    """
    raw = secret.encode("utf-8")
    spellings = {secret, quote(secret, safe=""), raw.hex(), raw.hex().upper()}
    for encode in (base64.b64encode, base64.urlsafe_b64encode):
        spellings.add(encode(raw).decode("ascii").rstrip("="))
        for offset in (0, 1, 2):
            encoded = encode(b"\0" * offset + raw).decode("ascii")
            whole_groups = (offset + len(raw)) // 3
            spellings.add(encoded[4 if offset else 0 : 4 * whole_groups])
    return {spelling for spelling in spellings if spelling}


def _percent_form(secret: str) -> str:
    """A pattern (source) for ``secret`` with any of its characters percent-encoded: each
    character as is or as the ``%XX`` escapes of its UTF-8 bytes, hex digits in either
    case (``quote`` leaves a key of letters and digits as it is, and a URL may escape any
    character)."""

    def escaped(byte: int) -> str:
        return "%" + "".join(f"[{d}{d.lower()}]" if d.isalpha() else d for d in f"{byte:02X}")

    return "".join(
        f"(?:{re.escape(ch)}|{''.join(escaped(b) for b in ch.encode('utf-8'))})" for ch in secret
    )


class KnownSpellings:
    """Where known secrets are spelled in a text: their literal ``spellings`` (as is,
    base64, hex...), then, in a text with a ``%``, every percent-encoding of the
    ``secrets`` themselves. Longest first within each, so a secret inside a longer one is
    found as the longer."""

    def __init__(self, secrets: Collection[str], spellings: Collection[str]) -> None:
        literal = sorted(set(spellings) | set(secrets), key=len, reverse=True)
        self.literal = re.compile("|".join(map(re.escape, literal)) or "(?!)")  # none: no match
        self._secrets = sorted(set(secrets), key=len, reverse=True)
        percent = "|".join(map(_percent_form, self._secrets))
        self._percent = re.compile(percent) if percent else None

    def search(self, text: str) -> bool:
        """Whether ``text`` holds a known spelling."""
        if self.literal.search(text) is not None:
            return True
        # Alternatives per character are slow: only a text that decodes to a secret is
        # searched with them.
        if self._percent is None or not percent_decoded_holds(text, self._secrets):
            return False
        return self._percent.search(text) is not None

    def sub(self, replacement: str | Callable[[re.Match[str]], str], text: str) -> str:
        """``text`` with each known spelling replaced (``replacement`` as :meth:`re.sub`)."""
        text = self.literal.sub(replacement, text)
        if self._percent is not None and percent_decoded_holds(text, self._secrets):
            text = self._percent.sub(replacement, text)
        return text


def percent_decoded_holds(text: str, spellings: Iterable[str]) -> bool:
    """Whether ``text`` percent-decoded holds one of ``spellings`` (False without a ``%``):
    the literal pre-checks' counterpart of :class:`KnownSpellings`' percent forms."""
    if "%" not in text:
        return False
    decoded = unquote(text, errors="surrogateescape")
    return any(spelling in decoded for spelling in spellings)


_PARAM_LEADS = ("?", "&", ";")


def has_secret_param(text: str) -> bool:
    """``_SECRET_PARAM.search(text)``, tried only where a ``?``, ``&`` or ``;`` occurs (its
    match starts at one, and none is a character of its name): ``str.find`` skips to them,
    where the engine would test its leading character class at every position of the text
    (a JSON text's ``=`` is mostly a content type's ``charset=`` or a stream's ``?alt=``)."""
    return "=" in text and found_at(text, _PARAM_LEADS, _SECRET_PARAM)


def has_url_password(text: str) -> bool:
    """``URL_PASSWORD.search(text)``, tried only where ``://`` occurs (the pattern starts
    with a lookbehind, which Python's engine would try at every position)."""
    return found_at(text, ("://",), URL_PASSWORD)


def is_masked(text: str) -> bool:
    """Whether ``text`` holds a marker that redaction or masking left (``<redacted>``,
    ``AIza…(redacted)``)."""
    return "(redacted)" in text or "<redacted>" in text


def _is_value(value: str) -> bool:
    """A query parameter value worth calling a credential (not a marker or a placeholder)."""
    return not is_masked(value) and not value.startswith(("{", "%7B", "$"))


# --- masking ---------------------------------------------------------------------------


def _marker(secret: str) -> str:
    match = _SHAPE.match(secret)
    return _shape_marker(match) if match is not None else "…(redacted)"


def _shape_marker(match: re.Match[str]) -> str:
    marker = _MARKER[match.lastgroup or ""]
    if not marker:  # a URL password (the scheme before it is kept)
        return "://…(redacted)@"
    return f"{marker}…(redacted)"


def _param_marker(match: re.Match[str]) -> str:
    if not is_secret_name(match.group("name")) or not _is_value(match.group("value")):
        return match.group(0)
    return f"{match.group('lead')}{match.group('name')}=…(redacted)"


# --- the registry of known credential values -------------------------------------------


class CredentialRegistry:
    """The values one recording has seen sent as credentials (thread-safe; only grows).

    The session key, the upstream's userinfo, a tool's credential headers and query
    parameters, an MCP server's credential arguments and environment: once rec knows a
    value is a credential, :func:`mask`, :func:`mask_json` and the secret scan treat it as
    one everywhere. Values shorter than :data:`MIN_SECRET_LENGTH` are ignored. Nothing of
    a registry is ever written.
    """

    __slots__ = ("_lock", "_values")

    def __init__(self) -> None:
        self._values: frozenset[str] = frozenset()
        self._lock = threading.Lock()

    @property
    def values(self) -> frozenset[str]:
        """Every value registered so far."""
        return self._values

    def remember(self, values: Iterable[str]) -> None:
        """Register ``values`` (those long enough to be a credential)."""
        new = {value for value in values if len(value) >= MIN_SECRET_LENGTH} - self._values
        if new:
            with self._lock:
                self._values = self._values | new


_PROCESS = CredentialRegistry()
"""What is learnt outside any recording's scope (``rec start``'s one recording, a report)."""
_SCOPE: contextvars.ContextVar[CredentialRegistry | None] = contextvars.ContextVar(
    "rec_known_credentials", default=None
)


@contextlib.contextmanager
def credential_scope(registry: CredentialRegistry | None = None) -> Iterator[CredentialRegistry]:
    """Keep the credentials learnt while the block runs in a registry of their own.

    One in-process recording runs in one scope: what its tools, MCP servers and proxy
    learn is its own, and another recording running at the same time in another thread
    or task neither learns it nor tells its proxy about it. Code running in the block's
    context (tasks and ``asyncio.to_thread`` copy it; a thread started with
    :func:`contextvars.copy_context` too) registers here.
    """
    scope = registry if registry is not None else CredentialRegistry()
    token = _SCOPE.set(scope)
    try:
        yield scope
    finally:
        with contextlib.suppress(ValueError):  # ended in another context
            _SCOPE.reset(token)


def current_credentials() -> CredentialRegistry:
    """The registry that learns here: the scope's (:func:`credential_scope`), else the
    process's."""
    return _SCOPE.get() or _PROCESS


def remember_credentials(values: Iterable[str]) -> None:
    """Register values seen sent as credentials in :func:`current_credentials`."""
    current_credentials().remember(values)


CREDENTIALS_HEADER = "x-rec-known-credentials"
"""How a process that rec instruments tells rec's proxy the credentials it learnt (a tool's
key, an MCP server's token): the proxy registers them and drops the header, which is never
forwarded nor written."""


def credentials_header_value(values: Collection[str]) -> str:
    """``values`` as the value of :data:`CREDENTIALS_HEADER` (base64 of a JSON list)."""
    return base64.b64encode(json.dumps(sorted(values)).encode("utf-8")).decode("ascii")


def credentials_from_header(value: str) -> set[str]:
    """The values :func:`credentials_header_value` put in the header (none if malformed)."""
    try:
        decoded = json.loads(base64.b64decode(value, validate=True))
    except ValueError:
        return set()
    if not isinstance(decoded, list):
        return set()
    return {item for item in decoded if isinstance(item, str)}


def known_credentials() -> frozenset[str]:
    """Every credential known here: the scope's (:func:`credential_scope`) and those
    learnt outside any scope."""
    scope = _SCOPE.get()
    return _PROCESS.values if scope is None else scope.values | _PROCESS.values


@functools.lru_cache(maxsize=64)
def _known_pattern(secrets: frozenset[str]) -> tuple[KnownSpellings | None, dict[str, str]]:
    """One pattern for every spelling of ``secrets``, longest first, and each one's marker."""
    markers: dict[str, str] = {}
    for secret in sorted(secrets, key=len, reverse=True):
        for spelling in spellings_of(secret):
            if spelling == secret or len(spelling) >= MIN_SECRET_LENGTH:
                markers.setdefault(spelling, _marker(secret))
    if not markers:
        return None, markers
    return KnownSpellings([s for s in secrets if s in markers], markers), markers


def _marker_of(found: str, markers: dict[str, str]) -> str:
    """The marker of a known spelling, or of the secret a percent-encoding of it spells."""
    decoded = unquote(found, errors="surrogateescape")
    return markers.get(found) or markers.get(decoded, "…(redacted)")


def mask(text: str, secrets: Collection[str] = (), *, memo: dict[str, str] | None = None) -> str:
    """``text`` safe for a log line, a report or an error message.

    The one masking function: every message, report and log line rec writes passes here.
    Known secrets (``secrets`` and this process's registry, :func:`remember_credentials`;
    as is, percent-encoded or base64 at any alignment) and any credential-shaped value
    (see :data:`_SHAPES`), a credential-named query parameter's value (``apikey=…``) and a
    URL password are replaced by markers such as ``AIza…(redacted)`` that say what was
    there without revealing it.

    ``memo`` keeps each text's masked form, for a caller masking the same strings many
    times (a report of one recording repeats its tool names, keys and replies): it holds
    for one ``secrets`` and one moment of the registry, so a caller keeps it for one
    report only.
    """
    if memo is not None:
        found = memo.get(text)
        if found is None:
            found = memo[text] = mask(text, secrets)
        return found
    known = frozenset(s for s in secrets if s) | known_credentials()
    if known:
        pattern, markers = _known_pattern(known)
        if pattern is not None:
            text = pattern.sub(lambda m: _marker_of(m.group(0), markers), text)
    text = _shapes_masked(text)
    return _SECRET_PARAM.sub(_param_marker, text) if "=" in text else text


def mask_json(
    value: Any, secrets: Collection[str] = (), *, memo: dict[str, str] | None = None
) -> Any:
    """``value`` (JSON-like: dicts, lists, strings) with every string and key masked.

    Reports, timelines, EvalSets, MCP captures and identities all mask through it (over
    the one walk, :func:`~cassettes._secret_walk.map_strings`), so a value :func:`mask`
    catches is caught in all of them. Values other than strings are kept as they are;
    ``memo`` as for :func:`mask`.
    """
    return map_strings(value, lambda _path, text, _key: mask(text, secrets, memo=memo), None)
