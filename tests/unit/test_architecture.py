"""The dependency direction of DEVELOPERS' layers, enforced on every import in the package.

errors/model/shell/process -> schema -> storage -> reading/writing -> engine -> render -> commands -> cli; the fleet
pipeline (Spark and local engines) depends only on reading and model, plus the pure engines whose output its
``producers`` and ``findings`` tables are (a second implementation of check or replay would be worse than
the import), storage's rules, and writing for its Parquet output. Commands may import fleet; nothing else
does. Only render imports rich; only reading/writing open files. ``storage`` holds Kafka's storage rules,
pure, each written once: it imports only errors, model and schema (and a few pure standard modules), and
no module outside it defines its own leader-epoch cache, producer-state entry or append check, batch-boundary
test, sequence arithmetic, Java hash order, swap rule, truncation rule or codec label table (three rules have a
home below storage, where a lower layer needs them: ``RULE_HOMES``). ``analysis`` composes the engines for
report, scan and the commands (it may read, never writes or renders); commands import analysis, never each
other (``test_commands_layering``).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "kafkatool"

RANK = {"errors": 0, "model": 0, "shell": 0, "process": 0, "schema": 1, "storage": 2, "reading": 3, "writing": 3,
        "engine": 4, "analysis": 5, "render": 6, "commands": 7, "cli": 8, "__main__": 9, "__init__": 0, "fleet": 6,
        "_native": 0}
# Layers a module may import besides those of lower rank.
EXTRA: dict[str, set[str]] = {"fleet": {"reading", "model", "errors", "process", "schema", "storage", "writing",
                                         "engine", "analysis"}}
# Layers that may never be imported by the given layer, whatever the rank.
FORBIDDEN: dict[str, set[str]] = {"engine": {"reading", "writing"}, "analysis": {"writing"}}


def layer_of(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def imports(path: Path) -> list[tuple[int, str]]:
    tree = ast.parse(path.read_text(), str(path))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            if node.level:
                continue
            found.append((node.lineno, node.module))
            found += [(node.lineno, f"{node.module}.{a.name}") for a in node.names if node.module == "kafkatool"]
    return found


def modules() -> list[tuple[str, Path]]:
    out = []
    for path in PACKAGE.rglob("*.py"):
        rel = path.relative_to(PACKAGE.parent).with_suffix("")
        out.append((".".join(rel.parts), path))
    return out


def test_every_module_has_a_known_layer() -> None:
    for name, _ in modules():
        layer = layer_of(name)
        assert layer in RANK or layer in EXTRA, f"{name}: unknown layer {layer!r}"


def test_imports_follow_the_layer_direction() -> None:
    problems = []
    for name, path in modules():
        mine = layer_of(name)
        for line, target in imports(path):
            if not target.startswith("kafkatool"):
                continue
            theirs = layer_of(target)
            if theirs not in RANK and theirs not in EXTRA:
                theirs = "__init__"  # a name defined in kafkatool/__init__.py
            if theirs == mine or target == "kafkatool":
                continue
            if mine in EXTRA:
                ok = theirs in EXTRA[mine]
            else:
                ok = RANK.get(theirs, 99) < RANK[mine] and theirs not in FORBIDDEN.get(mine, set())
            if not ok:
                problems.append(f"{path.relative_to(PACKAGE.parent)}:{line}: {mine} imports {target}")
    assert not problems, "\n".join(problems)


def test_only_render_imports_rich() -> None:
    bad = []
    for name, path in modules():
        if layer_of(name) == "render":
            continue
        for line, target in imports(path):
            if target == "rich" or target.startswith("rich."):
                bad.append(f"{name}:{line}")
    assert not bad, bad


def test_only_reading_and_writing_open_files() -> None:
    bad = []
    for name, path in modules():
        if layer_of(name) in ("reading", "writing"):
            continue
        tree = ast.parse(path.read_text())
        # Functions imported from the reading/writing layers are the sanctioned way to touch files.
        sanctioned = {a.asname or a.name for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)
                      and (node.module or "").startswith(("kafkatool.reading", "kafkatool.writing"))
                      for a in node.names}
        for node in ast.walk(tree):
            if isinstance(node, ast.Call):
                fn = node.func
                called = fn.id if isinstance(fn, ast.Name) else fn.attr if isinstance(fn, ast.Attribute) else ""
                if isinstance(fn, ast.Name) and called in sanctioned:
                    continue
                if isinstance(fn, ast.Attribute) and isinstance(fn.value, ast.Name) and fn.value.id in sanctioned:
                    continue
                if called in ("open", "read_bytes", "read_text", "write_bytes", "write_text", "mmap"):
                    bad.append(f"{name}:{node.lineno}: {called}()")
    assert not bad, bad


# The standard modules storage may use: none of them reads or writes anything.
PURE_STDLIB = {"__future__", "collections", "collections.abc", "dataclasses", "typing", "enum", "functools",
               "itertools", "bisect", "math"}


def test_storage_imports_only_errors_model_schema_and_pure_stdlib() -> None:
    bad = []
    for name, path in modules():
        if layer_of(name) != "storage":
            continue
        for line, target in imports(path):
            if target.startswith("kafkatool"):
                if layer_of(target) not in ("errors", "model", "schema", "storage"):
                    bad.append(f"{name}:{line}: {target}")
            elif target not in PURE_STDLIB:
                bad.append(f"{name}:{line}: {target}")
    assert not bad, bad


# A leader-epoch cache, or one of its rules, defined as a class or function of its own.
EPOCH_CACHE_CLASS = re.compile(r"(?i)epoch\w*cache|^_?epochs$")
EPOCH_CACHE_RULE = re.compile(r"^_*(cache_)?(assign(_epoch)?|truncate_from_(end|start)|end_offset_for|"
                              r"drop_entries_from)$")


def epoch_cache_definitions(source: str, name: str) -> list[str]:
    """Classes named like an epoch cache, and functions named like one of its rules, that do not simply hand
    the work to ``kafkatool.storage.LeaderEpochCache`` (a loop-free body that names it)."""
    found = []
    for node in ast.walk(ast.parse(source, name)):
        if isinstance(node, ast.ClassDef) and EPOCH_CACHE_CLASS.search(node.name):
            found.append(f"{name}:{node.lineno}: class {node.name}")
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and EPOCH_CACHE_RULE.match(node.name):
            inner = list(ast.walk(node))
            delegates = any(isinstance(n, ast.Name) and n.id == "LeaderEpochCache" for n in inner)
            loops = any(isinstance(n, ast.For | ast.While | ast.comprehension) for n in inner)
            if not delegates or loops:
                found.append(f"{name}:{node.lineno}: def {node.name}")
    return found


def test_epoch_cache_is_defined_only_in_storage() -> None:
    found = []
    for name, path in modules():
        if layer_of(name) != "storage":
            found += epoch_cache_definitions(path.read_text(), name)
    assert not found, "define the leader-epoch cache once, in kafkatool.storage.epoch:\n" + "\n".join(found)


def test_the_epoch_cache_scan_catches_a_copy() -> None:
    copies = {
        "class _Epochs:\n    pass\n": "class _Epochs",
        "class LeaderEpochFileCache:\n    pass\n": "class LeaderEpochFileCache",
        "def cache_truncate_from_end(cache, offset):\n    while cache and cache[-1][1] >= offset:\n"
        "        cache.pop()\n": "def cache_truncate_from_end",
        "def end_offset_for(epochs, requested, log_end):\n    return -1, -1\n": "def end_offset_for",
        "class W:\n    def _assign_epoch(self, epoch, offset):\n        self.epochs = [e for e in self.epochs]\n":
            "def _assign_epoch",
    }
    for source, what in copies.items():
        assert [f for f in epoch_cache_definitions(source, "m") if what in f], source
    delegating = "def cache_end_offset_for(cache, epoch, leo):\n" \
                 "    return LeaderEpochCache.from_pairs(cache).end_offset_for(epoch, leo)\n"
    assert epoch_cache_definitions(delegating, "m") == []


# Kafka's storage rules, defined outside storage: a producer-state entry or its append checks, a batch-boundary
# test, sequence arithmetic, a Java hash order, the swap rules, the follower truncation rule, a codec label table.
# Homes outside storage, where a lower layer needs the rule (storage's docstring names them).
RULE_HOMES = {"kafkatool.schema.log_segment": {"boundary"}, "kafkatool.model": {"sequence", "codecs"},
              "kafkatool.schema.codecs": {"codecs"}}
RULE_CLASSES = {"producer state": re.compile(r"^_?(producer(state)?entry|producerappendinfo|_?producerstate|psm|"
                                              r"batchmetadata|txnmetadata)$", re.I)}
RULE_FUNCTIONS = {
    "boundary": re.compile(r"^_*(\w*plausible\w*|confirmed_\w*(boundary|batch_start)|\w*batch_boundary\w*|"
                           r"is_boundary)$", re.I),
    "sequence": re.compile(r"^_*(increment_sequences?|decrement_sequence|in_sequence|check_sequence)$", re.I),
    "java hash": re.compile(r"^_*(java_\w*hash\w*|\w*hash_?map_order|\w*hash_set_order)$", re.I),
    "swaps": re.compile(r"^_*(swap_range|min_cleaned\w*|remove_temp_files\w*|sort_temp_files|"
                        r"is_incomplete_split)$", re.I),
    "truncation": re.compile(r"^_*(get_?)?offset_?truncation_?state$", re.I),
}
CODEC_NAMES = {"gzip", "snappy", "lz4", "zstd"}


def _literal_strings(node: ast.AST) -> set[str]:
    return {n.value for n in ast.walk(node) if isinstance(n, ast.Constant) and isinstance(n.value, str)}


def _delegates(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """A loop-free body that hands the work to a function imported from storage or the rule's home."""
    inner = list(ast.walk(fn))
    calls = {n.func.id for n in inner if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)} - {fn.name}
    loops = any(isinstance(n, ast.For | ast.While | ast.comprehension) for n in inner)
    return not loops and any(RULE_FUNCTIONS_ANY.match(c) for c in calls)


RULE_FUNCTIONS_ANY = re.compile("|".join(f"(?:{p.pattern})" for p in RULE_FUNCTIONS.values()), re.I)


def rule_copies(source: str, name: str) -> list[str]:
    """Definitions in module ``name`` of a storage rule that storage (or the rule's named home) holds."""
    homes = RULE_HOMES.get(name, set())
    found = []
    for node in ast.walk(ast.parse(source, name)):
        if isinstance(node, ast.ClassDef):
            found += [f"{name}:{node.lineno}: class {node.name} ({rule})" for rule, pattern in RULE_CLASSES.items()
                      if pattern.match(node.name) and rule not in homes]
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            found += [f"{name}:{node.lineno}: def {node.name} ({rule})" for rule, pattern in RULE_FUNCTIONS.items()
                      if pattern.match(node.name) and rule not in homes and not _delegates(node)]
        elif isinstance(node, ast.Assign | ast.AnnAssign) and "codecs" not in homes and node.value is not None \
                and len(_literal_strings(node.value) & CODEC_NAMES) >= 3:
            found.append(f"{name}:{node.lineno}: a codec label table (codecs)")
    return found


def test_storage_rules_are_defined_only_in_storage() -> None:
    found = []
    for name, path in modules():
        if layer_of(name) != "storage":
            found += rule_copies(path.read_text(), name)
    assert not found, "Kafka's storage rules live once, in kafkatool.storage (see its docstring):\n" + "\n".join(found)


def test_the_rule_scan_catches_a_copy() -> None:
    copies = {
        "class ProducerStateEntry:\n    pass\n": "class ProducerStateEntry",
        "class _Psm:\n    pass\n": "class _Psm",
        "class ProducerAppendInfo:\n    pass\n": "class ProducerAppendInfo",
        "def _plausible_v2(buf, pos, end):\n    return None\n": "def _plausible_v2",
        "def confirmed_boundary(buf, pos):\n    return buf[pos] == 2\n": "def confirmed_boundary",
        "def _in_sequence(last, first):\n    return first == last + 1\n": "def _in_sequence",
        "def java_hash_map_order(keys):\n    return sorted(keys)\n": "def java_hash_map_order",
        "def swap_range(offsets):\n    return min(offsets), max(offsets)\n": "def swap_range",
        "def offset_truncation_state(a, b):\n    return min(a, b)\n": "def offset_truncation_state",
        "LABELS = ('none', 'gzip', 'snappy', 'lz4', 'zstd')\n": "codec label table",
        "_BY = {0: 'none', 1: 'gzip', 2: 'snappy', 3: 'lz4'}\n": "codec label table",
    }
    for source, what in copies.items():
        assert [f for f in rule_copies(source, "kafkatool.engine.m") if what in f], source
    fine = "X = ('gzip',)\nclass Producer:\n    pass\n" \
           "def confirmed_boundary(buf, pos):\n    return confirmed_batch_start(buf, pos, len(buf))\n"
    assert rule_copies(fine, "kafkatool.engine.m") == []
    assert rule_copies("def plausible_batch_header(b, p, e):\n    return None\n", "kafkatool.schema.log_segment") == []


# Byte decoding belongs to schema (and the reading code that hands it bytes): nothing above reads fields off bytes.
DECODING_CALLS = {"from_bytes", "unpack", "unpack_from", "iter_unpack", "read_varint", "read_unsigned_varint",
                  "read_varlong"}
DECODING_MODULES = {"struct", "kafkatool.schema.varint"}


def byte_decoding(source: str, name: str) -> list[str]:
    """Imports of byte-decoding modules and calls of byte-decoding functions in ``source``."""
    found = []
    for node in ast.walk(ast.parse(source, name)):
        if isinstance(node, ast.Import):
            found += [f"{name}:{node.lineno}: import {a.name}" for a in node.names if a.name in DECODING_MODULES]
        elif isinstance(node, ast.ImportFrom) and node.module in DECODING_MODULES:
            found.append(f"{name}:{node.lineno}: from {node.module} import ...")
        elif isinstance(node, ast.Call):
            fn = node.func
            called = fn.id if isinstance(fn, ast.Name) else fn.attr if isinstance(fn, ast.Attribute) else ""
            if called in DECODING_CALLS:
                found.append(f"{name}:{node.lineno}: {called}()")
    return found


def test_only_schema_and_reading_decode_bytes() -> None:
    found = []
    for name, path in modules():
        if layer_of(name) in ("engine", "analysis", "render", "commands", "fleet", "cli", "storage"):
            found += byte_decoding(path.read_text(), name)
    assert not found, "decode bytes in kafkatool.schema, not here:\n" + "\n".join(found)


def test_the_decoding_scan_catches_a_decoder() -> None:
    for source in ("import struct\n", "from kafkatool.schema.varint import read_varint\n",
                   "x = int.from_bytes(b[0:4], 'big')\n", "v, n = read_unsigned_varint(buf, 0)\n"):
        assert byte_decoding(source, "m"), source
    assert byte_decoding("from kafkatool.schema import record_batch\nrecord_batch.parse_batch(b)\n", "m") == []
