"""Credential shapes rec must never write or print: every value here is fake.

Each entry is (id, value): a value as it would appear in text typed into a prompt, returned
by a tool, or echoed by a model. The corpus is shared by the unit tests of redaction and
the end-to-end test that looks for each value in every place rec writes or prints.
"""

from __future__ import annotations

import base64
import re

_A = "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8S9t0"  # 40 key characters
_HEX = "0123456789abcdef0123456789abcdef"

SHAPES: list[tuple[str, str]] = [
    ("google-api-key", "AIzaSyFAKE" + _A[:29]),
    ("google-api-key-dashes", "AIza-_FAKE" + _A[:29]),
    ("oauth-access-token", "ya29.a0AfB_FAKEaccess" + _A[:20]),
    ("oauth-refresh-token", "1//0gFAKErefresh" + _A[:30]),
    ("bearer-opaque", "Bearer FAKEopaque" + _A[:24]),
    (
        "jwt",
        "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJmYWtlLXVzZXIifQ.FAKEsignature" + _A[:16],
    ),
    ("stripe-live", "sk_live_FAKE" + _A[:24]),
    ("stripe-test", "sk_test_FAKE" + _A[:24]),
    ("stripe-restricted", "rk_live_FAKE" + _A[:24]),
    ("openai-style", "sk-FAKE" + _A[:40]),
    ("openai-project", "sk-proj-FAKE" + _A[:36]),
    ("anthropic-style", "sk-ant-api03-FAKE" + _A[:36]),
    ("openai-authorization-header", "Authorization: Bearer sk-proj-FAKE" + _A[:30]),
    ("anthropic-x-api-key-header", "x-api-key: sk-ant-api03-FAKE" + _A[:30]),
    ("azure-api-key-header", "api-key: " + _HEX),
    ("github-pat-classic", "ghp_FAKE" + _A[:32]),
    ("github-oauth", "gho_FAKE" + _A[:32]),
    ("github-fine-grained", "github_pat_FAKE" + _A[:30]),
    ("gitlab", "glpat-FAKE" + _A[:16]),
    ("slack-bot", "xoxb-123456789012-FAKE" + _A[:20]),
    ("slack-user", "xoxp-123456789012-FAKE" + _A[:20]),
    ("aws-access-key", "AKIAFAKE0123456789AB"),
    ("aws-session-key", "ASIAFAKE0123456789AB"),
    ("rsa-private-key", "-----BEGIN RSA PRIVATE KEY-----"),
    ("openssh-private-key", "-----BEGIN OPENSSH PRIVATE KEY-----"),
    ("pkcs8-private-key", "-----BEGIN PRIVATE KEY-----"),
    ("google-client-secret", "GOCSPX-FAKE" + _A[:24]),
    ("npm", "npm_FAKE" + _A[:32]),
    ("hugging-face", "hf_FAKE" + _A[:30]),
    ("sendgrid", "SG.FAKE" + _A[:18] + ".FAKE" + _A[:36]),
    ("shopify", "shpat_" + _HEX),
    ("url-password", "https://deploy:FAKEpassword" + _A[:8] + "@git.example.com/repo"),
    ("query-apikey", "https://api.example.com/v1/rates?apikey=FAKEquery" + _A[:12]),
    ("query-access-token", "https://api.example.com/me?access_token=FAKEtok" + _A[:12]),
    ("query-client-secret", "https://idp.example.com/t?client_secret=FAKEcs" + _A[:12]),
]
"""At least 30 credential shapes, each as it would appear in text."""


def secret_part(value: str) -> str:
    """The part of a corpus value that must never appear (a URL's password or parameter,
    a header line's value)."""
    header = re.match(r"^[A-Za-z-]+: ", value)
    if header is not None:
        return value[header.end() :]
    if "://" in value and "@" in value:
        return value.split("://", 1)[1].split("@", 1)[0].split(":", 1)[1]
    if "?" in value and "=" in value:
        return value.rsplit("=", 1)[1]
    return value


def b64(value: str) -> str:
    """Standard base64 of ``value`` (inline data carries bytes this way)."""
    return base64.b64encode(value.encode()).decode("ascii")


def base64_spellings(secret: str) -> list[str]:
    """What must never appear of ``secret`` base64-encoded at byte offset 0, 1 or 2 (after
    ``user:``, the HTTP Basic form, or any other prefix): the characters that depend on the
    secret alone, in both alphabets."""
    spellings = []
    for prefix in ("", "u", "us", "user:"):
        for encode in (base64.b64encode, base64.urlsafe_b64encode):
            encoded = encode((prefix + secret).encode()).decode("ascii")
            skip = 4 * -(-len(prefix) // 3) if prefix else 0
            spellings.append(encoded[skip + 4 : skip + 24])
    return spellings


def percent_carriers(secret: str) -> list[str]:
    """``secret`` percent-encoded as a URL may carry it: every character escaped (upper and
    lower case hex), and every other one (``quote`` leaves a key of letters and digits as
    it is)."""
    escaped = [f"%{b:02X}" for b in secret.encode()]
    return [
        "".join(escaped),
        "".join(escaped).lower(),
        "".join(e if i % 2 else ch for i, (e, ch) in enumerate(zip(escaped, secret, strict=True))),
    ]


def hex_carriers(secret: str) -> list[str]:
    """``secret``'s UTF-8 bytes in hex, lower and upper case."""
    return [secret.encode().hex(), secret.encode().hex().upper()]


def base64_carriers(secret: str) -> list[str]:
    """``secret`` base64-encoded behind prefixes of every length modulo 3, as text."""
    return [b64(prefix + secret) for prefix in ("", "u", "us", "user:", "Basic-user:")]
