"""``kafkatool groups``: every group (classic, consumer, share, streams) from ``__consumer_offsets`` with its members
and assignments, share partitions' state from ``__share_group_state``, committed offsets with the lag against the
partitions found in the same log dirs, and a warning for offsets outside a partition's log."""

from __future__ import annotations

from typing import Annotated

import typer

from kafkatool.analysis.groups import groups_document
from kafkatool.commands.common import FollowLinks, OutputFormat, run_guarded
from kafkatool.errors import ExitCode
from kafkatool.render.groups_report import render_groups


def command(
    log_dirs: Annotated[list[str], typer.Argument(help="Broker log dirs (or partition directories).",
                                                 metavar="LOG_DIR...", show_default=False)],
    group: Annotated[str | None, typer.Option("--group", metavar="GROUP", help="Only this group.")] = None,
    fmt: Annotated[OutputFormat, typer.Option("--format", "-f", help="table, json or jsonl.")] = OutputFormat.table,
    follow_links: FollowLinks = False,
) -> None:
    """List groups (classic, consumer, share, streams): members, assignments, offsets and lag, share state."""

    def body() -> int:
        doc = groups_document(list(log_dirs), group=group)
        render_groups(doc, fmt.value)
        return int(ExitCode.DEFECTS if doc["problems"] or doc["defects"] else ExitCode.CLEAN)

    run_guarded(body, follow_links=follow_links)
