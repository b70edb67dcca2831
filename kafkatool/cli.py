"""The ``kafkatool`` command line: one Typer app, one module per subcommand."""

from __future__ import annotations

from typing import Annotated, Any

import typer
import typer.core

from kafkatool import __version__

#: ``kafkatool.schema.codecs.DEFAULT_MAX_OUTPUT`` (the decompression bound, 64 MiB), repeated here so
#: ``kafkatool --help`` imports neither the schema nor the model (tests/test_cli_startup.py keeps them equal).
DEFAULT_MAX_OUTPUT = 64 << 20

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
    "salvage": "salvage",
}
GROUPS: dict[str, str] = {"fixture": "fixture"}
SUMMARIES: dict[str, str] = {
    "dump-segment": "Decode Kafka log segments, indexes, snapshots and checkpoint files, and report damage.",
    "check": "Cross-check every file of a broker's log dirs and say what Kafka will do with what is wrong.",
    "replay-producers": "Replay a partition's idempotent and transactional producer state from its log.",
    "simulate-restart": "Simulate a broker start on a log dir: recovery, truncation, producer state, and what is "
                        "lost.",
    "simulate-replication": "Step one partition's leader and followers through a scenario, or compare real "
                            "replicas' log dirs:\nHW, ISR, divergence, truncation, losses.",
    "scan": "Scan a fleet's log dirs into Parquet tables: batches, partitions, producers, findings.",
    "metadata": "Load a KRaft metadata log as Kafka does and print the cluster's metadata image.",
    "report": "Write a self-contained HTML incident report: verdict, segment maps, epochs, producers, replicas, "
              "findings.",
    "transactions": "Find hanging transactions in broker log dirs: open, older than the timeout, and no "
                    "coordinator to end them.",
    "groups": "List groups (classic, consumer, share, streams): members, assignments, offsets and lag, share state.",
    "salvage": "Recover every trustworthy batch of a damaged broker's partitions, beyond what Kafka's recovery "
               "keeps:\na repaired log dir, an export of the records, and the account.",
    "fixture": "Build deterministic Kafka log dirs (healthy or damaged) from named scenarios.",
}
"""Each subcommand's one-line help (its docstring's first paragraph), so ``kafkatool --help`` lists them all
without importing any (a test keeps this equal to the docstrings)."""


def _version(value: bool) -> None:
    if value:
        typer.echo(f"kafkatool {__version__}")
        raise typer.Exit(0)


def root(
    ctx: typer.Context,
    version: Annotated[bool, typer.Option("--version", callback=_version, is_eager=True,
                                          help="Print the version and exit.")] = False,
    max_decompressed_bytes: Annotated[int, typer.Option(
        "--max-decompressed-bytes", metavar="N", min=1, max=(1 << 63) - 1,
        envvar="KAFKATOOL_MAX_DECOMPRESSED_BYTES",
        help="Refuse to inflate any compressed batch or wrapper beyond N bytes (a decompression-bomb "
        "defect instead), for every subcommand.")] = DEFAULT_MAX_OUTPUT,
    fs_option: Annotated[list[str] | None, typer.Option(
        "--fs-option", metavar="KEY=VALUE",
        help="An option of the object store that s3://, gs://, abfs:// or hdfs:// inputs and outputs are read "
        "and written through (pyarrow.fs): endpoint, region, anonymous, scheme, ...; repeatable. Credentials come "
        "from the environment, profiles or instance roles, as the store's own tools take them.")] = None,
) -> None:
    """Forensic toolkit for Apache Kafka broker data directories."""
    # The run's read limits, current until the command ends (reading functions resolve them when a command
    # passes none; the scan's plan carries them to its workers). Imported here: ``--help`` never runs this.
    from kafkatool.errors import KafkatoolError
    from kafkatool.reading.context import reset_limits, reset_roots, set_limits, set_roots
    from kafkatool.reading.objects import forget_listings, parse_fs_options, set_fs_options
    from kafkatool.schema.codecs import ReadLimits

    forget_listings()  # an object store's listings and objects are read afresh by every command
    try:
        set_fs_options(parse_fs_options(fs_option or []))
    except KafkatoolError as err:
        raise typer.BadParameter(str(err), param_hint="--fs-option") from None
    token = set_limits(ReadLimits(max_decompressed_bytes))
    roots = set_roots(())  # the evidence trees: each path the command reads registers its own
    ctx.call_on_close(lambda: (reset_roots(roots), reset_limits(token)))


class _LazyRoot(typer.core.TyperGroup):
    """The root command group that imports a subcommand's module only when that subcommand runs: its
    ``--help`` lists :data:`SUMMARIES` (the start-up of ``kafkatool --help`` is the interpreter's and Typer's)."""

    def list_commands(self, ctx: typer.Context) -> list[str]:  # type: ignore[override]
        return [*COMMANDS, *GROUPS]

    def get_command(self, ctx: typer.Context, cmd_name: str) -> Any:  # type: ignore[override]
        if cmd_name not in self.commands and cmd_name in SUMMARIES:
            full = typer.main.get_command(build_app(cmd_name))
            self.commands[cmd_name] = full.commands[cmd_name]  # type: ignore[attr-defined]
        return self.commands.get(cmd_name)  # type: ignore[return-value]

    def format_commands(self, ctx: typer.Context, formatter: Any) -> None:  # type: ignore[override]
        names = self.list_commands(ctx)
        limit = formatter.width - 6 - max(len(n) for n in names)
        rows = [(n, typer.core.TyperCommand(n, help=SUMMARIES[n]).get_short_help_str(limit)) for n in names]
        with formatter.section("Commands"):
            formatter.write_dl(rows)


def build_app(only: str | None = None, *, lazy: bool = False) -> typer.Typer:
    """The Typer app with every subcommand, with only the subcommand ``only``, or (``lazy``) with each one
    imported when it runs."""
    import importlib

    from kafkatool.commands.help_style import ManStyleCommand

    cli = typer.Typer(
        name="kafkatool",
        help="Forensic toolkit for Apache Kafka broker data directories: decode what is on disk and tell "
        "what Kafka will do with it.",
        no_args_is_help=True,
        add_completion=True,  # --install-completion, --show-completion (bash, zsh, fish; typer's)
        pretty_exceptions_enable=False,
        rich_markup_mode=None,
        context_settings={"help_option_names": ["-h", "--help"]},
        **({"cls": _LazyRoot} if lazy else {}),
    )
    for name, module in COMMANDS.items():
        if not lazy and (only is None or only == name):
            cli.command(name, no_args_is_help=True, cls=ManStyleCommand)(
                importlib.import_module(f"kafkatool.commands.{module}").command)
    for name, module in GROUPS.items():
        if not lazy and (only is None or only == name):
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
    """Console-script entry point: the named subcommand alone when the first argument names one, else the lazy
    root (``--help``, ``--version``, global options before the subcommand)."""
    import sys

    first = sys.argv[1] if len(sys.argv) > 1 else None
    if first in COMMANDS or first in GROUPS:
        build_app(first)()
    else:
        build_app(lazy=True)()
