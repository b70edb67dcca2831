"""``kafkatool fixture``: build small, deterministic Kafka log dirs, healthy or damaged, for tests and drills.

``list`` names the scenarios; ``build`` writes one into a directory. The scenarios live in
:mod:`kafkatool.writing.fixture_recipes`, the writer that lays files out as Kafka's ``UnifiedLog`` /
``LogSegment`` / ``ProducerStateManager`` would in :mod:`kafkatool.writing.fixture_writer`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from kafkatool.commands.common import run_guarded
from kafkatool.commands.help_style import ManStyleCommand
from kafkatool.errors import UnreadableInputError
from kafkatool.writing.fixture_recipes import SCENARIOS, build_scenario, get_scenario

app = typer.Typer(
    name="fixture",
    help="Build deterministic Kafka log dirs (healthy or damaged) from named scenarios.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    context_settings={"help_option_names": ["-h", "--help"]},
)


@app.command("list", cls=ManStyleCommand)
def list_command() -> None:
    """List every scenario with a one-line description (damaged ones are marked)."""

    def body() -> int:
        width = max(len(name) for name in SCENARIOS)
        for s in SCENARIOS.values():
            kind = "damaged" if s.damaged else "clean"
            typer.echo(f"{s.name:<{width}}  {kind:<7}  {s.description}")
        return 0

    run_guarded(body)


@app.command("build", no_args_is_help=True, cls=ManStyleCommand)
def build_command(
    scenario: Annotated[str, typer.Argument(help="Scenario name (see 'kafkatool fixture list').",
                                            metavar="SCENARIO", show_default=False)],
    out_dir: Annotated[Path, typer.Argument(help="Log dir to create (created if missing).", metavar="OUT_DIR",
                                            show_default=False)],
    force: Annotated[bool, typer.Option("--force", help="Replace the contents of a non-empty OUT_DIR that holds "
                                                        "only a previous build (log-dir files and partition "
                                                        "directories).")] = False,
) -> None:
    """Write scenario SCENARIO into OUT_DIR as a broker log dir."""

    def body() -> int:
        get_scenario(scenario)
        try:
            tree = build_scenario(scenario, out_dir, force=force)
        except OSError as err:
            raise UnreadableInputError(str(out_dir), f"cannot write: {err.strerror or err}") from None
        typer.echo(f"{scenario}: {len(tree)} files, {sum(map(len, tree.values()))} bytes in {out_dir}")
        return 0

    run_guarded(body)
