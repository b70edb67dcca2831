"""How a subcommand's ``--help`` reads: like its man page.

Typer labels arguments with Python types (``PATH <list[str]>``) and braces required ones in the usage line
(``{PATH}...``); an operator reads ``PATH...`` in the man page's synopsis and should read the same here.
"""

from __future__ import annotations

from typing import Any

import typer
import typer.core


def _no_type_label(ctx: Any) -> None:
    """An argument's help row shows its metavar alone."""
    return None


def _usage_name(param: typer.core.TyperArgument) -> str:
    name = param.metavar or (param.name or "").upper()
    if param.nargs != 1 and not name.endswith("..."):
        name += "..."
    return name if param.required else f"[{name}]"


class ManStyleCommand(typer.core.TyperCommand):
    """A subcommand whose usage line and argument rows use the man page's notation."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        for param in self.params:
            if isinstance(param, typer.core.TyperArgument):
                param.display_type_rich = _no_type_label  # type: ignore[method-assign]

    def collect_usage_pieces(self, ctx: typer.Context) -> list[str]:  # type: ignore[override]
        pieces = [self.options_metavar] if self.options_metavar else []
        for param in self.get_params(ctx):
            if isinstance(param, typer.core.TyperArgument):
                pieces.append(_usage_name(param))
            else:
                pieces.extend(param.get_usage_pieces(ctx))
        return pieces
