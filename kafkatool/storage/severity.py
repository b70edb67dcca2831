"""How bad a defect is, as a rank: the one ordering ``check``, ``scan``, ``report`` and ``--fail-on`` share."""

from __future__ import annotations

from kafkatool.model import Severity

SEVERITY_RANK: dict[str, int] = {"info": 0, "warning": 1, "error": 2}
"""``info`` < ``warning`` < ``error``."""

SEVERITIES: tuple[Severity, ...] = ("info", "warning", "error")


def at_least(severity: str, floor: str) -> bool:
    """Whether ``severity`` is ``floor`` or worse."""
    return SEVERITY_RANK[severity] >= SEVERITY_RANK[floor]
