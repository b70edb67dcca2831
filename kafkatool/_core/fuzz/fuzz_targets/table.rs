//! `table_widths` and `table_lines`' core: `table::widths` and `table::lines` over columns made from arbitrary
//! bytes (eight bytes a value, a column's kind from the first byte). No panic; each column's width is its widest
//! cell; every line ends with a newline and is as wide as the widths and gaps say (less trailing spaces when the
//! last column is left-justified).
#![no_main]

use _native::table::{cell, lines, widths, Column, Kind};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let pick = data.first().copied().unwrap_or(0);
    let values: Vec<i64> = data
        .get(1..)
        .unwrap_or(&[])
        .chunks_exact(8)
        .map(|c| i64::from_be_bytes(c.try_into().expect("eight bytes")))
        .collect();
    let kinds = [Kind::Int, Kind::Nullable, Kind::Time, Kind::Crc, Kind::Label { shift: u32::from(pick >> 5), mask: 7 }];
    let labels: Vec<String> = vec!["none".into(), "gzip".into(), "–".into(), "txn ctrl".into()];
    let cols: Vec<Column<'_>> = kinds.iter().map(|&kind| Column { values: &values, kind, labels: labels.clone() }).collect();
    let n = values.len();
    let start = usize::from(pick & 3).min(n);
    let found = widths(&cols, start, n);
    for (col, &w) in cols.iter().zip(&found) {
        let widest = (start..n)
            .map(|i| {
                let mut s = String::new();
                cell(col, i, &mut s);
                s.chars().count()
            })
            .max()
            .unwrap_or(0);
        assert_eq!(w, widest);
    }
    let shown: Vec<usize> = (0..cols.len()).collect();
    let right: Vec<bool> = (0..cols.len()).map(|j| (pick >> j) & 1 == 1).collect();
    let text = String::from_utf8(lines(&cols, &shown, &found, &right, start, n)).expect("UTF-8");
    assert_eq!(text.matches('\n').count(), n - start);
    let full = found.iter().sum::<usize>() + 2 * (cols.len() - 1);
    for line in text.lines() {
        let chars = line.chars().count();
        if right[cols.len() - 1] {
            assert_eq!(chars, full);
        } else {
            assert!(chars <= full && !line.ends_with(' '));
        }
    }
});
