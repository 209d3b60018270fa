"""Cassette load: parse + validate a 10,000-exchange cassette and build its MatchIndex.

Goals: <= 0.3 s for a lazy load + index (what ``rec serve`` and replay do), <= 0.5 s for
an eager one; ``rec show`` and ``rec check`` of the file each <= 1.5x ``json.load`` of it
(in this process, the collector on, as a command runs; the CPU time of each is given too,
which on a shared machine holds no wait for a core). The cassette is written once with
``save_cassette`` (the real, pretty-printed format, and its side index in ``.rec/``) and
then loaded with ``cassettes.load_cassette`` exactly as ``rec serve`` and ``rec.replay``
do; the lazy load is timed again with the side index removed (the file's lines scanned
instead, as for a cassette rec did not write). The breakdown shows where the time goes:
reading, ``json.loads``, pydantic validation, and MatchIndex building; the same load
with the cyclic garbage collector paused shows how much of it is GC passes over the
freshly parsed objects.

Two traffic shapes (``_gemini_traffic.py``): agent conversations of 8 requests, whose
bodies re-send a growing history (about 7.7 KB per exchange in the file), and short
2-request conversations.

Run::

    python bench/bench_cassette_load.py
    python bench/bench_cassette_load.py --exchanges 10000 --repeat 5
"""

from __future__ import annotations

import argparse
import gc
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _gemini_traffic  # noqa: E402
from _measure import verdict  # noqa: E402

from cassettes._cassette import load_cassette, parse_cassette  # noqa: E402
from cassettes._cassette_writer import save_cassette  # noqa: E402
from cassettes._checking import check_paths  # noqa: E402
from cassettes._file_names import side_index_file  # noqa: E402
from cassettes._matching import MatchIndex  # noqa: E402
from rec._show import show_text  # noqa: E402


def _measure(path: Path) -> dict[str, float]:
    gc.collect()
    start = time.perf_counter()
    data = path.read_bytes()
    read = time.perf_counter()
    json.loads(data)
    parsed = time.perf_counter()
    gc.collect()
    start_load = time.perf_counter()
    cassette = load_cassette(path)
    loaded = time.perf_counter()
    MatchIndex(cassette.exchanges)
    indexed = time.perf_counter()
    del cassette
    gc.collect()
    gc.disable()
    try:
        start_nogc = time.perf_counter()
        cassette = parse_cassette(data, path=path)
        MatchIndex(cassette.exchanges)
        nogc = time.perf_counter() - start_nogc
    finally:
        gc.enable()
    del cassette
    gc.collect()
    start_lazy = time.perf_counter()
    MatchIndex(load_cassette(path, lazy=True).exchanges)
    lazy = time.perf_counter() - start_lazy
    index = side_index_file(path)
    kept = index.read_bytes()
    index.unlink()
    try:
        gc.collect()
        start_scan = time.perf_counter()
        MatchIndex(load_cassette(path, lazy=True).exchanges)
        scan = time.perf_counter() - start_scan
    finally:
        index.write_bytes(kept)
    json_load, json_cpu = _timed(lambda: _json_load(path))
    show, show_cpu = _timed(lambda: show_text([path]))
    check, check_cpu = _timed(lambda: _check(path))  # what `rec check FILE` runs
    return {
        "lazy load + index": lazy,
        "  same, no side index": scan,
        "json.load (baseline)": json_load,
        "rec show (timelines+text)": show,
        "rec check (check_paths)": check,
        "json.load, CPU": json_cpu,
        "rec show, CPU": show_cpu,
        "rec check, CPU": check_cpu,
        "read": read - start,
        "json.loads": parsed - read,
        "load_cassette": loaded - start_load,
        "validate (load - json)": (loaded - start_load) - (parsed - read) - (read - start),
        "MatchIndex": indexed - loaded,
        "total": indexed - start_load,
        "total, gc paused": nogc + (read - start),
    }


def _timed(run: Callable[[], object]) -> tuple[float, float]:
    """Wall and CPU time of ``run()``, the collector on (as a command runs) after a full
    collection: on a shared machine the wall time also holds waits for a core."""
    gc.collect()
    wall, cpu = time.perf_counter(), time.process_time()
    run()
    return time.perf_counter() - wall, time.process_time() - cpu


def _json_load(path: Path) -> None:
    with path.open("rb") as file:
        json.load(file)


def _check(path: Path) -> None:
    _, problems = check_paths([path])
    assert not problems, problems


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--exchanges", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)

    with tempfile.TemporaryDirectory() as folder:
        for per_conversation in (8, 2):
            path = Path(folder) / f"bench-{per_conversation}.json"
            cassette = _gemini_traffic.cassette(
                args.exchanges, requests_per_conversation=per_conversation
            )
            save_cassette(cassette, path)
            del cassette
            size = path.stat().st_size
            runs = [_measure(path) for _ in range(args.repeat)]
            print(
                f"{args.exchanges:,} exchanges, {per_conversation}-request conversations: "
                f"{size / 1e6:.1f} MB ({size / args.exchanges / 1e3:.1f} KB/exchange), "
                f"median of {args.repeat}"
            )
            for name in runs[0]:
                value = statistics.median(run[name] for run in runs)
                print(f"  {name:<24} {value:6.3f} s")
            shape = f"{per_conversation}-request conversations"
            baseline = statistics.median(run["json.load (baseline)"] for run in runs)
            floor = f"json.load {baseline * 1000:.2f} ms"
            total = statistics.median(run["total"] for run in runs)
            eager = f"{total * 1000:.2f} ms"
            verdict(f"{shape}: eager load + index", eager, floor, "<= 500 ms", total <= 0.5)
            lazy = statistics.median(run["lazy load + index"] for run in runs)
            lazy_ms = f"{lazy * 1000:.2f} ms"
            verdict(f"{shape}: lazy load + index", lazy_ms, floor, "<= 300 ms", lazy <= 0.3)
            cpu_floor = statistics.median(run["json.load, CPU"] for run in runs)
            for label, name, cpu in (
                ("show", "rec show (timelines+text)", "rec show, CPU"),
                ("check", "rec check (check_paths)", "rec check, CPU"),
            ):
                ratio = statistics.median(run[name] / run["json.load (baseline)"] for run in runs)
                verdict(
                    f"{shape}: rec {label} / json.load",
                    f"{ratio:.2f}x",
                    floor,
                    "<= 1.5x",
                    ratio <= 1.5,
                )
                by_cpu = statistics.median(run[cpu] / run["json.load, CPU"] for run in runs)
                verdict(
                    f"{shape}: rec {label} / json.load, CPU time",
                    f"{by_cpu:.2f}x",
                    f"json.load CPU {cpu_floor * 1000:.2f} ms",
                    None,
                    None,
                )


if __name__ == "__main__":
    main()
