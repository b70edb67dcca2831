//! Record decoding of a magic 2 batch (Kafka's `DefaultRecord.readFrom`, `ByteUtils.readVarint`/`readVarlong`),
//! after decompression, into columns.
//!
//! The fast twin of the record loop of `kafkatool/schema/record_batch.py` (`_decode_record_list`), which stays
//! the reference: `decode` returns the columns only when that loop would decode the same records without an
//! error; for any defect (a varint too long or cut, a length past the data, a negative header count, a record
//! whose fields do not fill its declared size, bytes left after the declared count) it returns `None` and the
//! Python loop runs instead, producing the exact error. Keys, values and header fields are (offset, length)
//! pairs into the decompressed buffer, length -1 for null.

use numpy::{IntoPyArray, PyArray1};
use pyo3::prelude::*;
use pyo3::types::PyTuple;

use crate::defect::guard;

/// The records of one batch as columns (one entry per record), plus the header table.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Columns {
    pub attributes: Vec<i8>,
    pub timestamp_delta: Vec<i64>,
    pub offset_delta: Vec<i64>,
    pub key_offset: Vec<i64>,
    pub key_length: Vec<i64>,
    pub value_offset: Vec<i64>,
    pub value_length: Vec<i64>,
    pub start: Vec<i64>,
    pub size: Vec<i64>,
    pub header_count: Vec<i64>,
    /// The header table: (key offset, key length, value offset, value length), records' headers in order.
    pub header_key_offset: Vec<i64>,
    pub header_key_length: Vec<i64>,
    pub header_value_offset: Vec<i64>,
    pub header_value_length: Vec<i64>,
}

/// A zigzag varint of at most `max_bytes` bytes at `*pos` (Python's `read_varint`: the value is not truncated
/// to 32 bits); `None` when it is cut by the end of `data`, too long, or (varlong) beyond 64 bits.
#[inline]
fn varint(data: &[u8], pos: &mut usize, max_bytes: usize) -> Option<i64> {
    let mut raw: u64 = 0;
    let mut shift = 0u32;
    for _ in 0..max_bytes {
        let b = *data.get(*pos)?;
        *pos += 1;
        if shift == 63 && b > 1 {
            return None; // beyond 64 bits: Python's unbounded int, handed back
        }
        raw |= ((b & 0x7F) as u64) << shift;
        if b < 0x80 {
            return Some(((raw >> 1) as i64) ^ -((raw & 1) as i64));
        }
        shift += 7;
    }
    None
}

/// A nullable byte field: its length varint, then the bytes; (offset, length or -1).
#[inline]
fn nullable(data: &[u8], pos: &mut usize) -> Option<(i64, i64)> {
    let len = varint(data, pos, 5)?;
    if len < 0 {
        return Some((*pos as i64, -1));
    }
    let at = *pos;
    let end = at.checked_add(usize::try_from(len).ok()?)?;
    if end > data.len() {
        return None;
    }
    *pos = end;
    Some((at as i64, len))
}

/// Decode `count` records filling `data` exactly; `None` for anything the Python loop reports as an error.
pub fn decode(data: &[u8], count: i64) -> Option<Columns> {
    if count < 0 {
        return None;
    }
    let n = (count as usize).min(data.len());
    let mut c = Columns {
        attributes: Vec::with_capacity(n),
        timestamp_delta: Vec::with_capacity(n),
        offset_delta: Vec::with_capacity(n),
        key_offset: Vec::with_capacity(n),
        key_length: Vec::with_capacity(n),
        value_offset: Vec::with_capacity(n),
        value_length: Vec::with_capacity(n),
        start: Vec::with_capacity(n),
        size: Vec::with_capacity(n),
        header_count: Vec::with_capacity(n),
        ..Columns::default()
    };
    let end = data.len();
    let mut pos = 0usize;
    for _ in 0..count {
        if pos >= end {
            return None;
        }
        let start = pos;
        let size = varint(data, &mut pos, 5)?;
        let body = pos;
        if size < 0 || ((end - pos) as i64) < size {
            return None;
        }
        let attributes = *data.get(pos)? as i8;
        pos += 1;
        let ts_delta = varint(data, &mut pos, 10)?;
        let off_delta = varint(data, &mut pos, 5)?;
        let (ko, kl) = nullable(data, &mut pos)?;
        let (vo, vl) = nullable(data, &mut pos)?;
        let headers = varint(data, &mut pos, 5)?;
        if headers < 0 {
            return None;
        }
        for _ in 0..headers {
            let (hko, hkl) = nullable(data, &mut pos)?;
            if hkl < 0 {
                return None; // a null header key is an error
            }
            let (hvo, hvl) = nullable(data, &mut pos)?;
            c.header_key_offset.push(hko);
            c.header_key_length.push(hkl);
            c.header_value_offset.push(hvo);
            c.header_value_length.push(hvl);
        }
        if (pos - body) as i64 != size {
            return None;
        }
        c.attributes.push(attributes);
        c.timestamp_delta.push(ts_delta);
        c.offset_delta.push(off_delta);
        c.key_offset.push(ko);
        c.key_length.push(kl);
        c.value_offset.push(vo);
        c.value_length.push(vl);
        c.start.push(start as i64);
        c.size.push((pos - start) as i64);
        c.header_count.push(headers);
    }
    if pos != end {
        return None;
    }
    Some(c)
}

/// `decode_records(data, count)`: `None` (run the Python loop), or a tuple of NumPy columns: attributes (int8),
/// timestamp_delta, offset_delta, key_offset, key_length, value_offset, value_length, start, size,
/// header_count, header_key_offset, header_key_length, header_value_offset, header_value_length (int64).
#[pyfunction]
#[pyo3(name = "decode_records")]
fn py_decode_records<'py>(py: Python<'py>, data: &[u8], count: i64) -> PyResult<Option<Bound<'py, PyTuple>>> {
    guard("decode_records", || {
        let Some(c) = py.detach(|| decode(data, count)) else {
            return Ok(None);
        };
        let attributes: Bound<'py, PyArray1<i8>> = c.attributes.into_pyarray(py);
        let columns = [
            c.timestamp_delta,
            c.offset_delta,
            c.key_offset,
            c.key_length,
            c.value_offset,
            c.value_length,
            c.start,
            c.size,
            c.header_count,
            c.header_key_offset,
            c.header_key_length,
            c.header_value_offset,
            c.header_value_length,
        ];
        let mut items: Vec<Bound<'py, PyAny>> = vec![attributes.into_any()];
        for column in columns {
            items.push(column.into_pyarray(py).into_any());
        }
        Ok(Some(PyTuple::new(py, items)?))
    })
}

/// Add this module's Python functions to `kafkatool._native`.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(py_decode_records, m)?)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_record_and_defects() {
        // body length 6 (zigzag 12), attributes 0, ts delta 0, offset delta 0, key null (-1 = 1), value null, 0 headers
        let rec = [12u8, 0, 0, 0, 1, 1, 0];
        let c = decode(&rec, 1).unwrap();
        assert_eq!(c.key_length, vec![-1]);
        assert_eq!(c.size, vec![7]);
        assert_eq!(decode(&rec, 2), None);
        assert_eq!(decode(&rec[..6], 1), None);
        assert_eq!(decode(&rec, -1), None);
        let mut extra = rec.to_vec();
        extra.push(0);
        assert_eq!(decode(&extra, 1), None);
        assert_eq!(decode(&[0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01], 1), None);
    }
}
