"""``rec check PATH...``: every problem in EvalSets, legacy eval files, configs and cassettes."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from rec._pydantic_plugins import skip_plugin_discovery

__all__ = ["check_command"]


@click.command("check")
@click.argument("paths", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option(
    "--allow-empty",
    is_flag=True,
    help="An eval set with no cases is a note, not a problem (it is meant to be empty).",
)
def check_command(paths: tuple[Path, ...], allow_empty: bool) -> None:
    """Validate eval files, eval configs and cassettes strictly (folders are searched).

    Eval sets replayed in one run must not share a case (the same eval set id and eval id):
    two in one folder that do are a problem, two in different folders (different agents'
    eval sets, as in a repository of templates) a note. An eval set with no cases is a
    problem unless --allow-empty is given.

    Exit status: 0 no problems, 1 problems found, 2 usage error.
    """
    from cassettes._evalset_quick import clean_document, read_evalset
    from cassettes._file_names import files_to_check

    files = files_to_check(paths)
    if not files:
        raise click.UsageError("no eval files, configs or cassettes found in the given paths")
    # One clean EvalSet with cases is told without pydantic; every other file gets the strict
    # check (pydantic's models, imported only then), which names each problem. Each file is
    # parsed once: one read here is handed on.
    read = read_evalset(files[0]) if len(files) == 1 else None
    if read is not None and _has_cases(read[1]) and clean_document(read[1]):
        problems = []
    else:
        with skip_plugin_discovery():
            from cassettes._checking import check_files

            given = {files[0]: read} if read is not None else None
            del read  # the check takes the document out of ``given`` and lets it go
            problems = check_files(files, allow_empty=allow_empty, read=given)
    for problem in problems:
        click.echo(str(problem))
    errors = [p for p in problems if p.severity == "error"]
    noun = "problem" if len(errors) == 1 else "problems"
    click.echo(f"rec check: {len(files)} file(s), {len(errors)} {noun}", err=True)
    if errors:
        sys.exit(1)


def _has_cases(document: Any) -> bool:
    """Whether a clean EvalSet document (None: not one) holds a case."""
    return isinstance(document, dict) and bool(document.get("eval_cases"))
