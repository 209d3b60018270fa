"""What a credential looks like, and the one function that masks it in text.

The shapes (Google API keys, OAuth access and refresh tokens, JWTs, ``sk_live_``/``sk-``
keys, GitHub, Slack, AWS, PEM private keys, an ``api-key:`` header's value, URL passwords,
...), the header and query
parameter names that carry credentials, the spellings rec looks for (as is,
percent-encoded, base64), and :func:`mask`, through which every log line, message and
report rec writes passes. :mod:`cassettes._redaction` removes and refuses with these.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Collection
from urllib.parse import parse_qsl, quote, unquote, urlencode, urlsplit, urlunsplit

__all__ = ["is_secret_name", "mask", "url_credentials", "without_credentials"]

_MIN_SECRET_LENGTH = 8
"""Shorter credential values are not searched for in bodies: they would match ordinary text."""

# Every pattern starts where no base64 or key character precedes it: long base64 blobs
# (thoughtSignature, inline data) can contain "AIza" or "sk-" by chance, never after a
# quote or a space.
_START = r"(?<![0-9A-Za-z+/_-])"
_END = r"(?![0-9A-Za-z_-])"
_SHAPES: tuple[tuple[str, str, str], ...] = (
    # (kind, pattern, marker prefix)
    ("Google API key", rf"{_START}AIza[0-9A-Za-z_-]{{35}}{_END}", "AIza"),
    ("OAuth access token", rf"{_START}ya29\.[0-9A-Za-z_\-.]+", "ya29."),
    ("OAuth refresh token", rf"{_START}1//0[0-9A-Za-z_-]{{20,}}", "1//"),
    # A bearer credential is token68 (RFC 7235). Requiring 16+ characters keeps prose such
    # as "Bearer tokens expire" from counting while catching every real token.
    ("bearer token", r"Bearer\s+[0-9A-Za-z._~+/-]{16,}=*", "Bearer "),
    (
        "JSON web token",
        rf"{_START}eyJ[0-9A-Za-z_-]{{8,}}\.eyJ[0-9A-Za-z_-]{{8,}}\.[0-9A-Za-z_-]*",
        "eyJ",
    ),
    ("Stripe secret key", rf"{_START}(?:sk|rk)_(?:live|test)_[0-9A-Za-z]{{16,}}", "sk_"),
    ("secret key", rf"{_START}sk-[0-9A-Za-z_-]{{20,}}", "sk-"),
    (
        "GitHub token",
        rf"{_START}(?:gh[pousr]_[0-9A-Za-z]{{36,}}|github_pat_[0-9A-Za-z_]{{22,}})",
        "gh",
    ),
    ("GitLab token", rf"{_START}glpat-[0-9A-Za-z_-]{{20,}}", "glpat-"),
    ("Slack token", rf"{_START}xox[abposr]-[0-9A-Za-z-]{{10,}}", "xox"),
    ("AWS access key", rf"{_START}(?:AKIA|ASIA)[0-9A-Z]{{16}}(?![0-9A-Za-z])", "AKIA"),
    ("private key", r"-----BEGIN [A-Z ]*PRIVATE KEY-----", "-----BEGIN "),
    ("OAuth client secret", rf"{_START}GOCSPX-[0-9A-Za-z_-]{{20,}}", "GOCSPX-"),
    ("npm token", rf"{_START}npm_[0-9A-Za-z]{{36}}{_END}", "npm_"),
    ("Hugging Face token", rf"{_START}hf_[0-9A-Za-z]{{30,}}{_END}", "hf_"),
    ("SendGrid key", rf"{_START}SG\.[0-9A-Za-z_-]{{16,}}\.[0-9A-Za-z_-]{{16,}}", "SG."),
    ("Shopify token", rf"{_START}shp(?:at|ss|ca|pa)_[0-9a-fA-F]{{32}}", "shp"),
    # Azure OpenAI keys are 32 hex digits, no prefix: found as the header that sends them.
    (
        "API key header",
        r"(?<![0-9A-Za-z_-])(?:[Xx]-)?(?:[Aa]pi|API)-(?:[Kk]ey|KEY)[\"']?\s*[:=]\s*[\"']?[0-9A-Za-z_-]{16,}",
        "api-key: ",
    ),
    # scheme://user:password@host: the password part.
    (
        "URL password",
        r"(?<=[A-Za-z0-9+.-])://[^\s/?#@:\"']*:[^\s/?#@\"']+@",
        "",
    ),
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
_API_KEY = re.compile(_SHAPES[0][1])

_SECRET_NAME = re.compile(
    r"key(?![a-z])|token(?!s)|secret|passw|auth(?!or)|credential|cookie|signature|^sig$",
    re.IGNORECASE,
)
_NOT_SECRET_NAME = re.compile(r"(?:page|sync|continuation|resume)token", re.IGNORECASE)
# A query parameter named like a credential, in a URL inside any text.
_SECRET_PARAM = re.compile(
    r"(?P<lead>[?&;])(?P<name>[A-Za-z0-9_.\-\[\]]+)=(?P<value>[^&#\s\"'<>]{8,})"
)


def is_secret_name(name: str) -> bool:
    """Whether a header or query parameter named ``name`` carries a credential.

    Any name that says key, token, secret, password, auth, credential, cookie or signature
    (``X-Api-Key``, ``apikey``, ``access_token``, ``client_secret``); page and sync tokens
    are cursors, not credentials.
    """
    return bool(_SECRET_NAME.search(name)) and not _NOT_SECRET_NAME.search(
        name.replace("_", "").replace("-", "")
    )


def url_credentials(url: str) -> set[str]:
    """The password in ``url``'s userinfo (``https://user:PASS@host``), percent-decoded."""
    parts = urlsplit(url)
    if "@" not in parts.netloc:
        return set()
    found = {parts.password} if parts.password else set()
    found.add(parts.netloc.rsplit("@", 1)[0])
    found |= {unquote(value) for value in found}
    return {value for value in found if len(value) >= _MIN_SECRET_LENGTH}


def without_credentials(url: str) -> str:
    """``url`` fit to store or print: no userinfo, no credential-named query parameter.

    ``--upstream https://user:PASS@gateway`` is kept that way for forwarding (httpx sends
    the userinfo as basic auth), but a cassette, the state file and rec's messages name it
    as ``https://gateway``.
    """
    parts = urlsplit(url)
    if "@" in parts.netloc:
        parts = parts._replace(netloc=parts.netloc.rsplit("@", 1)[1])
    if parts.query:
        query = parse_qsl(parts.query, keep_blank_values=True)
        kept = [(n, v) for n, v in query if not is_secret_name(n)]
        if len(kept) != len(query):
            parts = parts._replace(query=urlencode(kept))
    return urlunsplit(parts)


def _encodings(secret: str) -> set[str]:
    """The spellings of ``secret`` rec may store: as is, percent-encoded, and base64."""
    raw = secret.encode("utf-8")
    standard = base64.b64encode(raw).decode("ascii")
    return {
        secret,
        quote(secret, safe=""),
        standard.rstrip("="),
        base64.urlsafe_b64encode(raw).decode("ascii").rstrip("="),
    }


def _is_value(value: str) -> bool:
    """A query parameter value worth calling a credential (not a marker or a placeholder)."""
    return (
        "(redacted)" not in value
        and "<redacted>" not in value
        and not value.startswith(("{", "%7B", "$"))
    )


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


def mask(text: str, secrets: Collection[str] = ()) -> str:
    """``text`` safe for a log line, a report or an error message.

    The one masking function: every message, report and log line rec writes passes here.
    Known secrets (as is, percent-encoded or base64) and any credential-shaped value (see
    :data:`_SHAPES`), a credential-named query parameter's value (``apikey=…``) and a URL
    password are replaced by markers such as ``AIza…(redacted)`` that say what was there
    without revealing it.
    """
    for secret in sorted({s for s in secrets if s}, key=len, reverse=True):
        for spelling in sorted(_encodings(secret), key=len, reverse=True):
            if (spelling == secret or len(spelling) >= _MIN_SECRET_LENGTH) and spelling in text:
                text = text.replace(spelling, _marker(secret))
    if _HINT.search(text):
        text = _SHAPE.sub(_shape_marker, text)
    return _SECRET_PARAM.sub(_param_marker, text) if "=" in text else text
