//! The segment walk's fast loop: a clean chain of entries, magic 2 batches (CRC-32C checked, as header columns)
//! and, for `scan_entries`, legacy magic 0/1 messages (CRC-32 checked, as legacy columns).
//!
//! Models the entry loop of Kafka's `LogSegment.recover` / `FileLogInputStream.nextBatch`: follow the length
//! from entry to entry (offset 8 bytes, length 4, then the batch or message), check each magic 2 batch's CRC-32C
//! (`DefaultRecordBatch.isValid`) and each legacy message's CRC-32 (`LegacyRecord.isValid`), and read a legacy
//! message's fields as `LegacyRecord` lays them out (`crate::legacy`; a compressed wrapper's inner span as
//! `AbstractLegacyRecordBatch`'s deep iterator finds it). `scan_chain` is the native twin of
//! `kafkatool.schema.batch_columns.scan_chain` (magic 2 only); `scan_entries` that of the Python walker's reading
//! of a segment (`kafkatool.schema.log_segment.walk_log`, `legacy.parse_legacy_entry`). Both stop at `stop`, or at
//! the first entry they do not read exactly as the Python path does (a bad length, a torn tail, garbage, a legacy
//! message that does not decode or is larger than the reader's window). There the Python resilient walker takes
//! over and reports the damage, so defects stay those of the construct path.
//!
//! Input is a byte slice (`walk_bytes`, `walk_entries_bytes`) or a file read with `std::fs` in bounded chunks
//! (`walk_path`, `walk_entries_path`): a scan of any size holds one window of [`WINDOW`] bytes plus the result
//! columns (and, for a compressed legacy wrapper, its inflated inner set, under the caller's cap).

use std::fs::File;
use std::os::unix::fs::FileExt;

use numpy::PyArray1;
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::defect::guard;
use crate::legacy::{inner_span, parse_message, Message, Span};
use crate::layout::{
    DEFAULT_MAX_OUTPUT, LEGACY_ENTRY_OFFSET_OFFSET, LEGACY_ENTRY_OFFSET_SIZE, LEGACY_RECORD_OVERHEAD_V0, LOG_OVERHEAD,
    V2_ATTRIBUTES_OFFSET, V2_ATTRIBUTES_SIZE, V2_BASE_OFFSET_OFFSET, V2_BASE_OFFSET_SIZE,
    V2_BASE_SEQUENCE_OFFSET, V2_BASE_SEQUENCE_SIZE, V2_BASE_TIMESTAMP_OFFSET, V2_BASE_TIMESTAMP_SIZE,
    V2_BATCH_LENGTH_OFFSET, V2_BATCH_LENGTH_SIZE, V2_BATCH_OVERHEAD, V2_CRC_COVERED_FROM, V2_CRC_OFFSET, V2_CRC_SIZE,
    V2_HEADER_SIZE, V2_LAST_OFFSET_DELTA_OFFSET, V2_LAST_OFFSET_DELTA_SIZE, V2_MAGIC, V2_MAGIC_OFFSET,
    V2_MAGIC_SIZE, V2_MAX_TIMESTAMP_OFFSET, V2_MAX_TIMESTAMP_SIZE, V2_PARTITION_LEADER_EPOCH_OFFSET,
    V2_PARTITION_LEADER_EPOCH_SIZE, V2_PRODUCER_EPOCH_OFFSET, V2_PRODUCER_EPOCH_SIZE, V2_PRODUCER_ID_OFFSET,
    V2_PRODUCER_ID_SIZE, V2_RECORDS_COUNT_OFFSET, V2_RECORDS_COUNT_SIZE,
};

/// The file reader's window: the most bytes of the file held at once.
pub const WINDOW: usize = 1 << 20;

/// Random access to the bytes being walked, by absolute position.
pub trait Source {
    /// `[pos, pos + n)`, or `None` when those bytes cannot be had (past the end, or a read error).
    fn get(&mut self, pos: u64, n: usize) -> Option<&[u8]>;
    /// CRC-32C (Castagnoli) of `[from, to)`, or `None` when those bytes cannot be had.
    fn crc(&mut self, from: u64, to: u64) -> Option<u32>;
}

/// An in-memory buffer whose index 0 is file position 0.
pub struct SliceSource<'a>(pub &'a [u8]);

impl Source for SliceSource<'_> {
    fn get(&mut self, pos: u64, n: usize) -> Option<&[u8]> {
        let start = usize::try_from(pos).ok()?;
        self.0.get(start..start.checked_add(n)?)
    }

    fn crc(&mut self, from: u64, to: u64) -> Option<u32> {
        let (a, b) = (usize::try_from(from).ok()?, usize::try_from(to).ok()?);
        self.0.get(a..b).map(crc32c::crc32c)
    }
}

/// A file read with positional reads into one window of at most [`WINDOW`] bytes (read-only, no mapping).
pub struct FileSource {
    file: File,
    buf: Vec<u8>,
    start: u64,
    len: usize,
    cap: usize,
}

impl FileSource {
    /// Open `path` read-only with a window of `cap` bytes.
    pub fn open(path: &str, cap: usize) -> std::io::Result<Self> {
        Ok(FileSource { file: File::open(path)?, buf: vec![0; cap], start: 0, len: 0, cap })
    }

    /// Make the window hold `[pos, pos + n)` (`n <= cap`): reads from `pos` as much as the window takes.
    fn ensure(&mut self, pos: u64, n: usize) -> bool {
        if pos >= self.start && pos + n as u64 <= self.start + self.len as u64 {
            return true;
        }
        if n > self.cap {
            return false;
        }
        self.start = pos;
        self.len = 0;
        while self.len < self.cap {
            match self.file.read_at(&mut self.buf[self.len..], pos + self.len as u64) {
                Ok(0) => break,
                Ok(k) => self.len += k,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(_) => break,
            }
            if self.len >= n && self.len >= self.cap / 2 {
                break;
            }
        }
        self.len >= n
    }
}

impl Source for FileSource {
    fn get(&mut self, pos: u64, n: usize) -> Option<&[u8]> {
        if !self.ensure(pos, n) {
            return None;
        }
        let at = (pos - self.start) as usize;
        Some(&self.buf[at..at + n])
    }

    fn crc(&mut self, from: u64, to: u64) -> Option<u32> {
        let mut crc = 0u32;
        let mut at = from;
        while at < to {
            let n = (to - at).min(self.cap as u64) as usize;
            let part = self.get(at, n)?;
            crc = crc32c::crc32c_append(crc, part);
            at += n as u64;
        }
        Some(crc)
    }
}

/// A file read front to back by a reader thread, [`CHUNK`] bytes at a time, two chunks ahead: the copy out of
/// the page cache overlaps the CRC. Only forward access (the walk's): a position behind the current chunk is
/// not available (`None`), which makes the walk stop there as at unreadable bytes.
pub struct StreamSource {
    chunks: std::sync::mpsc::Receiver<Vec<u8>>,
    spare: std::sync::mpsc::SyncSender<Vec<u8>>,
    cur: Vec<u8>,
    cur_start: u64,
    next: Option<Vec<u8>>,
    done: bool,
    scratch: Vec<u8>,
}

/// The reader thread's chunk size.
pub const CHUNK: usize = 1 << 20;
/// Ranges up to this many bytes are read in step with the walk, without a reader thread.
pub const SHORT_RANGE: i64 = 8 << 20;

impl StreamSource {
    /// The consumer's end; `chunks` delivers consecutive chunks from `start`, `spare` takes used buffers back.
    fn new(chunks: std::sync::mpsc::Receiver<Vec<u8>>, spare: std::sync::mpsc::SyncSender<Vec<u8>>, start: u64)
        -> Self {
        StreamSource { chunks, spare, cur: Vec::new(), cur_start: start, next: None, done: false, scratch: Vec::new() }
    }

    fn cur_end(&self) -> u64 {
        self.cur_start + self.cur.len() as u64
    }

    /// Make sure the chunk after the current one is loaded (when there is one).
    fn peek(&mut self) -> bool {
        if self.next.is_none() && !self.done {
            match self.chunks.recv() {
                Ok(chunk) if !chunk.is_empty() => self.next = Some(chunk),
                _ => self.done = true,
            }
        }
        self.next.is_some()
    }

    /// Move to the next chunk; false at the end of the stream.
    fn advance(&mut self) -> bool {
        if !self.peek() {
            return false;
        }
        let next = self.next.take().unwrap_or_default();
        let old = std::mem::replace(&mut self.cur, next);
        self.cur_start += old.len() as u64;
        let _ = self.spare.try_send(old);
        true
    }

    /// Run the reader over `file` from `start` to `limit`, feeding a `StreamSource` given to `body`.
    pub fn with<T>(file: &File, start: u64, limit: u64, chunk: usize, body: impl FnOnce(&mut StreamSource) -> T)
        -> T {
        let (tx, rx) = std::sync::mpsc::sync_channel::<Vec<u8>>(2);
        let (spare_tx, spare_rx) = std::sync::mpsc::sync_channel::<Vec<u8>>(4);
        std::thread::scope(|scope| {
            scope.spawn(move || {
                let mut at = start;
                while at < limit {
                    let want = (limit - at).min(chunk.max(V2_HEADER_SIZE) as u64) as usize;
                    let mut buf = spare_rx.try_recv().unwrap_or_default();
                    buf.resize(want, 0);
                    let mut got = 0;
                    while got < want {
                        match file.read_at(&mut buf[got..], at + got as u64) {
                            Ok(0) => break,
                            Ok(k) => got += k,
                            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                            Err(_) => break,
                        }
                    }
                    buf.truncate(got);
                    let short = got < want;
                    if got == 0 || tx.send(buf).is_err() || short {
                        break;
                    }
                    at += got as u64;
                }
            });
            let mut src = StreamSource::new(rx, spare_tx, start);
            let out = body(&mut src);
            drop(src); // the receiver goes: a reader still ahead stops at its next send
            out
        })
    }
}

impl Source for StreamSource {
    fn get(&mut self, pos: u64, n: usize) -> Option<&[u8]> {
        if pos < self.cur_start {
            return None;
        }
        while pos >= self.cur_end() {
            if !self.advance() {
                return None;
            }
        }
        let at = (pos - self.cur_start) as usize;
        if at + n <= self.cur.len() {
            return Some(&self.cur[at..at + n]);
        }
        // Across two chunks (a header): gather the bytes, staying on the current chunk (the CRC starts in it).
        let need = at + n - self.cur.len();
        if !self.peek() || self.next.as_ref().is_none_or(|next| next.len() < need) {
            return None;
        }
        self.scratch.clear();
        self.scratch.extend_from_slice(&self.cur[at..]);
        if let Some(next) = &self.next {
            self.scratch.extend_from_slice(&next[..need]);
        }
        Some(&self.scratch[..n])
    }

    fn crc(&mut self, from: u64, to: u64) -> Option<u32> {
        if from < self.cur_start {
            return None;
        }
        let mut crc = 0u32;
        let mut at = from;
        while at < to {
            while at >= self.cur_end() {
                if !self.advance() {
                    return None;
                }
            }
            let a = (at - self.cur_start) as usize;
            let b = ((to - self.cur_start) as usize).min(self.cur.len());
            crc = crc32c::crc32c_append(crc, &self.cur[a..b]);
            at = self.cur_start + b as u64;
        }
        Some(crc)
    }
}

/// What one run of the fast loop found: the clean batches' positions and raw 61-byte headers (in file order), the
/// positions whose stored CRC does not match, and where the loop stopped.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Chain {
    pub positions: Vec<i64>,
    pub headers: Vec<u8>,
    pub bad_crc: Vec<i64>,
    pub reached: i64,
}

fn be_i32(b: &[u8], at: usize) -> i32 {
    i32::from_be_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

fn be_u32(b: &[u8], at: usize) -> u32 {
    u32::from_be_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

/// Follow clean magic 2 batches from `pos` while they start before `stop` and end by `limit` (the twin of
/// `batch_columns.scan_chain`): stops at or past `stop`, or at the first entry that is not a complete magic 2
/// batch of at least `V2_BATCH_OVERHEAD` bytes, or where the bytes cannot be read.
pub fn scan_chain<S: Source + ?Sized>(src: &mut S, pos: i64, limit: i64, stop: i64, verify_crc: bool) -> Chain {
    walk(src, pos, limit, stop, verify_crc, None)
}

/// The legacy (magic 0/1) entries a walk read, a column each, in file order: what `legacy.parse_legacy_entry`
/// puts in a `LegacyBatch`, the key and value as lengths (-1: null), and a wrapper's inner span
/// (`inner_count` 0: none; -1: not known here, the Python path's to compute: see [`inner_span`]).
#[derive(Debug, Default, PartialEq, Eq)]
pub struct LegacyColumns {
    pub position: Vec<i64>,
    pub offset: Vec<i64>,
    pub message_size: Vec<i32>,
    pub crc: Vec<u32>,
    pub magic: Vec<i8>,
    pub attributes: Vec<i8>,
    pub timestamp: Vec<i64>,
    pub key_length: Vec<i32>,
    pub value_length: Vec<i32>,
    pub crc_valid: Vec<bool>,
    pub inner_first: Vec<i64>,
    pub inner_count: Vec<i64>,
}

impl LegacyColumns {
    pub fn len(&self) -> usize {
        self.position.len()
    }

    pub fn is_empty(&self) -> bool {
        self.position.is_empty()
    }

    fn push(&mut self, position: i64, offset: i64, size: i32, m: &Message, span: Option<Span>) {
        let (first, count) = match span {
            Some(known) => known.unwrap_or((0, 0)),
            None => (0, UNKNOWN_SPAN),
        };
        self.position.push(position);
        self.offset.push(offset);
        self.message_size.push(size);
        self.crc.push(m.crc);
        self.magic.push(m.magic);
        self.attributes.push(m.attributes);
        self.timestamp.push(m.timestamp);
        self.key_length.push(m.key_length);
        self.value_length.push(m.value_length);
        self.crc_valid.push(m.crc_valid);
        self.inner_first.push(first);
        self.inner_count.push(count);
    }
}

/// [`scan_chain`] that reads legacy entries too (the walk of `log_segment.walk_log` over magic 0/1 framing,
/// `FileLogInputStream.nextBatch`): the magic 2 batches in the chain, the legacy entries in `legacy`. A legacy
/// entry is read when its message is whole before `limit`, decodes as `legacy.parse_legacy_entry` decodes it,
/// and fits the source's window (at most [`CHUNK`] bytes); else the walk stops there and the Python walker
/// takes over. A compressed wrapper's inner span is [`inner_span`]'s (`max_output` the decompression cap), or
/// `inner_count` -1 where it hands the wrapper back (lz4, a payload it does not decode exactly): the caller
/// computes that one span with the Python path. Its CRC-32 is always checked (the Python walker checks it
/// whatever `verify_crc`).
pub fn scan_entries<S: Source + ?Sized>(src: &mut S, pos: i64, limit: i64, stop: i64, verify_crc: bool,
                                        max_output: usize) -> (Chain, LegacyColumns) {
    let mut legacy = LegacyColumns::default();
    let chain = walk(src, pos, limit, stop, verify_crc, Some((&mut legacy, max_output)));
    (chain, legacy)
}

/// The one loop of [`scan_chain`] and [`scan_entries`] (legacy entries read only with `legacy`).
fn walk<S: Source + ?Sized>(src: &mut S, mut pos: i64, limit: i64, stop: i64, verify_crc: bool,
                            mut legacy: Option<(&mut LegacyColumns, usize)>) -> Chain {
    let mut out = Chain::default();
    let smallest = if legacy.is_some() { SMALLEST_ENTRY } else { V2_HEADER_SIZE as i64 };
    while pos >= 0 && pos < stop && limit.saturating_sub(pos) >= smallest {
        let n = limit.saturating_sub(pos).min(V2_HEADER_SIZE as i64) as usize;
        let Some(head) = src.get(pos as u64, n) else { break };
        let length = be_i32(head, V2_BATCH_LENGTH_OFFSET);
        let magic = head[V2_MAGIC_OFFSET] as i8;
        let end = pos.saturating_add(LOG_OVERHEAD as i64 + length as i64);
        if magic == V2_MAGIC {
            if n < V2_HEADER_SIZE || length < V2_BATCH_OVERHEAD as i32 || end > limit {
                break;
            }
            let stored = be_u32(head, V2_CRC_OFFSET);
            out.headers.extend_from_slice(head);
            if verify_crc {
                let Some(crc) = src.crc(pos as u64 + V2_CRC_COVERED_FROM as u64, end as u64) else {
                    out.headers.truncate(out.headers.len() - V2_HEADER_SIZE);
                    break;
                };
                if crc != stored {
                    out.bad_crc.push(pos);
                }
            }
            out.positions.push(pos);
        } else {
            let Some((columns, max_output)) = legacy.as_mut() else { break };
            if !(magic == 0 || magic == 1) || length < LEGACY_RECORD_OVERHEAD_V0 as i32 || end > limit {
                break;
            }
            let offset = head
                .get(LEGACY_ENTRY_OFFSET_OFFSET..LEGACY_ENTRY_OFFSET_OFFSET + LEGACY_ENTRY_OFFSET_SIZE)
                .and_then(|b| b.try_into().ok())
                .map_or(0, i64::from_be_bytes);
            let Some(msg) = src.get(pos as u64 + LOG_OVERHEAD as u64, length as usize) else { break };
            let Some(m) = parse_message(msg) else { break };
            let span = inner_span(&m, msg, offset, *max_output);
            columns.push(pos, offset, length, &m, span);
        }
        pos = end;
    }
    out.reached = pos;
    out
}

/// `inner_count` of a wrapper whose inner span is left to the Python path.
pub const UNKNOWN_SPAN: i64 = -1;

/// The fewest bytes a legacy entry takes (offset, size, the smallest message).
const SMALLEST_ENTRY: i64 = (LOG_OVERHEAD + LEGACY_RECORD_OVERHEAD_V0) as i64;

type ChainColumns<'py> = (Bound<'py, PyArray1<i64>>, Bound<'py, PyArray1<u8>>, Bound<'py, PyArray1<i64>>, i64);

/// The header's integer fields as (offset, size): the big-endian fields that `to_native_order` turns around.
const HEADER_FIELDS: [(usize, usize); 13] = [
    (V2_BASE_OFFSET_OFFSET, V2_BASE_OFFSET_SIZE),
    (V2_BATCH_LENGTH_OFFSET, V2_BATCH_LENGTH_SIZE),
    (V2_PARTITION_LEADER_EPOCH_OFFSET, V2_PARTITION_LEADER_EPOCH_SIZE),
    (V2_MAGIC_OFFSET, V2_MAGIC_SIZE),
    (V2_CRC_OFFSET, V2_CRC_SIZE),
    (V2_ATTRIBUTES_OFFSET, V2_ATTRIBUTES_SIZE),
    (V2_LAST_OFFSET_DELTA_OFFSET, V2_LAST_OFFSET_DELTA_SIZE),
    (V2_BASE_TIMESTAMP_OFFSET, V2_BASE_TIMESTAMP_SIZE),
    (V2_MAX_TIMESTAMP_OFFSET, V2_MAX_TIMESTAMP_SIZE),
    (V2_PRODUCER_ID_OFFSET, V2_PRODUCER_ID_SIZE),
    (V2_PRODUCER_EPOCH_OFFSET, V2_PRODUCER_EPOCH_SIZE),
    (V2_BASE_SEQUENCE_OFFSET, V2_BASE_SEQUENCE_SIZE),
    (V2_RECORDS_COUNT_OFFSET, V2_RECORDS_COUNT_SIZE),
];

/// Turn each 61-byte header's fields from Kafka's big-endian order into the machine's (the packed native-order
/// dtype numpy gives the header columns: `batch_columns.native_header_dtype`).
pub fn to_native_order(headers: &mut [u8]) {
    if cfg!(target_endian = "big") {
        return;
    }
    for header in headers.chunks_exact_mut(V2_HEADER_SIZE) {
        for (at, size) in HEADER_FIELDS {
            header[at..at + size].reverse();
        }
    }
}

fn columns(py: Python<'_>, mut chain: Chain) -> ChainColumns<'_> {
    to_native_order(&mut chain.headers);
    (
        PyArray1::from_vec(py, chain.positions),
        PyArray1::from_vec(py, chain.headers),
        PyArray1::from_vec(py, chain.bad_crc),
        chain.reached,
    )
}

/// `scan_chain` over an in-memory buffer (`bytes`, file position 0 at index 0), with the GIL released:
/// `(positions int64, headers uint8 (61 bytes a batch, each field in the machine's byte order), bad_crc int64,
/// reached)`.
#[pyfunction]
#[pyo3(signature = (data, pos, limit, stop, verify_crc=true))]
fn walk_bytes<'py>(py: Python<'py>, data: &[u8], pos: i64, limit: i64, stop: i64, verify_crc: bool)
    -> PyResult<ChainColumns<'py>> {
    guard("walk_bytes", || {
        let limit = limit.min(data.len() as i64);
        let chain = py.detach(|| scan_chain(&mut SliceSource(data), pos, limit, stop, verify_crc));
        Ok(columns(py, chain))
    })
}

/// `scan_chain` over the file at `path`, read with `std::fs` in bounded chunks, with the GIL released; `limit`
/// is the file size the caller saw. The same result as `walk_bytes`; an unreadable file stops the loop at `pos`.
#[pyfunction]
#[pyo3(signature = (path, pos, limit, stop, verify_crc=true))]
fn walk_path<'py>(py: Python<'py>, path: &str, pos: i64, limit: i64, stop: i64, verify_crc: bool)
    -> PyResult<ChainColumns<'py>> {
    guard("walk_path", || {
        let chain = py.detach(|| {
            with_file(path, pos, limit, stop, |src| scan_chain(src, pos, limit, stop, verify_crc))
                .unwrap_or(Chain { reached: pos, ..Chain::default() })
        });
        Ok(columns(py, chain))
    })
}

type EntryColumns<'py> =
    (Bound<'py, PyArray1<i64>>, Bound<'py, PyArray1<u8>>, Bound<'py, PyArray1<i64>>, Bound<'py, PyDict>, i64);

/// A dict of NumPy arrays, one per named field of `$cols` (moved out), keyed by the field's name.
macro_rules! column_dict {
    ($py:expr, $cols:expr, $($field:ident),* $(,)?) => {{
        let dict = PyDict::new($py);
        $(dict.set_item(stringify!($field), PyArray1::from_vec($py, $cols.$field))?;)*
        dict
    }};
}

fn entry_columns(py: Python<'_>, (chain, l): (Chain, LegacyColumns)) -> PyResult<EntryColumns<'_>> {
    let (positions, headers, bad, reached) = columns(py, chain);
    let legacy = column_dict!(py, l, position, offset, message_size, crc, magic, attributes, timestamp, key_length,
                              value_length, crc_valid, inner_first, inner_count);
    Ok((positions, headers, bad, legacy, reached))
}

/// `scan_entries` over an in-memory buffer, with the GIL released: `walk_bytes`' columns with the legacy
/// entries' columns before `reached`, a dict of arrays named as [`LegacyColumns`]' fields: `(positions, headers,
/// bad_crc, legacy, reached)`.
#[pyfunction]
#[pyo3(signature = (data, pos, limit, stop, verify_crc=true, max_output=DEFAULT_MAX_OUTPUT))]
fn walk_entries_bytes<'py>(py: Python<'py>, data: &[u8], pos: i64, limit: i64, stop: i64, verify_crc: bool,
                           max_output: usize) -> PyResult<EntryColumns<'py>> {
    guard("walk_entries_bytes", || {
        let limit = limit.min(data.len() as i64);
        let found = py.detach(|| scan_entries(&mut SliceSource(data), pos, limit, stop, verify_crc, max_output));
        entry_columns(py, found)
    })
}

/// `scan_entries` over the file at `path` (read as `walk_path` reads it), with the GIL released: the result of
/// `walk_entries_bytes`.
#[pyfunction]
#[pyo3(signature = (path, pos, limit, stop, verify_crc=true, max_output=DEFAULT_MAX_OUTPUT))]
fn walk_entries_path<'py>(py: Python<'py>, path: &str, pos: i64, limit: i64, stop: i64, verify_crc: bool,
                          max_output: usize) -> PyResult<EntryColumns<'py>> {
    guard("walk_entries_path", || {
        let found = py.detach(|| {
            with_file(path, pos, limit, stop, |src| scan_entries(src, pos, limit, stop, verify_crc, max_output))
                .unwrap_or_else(|| (Chain { reached: pos, ..Chain::default() }, LegacyColumns::default()))
        });
        entry_columns(py, found)
    })
}

/// Run `body` over the file at `path` from `pos` to `limit`, read in step for a short range (`stop - pos` at most
/// [`SHORT_RANGE`]: a reader ahead would read past the range's end for nothing), else by a reader thread; `None`
/// when the file cannot be opened or the range is empty.
fn with_file<T>(path: &str, pos: i64, limit: i64, stop: i64, body: impl FnOnce(&mut dyn Source) -> T) -> Option<T> {
    let file = File::open(path).ok()?;
    if pos < 0 || limit <= pos {
        return None;
    }
    if stop - pos <= SHORT_RANGE {
        let mut src = FileSource { file, buf: vec![0; CHUNK], start: 0, len: 0, cap: CHUNK };
        return Some(body(&mut src));
    }
    Some(StreamSource::with(&file, pos as u64, limit as u64, CHUNK, |src| body(src)))
}

/// Add this module's Python functions to `kafkatool._native`.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(walk_bytes, m)?)?;
    m.add_function(wrap_pyfunction!(walk_path, m)?)?;
    m.add_function(wrap_pyfunction!(walk_entries_bytes, m)?)?;
    m.add_function(wrap_pyfunction!(walk_entries_path, m)?)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn batch(base: i64, records: &[u8], good_crc: bool) -> Vec<u8> {
        let mut b = vec![0u8; V2_HEADER_SIZE];
        b[0..8].copy_from_slice(&base.to_be_bytes());
        let length = (V2_HEADER_SIZE - LOG_OVERHEAD + records.len()) as i32;
        b[8..12].copy_from_slice(&length.to_be_bytes());
        b[V2_MAGIC_OFFSET] = 2;
        b.extend_from_slice(records);
        let crc = crc32c::crc32c(&b[V2_CRC_COVERED_FROM..]) ^ u32::from(!good_crc);
        b[V2_CRC_OFFSET..V2_CRC_OFFSET + 4].copy_from_slice(&crc.to_be_bytes());
        b
    }

    #[test]
    fn chain_stops_at_damage_and_flags_bad_crc() {
        let mut data = batch(0, b"abc", true);
        data.extend(batch(1, b"de", false));
        let second = batch(0, b"abc", true).len() as i64;
        data.extend([0u8; 70]);
        let n = data.len() as i64;
        let chain = scan_chain(&mut SliceSource(&data), 0, n, n, true);
        assert_eq!(chain.positions, vec![0, second]);
        assert_eq!(chain.bad_crc, vec![second]);
        assert_eq!(chain.headers.len(), 2 * V2_HEADER_SIZE);
        assert_eq!(chain.reached, n - 70);
    }

    fn legacy_entry(offset: i64, magic: u8, value: &[u8]) -> Vec<u8> {
        let mut m = vec![0, 0, 0, 0, magic, 0];
        if magic == 1 {
            m.extend(7i64.to_be_bytes());
        }
        m.extend((-1i32).to_be_bytes());
        m.extend((value.len() as i32).to_be_bytes());
        m.extend(value);
        let crc = crc32fast::hash(&m[4..]);
        m[..4].copy_from_slice(&crc.to_be_bytes());
        let mut e = offset.to_be_bytes().to_vec();
        e.extend((m.len() as i32).to_be_bytes());
        e.extend(m);
        e
    }

    #[test]
    fn entries_walk_reads_legacy_and_v2_in_file_order_and_stops_at_damage() {
        let mut data = legacy_entry(0, 0, b"a");
        let second = data.len() as i64;
        data.extend(legacy_entry(1, 1, b"bc"));
        let third = data.len() as i64;
        data.extend(batch(2, b"xyz", true));
        let fourth = data.len() as i64;
        let mut bad = legacy_entry(3, 1, b"d");
        bad[12] ^= 1; // the stored CRC: read, flagged
        data.extend(bad);
        let fifth = data.len() as i64;
        let mut torn = legacy_entry(4, 1, b"efg");
        torn[LOG_OVERHEAD + 14 + 8 - 1] = 9; // the value length overruns the message: the Python walker's to report
        data.extend(torn);
        let n = data.len() as i64;
        let (chain, legacy) = scan_entries(&mut SliceSource(&data), 0, n, n, true, DEFAULT_MAX_OUTPUT);
        assert_eq!(chain.positions, vec![third]);
        assert_eq!(legacy.position, vec![0, second, fourth]);
        assert_eq!(legacy.crc_valid, vec![true, true, false]);
        assert_eq!((legacy.magic.clone(), legacy.timestamp.clone()), (vec![0, 1, 1], vec![-1, 7, 7]));
        assert_eq!((legacy.key_length[1], legacy.value_length[1], legacy.inner_count[1]), (-1, 2, 0));
        assert_eq!(chain.reached, fifth);
        assert_eq!(scan_chain(&mut SliceSource(&data), 0, n, n, true).reached, 0);
        let (v2_only, _) = scan_entries(&mut SliceSource(&data), third, n, n, true, DEFAULT_MAX_OUTPUT);
        assert_eq!(v2_only.positions, vec![third]);
    }

    #[test]
    fn file_source_matches_slice_source() {
        let mut data = Vec::new();
        for i in 0..200 {
            data.extend(batch(i, &vec![i as u8; (i as usize * 37) % 300], i % 7 != 3));
        }
        let dir = std::env::temp_dir().join(format!("kafkatool-walk-{}", std::process::id()));
        std::fs::write(&dir, &data).unwrap();
        let n = data.len() as i64;
        let want = scan_chain(&mut SliceSource(&data), 0, n, n, true);
        let mut src = FileSource::open(dir.to_str().unwrap(), 512).unwrap();
        let got = scan_chain(&mut src, 0, n, n, true);
        assert_eq!(got, want);
        let file = File::open(&dir).unwrap();
        for (start, chunk) in [(0, 1000), (want.positions[17], 777), (0, 64), (5, 4096)] {
            let streamed =
                StreamSource::with(&file, start as u64, n as u64, chunk, |s| scan_chain(s, start, n, n, true));
            let direct = scan_chain(&mut SliceSource(&data), start, n, n, true);
            assert_eq!(streamed, direct);
        }
        std::fs::remove_file(&dir).unwrap();
        assert_eq!(got.positions.len(), 200);
    }
}
