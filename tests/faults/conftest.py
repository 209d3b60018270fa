"""Fixtures of the fault-injection suite: a seeded random source, a small full-able disk."""

from __future__ import annotations

import os
import random
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest


@pytest.fixture
def fault_rng(request: pytest.FixtureRequest) -> random.Random:
    """A random source whose seed is printed (and taken from REC_FAULT_SEED when set)."""
    seed = int(os.environ.get("REC_FAULT_SEED") or random.SystemRandom().randrange(2**32))
    print(f"\n{request.node.nodeid}: fault seed {seed} (rerun with REC_FAULT_SEED={seed})")
    return random.Random(seed)


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A 256 KiB tmpfs mounted under tmp_path (skipped where mounting is not allowed)."""
    mountpoint = tmp_path / "disk"
    mountpoint.mkdir()
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=256k,mode=0700", "tmpfs", str(mountpoint)],
        capture_output=True,
        text=True,
    )
    if mounted.returncode != 0:
        pytest.skip(
            "a full disk needs a small tmpfs, and `mount -t tmpfs` is not allowed here "
            f"({mounted.stderr.strip() or 'not root'}); tests/recorder/test_lifecycle.py "
            "covers the same with RLIMIT_FSIZE"
        )
    try:
        yield mountpoint
    finally:
        subprocess.run(["umount", "-l", str(mountpoint)], capture_output=True)


@pytest.fixture
def read_only_folder(tmp_path: Path) -> Iterator[Path]:
    """A read-only file system (root ignores permission bits, so a chmod would not do)."""
    mountpoint = tmp_path / "ro"
    mountpoint.mkdir()
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "ro,size=64k", "tmpfs", str(mountpoint)],
        capture_output=True,
        text=True,
    )
    if mounted.returncode != 0:
        pytest.skip(
            f"a read-only folder needs `mount -o ro`, not allowed here ({mounted.stderr.strip()})"
        )
    try:
        yield mountpoint
    finally:
        subprocess.run(["umount", "-l", str(mountpoint)], capture_output=True)
