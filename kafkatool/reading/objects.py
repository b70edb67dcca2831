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
* Reading a byte range (:func:`read_range`) is one ranged GET of that range, never the whole object (plus the
  HEAD with which the library opens an object, once per object and process: open objects are kept).
* Reading a small object whole (:func:`read_object`: indexes, checkpoints, segments up to :data:`SMALL_OBJECT`)
  is one GET, kept in a per-process cache of at most ``KAFKATOOL_OBJECT_CACHE_MIB`` MiB (256 by default).
* A larger object read whole (:func:`mapped_object`: a segment that ``check`` or ``dump-segment`` walks) is
  streamed, :data:`SPILL_PIECE` bytes a ranged GET and :data:`SPILL_STREAMS` GETs at a time, into an unlinked
  temporary file (in ``KAFKATOOL_SPILL_DIR``, else the system's temporary directory), which is then memory-mapped
  read-only like a local file: the readers release its pages as they go, so a 1 GiB object is never held in
  memory, and memory stays bounded as for local files. The spill files of a process are kept (a partition's
  analysis reads a segment several times) up to ``KAFKATOOL_SPILL_MIB`` MiB of disk (4096 by default; the
  latest always), and vanish when the process ends, however it ends.

Credentials are the libraries' own (environment variables, profiles, instance roles: the AWS SDK's chain for S3,
Google's application default credentials for GCS, Azure's default credential or ``AZURE_STORAGE_KEY`` for Azure,
the Hadoop client's for HDFS); the ``--fs-option KEY=VALUE`` pairs (:func:`set_fs_options`) are handed to the file
system's constructor (``endpoint``, ``region``, ``anonymous``, ``scheme``, ``account_key``...; ``endpoint`` is
mapped to each library's own name for it). Object stores have no symbolic links, FIFOs or devices: nothing there
is refused by ``reading.files.survey``. Nothing here writes to an object store; the only files made are the
unlinked spill files, on this machine.
"""

from __future__ import annotations

import mmap
import os
import stat as stat_mod
import tempfile
import threading
from collections import OrderedDict
from collections.abc import Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager, suppress
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
            return pafs.AzureFileSystem(**_azure_options(authority, kwargs))
        if scheme in ("hdfs", "viewfs"):
            host, _, port = authority.partition(":")
            return pafs.HadoopFileSystem(host or "default", int(port or 0), **kwargs)
    except TypeError as err:
        raise UsageError(f"--fs-option for {scheme}://: {err}") from None
    except (OSError, ValueError, ImportError) as err:
        raise UsageError(f"cannot reach {scheme}://{authority}: {err}") from None
    raise UsageError(f"{scheme}:// is not a known object store (s3, gs, abfs, hdfs, file)")


def _azure_options(authority: str, kwargs: dict[str, Any]) -> dict[str, Any]:
    """``AzureFileSystem``'s arguments for ``abfs://container@account.dfs.core.windows.net``: the account from the
    host (unless ``account_name`` is given), ``endpoint`` as both the blob and the DFS service's authority and
    scheme (an emulator, a private endpoint), and the account key from ``account_key`` or, like Azure's own
    tools, ``AZURE_STORAGE_KEY`` (else Azure's default credential chain)."""
    out = dict(kwargs)
    host = authority.split("@", 1)[1] if "@" in authority else ""
    if host and "account_name" not in out:
        out["account_name"] = host.split(".", 1)[0]
    endpoint = out.pop("endpoint_override", None)
    if endpoint is not None:
        scheme = out.pop("scheme", "https")
        for service in ("blob", "dfs"):
            out.setdefault(f"{service}_storage_authority", endpoint)
            out.setdefault(f"{service}_storage_scheme", scheme)
    if "account_key" not in out and "sas_token" not in out and os.environ.get("AZURE_STORAGE_KEY"):
        out["account_key"] = os.environ["AZURE_STORAGE_KEY"]
    return out


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
    """Drop every cached listing, object, open object and spill file (a new scan of a tree that may have
    changed)."""
    _LISTED.clear()
    _RECURSIVE.clear()
    _INFO.clear()
    _OBJECTS.clear()
    with _LOCK:
        while _HANDLES:
            _close(_HANDLES.popitem()[1])
        while _SPILLS:
            _close(_SPILLS.popitem()[1].file)


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
    if found is None and path.scheme in ("abfs", "abfss") and _has_children(fs, key):
        found = _DIR
    _INFO[text] = found
    return found


def _has_children(fs: Any, key: str) -> bool:
    """Whether a prefix holds objects. Asked of Azure only: on an account without a hierarchical namespace,
    pyarrow 26's ``AzureFileSystem.get_file_info`` finds no directory ``d`` when a sibling ``d-x/...`` sorts
    before ``d/...`` (``-`` before ``/``), as ``data`` and ``data-node2`` do; a listing of ``d/`` finds it."""
    import pyarrow.fs as pafs

    try:
        return bool(fs.get_file_info(pafs.FileSelector(key, recursive=False, allow_not_found=True)))
    except Exception:
        return False


def children(path: ObjectPath) -> list[ObjectPath]:
    """The entries directly below ``path`` (listing its tree once if no listing covers it yet)."""
    if not _covered(path):
        list_tree(path)
    names = _LISTED.get(str(path))
    if names is None:
        raise UnreadableInputError(str(path), "no such file or directory")
    return [path / name for name in names]


# ---- reading bytes ----

#: Objects up to this size are read whole into memory by one GET when a reader wants all their bytes.
SMALL_OBJECT = 8 << 20
#: A larger object is streamed into a spill file in ranged GETs of this size...
SPILL_PIECE = 8 << 20
#: ... this many at a time (so at most ``SPILL_PIECE * SPILL_STREAMS`` bytes of it are in memory at once).
SPILL_STREAMS = 4
#: Open objects kept per process (opening one costs the library a HEAD request).
OPEN_OBJECTS = 16

_OBJECTS: OrderedDict[str, bytes] = OrderedDict()
_HANDLES: OrderedDict[tuple[int, str], Any] = OrderedDict()


@dataclass(frozen=True, slots=True)
class _Spill:
    """An object streamed into an unlinked temporary file (``file``, ``size`` bytes)."""

    file: Any
    size: int


_SPILLS: OrderedDict[str, _Spill] = OrderedDict()


def _budget(name: str, default_mib: int) -> int:
    try:
        return max(0, int(os.environ.get(name, str(default_mib)))) << 20
    except ValueError:
        return default_mib << 20


def _cache_budget() -> int:
    return _budget("KAFKATOOL_OBJECT_CACHE_MIB", 256)


def _close(handle: Any) -> None:
    with suppress(Exception):
        handle.close()


def _open(path: ObjectPath) -> Any:
    """The object open for ranged reads (kept open, a few per process: each open is a HEAD request)."""
    key = (os.getpid(), str(path))
    with _LOCK:
        handle = _HANDLES.get(key)
        if handle is not None:
            _HANDLES.move_to_end(key)
            return handle
    fs, name = filesystem(path)
    try:
        handle = fs.open_input_file(name)
    except Exception as err:
        raise _failure(path, err) from None
    with _LOCK:
        _HANDLES[key] = handle
        while len(_HANDLES) > OPEN_OBJECTS:
            _close(_HANDLES.popitem(last=False)[1])
    return handle


def _whole_object_size(path: ObjectPath) -> int:
    i = info(path)
    if i is None:
        raise UnreadableInputError(str(path), "no such object")
    if i.is_dir:
        raise UnreadableInputError(str(path), "is a directory")
    return i.st_size


def _read_at(path: ObjectPath, start: int, length: int) -> bytes:
    """``length`` bytes at ``start`` of the object: one ranged GET."""
    try:
        return bytes(_open(path).read_at(length, start))
    except UnreadableInputError:
        raise
    except Exception as err:
        raise _failure(path, err) from None


def read_object(path: ObjectPath, limit: int | None = None) -> bytes:
    """The object's bytes (at most ``limit``): one GET (or from the object's spill file). Whole objects are kept
    in a small per-process cache."""
    text = str(path)
    cached = _OBJECTS.get(text)
    if cached is not None:
        _OBJECTS.move_to_end(text)
        return cached if limit is None else cached[:limit]
    size = _whole_object_size(path)
    spill = _SPILLS.get(text)
    if spill is not None:
        return os.pread(spill.file.fileno(), size if limit is None else min(limit, size), 0)
    data = _read_at(path, 0, size if limit is None else min(limit, size)) if size else b""
    if limit is None:  # the latest whole object is always kept (a partition's analysis re-reads its files)
        _OBJECTS[text] = data
        while len(_OBJECTS) > 1 and sum(len(v) for v in _OBJECTS.values()) > _cache_budget():
            _OBJECTS.popitem(last=False)
    return data


def _spill(path: ObjectPath, size: int) -> _Spill:
    """The object streamed into an unlinked temporary file (kept for later reads of the same object)."""
    text = str(path)
    with _LOCK:
        found = _SPILLS.get(text)
        if found is not None:
            _SPILLS.move_to_end(text)
            return found
    tmp = tempfile.TemporaryFile(  # noqa: SIM115 - kept open as the spill, closed when evicted
        prefix="kafkatool-object-", dir=os.environ.get("KAFKATOOL_SPILL_DIR") or None)
    fd = tmp.fileno()

    def piece(at: int) -> None:
        want = min(SPILL_PIECE, size - at)
        data = _open(path).read_at(want, at)
        if len(data) != want:
            raise UnreadableInputError(text, f"the object ended at byte {at + len(data)} while read (it was "
                                             f"{size} bytes when listed: changed while read?)")
        view = memoryview(data)
        done = 0
        while done < want:
            done += os.pwrite(fd, view[done:], at + done)

    try:
        with ThreadPoolExecutor(SPILL_STREAMS) as pool:
            list(pool.map(piece, range(0, size, SPILL_PIECE)))
    except UnreadableInputError:
        tmp.close()
        raise
    except OSError as err:
        tmp.close()
        if err.filename is None and err.errno is not None:  # the spill file's own failure (a full disk)
            raise UnreadableInputError(text, f"cannot stream it to a temporary file ({err.strerror}; "
                                             "KAFKATOOL_SPILL_DIR names another place)") from None
        raise _failure(path, err) from None
    except Exception as err:
        tmp.close()
        raise _failure(path, err) from None
    spill = _Spill(tmp, size)
    with _LOCK:
        _SPILLS[text] = spill
        budget = _budget("KAFKATOOL_SPILL_MIB", 4096)
        while len(_SPILLS) > 1 and sum(s.size for s in _SPILLS.values()) > budget:
            _close(_SPILLS.popitem(last=False)[1].file)
    return spill


@contextmanager
def mapped_object(path: ObjectPath) -> Iterator[bytes | mmap.mmap]:
    """All the object's bytes as a read-only buffer: ``bytes`` for a small object (one GET), otherwise a
    read-only map of the object streamed into a spill file (:func:`_spill`), whose pages the readers release
    as they go, as they do a local file's."""
    size = _whole_object_size(path)
    if size <= SMALL_OBJECT or str(path) in _OBJECTS:
        yield read_object(path)
        return
    spill = _spill(path, size)
    try:
        mm = mmap.mmap(spill.file.fileno(), 0, access=mmap.ACCESS_READ)
    except (OSError, ValueError) as err:
        raise UnreadableInputError(str(path), f"cannot map its spill file: {err}") from None
    try:
        yield mm
    finally:
        with suppress(BufferError):  # views handed out may still be alive: the map goes with them
            mm.close()


def read_range(path: ObjectPath, start: int, stop: int) -> bytes:
    """Bytes ``[start, stop)`` of the object (cut at its end): one ranged GET (or from the object when it is
    already here, cached or spilled)."""
    text = str(path)
    cached = _OBJECTS.get(text)
    if cached is not None:
        return cached[start:stop]
    size = object_size(path)
    stop = min(stop, size)
    if stop <= start:
        return b""
    spill = _SPILLS.get(text)
    if spill is not None:
        return os.pread(spill.file.fileno(), stop - start, start)
    return _read_at(path, start, stop - start)


def object_size(path: ObjectPath) -> int:
    """The object's size in bytes (``UnreadableInputError`` when it is not there)."""
    return _whole_object_size(path)
