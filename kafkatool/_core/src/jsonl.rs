//! The `dump-segment --format jsonl` entry rows for ordinary magic 2 batches: byte for byte what
//! `kafkatool.engine.rows.entry_row` builds and `kafkatool.render.output.JsonlOutput` writes with orjson (one
//! object a line, keys in `entry_row`'s order, the row's `"file"` last; Kafka's -1 sentinels as `null`).
//!
//! The fast twin of the Python walk (`schema.log_segment.walk_log`, shallow and deep) and of the row builders,
//! which stay the reference: `jsonl_rows` writes consecutive entries from a position and stops, before writing
//! anything of it, at the first entry it does not write exactly as the Python path would: a legacy or damaged
//! entry (a framing the walk reports, a CRC that does not match: the walk yields a defect row first), records
//! the Python decoder refuses or whose payload the native codecs hand back, a control record other than an
//! end-transaction marker or a type Kafka does not know, a number past orjson's 64-bit range. The caller
//! writes that entry with the Python path and calls again after it. Keys and values are shown with the decoders
//! `utf8` (invalid sequences replaced by U+FFFD, one per maximal invalid subpart, as Python's
//! `errors="replace"`), `hex`, `base64` or `none`; `json` and the internal-topic decoders stay in Python.

use numpy::{IntoPyArray, PyArray1};
use pyo3::prelude::*;
use pyo3::types::PyBytes;

use crate::codecs;
use crate::defect::guard;
use crate::layout::{
    self, LOG_OVERHEAD, MAGIC_OFFSET, V2_ATTRIBUTES_OFFSET, V2_BASE_OFFSET_OFFSET, V2_BASE_SEQUENCE_OFFSET,
    V2_BASE_TIMESTAMP_OFFSET, V2_BATCH_LENGTH_OFFSET, V2_BATCH_OVERHEAD, V2_CODEC_MASK, V2_CONTROL_FLAG,
    V2_CRC_COVERED_FROM, V2_CRC_OFFSET, V2_DELETE_HORIZON_FLAG, V2_HEADER_SIZE, V2_LAST_OFFSET_DELTA_OFFSET,
    V2_MAX_TIMESTAMP_OFFSET, V2_PARTITION_LEADER_EPOCH_OFFSET, V2_PRODUCER_EPOCH_OFFSET, V2_PRODUCER_ID_OFFSET,
    V2_RECORDS_COUNT_OFFSET, V2_TIMESTAMP_TYPE_FLAG, V2_TRANSACTIONAL_FLAG, RECORD_COST,
};
use crate::records;
use crate::text::{num, num64};
use crate::text_deep::{
    be_i16, be_i32, be_i64, be_u32, increment_sequence, CODEC_NAMES, MIN_RECORD_SIZE,
};

const HEADER_UP_TO_MAGIC: usize = MAGIC_OFFSET + 1;
const RECORD_OVERHEAD_V0: i64 = layout::LEGACY_RECORD_OVERHEAD_V0 as i64;
const MAX_SEQUENCE: i64 = layout::MAX_SEQUENCE as i64;
const NO_SEQUENCE: i64 = layout::NO_SEQUENCE as i64;
const CONTROL_KEY_SIZE: i64 = layout::CONTROL_KEY_SIZE as i64;
const END_TXN_VALUE_SIZE: i64 = layout::END_TXN_MARKER_SIZE as i64;
/// `ControlRecordType`s of the raft messages (`schema.control.RAFT_CONTROL_MESSAGES`): handed back.
const RAFT_TYPES: std::ops::RangeInclusive<i16> = 2..=6;
const TXN_TYPES: [&str; 2] = ["ABORT", "COMMIT"];

/// How a key or value is shown (`engine.rows.decode_bytes`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decoder {
    Utf8,
    Hex,
    Base64,
    Nothing,
}

impl Decoder {
    /// The decoder named `name` (`--key-decoder`/`--value-decoder`); `None` for one not written here.
    pub fn named(name: &str) -> Option<Decoder> {
        match name {
            "utf8" => Some(Decoder::Utf8),
            "hex" => Some(Decoder::Hex),
            "base64" => Some(Decoder::Base64),
            "none" => Some(Decoder::Nothing),
            _ => None,
        }
    }
}

/// Options of one dump: records decoded (`deep`), keys and values shown (`data`: the key and value decoders),
/// the decompression cap.
#[derive(Debug, Clone, Copy)]
pub struct Options {
    pub deep: bool,
    pub data: Option<(Decoder, Decoder)>,
    pub max_output: usize,
}

/// What one call wrote: the rows, where it stopped (the first entry not written), how many entries, the first
/// entry's base offset and the last one's last offset, and the written entries' headers for the offset checks
/// (`engine.verify.LogChecker.feed_columns`): position, base offset, last offset, records count and last offset
/// delta, [`HEAD_FIELDS`] values an entry.
#[derive(Debug, Default)]
pub struct Rows {
    pub text: Vec<u8>,
    pub stop: u64,
    pub count: u64,
    pub first: Option<i64>,
    pub last: Option<i64>,
    pub heads: Vec<i64>,
}

/// The values of one entry in [`Rows::heads`].
pub const HEAD_FIELDS: usize = 5;

/// Bytes that orjson escapes in a string: 0 none, else the escape's second character (`u`: `\u00XX`).
const ESCAPE: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut i = 0;
    while i < 0x20 {
        t[i] = b'u';
        i += 1;
    }
    t[0x08] = b'b';
    t[0x09] = b't';
    t[0x0A] = b'n';
    t[0x0C] = b'f';
    t[0x0D] = b'r';
    t[b'"' as usize] = b'"';
    t[b'\\' as usize] = b'\\';
    t
};
const HEX: &[u8; 16] = b"0123456789abcdef";
const B64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

const ONES: u64 = 0x0101_0101_0101_0101;
const HIGHS: u64 = 0x8080_8080_8080_8080;

/// Whether a byte of the word `w` is below 0x20, a `"` or a `\\` (the bytes orjson escapes), or DEL or a lead byte
/// of a character `render.safe.json_safe` escapes (0xC2, 0xD8, 0xE2).
#[inline]
fn word_needs_escape(w: u64) -> bool {
    let zero = |x: u64| x.wrapping_sub(ONES) & !x & HIGHS;
    let byte = |b: u8| zero(w ^ (ONES * b as u64));
    (w.wrapping_sub(ONES * 0x20) & !w & HIGHS)
        | byte(b'"')
        | byte(b'\\')
        | byte(0x7F)
        | byte(0xC2)
        | byte(0xD8)
        | byte(0xE2)
        != 0
}

/// The code point of the character at `s[i..]` that `render.safe.json_safe` writes as `\uXXXX` (JSON escapes
/// C0 itself): DEL, C1 controls, U+061C, U+200E/F, U+2028-202E, U+2066-2069; with its length in bytes. `s` is
/// valid UTF-8, so 0xC2, 0xD8 and 0xE2 are always lead bytes.
#[inline]
fn unsafe_char(s: &[u8], i: usize) -> Option<(u32, usize)> {
    let at = |k: usize| s.get(i + k).copied().unwrap_or(0);
    match (s[i], at(1), at(2)) {
        (0x7F, _, _) => Some((0x7F, 1)),
        (0xC2, b @ 0x80..=0x9F, _) => Some((u32::from(b), 2)),
        (0xD8, 0x9C, _) => Some((0x061C, 2)),
        (0xE2, 0x80, c @ (0x8E | 0x8F | 0xA8..=0xAE)) => Some((0x2000 | u32::from(c & 0x3F), 3)),
        (0xE2, 0x81, c @ 0xA6..=0xA9) => Some((0x2040 | u32::from(c & 0x3F), 3)),
        _ => None,
    }
}

/// Append valid UTF-8 `s` as the inside of a JSON string, escaped as orjson escapes and then as
/// `render.safe.json_safe` escapes (eight bytes a step where none needs it).
fn escaped(out: &mut Vec<u8>, s: &[u8]) {
    out.reserve(s.len());
    let mut from = 0;
    let mut i = 0;
    while i < s.len() {
        if let Some(word) = s.get(i..i + 8) {
            let mut w = [0u8; 8];
            w.copy_from_slice(word);
            if !word_needs_escape(u64::from_le_bytes(w)) {
                i += 8;
                continue;
            }
        }
        let b = s[i];
        if b >= 0x7F {
            if let Some((code, len)) = unsafe_char(s, i) {
                out.extend_from_slice(&s[from..i]);
                out.extend_from_slice(b"\\u");
                for shift in [12, 8, 4, 0] {
                    out.push(HEX[((code >> shift) & 15) as usize]);
                }
                i += len;
                from = i;
                continue;
            }
            i += 1;
            continue;
        }
        let e = ESCAPE[b as usize];
        if e != 0 {
            out.extend_from_slice(&s[from..i]);
            out.push(b'\\');
            out.push(e);
            if e == b'u' {
                out.extend_from_slice(b"00");
                out.push(HEX[(b >> 4) as usize]);
                out.push(HEX[(b & 15) as usize]);
            }
            from = i + 1;
        }
        i += 1;
    }
    out.extend_from_slice(&s[from..]);
}

/// `bytes.decode("utf-8", errors="replace")` as a JSON string: each maximal invalid subpart becomes U+FFFD.
fn utf8_string(out: &mut Vec<u8>, b: &[u8]) {
    out.push(b'"');
    if std::str::from_utf8(b).is_ok() {
        escaped(out, b); // the usual case: std's validation has an ASCII fast path, the chunks none
    } else {
        for chunk in b.utf8_chunks() {
            escaped(out, chunk.valid().as_bytes());
            if !chunk.invalid().is_empty() {
                out.extend_from_slice("\u{FFFD}".as_bytes());
            }
        }
    }
    out.push(b'"');
}

fn hex_string(out: &mut Vec<u8>, b: &[u8]) {
    let start = out.len();
    out.resize(start + b.len() * 2 + 2, b'"');
    for (d, &x) in out[start + 1..].chunks_exact_mut(2).zip(b) {
        d[0] = HEX[(x >> 4) as usize];
        d[1] = HEX[(x & 15) as usize];
    }
}

fn base64_string(out: &mut Vec<u8>, b: &[u8]) {
    let start = out.len();
    out.resize(start + b.len().div_ceil(3) * 4 + 2, b'"');
    let sextet = |n: u32, shift: u32| B64[(n >> shift) as usize & 63];
    for (d, group) in out[start + 1..].chunks_exact_mut(4).zip(b.chunks(3)) {
        let n = (group[0] as u32) << 16
            | (*group.get(1).unwrap_or(&0) as u32) << 8
            | *group.get(2).unwrap_or(&0) as u32;
        d[0] = sextet(n, 18);
        d[1] = sextet(n, 12);
        d[2] = if group.len() > 1 { sextet(n, 6) } else { b'=' };
        d[3] = if group.len() > 2 { sextet(n, 0) } else { b'=' };
    }
}

/// `decode_bytes(data, decoder)` as JSON (`data` `None`: null).
fn shown(out: &mut Vec<u8>, data: Option<&[u8]>, decoder: Decoder) {
    match (data, decoder) {
        (None, _) | (_, Decoder::Nothing) => out.extend_from_slice(b"null"),
        (Some(b), Decoder::Utf8) => utf8_string(out, b),
        (Some(b), Decoder::Hex) => hex_string(out, b),
        (Some(b), Decoder::Base64) => base64_string(out, b),
    }
}

/// An integer orjson writes (64 bits, signed or not); `None` past them (orjson raises: the Python path's).
fn int(out: &mut Vec<u8>, v: i128) -> Option<()> {
    if v < i64::MIN as i128 || v > u64::MAX as i128 {
        return None;
    }
    num(out, v);
    Some(())
}

/// An integer, `null` for Kafka's -1 sentinel (`rows._opt`).
fn opt(out: &mut Vec<u8>, v: i64) {
    if v == -1 {
        out.extend_from_slice(b"null");
    } else {
        num64(out, v);
    }
}

fn flag(out: &mut Vec<u8>, on: bool) {
    out.extend_from_slice(if on { b"true" } else { b"false" });
}

/// The `control` object of a control record (`schema.control.parse_control_record`, `rows.record_row`) for an
/// end-transaction marker or a type Kafka does not know; `None` for a raft message or a record the Python
/// decoder refuses.
fn control(out: &mut Vec<u8>, key: Option<&[u8]>, value: Option<&[u8]>) -> Option<()> {
    let key = key.filter(|k| k.len() as i64 >= CONTROL_KEY_SIZE)?;
    let version = be_i16(key, layout::CONTROL_KEY_VERSION_OFFSET);
    let ctype = be_i16(key, layout::CONTROL_KEY_TYPE_OFFSET);
    if version < 0 || RAFT_TYPES.contains(&ctype) {
        return None;
    }
    out.extend_from_slice(b"{\"type\":");
    num64(out, ctype as i64);
    out.extend_from_slice(b",\"type_name\":");
    match TXN_TYPES.get(ctype as usize).filter(|_| ctype >= 0) {
        Some(name) => {
            let value = value.filter(|v| v.len() as i64 >= END_TXN_VALUE_SIZE)?;
            let value_version = be_i16(value, layout::END_TXN_MARKER_VERSION_OFFSET);
            if value_version < 0 {
                return None;
            }
            out.push(b'"');
            out.extend_from_slice(name.as_bytes());
            out.extend_from_slice(b"\",\"version\":");
            num64(out, version as i64);
            out.extend_from_slice(b",\"value_version\":");
            num64(out, value_version as i64);
            out.extend_from_slice(b",\"coordinator_epoch\":");
            num64(out, be_i32(value, layout::END_TXN_MARKER_COORDINATOR_EPOCH_OFFSET) as i64);
        }
        None => {
            out.extend_from_slice(b"null,\"version\":");
            num64(out, version as i64);
            out.extend_from_slice(b",\"value_version\":null,\"coordinator_epoch\":null");
        }
    }
    out.push(b'}');
    Some(())
}

/// The header fields of a magic 2 batch that its row and its records need.
struct Header {
    base_offset: i64,
    attrs: i16,
    base_ts: i64,
    max_ts: i64,
    base_seq: i64,
    count: i64,
}

/// The row of the whole magic 2 batch `b` (at file position `pos`) appended to `rows`; `None`: hand it back
/// (`rows` as it was).
fn entry(b: &[u8], pos: u64, opts: Options, file: &[u8], given: Option<&[u8]>, rows: &mut Rows) -> Option<()> {
    let mark = rows.text.len();
    let written = entry_text(b, pos, opts, file, given, &mut rows.text);
    match written {
        Some(head) => {
            rows.count += 1;
            rows.first.get_or_insert(head[1]);
            rows.last = Some(head[2]);
            rows.heads.extend_from_slice(&head);
            Some(())
        }
        None => {
            rows.text.truncate(mark); // nothing of a handed-back entry is written
            None
        }
    }
}

/// The body of [`entry`]: writes straight into `out`, which the caller truncates on `None`; the entry's head
/// (see [`Rows::heads`]).
fn entry_text(b: &[u8], pos: u64, opts: Options, file: &[u8], given: Option<&[u8]>, out: &mut Vec<u8>)
              -> Option<[i64; HEAD_FIELDS]> {
    let crc = be_u32(b, V2_CRC_OFFSET);
    if crc32c::crc32c(&b[V2_CRC_COVERED_FROM..]) != crc {
        return None; // the walk yields a crc-mismatch defect first: the Python path's
    }
    let h = Header {
        base_offset: be_i64(b, V2_BASE_OFFSET_OFFSET),
        attrs: be_i16(b, V2_ATTRIBUTES_OFFSET),
        base_ts: be_i64(b, V2_BASE_TIMESTAMP_OFFSET),
        max_ts: be_i64(b, V2_MAX_TIMESTAMP_OFFSET),
        base_seq: be_i32(b, V2_BASE_SEQUENCE_OFFSET) as i64,
        count: be_i32(b, V2_RECORDS_COUNT_OFFSET) as i64,
    };
    let attrs = h.attrs;
    let last_delta = be_i32(b, V2_LAST_OFFSET_DELTA_OFFSET) as i64;
    let last_offset = h.base_offset.checked_add(last_delta)?; // past 64 bits: the Python path's
    let codec = (attrs & V2_CODEC_MASK) as usize;
    out.extend_from_slice(b"{\"type\":\"batch\",\"position\":");
    num64(out, pos as i64);
    out.extend_from_slice(b",\"base_offset\":");
    num64(out, h.base_offset);
    out.extend_from_slice(b",\"last_offset\":");
    num64(out, last_offset);
    out.extend_from_slice(b",\"count\":");
    num64(out, h.count);
    out.extend_from_slice(b",\"size\":");
    num64(out, b.len() as i64);
    out.extend_from_slice(b",\"magic\":2,\"compression\":\"");
    match CODEC_NAMES.get(codec) {
        Some(name) => out.extend_from_slice(name.as_bytes()),
        None => {
            out.extend_from_slice(b"unknown(");
            num64(out, codec as i64);
            out.push(b')');
        }
    }
    out.extend_from_slice(if attrs & V2_TIMESTAMP_TYPE_FLAG != 0 {
        b"\",\"timestamp_type\":\"LogAppendTime\",\"base_timestamp\":"
    } else {
        b"\",\"timestamp_type\":\"CreateTime\",\"base_timestamp\":"
    });
    num64(out, h.base_ts);
    out.extend_from_slice(b",\"max_timestamp\":");
    opt(out, h.max_ts);
    out.extend_from_slice(b",\"partition_leader_epoch\":");
    opt(out, be_i32(b, V2_PARTITION_LEADER_EPOCH_OFFSET) as i64);
    out.extend_from_slice(b",\"producer_id\":");
    opt(out, be_i64(b, V2_PRODUCER_ID_OFFSET));
    out.extend_from_slice(b",\"producer_epoch\":");
    opt(out, be_i16(b, V2_PRODUCER_EPOCH_OFFSET) as i64);
    out.extend_from_slice(b",\"base_sequence\":");
    opt(out, h.base_seq);
    out.extend_from_slice(b",\"last_sequence\":");
    if h.base_seq == NO_SEQUENCE {
        out.extend_from_slice(b"null");
    } else {
        num64(out, increment_sequence(h.base_seq, last_delta));
    }
    out.extend_from_slice(b",\"is_transactional\":");
    flag(out, attrs & V2_TRANSACTIONAL_FLAG != 0);
    out.extend_from_slice(b",\"is_control\":");
    flag(out, attrs & V2_CONTROL_FLAG != 0);
    out.extend_from_slice(b",\"delete_horizon_ms\":");
    if attrs & V2_DELETE_HORIZON_FLAG != 0 {
        num64(out, h.base_ts);
    } else {
        out.extend_from_slice(b"null");
    }
    out.extend_from_slice(b",\"attributes\":");
    num64(out, attrs as i64);
    out.extend_from_slice(b",\"crc\":");
    num64(out, crc as i64);
    out.extend_from_slice(b",\"crc_valid\":true");
    if opts.deep {
        out.extend_from_slice(b",\"records\":[");
        records_text(b, pos, &h, opts, given, out)?;
        out.push(b']');
    }
    out.extend_from_slice(b",\"file\":");
    out.extend_from_slice(file);
    out.extend_from_slice(b"}\n");
    Some([pos as i64, h.base_offset, last_offset, h.count, last_delta])
}

/// The batch's record rows (`rows.record_row` over `record_batch.decode_records`), comma-separated.
fn records_text(b: &[u8], pos: u64, h: &Header, opts: Options, given: Option<&[u8]>, out: &mut Vec<u8>)
                -> Option<()> {
    let codec = (h.attrs & V2_CODEC_MASK) as u8;
    if codec as usize >= CODEC_NAMES.len() {
        return None;
    }
    let payload = &b[V2_HEADER_SIZE..];
    let inflated;
    let (data, origin): (&[u8], Option<i64>) = if codec == 0 {
        (payload, Some(pos as i64 + V2_HEADER_SIZE as i64))
    } else {
        let bytes: &[u8] = match given {
            Some(bytes) => bytes,
            None => {
                inflated = codecs::decompress(codec, payload, layout::V2_MAGIC, opts.max_output)?;
                &inflated
            }
        };
        let possible = (h.count.max(0) as usize).min(bytes.len() / MIN_RECORD_SIZE);
        if bytes.len().checked_add(possible.checked_mul(RECORD_COST)?)? > opts.max_output {
            return None;
        }
        (bytes, None)
    };
    let c = records::decode(data, h.count)?;
    let control_batch = h.attrs & V2_CONTROL_FLAG != 0;
    let log_append = h.attrs & V2_TIMESTAMP_TYPE_FLAG != 0;
    let part = |o: i64, l: i64| if l < 0 { None } else { data.get(o as usize..(o + l) as usize) };
    let seq_wrap = MAX_SEQUENCE - h.base_seq;
    let mut hi = 0usize;
    for i in 0..c.offset_delta.len() {
        if i > 0 {
            out.push(b',');
        }
        let off_delta = c.offset_delta[i];
        out.extend_from_slice(b"{\"offset\":");
        int(out, h.base_offset as i128 + off_delta as i128)?;
        out.extend_from_slice(b",\"position\":");
        match origin {
            Some(at) => num64(out, at + c.start[i]),
            None => out.extend_from_slice(b"null"),
        }
        out.extend_from_slice(b",\"timestamp\":");
        let ts = if log_append { h.max_ts as i128 } else { h.base_ts as i128 + c.timestamp_delta[i] as i128 };
        if ts == -1 {
            out.extend_from_slice(b"null");
        } else {
            int(out, ts)?;
        }
        let (kl, vl) = (c.key_length[i], c.value_length[i]);
        out.extend_from_slice(b",\"key_size\":");
        num64(out, kl);
        out.extend_from_slice(b",\"value_size\":");
        num64(out, vl);
        out.extend_from_slice(b",\"sequence\":");
        let seq = if h.base_seq == NO_SEQUENCE {
            NO_SEQUENCE
        } else if off_delta > seq_wrap {
            increment_sequence(h.base_seq, off_delta)
        } else {
            h.base_seq + off_delta
        };
        opt(out, seq);
        out.extend_from_slice(b",\"header_keys\":[");
        let headers = hi..hi + c.header_count[i] as usize;
        hi = headers.end;
        for j in headers.clone() {
            if j > headers.start {
                out.push(b',');
            }
            utf8_string(out, part(c.header_key_offset[j], c.header_key_length[j])?);
        }
        out.push(b']');
        let (key, value) = (part(c.key_offset[i], kl), part(c.value_offset[i], vl));
        if control_batch {
            out.extend_from_slice(b",\"control\":");
            control(out, key, value)?;
        } else if let Some((key_decoder, value_decoder)) = opts.data {
            out.extend_from_slice(b",\"key\":");
            shown(out, key, key_decoder);
            out.extend_from_slice(b",\"value\":");
            shown(out, value, value_decoder);
            out.extend_from_slice(b",\"headers\":[");
            for j in headers.clone() {
                if j > headers.start {
                    out.push(b',');
                }
                out.extend_from_slice(b"{\"key\":");
                utf8_string(out, part(c.header_key_offset[j], c.header_key_length[j])?);
                out.extend_from_slice(b",\"value\":");
                shown(out, part(c.header_value_offset[j], c.header_value_length[j]), value_decoder);
                out.push(b'}');
            }
            out.push(b']');
        }
        out.push(b'}');
    }
    Some(())
}

/// Write the entry rows of `chunk` (the file's bytes from position `chunk_pos`; the walk's limit is `limit`)
/// from its start, as `walk_log` frames entries, until an entry is handed back, the chunk ends, or the limit is
/// reached. `file` is the row's `"file"` value, JSON-encoded.
pub fn jsonl_rows(chunk: &[u8], chunk_pos: u64, limit: u64, file: &[u8], opts: Options) -> Rows {
    let mut rows = Rows { stop: chunk_pos, ..Rows::default() };
    let mut at = 0usize;
    loop {
        let pos = chunk_pos + at as u64;
        rows.stop = pos;
        if pos >= limit || limit - pos < HEADER_UP_TO_MAGIC as u64 || chunk.len() - at < HEADER_UP_TO_MAGIC {
            return rows; // the end, a tail the walk reports, or the chunk's end
        }
        let size = be_i32(chunk, at + V2_BATCH_LENGTH_OFFSET) as i64;
        if size < RECORD_OVERHEAD_V0 || size < V2_BATCH_OVERHEAD as i64
            || (pos + LOG_OVERHEAD as u64) as i128 + size as i128 > limit as i128
            || chunk[at + MAGIC_OFFSET] as i8 != layout::V2_MAGIC
        {
            return rows;
        }
        let whole = LOG_OVERHEAD + size as usize;
        if chunk.len() - at < whole || entry(&chunk[at..at + whole], pos, opts, file, None, &mut rows).is_none() {
            return rows;
        }
        at += whole;
    }
}

/// The row of the one compressed batch `batch` (at file position `pos`, a whole magic 2 batch) whose payload was
/// decompressed elsewhere into `inflated`; `stop == pos` when it is handed back.
pub fn jsonl_rows_inflated(batch: &[u8], pos: u64, inflated: &[u8], file: &[u8], opts: Options) -> Rows {
    let mut rows = Rows { stop: pos, ..Rows::default() };
    let whole = batch.len() >= V2_HEADER_SIZE
        && be_i32(batch, V2_BATCH_LENGTH_OFFSET) as i64 + LOG_OVERHEAD as i64 == batch.len() as i64
        && batch[MAGIC_OFFSET] as i8 == layout::V2_MAGIC
        && opts.deep
        && batch[V2_ATTRIBUTES_OFFSET + 1] & V2_CODEC_MASK as u8 != 0;
    if whole && entry(batch, pos, opts, file, Some(inflated), &mut rows).is_some() {
        rows.stop = pos + batch.len() as u64;
    }
    rows
}

/// What the Python functions return: (rows, stop, count, first base offset, last offset, heads).
type RowsTuple<'py> = (Bound<'py, PyBytes>, u64, u64, Option<i64>, Option<i64>, Bound<'py, PyArray1<i64>>);

fn options(deep: bool, key_decoder: Option<&str>, value_decoder: Option<&str>, max_output: usize)
           -> PyResult<Options> {
    let data = match (key_decoder, value_decoder) {
        (None, None) => None,
        (k, v) => {
            let pick = |d: Option<&str>| {
                Decoder::named(d.unwrap_or("none"))
                    .ok_or_else(|| pyo3::exceptions::PyValueError::new_err(format!("no native decoder {d:?}")))
            };
            Some((pick(k)?, pick(v)?))
        }
    };
    Ok(Options { deep, data, max_output })
}

fn to_python(py: Python<'_>, rows: Rows) -> RowsTuple<'_> {
    (PyBytes::new(py, &rows.text), rows.stop, rows.count, rows.first, rows.last, rows.heads.into_pyarray(py))
}

/// `jsonl_rows(chunk, chunk_pos, limit, file, deep, key_decoder, value_decoder, max_output)`:
/// `(rows, stop, count, first, last, heads)`, see [`jsonl_rows`] and [`Rows`] (`heads` an int64 array, five
/// values an entry); decoders `None` (no data shown) or utf8, hex, base64, none.
#[allow(clippy::too_many_arguments)]
#[pyfunction]
#[pyo3(name = "jsonl_rows")]
fn py_jsonl_rows<'py>(
    py: Python<'py>,
    chunk: &[u8],
    chunk_pos: u64,
    limit: u64,
    file: &[u8],
    deep: bool,
    key_decoder: Option<&str>,
    value_decoder: Option<&str>,
    max_output: usize,
) -> PyResult<RowsTuple<'py>> {
    guard("jsonl_rows", || {
        let opts = options(deep, key_decoder, value_decoder, max_output)?;
        let rows = py.detach(|| jsonl_rows(chunk, chunk_pos, limit, file, opts));
        Ok(to_python(py, rows))
    })
}

/// `jsonl_rows_inflated(batch, pos, inflated, file, key_decoder, value_decoder, max_output)`: the row of the
/// one compressed batch `batch` whose payload the Python path decompressed into `inflated` (zstd without a
/// checksum, lz4: see `codecs`); as `jsonl_rows` (records decoded), `stop == pos` when handed back.
#[allow(clippy::too_many_arguments)]
#[pyfunction]
#[pyo3(name = "jsonl_rows_inflated")]
fn py_jsonl_rows_inflated<'py>(
    py: Python<'py>,
    batch: &[u8],
    pos: u64,
    inflated: &[u8],
    file: &[u8],
    key_decoder: Option<&str>,
    value_decoder: Option<&str>,
    max_output: usize,
) -> PyResult<RowsTuple<'py>> {
    guard("jsonl_rows_inflated", || {
        let opts = options(true, key_decoder, value_decoder, max_output)?;
        let rows = py.detach(|| jsonl_rows_inflated(batch, pos, inflated, file, opts));
        Ok(to_python(py, rows))
    })
}

/// Add this module's Python functions to `kafkatool._native`.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(py_jsonl_rows, m)?)?;
    m.add_function(wrap_pyfunction!(py_jsonl_rows_inflated, m)?)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(f: impl Fn(&mut Vec<u8>)) -> String {
        let mut out = Vec::new();
        f(&mut out);
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn strings_as_orjson_writes_them() {
        assert_eq!(text(|o| utf8_string(o, b"a\"\\\x00\x1f\x7f\n\x08")), "\"a\\\"\\\\\\u0000\\u001f\\u007f\\n\\b\"");
        assert_eq!(text(|o| utf8_string(o, b"\xe2\x82\xff\xc3\xa9")), "\"\u{FFFD}\u{FFFD}\u{e9}\"");
        let long = b"0123456789abcdef\"0123456789\\abcdef\x1f0123456789abcdef\xc3\xa9";
        assert_eq!(text(|o| utf8_string(o, long)),
                   "\"0123456789abcdef\\\"0123456789\\\\abcdef\\u001f0123456789abcdef\u{e9}\"");
        assert_eq!(text(|o| base64_string(o, b"ab")), "\"YWI=\"");
        assert_eq!(text(|o| base64_string(o, b"abcd")), "\"YWJjZA==\"");
        assert_eq!(text(|o| hex_string(o, b"\x01\xab")), "\"01ab\"");
        assert_eq!(text(|o| int(o, u64::MAX as i128).unwrap()), "18446744073709551615");
        assert!(int(&mut Vec::new(), u64::MAX as i128 + 1).is_none());
    }

    #[test]
    fn controls_bidi_and_separators_escaped_as_json_safe() {
        let all = "a\u{80}\u{85}\u{9b}\u{9f}\u{a0}\u{61c}\u{61b}\u{200d}\u{200e}\u{200f}\u{2027}\u{2028}\u{202e}\u{202f}\
                   \u{2065}\u{2066}\u{2069}\u{206a}\u{20ac}\u{e9}z";
        assert_eq!(text(|o| utf8_string(o, all.as_bytes())),
                   "\"a\\u0080\\u0085\\u009b\\u009f\u{a0}\\u061c\u{61b}\u{200d}\\u200e\\u200f\u{2027}\\u2028\\u202e\u{202f}\
                    \u{2065}\\u2066\\u2069\u{206a}\u{20ac}\u{e9}z\"");
        let long = "0123456789abcdef\u{202e}0123456789abcdef\u{9b}";
        assert_eq!(text(|o| utf8_string(o, long.as_bytes())), "\"0123456789abcdef\\u202e0123456789abcdef\\u009b\"");
    }

    #[test]
    fn nothing_to_write() {
        let opts = Options { deep: true, data: None, max_output: 1 << 20 };
        let rows = jsonl_rows(&[0u8; 10], 0, 10, b"\"f\"", opts);
        assert_eq!((rows.text.len(), rows.stop, rows.count), (0, 0, 0));
    }
}
