//! The shallow `dump-segment --format kafka` writer: DumpLogSegments' batch lines (`printBatchLevel`), byte for
//! byte as `kafkatool.engine.dls` prints them (`_fast_batch_line`), for the clean run of magic >= 2 batches.
//!
//! Models `FileLogInputStream.nextBatch` (the framing: stop when 17 bytes or fewer remain, a size below 14
//! throws, a partial entry stops quietly) and `DumpLogSegments.printBatchLevel` with `isValid()` (the batch's
//! CRC-32C). Anything else -- a legacy entry, a size below 14, a partial entry, a header past the file's end, an
//! unknown codec -- is handed back: the writer stops before that entry and returns its position, and the Python
//! path (`engine.dls.dump_log`) goes on from there, so messages, exceptions and the trailing-bytes line stay its
//! own. The batch lines do not differ between the Kafka release lines reproduced (3.9, 4.0, 4.4).

use std::fs::File;

use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyString};

use crate::defect::guard;
use crate::layout::{
    LOG_OVERHEAD, V2_ATTRIBUTES_OFFSET, V2_BASE_SEQUENCE_OFFSET, V2_BASE_TIMESTAMP_OFFSET, V2_CODEC_MASK,
    V2_CONTROL_FLAG, V2_CRC_COVERED_FROM, V2_CRC_OFFSET, V2_DELETE_HORIZON_FLAG, V2_HEADER_SIZE,
    V2_LAST_OFFSET_DELTA_OFFSET, V2_MAGIC, V2_MAX_TIMESTAMP_OFFSET, V2_PARTITION_LEADER_EPOCH_OFFSET,
    V2_PRODUCER_EPOCH_OFFSET, V2_PRODUCER_ID_OFFSET, V2_RECORDS_COUNT_OFFSET, V2_TIMESTAMP_TYPE_FLAG,
    V2_TRANSACTIONAL_FLAG, MAX_SEQUENCE, NO_SEQUENCE,
};
use crate::walk::{SliceSource, Source, StreamSource, CHUNK};

/// `FileLogInputStream`'s `HEADER_SIZE_UP_TO_MAGIC`: offset, size, partition leader epoch, magic.
const HEADER_SIZE_UP_TO_MAGIC: i64 = 17;
/// `LegacyRecord.RECORD_OVERHEAD_V0`: the smallest size an entry may declare.
const RECORD_OVERHEAD_V0: i32 = 14;
/// `CompressionType` names by codec id (ids 5 to 7 are unknown: handed back, Kafka throws mid-line).
const CODECS: [&str; 5] = ["none", "gzip", "snappy", "lz4", "zstd"];

fn be_i16(b: &[u8], at: usize) -> i16 {
    i16::from_be_bytes([b[at], b[at + 1]])
}

fn be_i32(b: &[u8], at: usize) -> i32 {
    i32::from_be_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

fn be_i64(b: &[u8], at: usize) -> i64 {
    let mut x = [0u8; 8];
    x.copy_from_slice(&b[at..at + 8]);
    i64::from_be_bytes(x)
}

/// Append the decimal text of `v` (as Java's `Long.toString`); u64 arithmetic (i128 only past i64's range).
pub(crate) fn num(out: &mut Vec<u8>, v: i128) {
    if let Ok(small) = i64::try_from(v) {
        return num64(out, small);
    }
    let mut digits = [0u8; 40];
    let mut i = digits.len();
    let mut u = v.unsigned_abs();
    while u > 0 {
        i -= 1;
        digits[i] = b'0' + (u % 10) as u8;
        u /= 10;
    }
    if v < 0 {
        out.push(b'-');
    }
    out.extend_from_slice(&digits[i..]);
}

/// `num` for an i64, the common case: two digits a step.
pub(crate) fn num64(out: &mut Vec<u8>, v: i64) {
    const PAIRS: &[u8; 200] = b"0001020304050607080910111213141516171819202122232425262728293031323334353637383940414243444546474849\
5051525354555657585960616263646566676869707172737475767778798081828384858687888990919293949596979899";
    let mut digits = [0u8; 20];
    let mut i = digits.len();
    let mut u = v.unsigned_abs();
    while u >= 100 {
        let pair = (u % 100) as usize * 2;
        u /= 100;
        i -= 2;
        digits[i..i + 2].copy_from_slice(&PAIRS[pair..pair + 2]);
    }
    if u >= 10 {
        let pair = u as usize * 2;
        i -= 2;
        digits[i..i + 2].copy_from_slice(&PAIRS[pair..pair + 2]);
    } else {
        i -= 1;
        digits[i] = b'0' + u as u8;
    }
    if v < 0 {
        out.push(b'-');
    }
    out.extend_from_slice(&digits[i..]);
}

fn flag(out: &mut Vec<u8>, on: bool) {
    out.extend_from_slice(if on { b"true" } else { b"false" });
}

/// `DefaultRecordBatch.incrementSequence` (wraps past Int32 max to 0), in Python's unbounded arithmetic.
fn increment_sequence(sequence: i64, increment: i64) -> i64 {
    if sequence > MAX_SEQUENCE as i64 - increment {
        return increment - (MAX_SEQUENCE as i64 - sequence) - 1;
    }
    sequence + increment
}

/// Why the writer stopped.
#[derive(Debug, PartialEq, Eq)]
pub enum Stop {
    /// At an entry (or the end) the Python path must handle, at this position.
    HandBack(i64),
    /// The sink refused a block (its error is the caller's).
    Sink,
}

/// Write the batch lines from `pos` (a batch start; positions count from the file's start, as `dump_log`'s
/// `valid` does) until the first entry not handled; `end` is the slice's end, `file_len` the file's length. Text
/// goes to `sink` in blocks of about `block` bytes; a sink returning false stops the writer.
pub fn batch_lines<S: Source + ?Sized>(src: &mut S, mut pos: i64, end: i64, file_len: i64, block: usize,
                   sink: &mut dyn FnMut(&[u8]) -> bool) -> Stop {
    let mut out: Vec<u8> = Vec::with_capacity(block + 1024);
    let stop = loop {
        if pos >= end - HEADER_SIZE_UP_TO_MAGIC || pos + V2_HEADER_SIZE as i64 > file_len || pos < 0 {
            break Stop::HandBack(pos);
        }
        let Some(h) = src.get(pos as u64, V2_HEADER_SIZE) else { break Stop::HandBack(pos) };
        let base_offset = be_i64(h, 0);
        let size = be_i32(h, 8);
        let magic = h[16] as i8;
        if size < RECORD_OVERHEAD_V0 || pos > end - LOG_OVERHEAD as i64 - size as i64 || magic < V2_MAGIC {
            break Stop::HandBack(pos);
        }
        let attrs = be_i16(h, V2_ATTRIBUTES_OFFSET);
        let codec = (attrs & V2_CODEC_MASK) as usize;
        if codec >= CODECS.len() {
            break Stop::HandBack(pos);
        }
        let stored = u32::from_be_bytes([h[V2_CRC_OFFSET], h[V2_CRC_OFFSET + 1], h[V2_CRC_OFFSET + 2], h[V2_CRC_OFFSET + 3]]);
        let ple = be_i32(h, V2_PARTITION_LEADER_EPOCH_OFFSET);
        let delta = be_i32(h, V2_LAST_OFFSET_DELTA_OFFSET);
        let base_ts = be_i64(h, V2_BASE_TIMESTAMP_OFFSET);
        let max_ts = be_i64(h, V2_MAX_TIMESTAMP_OFFSET);
        let pid = be_i64(h, V2_PRODUCER_ID_OFFSET);
        let pepoch = be_i16(h, V2_PRODUCER_EPOCH_OFFSET);
        let base_seq = be_i32(h, V2_BASE_SEQUENCE_OFFSET);
        let count = be_i32(h, V2_RECORDS_COUNT_OFFSET);
        let size_in_bytes = LOG_OVERHEAD as i64 + size as i64;
        let valid = if size_in_bytes >= V2_HEADER_SIZE as i64 {
            match src.crc(pos as u64 + V2_CRC_COVERED_FROM as u64, (pos + size_in_bytes) as u64) {
                Some(crc) => crc == stored,
                None => break Stop::HandBack(pos),
            }
        } else {
            false
        };
        let last_seq = if base_seq == NO_SEQUENCE { NO_SEQUENCE as i64 } else {
            increment_sequence(base_seq as i64, delta as i64)
        };
        out.extend_from_slice(b"baseOffset: ");
        num64(&mut out, base_offset);
        out.extend_from_slice(b" lastOffset: ");
        num(&mut out, base_offset as i128 + delta as i128);
        out.extend_from_slice(b" count: ");
        num64(&mut out, count as i64);
        out.extend_from_slice(b" baseSequence: ");
        num64(&mut out, base_seq as i64);
        out.extend_from_slice(b" lastSequence: ");
        num64(&mut out, last_seq);
        out.extend_from_slice(b" producerId: ");
        num64(&mut out, pid);
        out.extend_from_slice(b" producerEpoch: ");
        num64(&mut out, pepoch as i64);
        out.extend_from_slice(b" partitionLeaderEpoch: ");
        num64(&mut out, ple as i64);
        out.extend_from_slice(b" isTransactional: ");
        flag(&mut out, attrs & V2_TRANSACTIONAL_FLAG != 0);
        out.extend_from_slice(b" isControl: ");
        flag(&mut out, attrs & V2_CONTROL_FLAG != 0);
        if attrs & V2_DELETE_HORIZON_FLAG != 0 {
            out.extend_from_slice(b" deleteHorizonMs: OptionalLong[");
            num64(&mut out, base_ts);
            out.extend_from_slice(b"]");
        } else {
            out.extend_from_slice(b" deleteHorizonMs: OptionalLong.empty");
        }
        out.extend_from_slice(b" position: ");
        num64(&mut out, pos);
        out.extend_from_slice(if attrs & V2_TIMESTAMP_TYPE_FLAG != 0 { b" LogAppendTime: " } else { b" CreateTime: " });
        num64(&mut out, max_ts);
        out.extend_from_slice(b" size: ");
        num64(&mut out, size_in_bytes);
        out.extend_from_slice(b" magic: ");
        num64(&mut out, magic as i64);
        out.extend_from_slice(b" compresscodec: ");
        out.extend_from_slice(CODECS[codec].as_bytes());
        out.extend_from_slice(b" crc: ");
        num64(&mut out, stored as i64);
        out.extend_from_slice(b" isvalid: ");
        flag(&mut out, valid);
        out.push(b'\n');
        pos += size_in_bytes;
        if out.len() >= block {
            if !sink(&out) {
                return Stop::Sink;
            }
            out.clear();
        }
    };
    if !out.is_empty() && !sink(&out) {
        return Stop::Sink;
    }
    stop
}

/// Hand `text` (ASCII) to the Python callable `emit` as a `str` (as `bytes` with `binary`); false (the error kept
/// in `failed`) when it raised.
fn emit_block(emit: &Py<PyAny>, binary: bool, text: &[u8], failed: &mut Option<PyErr>) -> bool {
    Python::attach(|py| {
        let block = if binary {
            PyBytes::new(py, text).into_any()
        } else {
            PyString::new(py, std::str::from_utf8(text).unwrap_or_default()).into_any()
        };
        match emit.call1(py, (block,)) {
            Ok(_) => true,
            Err(e) => {
                *failed = Some(e);
                false
            }
        }
    })
}

fn finish(stop: Stop, failed: Option<PyErr>) -> PyResult<i64> {
    match (stop, failed) {
        (_, Some(e)) => Err(e),
        (Stop::HandBack(pos), None) => Ok(pos),
        (Stop::Sink, None) => Ok(-1),
    }
}

/// The batch lines of the `bytes` buffer `data` (a whole file) from `pos` to the slice end `end`, each block of
/// about `block` bytes passed to `emit` (a `str`, or `bytes` with `binary`); returns the position where the Python
/// path goes on.
#[pyfunction]
#[pyo3(signature = (data, pos, end, emit, binary=false, block=1 << 20))]
fn dls_batch_lines_bytes(py: Python<'_>, data: &[u8], pos: i64, end: i64, emit: Py<PyAny>, binary: bool,
                         block: usize) -> PyResult<i64> {
    guard("dls_batch_lines_bytes", || {
        let mut failed = None;
        let stop = py.detach(|| {
            batch_lines(&mut SliceSource(data), pos, end, data.len() as i64, block,
                        &mut |text| emit_block(&emit, binary, text, &mut failed))
        });
        finish(stop, failed)
    })
}

/// The batch lines of the file at `path` (`file_len` bytes, as the caller sees it), read with `std::fs` in
/// bounded chunks, from `pos` to the slice end `end`; see `dls_batch_lines_bytes`.
#[pyfunction]
#[pyo3(signature = (path, pos, end, file_len, emit, binary=false, block=1 << 20))]
#[allow(clippy::too_many_arguments)]
fn dls_batch_lines_path(py: Python<'_>, path: &str, pos: i64, end: i64, file_len: i64, emit: Py<PyAny>,
                        binary: bool, block: usize) -> PyResult<i64> {
    guard("dls_batch_lines_path", || {
        let mut failed = None;
        let stop = py.detach(|| match File::open(path) {
            Ok(file) if pos >= 0 && file_len > pos => {
                StreamSource::with(&file, pos as u64, file_len as u64, CHUNK, |src| {
                    batch_lines(src, pos, end, file_len, block, &mut |text| {
                        emit_block(&emit, binary, text, &mut failed)
                    })
                })
            }
            _ => Stop::HandBack(pos),
        });
        finish(stop, failed)
    })
}

/// Add this module's Python functions to `kafkatool._native`.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(dls_batch_lines_bytes, m)?)?;
    m.add_function(wrap_pyfunction!(dls_batch_lines_path, m)?)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_print_as_java() {
        let mut out = Vec::new();
        for v in [0i128, 7, -1, 10, 99, 100, 12345, i64::MIN as i128, i64::MAX as i128 + i32::MAX as i128,
                  i64::MIN as i128 - 5] {
            num(&mut out, v);
            out.push(b' ');
        }
        assert_eq!(String::from_utf8(out).unwrap(), "0 7 -1 10 99 100 12345 -9223372036854775808 9223372039002259454 -9223372036854775813 ");
    }

    #[test]
    fn sequences_wrap() {
        assert_eq!(increment_sequence(MAX_SEQUENCE as i64, 1), 0);
        assert_eq!(increment_sequence(5, 3), 8);
    }

    #[test]
    fn hands_back_a_legacy_entry() {
        let mut data = vec![0u8; 40];
        data[8..12].copy_from_slice(&20i32.to_be_bytes());
        data[16] = 1;
        let mut seen = Vec::new();
        let stop = batch_lines(&mut SliceSource(&data), 0, 40, 40, 10, &mut |t| {
            seen.extend_from_slice(t);
            true
        });
        assert_eq!(stop, Stop::HandBack(0));
        assert!(seen.is_empty());
    }
}
