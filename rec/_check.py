"""``rec check PATH...``: every problem in EvalSets, legacy eval files, configs and cassettes."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from rec._pydantic_plugins import skip_plugin_discovery

__all__ = ["check_command"]


@click.command("check")
@click.argument("paths", nargs=-1, required=True, type=click.Path(path_type=Path))
def check_command(paths: tuple[Path, ...]) -> None:
    """Validate eval files, eval configs and cassettes strictly (folders are searched).

    Exit status: 0 no problems, 1 problems found, 2 usage error.
    """
    from cassettes._evalset_quick import clean_evalset_file
    from cassettes._file_names import files_to_check

    files = files_to_check(paths)
    if not files:
        raise click.UsageError("no eval files, configs or cassettes found in the given paths")
    # A clean EvalSet is told without pydantic; every other file gets the strict check
    # (pydantic's models, imported only then), which names each problem.
    to_check = [file for file in files if not clean_evalset_file(file)]
    problems = []
    if to_check or len(files) > 1:
        with skip_plugin_discovery():
            from cassettes._checking import cases_in_two_files, check_file

            for file in to_check:
                problems.extend(check_file(file))
            # Cases are known by eval set id and eval id across files (results, merge, shards).
            problems.extend(cases_in_two_files(files))
    for problem in problems:
        click.echo(str(problem))
    errors = [p for p in problems if p.severity == "error"]
    noun = "problem" if len(errors) == 1 else "problems"
    click.echo(f"rec check: {len(files)} file(s), {len(errors)} {noun}", err=True)
    if errors:
        sys.exit(1)
