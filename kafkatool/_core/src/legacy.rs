//! Magic 0/1 messages as the segment walk reads them: Kafka's `LegacyRecord` framing inside the log entries of
//! `FileLogInputStream.nextBatch`, and the inner span of a compressed wrapper (`AbstractLegacyRecordBatch`'s
//! `DeepRecordsIterator`, as `baseOffset()` needs it).
//!
//! The native twin of `kafkatool/schema/legacy.py` (`_message_fields`, `parse_legacy_entry`, `inner_records`),
//! which stays the reference: [`parse_message`] accepts exactly the messages that path accepts (a refused one
//! is damage: the walk stops there and the Python walker reports it), and [`inner_span`] answers what
//! `log_segment._read_legacy` stores in `LegacyBatch.inner_span`, or hands the wrapper back where it cannot be
//! sure (a payload the native codecs hand back: zstd without a checksum, an lz4 match at offset 0, damage, the cap
//! exceeded; an offset past int64).

use crate::codecs;
use crate::layout::{
    LEGACY_CODEC_MASK, LEGACY_CRC_COVERED_FROM, LEGACY_ENTRY_MESSAGE_SIZE_OFFSET, LEGACY_ENTRY_OFFSET_OFFSET,
    LEGACY_LENGTH_SIZE, LEGACY_MESSAGE_ATTRIBUTES_OFFSET, LEGACY_MESSAGE_CRC_OFFSET, LEGACY_MESSAGE_MAGIC_OFFSET,
    LEGACY_MESSAGE_SIZE, LEGACY_RECORD_OVERHEAD_V0, LEGACY_RECORD_OVERHEAD_V1, LEGACY_TIMESTAMP_SIZE, LOG_OVERHEAD,
    NO_TIMESTAMP, RECORD_COST,
};

/// Codec ids above zstd's: unknown to Kafka (`CompressionType.forId` refuses them).
const LAST_KNOWN_CODEC: u8 = codecs::ZSTD;

/// The fields of one magic 0/1 message (crc to the end of the value).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Message {
    pub crc: u32,
    pub magic: i8,
    pub attributes: i8,
    /// Magic 1's timestamp; `NO_TIMESTAMP` for magic 0 (which has none).
    pub timestamp: i64,
    /// -1 for a null key or value.
    pub key_length: i32,
    pub value_length: i32,
    /// Where the value's bytes start in the message.
    pub value_at: usize,
    /// The stored CRC-32 (IEEE, zlib's) matches the bytes from the magic to the end.
    pub crc_valid: bool,
}

impl Message {
    /// The value's bytes in `msg` (the slice this message was parsed from), `None` when null.
    pub fn value<'a>(&self, msg: &'a [u8]) -> Option<&'a [u8]> {
        let n = usize::try_from(self.value_length).ok()?;
        msg.get(self.value_at..self.value_at + n)
    }
}

fn be_i32(b: &[u8], at: usize) -> Option<i32> {
    Some(i32::from_be_bytes(b.get(at..at + 4)?.try_into().ok()?))
}

fn be_i64(b: &[u8], at: usize) -> Option<i64> {
    Some(i64::from_be_bytes(b.get(at..at + 8)?.try_into().ok()?))
}

/// An int32-length-prefixed byte string at `at` of `msg` (-1: null): `(length, position after it)`, or `None`
/// where `legacy._nullable` raises (a length field cut off, a length below -1, bytes overrunning the message).
fn nullable(msg: &[u8], at: usize) -> Option<(i32, usize)> {
    let length = be_i32(msg, at)?;
    let after = at + LEGACY_LENGTH_SIZE;
    match usize::try_from(length) {
        Ok(n) if msg.len() - after >= n => Some((length, after + n)),
        Ok(_) => None,
        Err(_) if length == -1 => Some((length, after)),
        Err(_) => None,
    }
}

/// The message that is exactly `msg` (crc to the end of the value, `LegacyRecord`'s layout), CRC-32 checked;
/// `None` where `legacy._message_fields` raises (too short, an unknown magic, bad lengths, bytes left over).
pub fn parse_message(msg: &[u8]) -> Option<Message> {
    if msg.len() < LEGACY_RECORD_OVERHEAD_V0 {
        return None;
    }
    let crc = u32::from_be_bytes(msg.get(LEGACY_MESSAGE_CRC_OFFSET..LEGACY_MESSAGE_CRC_OFFSET + 4)?.try_into().ok()?);
    let magic = msg[LEGACY_MESSAGE_MAGIC_OFFSET] as i8;
    let attributes = msg[LEGACY_MESSAGE_ATTRIBUTES_OFFSET] as i8;
    let mut at = LEGACY_MESSAGE_SIZE;
    let timestamp = match magic {
        0 => NO_TIMESTAMP,
        1 if msg.len() >= LEGACY_RECORD_OVERHEAD_V1 => {
            at += LEGACY_TIMESTAMP_SIZE;
            be_i64(msg, LEGACY_MESSAGE_SIZE)?
        }
        _ => return None,
    };
    let (key_length, at) = nullable(msg, at)?;
    let value_at = at + LEGACY_LENGTH_SIZE;
    let (value_length, end) = nullable(msg, at)?;
    if end != msg.len() {
        return None;
    }
    let crc_valid = crc32fast::hash(&msg[LEGACY_CRC_COVERED_FROM..]) == crc;
    Some(Message { crc, magic, attributes, timestamp, key_length, value_length, value_at, crc_valid })
}

/// What a walk stores for a wrapper's inner messages: `Some((first absolute offset, count))`, `None` where the
/// Python path stores none (it fails to read them: the deep read reports why).
pub type Span = Option<(i64, i64)>;

/// The inner span of the message `m` (parsed from `msg`, stored at `offset`) as `log_segment._read_legacy` sets
/// `inner_span`: `Some(span)`, or `None` to hand the wrapper back to the Python path. Follows
/// `legacy.inner_records`: decompress under `max_output`, the decoded-records budget, every complete inner entry
/// (a partial one at the end ignored, a size below the overhead an error), none compressed, magic 1's relative
/// offsets from the wrapper's (a wrapper offset of 0 taken as it is).
pub fn inner_span(m: &Message, msg: &[u8], offset: i64, max_output: usize) -> Option<Span> {
    let codec = (m.attributes & LEGACY_CODEC_MASK) as u8;
    if codec == 0 || codec > LAST_KNOWN_CODEC {
        return Some(None); // uncompressed: no span; an unknown codec: the Python path's read fails
    }
    let Some(value) = m.value(msg) else { return Some(None) }; // a null wrapper value: an error there
    let data = codecs::decompress(codec, value, m.magic, max_output)?;
    let per_entry = LOG_OVERHEAD + LEGACY_RECORD_OVERHEAD_V0;
    let budget = (data.len() / per_entry).checked_mul(RECORD_COST).and_then(|c| c.checked_add(data.len()));
    if budget.is_none_or(|b| b > max_output) {
        return Some(None); // check_decoded_budget refuses it
    }
    let (mut first, mut last, mut count) = (0i64, 0i64, 0i64);
    let mut at = 0usize;
    while data.len() - at >= LOG_OVERHEAD {
        let size = be_i32(&data, at + LEGACY_ENTRY_MESSAGE_SIZE_OFFSET)?;
        let Ok(size) = usize::try_from(size) else { return Some(None) };
        if size < LEGACY_RECORD_OVERHEAD_V0 {
            return Some(None);
        }
        let end = at + LOG_OVERHEAD + size;
        if end > data.len() {
            break;
        }
        let Some(inner) = parse_message(&data[at + LOG_OVERHEAD..end]) else { return Some(None) };
        if inner.attributes & LEGACY_CODEC_MASK != 0 {
            return Some(None); // an inner message must not be compressed
        }
        last = be_i64(&data, at + LEGACY_ENTRY_OFFSET_OFFSET)?;
        if count == 0 {
            first = last;
        }
        count += 1;
        at = end;
    }
    if count == 0 {
        return Some(None);
    }
    if m.magic == 1 && offset != 0 {
        if offset < last {
            return Some(None);
        }
        first = offset.checked_sub(last)?.checked_add(first)?;
    }
    Some(Some((first, count)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn message(magic: i8, attributes: i8, key: Option<&[u8]>, value: Option<&[u8]>) -> Vec<u8> {
        let mut m = vec![0u8; 4];
        m.push(magic as u8);
        m.push(attributes as u8);
        if magic == 1 {
            m.extend(1234i64.to_be_bytes());
        }
        for part in [key, value] {
            match part {
                Some(b) => {
                    m.extend((b.len() as i32).to_be_bytes());
                    m.extend(b);
                }
                None => m.extend((-1i32).to_be_bytes()),
            }
        }
        let crc = crc32fast::hash(&m[4..]);
        m[..4].copy_from_slice(&crc.to_be_bytes());
        m
    }

    fn entry(offset: i64, msg: &[u8]) -> Vec<u8> {
        let mut e = offset.to_be_bytes().to_vec();
        e.extend((msg.len() as i32).to_be_bytes());
        e.extend(msg);
        e
    }

    #[test]
    fn messages_parse_as_the_python_path() {
        let m = message(1, 0, Some(b"k"), None);
        let p = parse_message(&m).unwrap();
        assert_eq!((p.magic, p.timestamp, p.key_length, p.value_length, p.crc_valid), (1, 1234, 1, -1, true));
        let m0 = message(0, 0, None, Some(b"value"));
        let p0 = parse_message(&m0).unwrap();
        assert_eq!((p0.timestamp, p0.value(&m0)), (NO_TIMESTAMP, Some(&b"value"[..])));
        let mut bad = m0.clone();
        bad[0] ^= 1;
        assert!(!parse_message(&bad).unwrap().crc_valid);
        assert!(parse_message(&m0[..m0.len() - 1]).is_none());
        let mut extra = m0.clone();
        extra.push(0);
        assert!(parse_message(&extra).is_none());
        let mut magic = m0;
        magic[4] = 3;
        assert!(parse_message(&magic).is_none());
    }

    #[test]
    fn gzip_wrapper_span_takes_relative_offsets() {
        use std::io::Write;
        let mut inner = Vec::new();
        for k in 0..3 {
            inner.extend(entry(k, &message(1, 0, None, Some(b"v"))));
        }
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        gz.write_all(&inner).unwrap();
        let wrapper = message(1, 1, None, Some(&gz.finish().unwrap()));
        let m = parse_message(&wrapper).unwrap();
        assert_eq!(inner_span(&m, &wrapper, 42, 1 << 20), Some(Some((40, 3))));
        assert_eq!(inner_span(&m, &wrapper, 0, 1 << 20), Some(Some((0, 3))));
        assert_eq!(inner_span(&m, &wrapper, 1, 1 << 20), Some(None));
        assert_eq!(inner_span(&m, &wrapper, 42, 10), None);
    }
}
