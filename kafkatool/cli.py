"""The ``kafkatool`` command line: one Typer app, one module per subcommand."""

from __future__ import annotations

from typing import Annotated

import typer

from kafkatool import __version__
from kafkatool.schema import codecs

# Subcommands and their modules, in the order --help lists them. A run imports only the module of the
# subcommand it names (interpreter start-up is most of a small run's time); ``app`` has them all.
COMMANDS: dict[str, str] = {
    "dump-segment": "dump_segment",
    "check": "check",
    "replay-producers": "replay_producers",
    "simulate-restart": "simulate_restart",
    "simulate-replication": "simulate_replication",
    "scan": "scan",
    "metadata": "metadata",
    "report": "report",
    "transactions": "transactions",
    "groups": "groups",
}
GROUPS: dict[str, str] = {"fixture": "fixture"}


def _version(value: bool) -> None:
    if value:
        typer.echo(f"kafkatool {__version__}")
        raise typer.Exit(0)


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


def build_app(only: str | None = None) -> typer.Typer:
    """The Typer app with every subcommand, or with only the subcommand ``only``."""
    import importlib

    cli = typer.Typer(
        name="kafkatool",
        help="Forensic toolkit for Apache Kafka broker data directories: decode what is on disk and tell "
        "what Kafka will do with it.",
        no_args_is_help=True,
        add_completion=False,
        pretty_exceptions_enable=False,
        rich_markup_mode=None,
        context_settings={"help_option_names": ["-h", "--help"]},
    )
    for name, module in COMMANDS.items():
        if only is None or only == name:
            cli.command(name, no_args_is_help=True)(importlib.import_module(f"kafkatool.commands.{module}").command)
    for name, module in GROUPS.items():
        if only is None or only == name:
            cli.add_typer(importlib.import_module(f"kafkatool.commands.{module}").app, name=name)
    cli.callback()(root)
    return cli


def __getattr__(name: str) -> typer.Typer:
    """``app``, the full command line, built on first use (tests, ``python -m kafkatool``)."""
    if name == "app":
        globals()["app"] = full = build_app()
        return full
    raise AttributeError(name)


def main() -> None:
    """Console-script entry point: the named subcommand alone when the first argument names one."""
    import sys

    first = sys.argv[1] if len(sys.argv) > 1 else None
    build_app(first if first in COMMANDS or first in GROUPS else None)()
