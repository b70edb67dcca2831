"""The Apache Kafka release lines the live oracle runs, in one place, and the command that fetches them.

``python -m tests.kafka.versions fetch`` resolves each version's broker, tools and clients from Maven Central
into the local Maven cache (through ``tests/kafka/pom.xml``) and compiles the workload driver against that
version's clients; everything after it runs offline. Nothing of Kafka is kept in the repository.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import zipfile
from functools import cache
from pathlib import Path

HERE = Path(__file__).resolve().parent

#: The newest patch of every minor line from 3.9 on, as Maven Central lists them (checked 2026-11-28).
VERSIONS: tuple[str, ...] = ("3.9.2", "4.0.2", "4.1.2", "4.2.2", "4.3.1", "4.4.0")
NEWEST = VERSIONS[-1]

#: JVM options for every Kafka process the harness starts: small heaps, quick start-up on 2 cores.
JVM_OPTS: tuple[str, ...] = (
    "-Xms64m", "-Xmx512m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Xss1m",
    "-Djava.awt.headless=true", "-Djava.net.preferIPv4Stack=true",
)


class JarsMissing(RuntimeError):
    """A version's jars were not fetched (run ``python -m tests.kafka.versions fetch``)."""


def selected_versions() -> tuple[str, ...]:
    """The versions to test: all, or the comma list in ``KAFKATOOL_KAFKA_VERSIONS``."""
    wanted = os.environ.get("KAFKATOOL_KAFKA_VERSIONS", "").strip()
    if not wanted or wanted == "all":
        return VERSIONS
    chosen = tuple(v.strip() for v in wanted.split(",") if v.strip())
    unknown = [v for v in chosen if v not in VERSIONS]
    if unknown:
        raise SystemExit(f"KAFKATOOL_KAFKA_VERSIONS names unsupported versions {unknown}; supported: {VERSIONS}")
    return chosen


def target(version: str) -> Path:
    """The Maven build directory of one version."""
    return HERE / "target" / version


def classpath(version: str) -> str:
    """The runtime classpath of ``version``'s broker, tools, clients and the compiled workload driver."""
    cp_file = target(version) / "classpath.txt"
    classes = target(version) / "classes"
    if not cp_file.is_file() or not (classes / "kafkatool" / "oracle" / "Oracle.class").is_file():
        raise JarsMissing(f"Kafka {version} is not fetched: run `python -m tests.kafka.versions fetch`")
    return f"{classes}{os.pathsep}{cp_file.read_text().strip()}"


def available(version: str) -> bool:
    """Whether ``version`` is fetched and built."""
    try:
        classpath(version)
    except JarsMissing:
        return False
    return True


@cache
def main_class(version: str, simple_name: str) -> str:
    """The fully qualified name of a Kafka main class, wherever this version keeps it.

    DumpLogSegments, for one, is ``kafka.tools.DumpLogSegments`` (Scala, core) up to 4.0 and
    ``org.apache.kafka.tools.DumpLogSegments`` (Java, tools) later.
    """
    candidates = (f"kafka/tools/{simple_name}.class", f"org/apache/kafka/tools/{simple_name}.class",
                  f"kafka/{simple_name}.class")
    for jar in classpath(version).split(os.pathsep):
        if not jar.endswith(".jar") or "kafka" not in Path(jar).name:
            continue
        with zipfile.ZipFile(jar) as zf:
            names = set(zf.namelist())
        for candidate in candidates:
            if candidate in names:
                return candidate.removesuffix(".class").replace("/", ".")
    raise JarsMissing(f"no class {simple_name} in Kafka {version}'s jars")


def java(version: str, main: str, *args: str, log_file: Path | None = None,
         extra_jvm: tuple[str, ...] = ()) -> list[str]:
    """The command line that runs ``main`` on ``version``'s classpath (logging to ``log_file`` if given)."""
    logging = ["-Dorg.slf4j.simpleLogger.defaultLogLevel=info",
               "-Dorg.slf4j.simpleLogger.showDateTime=true",
               "-Dorg.slf4j.simpleLogger.dateTimeFormat=yyyy-MM-dd'T'HH:mm:ss.SSS"]
    logging.append(f"-Dorg.slf4j.simpleLogger.logFile={log_file}" if log_file else
                   "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn")
    return [java_binary(), *JVM_OPTS, *extra_jvm, *logging, "-cp", classpath(version), main, *args]


def java_binary() -> str:
    """The ``java`` launcher (JAVA_HOME first)."""
    home = os.environ.get("JAVA_HOME")
    if home and (Path(home) / "bin" / "java").is_file():
        return str(Path(home) / "bin" / "java")
    found = shutil.which("java")
    if not found:
        raise JarsMissing("no java on PATH (Java 17 is needed for the live oracle)")
    return found


#: Terminal escape sequences: CSI (``ESC [ ... m``), OSC (``ESC ] ... BEL``) and two-byte ones.
_ESCAPES = re.compile(rb"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)|[@-Z\\-_])")


def run_plain(cmd: list[str], cwd: Path) -> None:
    """Run ``cmd`` with its stdout and stderr passed on to ours line by line, every escape sequence removed.

    Debian's Maven 3.8.7 (jansi 2.4) writes ``ESC[0m`` on stdout and on stderr when it starts and when it exits,
    whatever ``-B``, ``-Dstyle.color=never``, ``--no-transfer-progress`` or ``MAVEN_OPTS=-Djansi.mode=strip`` /
    ``-Djansi.passthrough=true`` / ``-Djansi.force=false`` say (each tried): a log written to a pipe or a file
    would hold them. Raises ``CalledProcessError`` as ``subprocess.run(check=True)`` does."""
    proc = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    assert proc.stdout is not None
    out = sys.stdout.buffer
    for line in proc.stdout:
        plain = _ESCAPES.sub(b"", line)
        if plain:
            out.write(plain)
            out.flush()
    code = proc.wait()
    if code:
        raise subprocess.CalledProcessError(code, cmd)


def fetch(versions: tuple[str, ...] = VERSIONS, quiet: bool = True) -> None:
    """Resolve and build every version in ``versions`` (Maven Central into the local cache)."""
    mvn = shutil.which("mvn")
    if not mvn:
        raise SystemExit("mvn not found: install Maven (Debian package `maven`)")
    for version in versions:
        cmd = [mvn, "-B", "-Dstyle.color=never", *(["-q"] if quiet else []), f"-Dkafka.version={version}", "compile"]
        print(f"fetching Kafka {version} ...", file=sys.stderr, flush=True)
        run_plain(cmd, HERE)
        classpath(version)


def main(argv: list[str] | None = None) -> int:
    """``fetch`` the jars, or print the ``classpath`` / ``versions``."""
    parser = argparse.ArgumentParser(prog="python -m tests.kafka.versions", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="cmd", required=True)
    fetch_p = sub.add_parser("fetch", help="resolve the jars from Maven Central and build the workload driver")
    fetch_p.add_argument("versions", nargs="*", default=list(VERSIONS))
    fetch_p.add_argument("--verbose", action="store_true")
    cp_p = sub.add_parser("classpath", help="print one version's classpath")
    cp_p.add_argument("version", choices=VERSIONS)
    sub.add_parser("versions", help="print the supported versions")
    args = parser.parse_args(argv)
    if args.cmd == "fetch":
        fetch(tuple(args.versions), quiet=not args.verbose)
    elif args.cmd == "classpath":
        print(classpath(args.version))
    else:
        print("\n".join(VERSIONS))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
