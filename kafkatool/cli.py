"""The ``kafkatool`` command line: one Typer app, one module per subcommand."""

from __future__ import annotations

from typing import Annotated

import typer

from kafkatool import __version__
from kafkatool.commands import (
    check,
    dump_segment,
    fixture,
    groups,
    metadata,
    replay_producers,
    report,
    scan,
    simulate_replication,
    simulate_restart,
    transactions,
)
from kafkatool.schema import codecs

app = typer.Typer(
    name="kafkatool",
    help="Forensic toolkit for Apache Kafka broker data directories: decode what is on disk and tell "
    "what Kafka will do with it.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    context_settings={"help_option_names": ["-h", "--help"]},
)
app.command("dump-segment", no_args_is_help=True)(dump_segment.command)
app.command("check", no_args_is_help=True)(check.command)
app.command("replay-producers", no_args_is_help=True)(replay_producers.command)
app.command("simulate-restart", no_args_is_help=True)(simulate_restart.command)
app.command("simulate-replication", no_args_is_help=True)(simulate_replication.command)
app.command("scan", no_args_is_help=True)(scan.command)
app.command("metadata", no_args_is_help=True)(metadata.command)
app.command("report", no_args_is_help=True)(report.command)
app.command("transactions", no_args_is_help=True)(transactions.command)
app.command("groups", no_args_is_help=True)(groups.command)
app.add_typer(fixture.app, name="fixture")


def _version(value: bool) -> None:
    if value:
        typer.echo(f"kafkatool {__version__}")
        raise typer.Exit(0)


@app.callback()
def root(
    version: Annotated[bool, typer.Option("--version", callback=_version, is_eager=True,
                                          help="Print the version and exit.")] = False,
    max_decompressed_bytes: Annotated[int, typer.Option(
        "--max-decompressed-bytes", metavar="N", min=1, envvar="KAFKATOOL_MAX_DECOMPRESSED_BYTES",
        help="Refuse to inflate any compressed batch or wrapper beyond N bytes (a decompression-bomb "
        "defect instead), for every subcommand.")] = codecs.DEFAULT_MAX_OUTPUT,
) -> None:
    """Forensic toolkit for Apache Kafka broker data directories."""
    codecs.set_max_output(max_decompressed_bytes)


def main() -> None:
    """Console-script entry point."""
    app()
