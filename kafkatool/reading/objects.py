"""Inputs named by URL: ``s3://``, ``gs://``, ``abfs://``, ``hdfs://`` (and ``file://``, which is a local path).

One abstraction, here where inputs are opened, so that every reader gets it: :func:`input_path` turns what a user
gave into a path object, a :class:`pathlib.Path` for a local path (every local fast path unchanged: mmap, the
native walk reading the file itself) or an :class:`ObjectPath` for an object store, which answers the few
``Path`` questions readers ask (``name``, ``parent``, ``/``, ``is_dir``, ``is_file``, ``exists``, ``stat``,
``iterdir``) from the store through :mod:`pyarrow.fs`. ``reading.files`` opens either kind.

Round trips are few and bounded:

* Listing: the first question about a directory of a tree not yet listed lists it *recursively*, once (a prefix
  listing, paginated by the store: a log dir of 10,000 partitions is a few dozen requests, not 10,000); every
  later ``is_dir``/``stat``/``iterdir`` below it is answered from that listing.
* Reading: a small file or a whole segment is one GET (:func:`read_object`, kept in a per-process cache of at
  most ``KAFKATOOL_OBJECT_CACHE_MIB`` MiB, 256 by default, and always the latest object, since a partition's
  analysis reads a segment several times: memory is bounded by the cache and the largest segment); a byte range
  of a segment is one GET of that range and a little more (:func:`read_range`).

Credentials are the libraries' own (environment variables, profiles, instance roles: the AWS SDK's chain for S3,
Google's application default credentials for GCS, Azure's default credential, the Hadoop client's for HDFS); the
``--fs-option KEY=VALUE`` pairs (:func:`set_fs_options`) are handed to the file system's constructor (``endpoint``,
``region``, ``anonymous``, ``scheme``, ...). Object stores have no symbolic links, FIFOs or devices: nothing there
is refused by ``reading.files.survey``. Nothing here writes.
"""

from __future__ import annotations

import os
import stat as stat_mod
import threading
from collections import OrderedDict
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any
from urllib.parse import unquote, urlsplit

from kafkatool.errors import UnreadableInputError, UsageError

#: The URL schemes read through :mod:`pyarrow.fs` (``file://`` is a local path).
SCHEMES = ("s3", "gs", "gcs", "abfs", "abfss", "hdfs", "viewfs")
_ALIASES = {"endpoint": "endpoint_override", "endpoint_url": "endpoint_override"}


def is_url(value: object) -> bool:
    """Whether ``value`` names an input or output by URL (``scheme://...``, a known scheme or ``file``)."""
    if isinstance(value, ObjectPath):
        return True
    text = str(value)
    scheme, sep, _ = text.partition("://")
    return bool(sep) and scheme.lower() in (*SCHEMES, "file")


def is_remote(value: object) -> bool:
    """Whether ``value`` is read from an object store (an :class:`ObjectPath` or a URL of one)."""
    if isinstance(value, ObjectPath):
        return True
    if isinstance(value, Path):
        return False
    return is_url(value) and not str(value).lower().startswith("file://")


class ObjectPath(PurePosixPath):
    """An object (or a directory, i.e. a key prefix) in an object store: ``s3://bucket/a/b`` is held as the pure
    path ``/s3/bucket/a/b`` and shown as its URL. Derived paths (``parent``, ``/``, ``with_suffix``) stay
    :class:`ObjectPath`, and pickle as their parts (to worker processes and Spark executors)."""

    @classmethod
    def from_url(cls, url: str) -> ObjectPath:
        """The path of ``url`` (``scheme://authority/key``)."""
        parts = urlsplit(url)
        if not parts.netloc:
            raise UsageError(f"{url}: a URL needs a bucket, container or host after {parts.scheme}://")
        key = unquote(parts.path).strip("/")
        return cls("/", parts.scheme.lower(), parts.netloc, *(p for p in key.split("/") if p))

    @property
    def scheme(self) -> str:
        """``s3``, ``gs``, ``abfs``, ``hdfs``..."""
        return self.parts[1]

    @property
    def authority(self) -> str:
        """The bucket, container (``container@account.dfs.core.windows.net``) or name node (``host:port``)."""
        return self.parts[2]

    @property
    def key(self) -> str:
        """The object's key below the authority (``""`` at the top)."""
        return "/".join(self.parts[3:])

    def __str__(self) -> str:
        parts = self.parts
        if len(parts) < 3:
            return PurePosixPath.__str__(self)
        return f"{parts[1]}://{'/'.join(parts[2:])}"

    def __repr__(self) -> str:
        return f"ObjectPath({str(self)!r})"

    def __fspath__(self) -> str:
        return str(self)

    # The questions readers ask of a Path, answered from the store's listing.
    def exists(self) -> bool:
        """Whether an object or a prefix of objects is there."""
        return info(self) is not None

    def is_dir(self) -> bool:
        """Whether it is a prefix of objects (a directory)."""
        i = info(self)
        return i is not None and i.is_dir

    def is_file(self) -> bool:
        """Whether it is an object."""
        i = info(self)
        return i is not None and not i.is_dir

    def is_symlink(self) -> bool:
        """Object stores have no symbolic links."""
        return False

    def stat(self) -> ObjectInfo:
        """Size, modification time and mode (a regular file or a directory), as ``os.stat_result`` names them."""
        i = info(self)
        if i is None:
            raise FileNotFoundError(2, "no such object", str(self))
        return i

    def iterdir(self) -> Iterator[ObjectPath]:
        """The objects and prefixes directly below, in no particular order."""
        return iter(children(self))

    def resolve(self, strict: bool = False) -> ObjectPath:
        """Itself: an object's name is already absolute."""
        return self

    def absolute(self) -> ObjectPath:
        """Itself."""
        return self


@dataclass(frozen=True, slots=True)
class ObjectInfo:
    """What a listing says of an entry: its size, its modification time, whether it is a directory."""

    st_size: int
    st_mtime: float
    is_dir: bool
    etag: str | None = None

    @property
    def st_mode(self) -> int:
        """``S_IFDIR`` or ``S_IFREG`` (read-only bits)."""
        return (stat_mod.S_IFDIR | 0o555) if self.is_dir else (stat_mod.S_IFREG | 0o444)

    @property
    def st_mtime_ns(self) -> int:
        """The modification time in nanoseconds."""
        return int(self.st_mtime * 1e9)


def input_path(value: str | os.PathLike[str]) -> Path:
    """The path object for an input (or output) as the user named it: a local :class:`Path` (``file://`` URLs
    included) or an :class:`ObjectPath`. Typed as ``Path``: an :class:`ObjectPath` answers what readers ask."""
    if isinstance(value, ObjectPath | Path):
        return value  # type: ignore[return-value]
    text = os.fspath(value)
    if is_url(text):
        if text.lower().startswith("file://"):
            parts = urlsplit(text)
            if parts.netloc not in ("", "localhost"):
                raise UsageError(f"{text}: a file:// URL names a path on this machine (file:///path)")
            return Path(unquote(parts.path))
        return ObjectPath.from_url(text)  # type: ignore[return-value]
    return Path(text)


# ---- the run's file system options (--fs-option), handed to every unit of work like the read limits ----

_OPTIONS: dict[str, str] = {}


def parse_fs_options(pairs: list[str]) -> dict[str, str]:
    """``KEY=VALUE`` pairs as a dict (``UsageError`` for a pair without ``=``)."""
    out: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise UsageError(f"--fs-option {pair!r}: expected KEY=VALUE (e.g. endpoint=http://127.0.0.1:7070)")
        out[key.strip().lower().replace("-", "_")] = value
    return out


def set_fs_options(options: Mapping[str, str]) -> None:
    """Make ``options`` the file system options of this process (the CLI's ``--fs-option``; a unit of fleet work
    sets its plan's)."""
    global _OPTIONS
    if dict(options) != _OPTIONS:
        _OPTIONS = dict(options)
        _FILESYSTEMS.clear()


def fs_options() -> dict[str, str]:
    """The file system options in force."""
    return dict(_OPTIONS)


@contextmanager
def using_fs_options(options: Mapping[str, str]) -> Iterator[None]:
    """Make ``options`` current inside the ``with`` block (a unit of fleet work in a worker or executor)."""
    before = fs_options()
    set_fs_options(options)
    try:
        yield
    finally:
        set_fs_options(before)


def _value(text: str) -> Any:
    low = text.lower()
    if low in ("true", "yes", "1", "false", "no", "0"):
        return low in ("true", "yes", "1")
    return text


_FILESYSTEMS: dict[tuple[str, str, int], Any] = {}
_LOCK = threading.Lock()


def filesystem(path: ObjectPath) -> tuple[Any, str]:
    """The :mod:`pyarrow.fs` file system holding ``path`` and the path within it (one per scheme and authority
    and process: a forked worker makes its own)."""
    scheme, authority = path.scheme, path.authority
    cache_key = (scheme, authority, os.getpid())
    with _LOCK:
        fs = _FILESYSTEMS.get(cache_key)
        if fs is None:
            fs = _make_filesystem(scheme, authority, _OPTIONS)
            _FILESYSTEMS[cache_key] = fs
    if scheme in ("hdfs", "viewfs"):
        return fs, "/" + path.key
    top = authority.split("@", 1)[0] if scheme in ("abfs", "abfss") else authority
    return fs, f"{top}/{path.key}" if path.key else top


def _make_filesystem(scheme: str, authority: str, options: Mapping[str, str]) -> Any:
    import pyarrow.fs as pafs

    kwargs: dict[str, Any] = {}
    for key, raw in options.items():
        kwargs[_ALIASES.get(key, key)] = _value(raw)
    endpoint = kwargs.get("endpoint_override")
    if isinstance(endpoint, str) and "://" in endpoint:  # endpoint=http://127.0.0.1:7070: the scheme comes with it
        kwargs.setdefault("scheme", endpoint.split("://", 1)[0])
        kwargs["endpoint_override"] = endpoint.split("://", 1)[1].rstrip("/")
    try:
        if scheme == "s3":
            return pafs.S3FileSystem(**kwargs)
        if scheme in ("gs", "gcs"):
            return pafs.GcsFileSystem(**kwargs)
        if scheme in ("abfs", "abfss"):
            host = authority.split("@", 1)[1] if "@" in authority else ""
            kwargs.setdefault("account_name", host.split(".", 1)[0])
            return pafs.AzureFileSystem(**kwargs)
        if scheme in ("hdfs", "viewfs"):
            host, _, port = authority.partition(":")
            return pafs.HadoopFileSystem(host or "default", int(port or 0), **kwargs)
    except TypeError as err:
        raise UsageError(f"--fs-option for {scheme}://: {err}") from None
    except (OSError, ValueError, ImportError) as err:
        raise UsageError(f"cannot reach {scheme}://{authority}: {err}") from None
    raise UsageError(f"{scheme}:// is not a known object store (s3, gs, abfs, hdfs, file)")


def _failure(path: ObjectPath, err: Exception) -> UnreadableInputError:
    text = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
    if isinstance(err, FileNotFoundError) or "NoSuchKey" in text or "not found" in text.lower():
        return UnreadableInputError(str(path), "no such object")
    if "AccessDenied" in text or isinstance(err, PermissionError):
        return UnreadableInputError(str(path), f"access denied ({text[:200]})")
    return UnreadableInputError(str(path), text[:300])


# ---- listings: one recursive listing per tree, then answers from it ----

#: Directory URL -> {child name: its info}; a directory listed recursively has every directory below it here.
_LISTED: dict[str, dict[str, ObjectInfo]] = {}
_RECURSIVE: set[str] = set()
_INFO: dict[str, ObjectInfo | None] = {}
_DIR = ObjectInfo(0, 0.0, True)


def forget_listings() -> None:
    """Drop every cached listing and object (a new scan of a tree that may have changed)."""
    _LISTED.clear()
    _RECURSIVE.clear()
    _INFO.clear()
    _OBJECTS.clear()


def _covered(path: ObjectPath) -> bool:
    return any(str(p) in _RECURSIVE for p in (path, *path.parents) if len(p.parts) >= 3)


def _info_of(entry: Any) -> ObjectInfo:
    import pyarrow.fs as pafs

    mtime = entry.mtime.timestamp() if entry.mtime is not None else 0.0
    is_dir = entry.type == pafs.FileType.Directory
    return ObjectInfo(0 if is_dir else int(entry.size or 0), mtime, is_dir)


def list_tree(path: ObjectPath) -> None:
    """List everything below ``path`` in one recursive listing and keep it (paginated by the store)."""
    import pyarrow.fs as pafs

    fs, key = filesystem(path)
    try:
        entries = fs.get_file_info(pafs.FileSelector(key, recursive=True, allow_not_found=True))
    except Exception as err:
        raise _failure(path, err) from None
    root = str(path)
    _LISTED.setdefault(root, {})
    prefix = key.rstrip("/") + "/"
    for entry in entries:
        if not entry.path.startswith(prefix):
            continue
        rel = entry.path[len(prefix):].strip("/")
        if not rel:
            continue
        parent_rel, _, name = rel.rpartition("/")
        parent = f"{root}/{parent_rel}" if parent_rel else root
        # Every prefix on the way is a directory, whether the store lists it or not.
        walk = root
        for part in parent_rel.split("/") if parent_rel else ():
            _LISTED.setdefault(walk, {}).setdefault(part, _DIR)
            walk = f"{walk}/{part}"
            _LISTED.setdefault(walk, {})
        item = _info_of(entry)
        _LISTED.setdefault(parent, {})[name] = item
        if item.is_dir:
            _LISTED.setdefault(f"{root}/{rel}", {})
    _RECURSIVE.add(root)


def info(path: ObjectPath) -> ObjectInfo | None:
    """What the store holds at ``path`` (``None``: nothing), from a listing where one covers it."""
    if len(path.parts) < 3:
        return _DIR
    text = str(path)
    if text in _LISTED:
        return _DIR
    parent = str(path.parent) if len(path.parts) > 3 else None
    if parent is not None and _covered(path.parent):
        return _LISTED.get(parent, {}).get(path.name)
    if text in _INFO:
        return _INFO[text]
    import pyarrow.fs as pafs

    fs, key = filesystem(path)
    try:
        entry = fs.get_file_info(key)
    except Exception as err:
        raise _failure(path, err) from None
    found = None if entry.type == pafs.FileType.NotFound else _info_of(entry)
    _INFO[text] = found
    return found


def children(path: ObjectPath) -> list[ObjectPath]:
    """The entries directly below ``path`` (listing its tree once if no listing covers it yet)."""
    if not _covered(path):
        list_tree(path)
    names = _LISTED.get(str(path))
    if names is None:
        raise UnreadableInputError(str(path), "no such file or directory")
    return [path / name for name in names]


# ---- reading bytes ----

_OBJECTS: OrderedDict[str, bytes] = OrderedDict()


def _cache_budget() -> int:
    try:
        return max(0, int(os.environ.get("KAFKATOOL_OBJECT_CACHE_MIB", "256"))) << 20
    except ValueError:
        return 256 << 20


def _open(path: ObjectPath) -> Any:
    fs, key = filesystem(path)
    try:
        return fs.open_input_file(key)
    except Exception as err:
        raise _failure(path, err) from None


def read_object(path: ObjectPath, limit: int | None = None) -> bytes:
    """The object's bytes (at most ``limit``): one GET. Whole objects are kept in a small per-process cache."""
    text = str(path)
    cached = _OBJECTS.get(text)
    if cached is not None:
        _OBJECTS.move_to_end(text)
        return cached if limit is None else cached[:limit]
    i = info(path)
    if i is None:
        raise UnreadableInputError(text, "no such object")
    if i.is_dir:
        raise UnreadableInputError(text, "is a directory")
    with _open(path) as f:
        try:
            data = f.read_at(i.st_size if limit is None else min(limit, i.st_size), 0) if i.st_size else b""
        except Exception as err:
            raise _failure(path, err) from None
    data = bytes(data)
    if limit is None:  # the latest whole object is always kept (a partition's analysis re-reads its segments)
        _OBJECTS[text] = data
        while len(_OBJECTS) > 1 and sum(len(v) for v in _OBJECTS.values()) > _cache_budget():
            _OBJECTS.popitem(last=False)
    return data


def read_range(path: ObjectPath, start: int, stop: int) -> bytes:
    """Bytes ``[start, stop)`` of the object (cut at its end): one ranged GET (or the cached whole object)."""
    cached = _OBJECTS.get(str(path))
    if cached is not None:
        return cached[start:stop]
    size = object_size(path)
    stop = min(stop, size)
    if stop <= start:
        return b""
    with _open(path) as f:
        try:
            return bytes(f.read_at(stop - start, start))
        except Exception as err:
            raise _failure(path, err) from None


def object_size(path: ObjectPath) -> int:
    """The object's size in bytes (``UnreadableInputError`` when it is not there)."""
    i = info(path)
    if i is None:
        raise UnreadableInputError(str(path), "no such object")
    if i.is_dir:
        raise UnreadableInputError(str(path), "is a directory")
    return i.st_size
