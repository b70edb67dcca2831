//! `dump-segment`'s default table, batch rows from header columns: each cell's text as the Python table writer
//! makes it (`kafkatool/render/output.py`: `_plain_column`, `_times`, the flags and CRC cells) and the rows laid
//! out in fixed-width columns, two spaces apart. The column choice (what fits the terminal), the header line and
//! colour stay in Python; this writes the cells' widths and the body lines of one table.

use numpy::PyReadonlyArray1;
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use std::fmt::Write as _;

use crate::defect::guard;

/// How a column's cells are made from its values.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// The number.
    Int,
    /// The number, or `–` for Kafka's -1 sentinel.
    Nullable,
    /// `labels[(value >> shift) & mask]`.
    Label { shift: u32, mask: i64 },
    /// Epoch milliseconds as ISO-8601 UTC (`2023-11-14T22:13:20.016Z`); `–` below 0, the number past year 9999.
    Time,
    /// A CRC as eight hex digits.
    Crc,
}

/// One column: its values, the kind of its cells, and the labels of a [`Kind::Label`] column.
pub struct Column<'a> {
    pub values: &'a [i64],
    pub kind: Kind,
    pub labels: Vec<String>,
}

/// The first millisecond past year 9999 (`render.safe.TIME_LIMIT_MS`).
pub const TIME_LIMIT_MS: i64 = 253_402_300_800_000;

/// Days since 1970-01-01 as (year, month, day), proleptic Gregorian (H. Hinnant's `civil_from_days`).
fn civil(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

/// Append `v` in decimal.
fn push_int(out: &mut Vec<u8>, v: i64) {
    let mut buf = [0u8; 20];
    let mut at = buf.len();
    let mut n = v.unsigned_abs();
    loop {
        at -= 1;
        buf[at] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    if v < 0 {
        out.push(b'-');
    }
    out.extend_from_slice(&buf[at..]);
}

/// The dash of an absent value (U+2013, one terminal cell, three bytes).
const DASH: &[u8] = "–".as_bytes();

/// The text of the last second a time cell showed (`YYYY-MM-DDTHH:MM:SS.`): a table's times are mostly of few
/// seconds.
#[derive(Default)]
pub struct Seconds {
    second: Option<i64>,
    text: String,
}

/// Append the cell of row `i` of `col` to `out`.
pub fn cell(col: &Column<'_>, i: usize, out: &mut String) {
    let mut bytes = Vec::new();
    cell_with(col, i, &mut bytes, &mut Seconds::default());
    out.push_str(&String::from_utf8_lossy(&bytes));
}

fn cell_with(col: &Column<'_>, i: usize, out: &mut Vec<u8>, seconds: &mut Seconds) {
    let v = col.values[i];
    match col.kind {
        Kind::Int => push_int(out, v),
        Kind::Nullable => {
            if v == -1 {
                out.extend_from_slice(DASH);
            } else {
                push_int(out, v);
            }
        }
        Kind::Label { shift, mask } => {
            let at = usize::try_from((v >> shift) & mask).unwrap_or(usize::MAX);
            out.extend_from_slice(col.labels.get(at).map(String::as_bytes).unwrap_or(b""));
        }
        Kind::Time => {
            if v < 0 {
                out.extend_from_slice(DASH);
            } else if v >= TIME_LIMIT_MS {
                push_int(out, v);
            } else {
                let (secs, ms) = (v / 1000, v % 1000);
                if seconds.second != Some(secs) {
                    let (y, mo, d) = civil(secs.div_euclid(86_400));
                    let s = secs.rem_euclid(86_400);
                    seconds.text.clear();
                    let _ = write!(seconds.text, "{y:04}-{mo:02}-{d:02}T{:02}:{:02}:{:02}.", s / 3600, s / 60 % 60, s % 60);
                    seconds.second = Some(secs);
                }
                out.extend_from_slice(seconds.text.as_bytes());
                out.extend_from_slice(&[b'0' + (ms / 100) as u8, b'0' + (ms / 10 % 10) as u8, b'0' + (ms % 10) as u8, b'Z']);
            }
        }
        Kind::Crc => {
            const HEX: &[u8; 16] = b"0123456789abcdef";
            let c = v & 0xFFFF_FFFF;
            out.extend((0..8).rev().map(|k| HEX[((c >> (4 * k)) & 0xF) as usize]));
        }
    }
}

/// The characters of `v` written in decimal.
fn digits(v: i64) -> usize {
    let sign = usize::from(v < 0);
    let mut n = v.unsigned_abs();
    let mut count = 1;
    while n >= 10 {
        n /= 10;
        count += 1;
    }
    sign + count
}

/// The widest cell (in characters) of column `col` over rows `start..stop`, found from the values without
/// writing the cells (the same as the widest of [`cell`]'s texts).
pub fn width(col: &Column<'_>, start: usize, stop: usize) -> usize {
    let values = &col.values[start..stop];
    if values.is_empty() {
        return 0;
    }
    let numbers = |vs: &mut dyn Iterator<Item = i64>| -> usize {
        let (mut lo, mut hi, mut any) = (i64::MAX, i64::MIN, false);
        for v in vs {
            lo = lo.min(v);
            hi = hi.max(v);
            any = true;
        }
        if any {
            digits(lo).max(digits(hi))
        } else {
            0
        }
    };
    match col.kind {
        Kind::Int => numbers(&mut values.iter().copied()),
        Kind::Nullable => {
            let unset = usize::from(values.contains(&-1));
            numbers(&mut values.iter().copied().filter(|&v| v != -1)).max(unset)
        }
        Kind::Label { shift, mask } => {
            let mut seen = std::collections::BTreeSet::new();
            for &v in values {
                seen.insert((v >> shift) & mask);
            }
            seen.iter()
                .map(|&at| usize::try_from(at).ok().and_then(|i| col.labels.get(i)).map_or(0, |l| l.chars().count()))
                .max()
                .unwrap_or(0)
        }
        Kind::Time => {
            let mut widest = 0;
            let mut past = i64::MIN;
            for &v in values {
                widest = widest.max(if v < 0 { 1 } else if v < TIME_LIMIT_MS { 24 } else { 0 });
                if v >= TIME_LIMIT_MS {
                    past = past.max(v);
                }
            }
            if past > i64::MIN {
                widest = widest.max(digits(past));
            }
            widest
        }
        Kind::Crc => 8,
    }
}

/// The widest cell (in characters) of each column over rows `start..stop`.
pub fn widths(cols: &[Column<'_>], start: usize, stop: usize) -> Vec<usize> {
    cols.iter().map(|col| width(col, start, stop)).collect()
}

/// The lines of rows `start..stop` showing the columns `shown` (indexes into `cols`), each padded to its width
/// (right-justified where `right`), two spaces apart, each line ended by `\n`; a line whose last column is
/// left-justified loses its trailing spaces (as the Python writer's `rstrip`).
pub fn lines(cols: &[Column<'_>], shown: &[usize], widths: &[usize], right: &[bool], start: usize, stop: usize) -> Vec<u8> {
    let row = widths.iter().sum::<usize>() + 2 * shown.len() + 1;
    let mut out: Vec<u8> = Vec::with_capacity(stop.saturating_sub(start) * row);
    let mut text: Vec<u8> = Vec::with_capacity(32);
    let mut seconds: Vec<Seconds> = shown.iter().map(|_| Seconds::default()).collect();
    let strip = right.last().is_some_and(|r| !r);
    for i in start..stop {
        for (j, &c) in shown.iter().enumerate() {
            if j > 0 {
                out.extend_from_slice(b"  ");
            }
            text.clear();
            cell_with(&cols[c], i, &mut text, &mut seconds[j]);
            // characters, not bytes: a UTF-8 continuation byte starts none
            let chars = if text.is_ascii() { text.len() } else { text.iter().filter(|&&b| b & 0xC0 != 0x80).count() };
            let pad = widths[j].saturating_sub(chars);
            if right[j] {
                out.resize(out.len() + pad, b' ');
                out.extend_from_slice(&text);
            } else {
                out.extend_from_slice(&text);
                out.resize(out.len() + pad, b' ');
            }
        }
        if strip {
            while out.last() == Some(&b' ') {
                out.pop();
            }
        }
        out.push(b'\n');
    }
    out
}

fn kind_of(code: u8, shift: u32, mask: i64) -> PyResult<Kind> {
    Ok(match code {
        0 => Kind::Int,
        1 => Kind::Nullable,
        2 => Kind::Label {
            shift: shift.min(62),
            mask,
        },
        3 => Kind::Time,
        4 => Kind::Crc,
        _ => {
            return Err(pyo3::exceptions::PyValueError::new_err(format!(
                "table: unknown column kind {code}"
            )))
        }
    })
}

type Spec<'py> = (
    Vec<PyReadonlyArray1<'py, i64>>,
    Vec<u8>,
    Vec<u32>,
    Vec<i64>,
    Vec<Vec<String>>,
);

fn columns<'a>(
    arrays: &'a [PyReadonlyArray1<'_, i64>],
    spec: &Spec<'_>,
) -> PyResult<(Vec<Column<'a>>, usize)> {
    let (_, kinds, shifts, masks, labels) = spec;
    let n = arrays.first().map_or(0, |a| a.len().unwrap_or(0));
    let mut cols = Vec::with_capacity(arrays.len());
    for (k, a) in arrays.iter().enumerate() {
        let values = a.as_slice().map_err(|_| {
            pyo3::exceptions::PyValueError::new_err("table: a column is not contiguous")
        })?;
        if values.len() != n
            || kinds.len() != arrays.len()
            || shifts.len() != arrays.len()
            || masks.len() != arrays.len()
            || labels.len() != arrays.len()
        {
            return Err(pyo3::exceptions::PyValueError::new_err(
                "table: columns of different lengths",
            ));
        }
        cols.push(Column {
            values,
            kind: kind_of(kinds[k], shifts[k], masks[k])?,
            labels: labels[k].clone(),
        });
    }
    Ok((cols, n))
}

/// Rows `start..stop` clamped to the `n` rows there are.
fn clamp(start: usize, stop: usize, n: usize) -> (usize, usize) {
    let a = start.min(n);
    (a, stop.min(n).max(a))
}

/// `table_widths(arrays, kinds, shifts, masks, labels, bounds)`: for each `(start, stop)` of `bounds` (a table's
/// rows), each column's widest cell over those rows.
#[pyfunction]
fn table_widths<'py>(
    arrays: Vec<PyReadonlyArray1<'py, i64>>,
    kinds: Vec<u8>,
    shifts: Vec<u32>,
    masks: Vec<i64>,
    labels: Vec<Vec<String>>,
    bounds: Vec<(usize, usize)>,
) -> PyResult<Vec<Vec<usize>>> {
    guard("table_widths", || {
        let spec: Spec<'py> = (Vec::new(), kinds, shifts, masks, labels);
        let (cols, n) = columns(&arrays, &spec)?;
        Ok(bounds
            .iter()
            .map(|&(start, stop)| {
                let (a, b) = clamp(start, stop, n);
                widths(&cols, a, b)
            })
            .collect())
    })
}

/// One table of [`table_lines`]: its rows, its header line (written as given), the columns shown, their widths
/// and justification.
type Table = (usize, usize, Vec<u8>, Vec<usize>, Vec<usize>, Vec<bool>);

/// `table_lines(arrays, kinds, shifts, masks, labels, tables)`: each table of `tables` (`(start, stop, header,
/// shown, widths, right)`) as its header followed by its body lines, all in one block.
#[pyfunction]
fn table_lines<'py>(
    py: Python<'py>,
    arrays: Vec<PyReadonlyArray1<'py, i64>>,
    kinds: Vec<u8>,
    shifts: Vec<u32>,
    masks: Vec<i64>,
    labels: Vec<Vec<String>>,
    tables: Vec<Table>,
) -> PyResult<Bound<'py, PyBytes>> {
    guard("table_lines", || {
        let spec: Spec<'py> = (Vec::new(), kinds, shifts, masks, labels);
        let (cols, n) = columns(&arrays, &spec)?;
        let mut out = Vec::new();
        for (start, stop, header, shown, widths, right) in &tables {
            if shown.len() != widths.len() || shown.len() != right.len() || shown.iter().any(|&c| c >= cols.len()) {
                return Err(pyo3::exceptions::PyValueError::new_err("table: shown, widths and right disagree"));
            }
            let (a, b) = clamp(*start, *stop, n);
            out.extend_from_slice(header);
            out.extend_from_slice(&lines(&cols, shown, widths, right, a, b));
        }
        Ok(PyBytes::new(py, &out))
    })
}

/// Add this module's Python functions to `kafkatool._native`.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(table_widths, m)?)?;
    m.add_function(wrap_pyfunction!(table_lines, m)?)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(col: &Column<'_>, i: usize) -> String {
        let mut s = String::new();
        cell(col, i, &mut s);
        s
    }

    #[test]
    fn times_as_python_writes_them() {
        let values = [
            0,
            1_700_000_000_016,
            -1,
            -5,
            TIME_LIMIT_MS - 1,
            TIME_LIMIT_MS,
            951_782_400_000,
        ];
        let col = Column {
            values: &values,
            kind: Kind::Time,
            labels: vec![],
        };
        let got: Vec<String> = (0..values.len()).map(|i| text(&col, i)).collect();
        assert_eq!(
            got,
            [
                "1970-01-01T00:00:00.000Z",
                "2023-11-14T22:13:20.016Z",
                "–",
                "–",
                "9999-12-31T23:59:59.999Z",
                "253402300800000",
                "2000-02-29T00:00:00.000Z"
            ]
        );
    }

    #[test]
    fn labels_nullable_and_crc() {
        let attrs = [0x00, 0x13, 0x07];
        let col = Column {
            values: &attrs,
            kind: Kind::Label { shift: 0, mask: 7 },
            labels: vec![
                "none".into(),
                "gzip".into(),
                "snappy".into(),
                "lz4".into(),
                "zstd".into(),
            ],
        };
        assert_eq!(
            (text(&col, 0), text(&col, 1), text(&col, 2)),
            ("none".into(), "lz4".into(), "".into())
        );
        let pid = [-1, 7, -2];
        let col = Column {
            values: &pid,
            kind: Kind::Nullable,
            labels: vec![],
        };
        assert_eq!(
            (text(&col, 0), text(&col, 1), text(&col, 2)),
            ("–".into(), "7".into(), "-2".into())
        );
        let crc = [0xAB, 0xFFFF_FFFF];
        let col = Column {
            values: &crc,
            kind: Kind::Crc,
            labels: vec![],
        };
        assert_eq!(
            (text(&col, 0), text(&col, 1)),
            ("000000ab".into(), "ffffffff".into())
        );
    }

    #[test]
    fn widths_are_the_widest_cells() {
        let values: Vec<i64> = vec![-1, 0, 9, 10, -10, 99_999, -1, 1_700_000_000_016, TIME_LIMIT_MS, 7, i64::MIN, i64::MAX];
        let labels: Vec<String> = vec!["a".into(), "bbb".into(), "–".into()];
        for kind in [Kind::Int, Kind::Nullable, Kind::Time, Kind::Crc, Kind::Label { shift: 0, mask: 3 }] {
            for (start, stop) in [(0, values.len()), (0, 1), (2, 5), (3, 3), (7, 9)] {
                let col = Column { values: &values, kind, labels: labels.clone() };
                let widest = (start..stop).map(|i| text(&col, i).chars().count()).max().unwrap_or(0);
                assert_eq!(width(&col, start, stop), widest, "{kind:?} {start}..{stop}");
            }
        }
    }

    #[test]
    fn lines_pad_and_strip() {
        let a = [1, 100];
        let b = [-1, 5];
        let cols = [
            Column {
                values: &a,
                kind: Kind::Int,
                labels: vec![],
            },
            Column {
                values: &b,
                kind: Kind::Nullable,
                labels: vec![],
            },
        ];
        assert_eq!(widths(&cols, 0, 2), vec![3, 1]);
        assert_eq!(
            String::from_utf8(lines(&cols, &[0, 1], &[4, 3], &[true, false], 0, 2)).unwrap(),
            "   1  –\n 100  5\n"
        );
        assert_eq!(
            String::from_utf8(lines(&cols, &[1, 0], &[3, 4], &[true, true], 0, 2)).unwrap(),
            "  –     1\n  5   100\n"
        );
    }
}
