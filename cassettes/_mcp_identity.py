"""Which MCP toolset is which: a redacted identity, compared as a user would.

A recording keys each toolset's MCP sessions by the toolset's identity (see
:class:`~cassettes._mcp.McpToolsetIdentity`): its server (the command and arguments of a stdio
server, the URL of an HTTP one), its tool filter and its tool-name prefix. Replay asks
for the toolset the agent has now and gets the recorded sessions only when it is the
same toolset.

**Credentials never reach the identity.** An argument after a credential-named flag
(``--token X``, ``--api-key=X``), an environment value under a credential name
(``GITHUB_TOKEN``), a credential header, URL user info and credential query parameters
become ``<redacted>``; every other value is masked for credential shapes. The values
removed are returned, and registered as this process's known credentials
(:func:`~cassettes._secret_shapes.remember_credentials`), so that the same values are
removed from what the server answered and from every other file and output.

**"The same toolset" survives a move to another machine.** CI checks the recording out
elsewhere, with another interpreter and another checkout path, and usually without the
server's credentials. So:

- a stdio command compares by program name (``/venv/bin/python3.11`` is ``python``);
- an argument compares equal when it is the same, when both are paths to a file of the
  same name, or when the recording holds ``<redacted>`` there (a credential is not
  identity);
- environment, working directory and HTTP headers are not compared;
- the URL, the tool filter (as a set) and the prefix must be equal.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from pathlib import PurePath, PurePosixPath, PureWindowsPath

from cassettes._mcp import McpHttpServer, McpServer, McpStdioServer, McpToolsetIdentity
from cassettes._redaction import DEFAULT_REDACTED_HEADERS, REDACTED
from cassettes._secret_shapes import (
    MIN_SECRET_LENGTH,
    is_masked,
    is_secret_name,
    mask,
    remember_credentials,
    split_url,
)

__all__ = [
    "describe_toolset",
    "http_server_identity",
    "nearest_toolset",
    "stdio_server_identity",
    "toolset_changes",
]

_PYTHON = re.compile(r"^python(\d+(\.\d+)?)?w?$")


def _flag_name(arg: str) -> str | None:
    """``--api-key`` -> ``api-key``; None for an argument that is not a flag."""
    if not arg.startswith("-") or arg in ("-", "--") or arg[1:2].isdigit():
        return None
    return arg.lstrip("-").partition("=")[0]


def _redact_url(url: str, secrets: set[str]) -> str:
    """``url`` with its userinfo dropped and credential-named parameters' values replaced,
    masked; what they held is added to ``secrets``."""
    split = split_url(url, marker=REDACTED)
    user = split.password or split.userinfo.partition(":")[0]
    secrets |= split.params | ({user} if len(user) >= MIN_SECRET_LENGTH else set())
    return mask(split.stored, secrets)


def _looks_like_url(text: str) -> bool:
    return bool(re.match(r"^[a-z][a-z0-9+.-]*://", text, re.IGNORECASE))


def stdio_server_identity(
    command: str,
    args: Sequence[str],
    env: Mapping[str, str] | None,
    cwd: str | None,
) -> tuple[McpStdioServer, set[str]]:
    """The redacted identity of a stdio server, and the credential values it was given.

    Args:
        command: the program (``StdioServerParameters.command``).
        args: its arguments.
        env: the extra environment given to the server.
        cwd: its working directory.

    Returns:
        The server as it may be written, and the credentials removed from it (to be
        removed from everything else the recording holds).
    """
    secrets: set[str] = set()
    clean_env: dict[str, str] = {}
    for name, value in sorted((env or {}).items()):
        if is_secret_name(name) and value:
            if len(value) >= MIN_SECRET_LENGTH:
                secrets.add(value)
            clean_env[name] = REDACTED
        else:
            clean_env[name] = value
    clean_args: list[str] = []
    after_credential_flag = False
    for arg in args:
        flag = _flag_name(arg)
        if after_credential_flag and flag is None:
            if len(arg) >= MIN_SECRET_LENGTH:
                secrets.add(arg)
            clean_args.append(REDACTED)
            after_credential_flag = False
            continue
        after_credential_flag = False
        if flag is not None and is_secret_name(flag):
            name, equals, value = arg.partition("=")
            if equals:
                if len(value) >= MIN_SECRET_LENGTH:
                    secrets.add(value)
                clean_args.append(f"{name}={REDACTED}")
            else:
                after_credential_flag = True
                clean_args.append(arg)
            continue
        clean_args.append(arg)
    clean_args = [_redact_url(arg, secrets) if _looks_like_url(arg) else arg for arg in clean_args]
    clean_args = [mask(arg, secrets) for arg in clean_args]
    clean_env = {name: mask(value, secrets) for name, value in clean_env.items()}
    server = McpStdioServer(
        command=mask(command, secrets),
        args=clean_args,
        env=clean_env,
        cwd=mask(cwd, secrets) if cwd else None,
    )
    remember_credentials(secrets)
    return server, secrets


def http_server_identity(
    transport: str, url: str, headers: Mapping[str, object] | None
) -> tuple[McpHttpServer, set[str]]:
    """The redacted identity of an SSE or streamable-HTTP server, and the credentials removed.

    Credential headers (``authorization``, ``x-api-key``, any name saying key, token,
    secret...) are dropped; their values are returned with the URL's credentials.
    """
    secrets: set[str] = set()
    kept: dict[str, str] = {}
    for name, value in sorted((headers or {}).items()):
        text = str(value)
        if name.lower() in DEFAULT_REDACTED_HEADERS or is_secret_name(name):
            scheme, _, credential = text.strip().partition(" ")
            for candidate in (text.strip(), credential.strip() or scheme):
                if len(candidate) >= MIN_SECRET_LENGTH:
                    secrets.add(candidate)
            continue
        kept[name.lower()] = text
    clean_url = _redact_url(url, secrets)
    headers_out = {name: mask(value, secrets) for name, value in kept.items()}
    server = McpHttpServer(
        transport="sse" if transport == "sse" else "streamable_http",
        url=clean_url,
        headers=headers_out,
    )
    remember_credentials(secrets)
    return server, secrets


# --- comparison ---------------------------------------------------------------------------


def _program(command: str) -> str:
    name = _path_of(command).name if _is_path(command) else command
    name = name.lower().removesuffix(".exe")
    return "python" if _PYTHON.match(name) else name


def _is_path(text: str) -> bool:
    return "/" in text or "\\" in text


def _path_of(text: str) -> PurePath:
    return PureWindowsPath(text) if "\\" in text else PurePosixPath(text)


def _same_arg(recorded: str, wanted: str) -> bool:
    if recorded == wanted or is_masked(recorded):
        return True
    if _looks_like_url(recorded) or _looks_like_url(wanted):
        return False
    if _is_path(recorded) and _is_path(wanted):
        return _path_of(recorded).name == _path_of(wanted).name
    return False


def _server_text(server: McpServer) -> str:
    if isinstance(server, McpStdioServer):
        return " ".join([_program(server.command), *server.args])
    return server.url


def describe_toolset(toolset: McpToolsetIdentity) -> str:
    """``stdio `python calc.py` (tool_filter ['add'], prefix 'calc')`` for messages."""
    transport = toolset.server.transport.replace("_", "-")
    text = f"{transport} `{_server_text(toolset.server)}`"
    options = []
    if toolset.tool_filter is not None:
        options.append(f"tool_filter {toolset.tool_filter}")
    if toolset.tool_predicate is not None:
        options.append(f"tool_filter {toolset.tool_predicate}")
    if toolset.tool_name_prefix:
        options.append(f"tool_name_prefix {toolset.tool_name_prefix!r}")
    return f"{text} ({', '.join(options)})" if options else text


def _server_changes(recorded: McpServer, wanted: McpServer) -> list[str]:
    if recorded.transport != wanted.transport:
        return [f"transport changed: {recorded.transport} -> {wanted.transport}"]
    if isinstance(recorded, McpHttpServer) and isinstance(wanted, McpHttpServer):
        if recorded.url != wanted.url:
            return [f"server URL changed: {recorded.url} -> {wanted.url}"]
        return []
    assert isinstance(recorded, McpStdioServer) and isinstance(wanted, McpStdioServer)
    changes = []
    if _program(recorded.command) != _program(wanted.command):
        changes.append(f"server command changed: {recorded.command} -> {wanted.command}")
    if len(recorded.args) != len(wanted.args) or not all(
        _same_arg(a, b) for a, b in zip(recorded.args, wanted.args, strict=False)
    ):
        changes.append(f"server arguments changed: {recorded.args} -> {wanted.args}")
    return changes


def toolset_changes(recorded: McpToolsetIdentity, wanted: McpToolsetIdentity) -> list[str]:
    """What differs between a recorded toolset and the one the agent has now (empty: the same).

    Each line reads ``<what> changed: <recorded> -> <now>``.
    """
    changes = _server_changes(recorded.server, wanted.server)
    recorded_filter = sorted(recorded.tool_filter) if recorded.tool_filter is not None else None
    wanted_filter = sorted(wanted.tool_filter) if wanted.tool_filter is not None else None
    if recorded_filter != wanted_filter:
        changes.append(f"tool_filter changed: {recorded_filter} -> {wanted_filter}")
    if recorded.tool_predicate != wanted.tool_predicate:
        changes.append(
            f"tool_filter predicate changed: {recorded.tool_predicate} -> {wanted.tool_predicate}"
        )
    if (recorded.tool_name_prefix or None) != (wanted.tool_name_prefix or None):
        changes.append(
            f"tool_name_prefix changed: {recorded.tool_name_prefix!r} -> "
            f"{wanted.tool_name_prefix!r}"
        )
    return changes


def nearest_toolset(
    wanted: McpToolsetIdentity, recorded: Sequence[McpToolsetIdentity]
) -> McpToolsetIdentity | None:
    """The recorded toolset most like ``wanted``: the same server first, then the same transport."""
    if not recorded:
        return None

    def distance(candidate: McpToolsetIdentity) -> tuple[int, int]:
        server = _server_changes(candidate.server, wanted.server)
        same_transport = candidate.server.transport == wanted.server.transport
        rest = len(toolset_changes(candidate, wanted))
        return (len(server) + (0 if same_transport else 10), rest)

    return min(recorded, key=distance)
