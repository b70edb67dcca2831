//! The deep text writer of `dump-segment -f kafka --deep [--print-data]`: DumpLogSegments' `printBatchLevel`,
//! `dumpBatchRecords`, `printRecordMetadata` and `printRecordContents` for ordinary magic 2 batches.
//!
//! The fast twin of `kafkatool/engine/dls.py` (`_fast_batch_line` and `_record_lines`), which stays the reference:
//! `dump_deep` writes the lines of consecutive batches from a position and stops, before writing anything of it,
//! at the first batch it does not handle exactly as the Python path would print it: a legacy or damaged entry,
//! a header Kafka would throw on, a control record other than an
//! end-transaction marker, a payload the native codecs or record decoder hand back, a key,
//! value or header key that is not valid UTF-8 (Java's replacement rules stay in Python), an offset or timestamp
//! beyond 64 bits. The caller prints that batch with the Python path and calls again after it.

use std::fmt::Write;

use pyo3::prelude::*;
use pyo3::types::PyString;

use crate::codecs;
use crate::defect::guard;
use crate::records;

use crate::layout::{
    self, LOG_OVERHEAD, MAGIC_OFFSET, V2_BASE_OFFSET_OFFSET, V2_BASE_SEQUENCE_OFFSET, V2_BASE_TIMESTAMP_OFFSET,
    V2_BATCH_LENGTH_OFFSET, V2_CRC_COVERED_FROM, V2_CRC_OFFSET, V2_HEADER_SIZE as BATCH_HEADER,
    V2_LAST_OFFSET_DELTA_OFFSET, V2_MAX_TIMESTAMP_OFFSET, V2_PARTITION_LEADER_EPOCH_OFFSET, V2_PRODUCER_EPOCH_OFFSET,
    V2_PRODUCER_ID_OFFSET, V2_RECORDS_COUNT_OFFSET, RECORD_COST,
};

// The layout, from the generated constants (kafkatool/schema/native_layout.py), in the types this module uses.
const HEADER_UP_TO_MAGIC: usize = MAGIC_OFFSET + 1;
const RECORD_OVERHEAD_V0: i64 = layout::LEGACY_RECORD_OVERHEAD_V0 as i64;
const MAX_SEQUENCE: i64 = layout::MAX_SEQUENCE as i64;
const NO_SEQUENCE: i64 = layout::NO_SEQUENCE as i64;
const CONTROL_KEY_SIZE: i64 = layout::CONTROL_KEY_SIZE as i64;
const END_TXN_VALUE_SIZE: i64 = layout::END_TXN_MARKER_SIZE as i64;
const LOG_APPEND_TIME: i16 = layout::V2_TIMESTAMP_TYPE_FLAG;
const TRANSACTIONAL: i16 = layout::V2_TRANSACTIONAL_FLAG;
const CONTROL: i16 = layout::V2_CONTROL_FLAG;
const DELETE_HORIZON: i16 = layout::V2_DELETE_HORIZON_FLAG;
pub(crate) const MIN_RECORD_SIZE: usize = 7;
pub(crate) const CODEC_NAMES: [&str; 5] = ["none", "gzip", "snappy", "lz4", "zstd"];

/// What one call produced: the text, where it stopped (the first batch not written, or where the framing
/// ends), the last record offset seen, and the non-consecutive offset pairs in order.
#[derive(Debug, Default)]
pub struct Deep {
    pub text: String,
    pub stop: u64,
    pub last_offset: i64,
    pub gaps: Vec<(i64, i64)>,
}

pub(crate) fn be_i64(b: &[u8], at: usize) -> i64 {
    i64::from_be_bytes(b[at..at + 8].try_into().unwrap_or([0; 8]))
}
pub(crate) fn be_i32(b: &[u8], at: usize) -> i32 {
    i32::from_be_bytes(b[at..at + 4].try_into().unwrap_or([0; 4]))
}
pub(crate) fn be_u32(b: &[u8], at: usize) -> u32 {
    u32::from_be_bytes(b[at..at + 4].try_into().unwrap_or([0; 4]))
}
pub(crate) fn be_i16(b: &[u8], at: usize) -> i16 {
    i16::from_be_bytes(b[at..at + 2].try_into().unwrap_or([0; 2]))
}

/// Kafka's `DefaultRecordBatch.incrementSequence`.
pub(crate) fn increment_sequence(sequence: i64, increment: i64) -> i64 {
    if sequence > MAX_SEQUENCE - increment {
        increment - (MAX_SEQUENCE - sequence) - 1
    } else {
        sequence + increment
    }
}

fn bool_text(v: bool) -> &'static str {
    if v {
        "true"
    } else {
        "false"
    }
}

/// Options of one dump.
#[derive(Debug, Clone, Copy)]
pub struct Options {
    pub print_data: bool,
    pub skip_record_metadata: bool,
    pub max_output: usize,
}

/// `printControlRecord` for an end-transaction marker (Kafka's `ControlRecordType.parse`, `EndTransactionMarker`):
/// ` endTxnMarker: COMMIT coordinatorEpoch: N`. Any other control record (a KRaft type, an unknown type, a key
/// or value Kafka refuses) is `None`: the batch is handed back to the Python path, which prints or throws there.
fn marker_text(data: &[u8], ko: i64, kl: i64, vo: i64, vl: i64, out: &mut String) -> Option<()> {
    if kl < CONTROL_KEY_SIZE || vl < END_TXN_VALUE_SIZE {
        return None;
    }
    let (k, v) = (ko as usize, vo as usize);
    let version = i16::from_be_bytes([data[k], data[k + 1]]);
    let ctype = i16::from_be_bytes([data[k + 2], data[k + 3]]);
    let value_version = i16::from_be_bytes([data[v], data[v + 1]]);
    let epoch = i32::from_be_bytes([data[v + 2], data[v + 3], data[v + 4], data[v + 5]]);
    let name = match ctype {
        0 => "ABORT",
        1 => "COMMIT",
        _ => return None,
    };
    if version < 0 || value_version < 0 {
        return None;
    }
    let _ = write!(out, " endTxnMarker: {name} coordinatorEpoch: {epoch}");
    Some(())
}

/// The lines of the batch `b` (at file position `pos`) appended to `deep`; `None`: hand it back (`deep` as it was).
fn batch_text(b: &[u8], pos: u64, opts: Options, given: Option<&[u8]>, deep: &mut Deep) -> Option<()> {
    let size = b.len() - LOG_OVERHEAD;
    let mark = deep.text.len();
    let written = batch_lines(b, pos, size, opts, given, deep);
    if written.is_none() {
        deep.text.truncate(mark); // nothing of a handed-back batch is written
    }
    written
}

/// The body of [`batch_text`]: writes straight into `deep.text`, which the caller truncates on `None`.
#[allow(clippy::too_many_lines)]
fn batch_lines(b: &[u8], pos: u64, size: usize, opts: Options, given: Option<&[u8]>, deep: &mut Deep)
               -> Option<()> {
    let mut last_seen = deep.last_offset;
    let last = &mut last_seen;
    let mut gaps: Vec<(i64, i64)> = Vec::new();
    let base_offset = be_i64(b, V2_BASE_OFFSET_OFFSET);
    let leader_epoch = be_i32(b, V2_PARTITION_LEADER_EPOCH_OFFSET);
    let crc = be_u32(b, V2_CRC_OFFSET);
    let attrs = be_i16(b, layout::V2_ATTRIBUTES_OFFSET);
    let last_delta = be_i32(b, V2_LAST_OFFSET_DELTA_OFFSET) as i64;
    let base_ts = be_i64(b, V2_BASE_TIMESTAMP_OFFSET);
    let max_ts = be_i64(b, V2_MAX_TIMESTAMP_OFFSET);
    let producer_id = be_i64(b, V2_PRODUCER_ID_OFFSET);
    let producer_epoch = be_i16(b, V2_PRODUCER_EPOCH_OFFSET);
    let base_seq = be_i32(b, V2_BASE_SEQUENCE_OFFSET) as i64;
    let count = be_i32(b, V2_RECORDS_COUNT_OFFSET) as i64;
    let codec = (attrs & 0x07) as u8;
    let control = attrs & CONTROL != 0;
    if codec as usize >= CODEC_NAMES.len() || count < 0 {
        return None;
    }
    let valid = crc32c::crc32c(&b[V2_CRC_COVERED_FROM..]) == crc;
    let log_append = attrs & LOG_APPEND_TIME != 0;
    let ts_type = if log_append { "LogAppendTime" } else { "CreateTime" };
    let last_seq = if base_seq == NO_SEQUENCE { NO_SEQUENCE } else { increment_sequence(base_seq, last_delta) };
    let out = &mut deep.text;
    let _ = write!(
        out,
        "baseOffset: {base_offset} lastOffset: {} count: {count} baseSequence: {base_seq} lastSequence: {last_seq} \
         producerId: {producer_id} producerEpoch: {producer_epoch} partitionLeaderEpoch: {leader_epoch} \
         isTransactional: {} isControl: {} deleteHorizonMs: ",
        base_offset as i128 + last_delta as i128,
        bool_text(attrs & TRANSACTIONAL != 0),
        bool_text(control),
    );
    if attrs & DELETE_HORIZON != 0 {
        let _ = write!(out, "OptionalLong[{base_ts}]");
    } else {
        out.push_str("OptionalLong.empty");
    }
    let _ = writeln!(
        out,
        " position: {pos} {ts_type}: {max_ts} size: {} magic: 2 compresscodec: {} crc: {crc} isvalid: {}",
        size + LOG_OVERHEAD,
        CODEC_NAMES[codec as usize],
        bool_text(valid),
    );
    if count > 0 {
        let payload = &b[BATCH_HEADER..];
        let inflated;
        let data: &[u8] = if codec == 0 {
            payload
        } else {
            let bytes: &[u8] = match given {
                Some(bytes) => bytes,
                None => {
                    inflated = codecs::decompress(codec, payload, 2, opts.max_output)?;
                    &inflated
                }
            };
            let possible = (count as usize).min(bytes.len() / MIN_RECORD_SIZE);
            if bytes.len() + possible * RECORD_COST > opts.max_output {
                return None;
            }
            bytes
        };
        let c = records::decode(data, count)?;
        let utf8 = |o: i64, l: i64| std::str::from_utf8(&data[o as usize..(o + l) as usize]).ok();
        let mut h = 0usize;
        let seq_wrap = MAX_SEQUENCE - base_seq;
        for i in 0..c.offset_delta.len() {
            let off_delta = c.offset_delta[i];
            let offset = base_offset.checked_add(off_delta)?;
            let timestamp = if log_append { max_ts } else { base_ts.checked_add(c.timestamp_delta[i])? };
            if offset != last.wrapping_add(1) || *last == i64::MAX {
                gaps.push((*last, offset));
            }
            *last = offset;
            let (kl, vl) = (c.key_length[i], c.value_length[i]);
            let nheaders = c.header_count[i] as usize;
            if !opts.skip_record_metadata {
                let seq = if base_seq == NO_SEQUENCE {
                    NO_SEQUENCE
                } else if off_delta > seq_wrap {
                    increment_sequence(base_seq, off_delta)
                } else {
                    base_seq + off_delta
                };
                let _ = write!(
                    out,
                    "| offset: {offset} {ts_type}: {timestamp} keySize: {kl} valueSize: {vl} sequence: {seq} \
                     headerKeys: ["
                );
                for j in h..h + nheaders {
                    if j > h {
                        out.push(',');
                    }
                    out.push_str(utf8(c.header_key_offset[j], c.header_key_length[j])?);
                }
                out.push(']');
                if control {
                    marker_text(data, c.key_offset[i], kl, c.value_offset[i], vl, out)?;
                }
            }
            h += nheaders;
            if control {
                // checked even when not printed: a record Python's decoder refuses is handed back
                marker_text(data, c.key_offset[i], kl, c.value_offset[i], vl, &mut String::new())?;
            } else if opts.print_data {
                let mut prefix = if opts.skip_record_metadata { "| " } else { " " };
                if kl >= 0 {
                    out.push_str(prefix);
                    out.push_str("key: ");
                    out.push_str(utf8(c.key_offset[i], kl)?);
                    prefix = " ";
                }
                if vl >= 0 {
                    out.push_str(prefix);
                    out.push_str("payload: ");
                    out.push_str(utf8(c.value_offset[i], vl)?);
                }
            }
            out.push('\n');
        }
    }
    deep.last_offset = last_seen;
    deep.gaps.extend(gaps);
    Some(())
}

/// Write the batches of `chunk` (the file's bytes from position `chunk_pos`; the file is `file_len` bytes and the
/// dumped slice ends at `end`) from its start, as `FileLogInputStream.nextBatch` frames them, until a batch is
/// handed back, the chunk ends, or the framing stops. `last_offset` is the offset of the previous record.
pub fn dump_deep(chunk: &[u8], chunk_pos: u64, file_len: u64, end: u64, last_offset: i64, opts: Options) -> Deep {
    let mut deep = Deep { stop: chunk_pos, last_offset, ..Deep::default() };
    let mut at = 0usize;
    loop {
        let pos = chunk_pos + at as u64;
        deep.stop = pos;
        if pos as i128 >= end as i128 - HEADER_UP_TO_MAGIC as i128 || pos + HEADER_UP_TO_MAGIC as u64 > file_len {
            return deep; // the framing ends here, or Kafka throws: the Python loop decides
        }
        if chunk.len() - at < HEADER_UP_TO_MAGIC {
            return deep;
        }
        let size = be_i32(chunk, at + V2_BATCH_LENGTH_OFFSET) as i64;
        let magic = chunk[at + MAGIC_OFFSET];
        if size < RECORD_OVERHEAD_V0 || pos as i128 > end as i128 - LOG_OVERHEAD as i128 - size as i128 {
            return deep;
        }
        let size = size as usize;
        if chunk.len() - at < LOG_OVERHEAD + size || magic as i8 != layout::V2_MAGIC || LOG_OVERHEAD + size < BATCH_HEADER {
            return deep;
        }
        if batch_text(&chunk[at..at + LOG_OVERHEAD + size], pos, opts, None, &mut deep).is_none() {
            return deep;
        }
        at += LOG_OVERHEAD + size;
    }
}

/// The lines of the one compressed batch `batch` (at file position `pos`, a whole magic 2 batch) whose payload
/// was decompressed elsewhere into `inflated`; `stop == pos` when the batch is handed back (not whole, or a record
/// the writer does not take).
pub fn dump_deep_inflated(batch: &[u8], pos: u64, inflated: &[u8], last_offset: i64, opts: Options) -> Deep {
    let mut deep = Deep { stop: pos, last_offset, ..Deep::default() };
    let whole = batch.len() >= BATCH_HEADER
        && be_i32(batch, V2_BATCH_LENGTH_OFFSET) as i64 + LOG_OVERHEAD as i64 == batch.len() as i64
        && batch[MAGIC_OFFSET] as i8 == layout::V2_MAGIC;
    if whole && batch_text(batch, pos, opts, Some(inflated), &mut deep).is_some() {
        deep.stop = pos + batch.len() as u64;
    }
    deep
}

/// What `dump_deep` returns to Python: (text, stop, last_offset, gaps).
type DeepTuple<'py> = (Bound<'py, PyString>, u64, i64, Vec<(i64, i64)>);

/// `dump_deep(chunk, chunk_pos, file_len, end, last_offset, print_data, skip_record_metadata, max_output)`:
/// `(text, stop, last_offset, gaps)`, see [`dump_deep`].
#[allow(clippy::too_many_arguments)]
#[pyfunction]
#[pyo3(name = "dump_deep")]
fn py_dump_deep<'py>(
    py: Python<'py>,
    chunk: &[u8],
    chunk_pos: u64,
    file_len: u64,
    end: u64,
    last_offset: i64,
    print_data: bool,
    skip_record_metadata: bool,
    max_output: usize,
) -> PyResult<DeepTuple<'py>> {
    guard("dump_deep", || {
        let opts = Options { print_data, skip_record_metadata, max_output };
        let deep = py.detach(|| dump_deep(chunk, chunk_pos, file_len, end, last_offset, opts));
        Ok((PyString::new(py, &deep.text), deep.stop, deep.last_offset, deep.gaps))
    })
}

/// `dump_deep_inflated(batch, pos, inflated, last_offset, print_data, skip_record_metadata, max_output)`: the
/// lines of the one compressed batch `batch` (at file position `pos`) whose payload the Python path decompressed
/// into `inflated` (zstd frames without a checksum, see `codecs`); `(text, stop, last_offset, gaps)` as
/// `dump_deep`, `stop == pos` when the batch is handed back.
#[allow(clippy::too_many_arguments)]
#[pyfunction]
#[pyo3(name = "dump_deep_inflated")]
fn py_dump_deep_inflated<'py>(
    py: Python<'py>,
    batch: &[u8],
    pos: u64,
    inflated: &[u8],
    last_offset: i64,
    print_data: bool,
    skip_record_metadata: bool,
    max_output: usize,
) -> PyResult<DeepTuple<'py>> {
    guard("dump_deep_inflated", || {
        let opts = Options { print_data, skip_record_metadata, max_output };
        let deep = py.detach(|| dump_deep_inflated(batch, pos, inflated, last_offset, opts));
        Ok((PyString::new(py, &deep.text), deep.stop, deep.last_offset, deep.gaps))
    })
}

/// Add this module's Python functions to `kafkatool._native`.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(py_dump_deep, m)?)?;
    m.add_function(wrap_pyfunction!(py_dump_deep_inflated, m)?)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nothing_to_write() {
        let opts = Options { print_data: true, skip_record_metadata: false, max_output: 1 << 20 };
        let d = dump_deep(&[0u8; 10], 0, 10, 10, -1, opts);
        assert_eq!((d.text.as_str(), d.stop), ("", 0));
        assert_eq!(increment_sequence(MAX_SEQUENCE, 1), 0);
    }
}

