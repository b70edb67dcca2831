"""``.kafka_cleanshutdown``: the clean-shutdown marker (Kafka's ``CleanShutdownFileHandler``).

Its presence is what tells ``LogManager`` the broker shut down cleanly. Old brokers left it empty;
since KIP-966 it holds ``{"version":0,"brokerEpoch":N}``. Kafka reads the epoch leniently: content it
cannot parse yields no epoch, but the marker still counts.
"""

from __future__ import annotations

import json

from kafkatool.model import CleanShutdown

CURRENT_VERSION = 0


def parse_clean_shutdown(data: bytes) -> CleanShutdown:
    """Decode the marker; never fails, since Kafka treats any marker as a clean shutdown."""
    if not data.strip():
        return CleanShutdown("empty", None, None)
    try:
        doc = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as err:
        return CleanShutdown("unparsable", None, None, f"not JSON ({err}); Kafka reads no broker epoch")
    if not isinstance(doc, dict) or not isinstance(doc.get("brokerEpoch"), int):
        return CleanShutdown("unparsable", None, None, "no integer brokerEpoch; Kafka reads no broker epoch")
    version = doc.get("version")
    return CleanShutdown("json", version if isinstance(version, int) else None, doc["brokerEpoch"])


def build_clean_shutdown(broker_epoch: int | None) -> bytes:
    """Marker bytes: JSON with no newline, or empty for the old format (``None``)."""
    if broker_epoch is None:
        return b""
    return json.dumps({"version": CURRENT_VERSION, "brokerEpoch": broker_epoch}, separators=(",", ":")).encode()
