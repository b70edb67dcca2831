"""``quorum-state``: the raft election state a KRaft node keeps beside ``__cluster_metadata-0``.

Models raft's ``FileQuorumStateStore.readStateFromFile`` and ``ElectionState.fromQuorumStateData``: the first
line is a JSON object holding ``QuorumStateData`` (``raft/src/main/resources/common/message/QuorumStateData.json``)
as its generated JSON converter writes it, plus ``data_version`` (0 or 1). Version 0 has ``clusterId``,
``appliedOffset`` and ``currentVoters``; version 1 drops them and adds ``votedDirectoryId``. Every field of the
version is mandatory. ``leaderId`` -1 means no known leader and ``votedId`` -1 no vote.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from kafkatool.errors import DecodeError
from kafkatool.schema.kafka_message import Field, Message

DATA_VERSION = "data_version"
LOWEST_VERSION = 0
HIGHEST_VERSION = 1
UNKNOWN_LEADER_ID = -1
NOT_VOTED = -1
QUORUM_STATE_DATA = Message("QuorumStateData", "0-1", fields=(
    Field("ClusterId", "string", "0"),
    Field("LeaderId", "int32", default=-1),
    Field("LeaderEpoch", "int32", default=-1),
    Field("VotedId", "int32", default=-1),
    Field("VotedDirectoryId", "uuid", "1+"),
    Field("AppliedOffset", "int64", "0"),
    Field("CurrentVoters", "[]Voter", "0", nullable="0", fields=(Field("VoterId", "int32", "0"),)),
))
"""``QuorumStateData``'s declaration (the file holds its JSON converter form, not its binary one)."""
FIELDS: dict[int, tuple[str, ...]] = {v: tuple(f.json_name for f in QUORUM_STATE_DATA.fields if f.present(v))
                                       for v in range(LOWEST_VERSION, HIGHEST_VERSION + 1)}
"""The mandatory JSON fields of each ``QuorumStateData`` version."""


@dataclass(frozen=True, slots=True)
class QuorumState:
    """The election state as ``ElectionState`` holds it: epoch, leader, vote and (version 0) voters."""

    data_version: int
    epoch: int
    leader_id: int | None
    voted_id: int | None
    voted_directory_id: str | None
    voters: tuple[int, ...]

    def to_json(self) -> dict[str, Any]:
        """Stable JSON form."""
        return {"data_version": self.data_version, "epoch": self.epoch, "leader_id": self.leader_id,
                "voted_id": self.voted_id, "voted_directory_id": self.voted_directory_id,
                "voters": list(self.voters)}


def _int(doc: dict[str, Any], name: str, version: int) -> int:
    value = doc.get(name)
    if value is None:
        raise DecodeError(name, f"QuorumStateData: unable to locate field '{name}', which is mandatory in version "
                          f"{version}")
    if isinstance(value, bool) or not isinstance(value, int):
        raise DecodeError(name, f"QuorumStateData: field '{name}' is not an integer: {value!r}")
    return value


def parse_quorum_state(data: bytes) -> QuorumState:
    """Decode a ``quorum-state`` file; raises :class:`DecodeError` where Kafka's store throws."""
    text = data.decode("utf-8", errors="replace")
    line = text.split("\n", 1)[0].rstrip("\r")
    if not text:
        raise DecodeError("file", "File ended prematurely.", 0)
    try:
        doc = json.loads(line)
    except json.JSONDecodeError as err:
        raise DecodeError("json", f"not JSON: {err.msg}", err.pos) from None
    if not isinstance(doc, dict):
        raise DecodeError("json", f"Deserialized node {line} is not an object node", 0)
    if DATA_VERSION not in doc:
        raise DecodeError(DATA_VERSION, f"Deserialized node {line} does not have {DATA_VERSION} field", 0)
    version = _int(doc, DATA_VERSION, 0)
    if not LOWEST_VERSION <= version <= HIGHEST_VERSION:
        raise DecodeError(DATA_VERSION, f"data_version ({version}) is not within the min ({LOWEST_VERSION}) and max "
                          f"({HIGHEST_VERSION}) supported version", 0)
    for name in FIELDS[version]:
        if name not in doc:
            raise DecodeError(name, f"QuorumStateData: unable to locate field '{name}', which is mandatory in "
                              f"version {version}")
    leader = _int(doc, "leaderId", version)
    voted = _int(doc, "votedId", version)
    voters: tuple[int, ...] = ()
    if version == 0 and isinstance(doc.get("currentVoters"), list):
        voters = tuple(_int(v, "voterId", version) for v in doc["currentVoters"] if isinstance(v, dict))
    directory = doc.get("votedDirectoryId") if version >= 1 else None
    if directory is not None and not isinstance(directory, str):
        raise DecodeError("votedDirectoryId", f"QuorumStateData: votedDirectoryId is not a string: {directory!r}")
    return QuorumState(version, _int(doc, "leaderEpoch", version),
                       None if leader == UNKNOWN_LEADER_ID else leader,
                       None if voted == NOT_VOTED else voted,
                       directory if voted != NOT_VOTED else None, voters)
