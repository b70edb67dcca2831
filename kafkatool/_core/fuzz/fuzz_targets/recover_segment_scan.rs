//! `recover_segment_scan`'s core: `producers::recover_scan` (`LogSegment.recover`'s per-batch pass) over rows
//! whose fields come from the input (5 values of 8 bytes a row; positions made mostly contiguous so the pass
//! goes deep), base offset and index interval from the first 9 bytes. No panic; it keeps at most every row and
//! the valid bytes never shrink below zero.
#![no_main]

use _native::producers::{recover_scan, Framed};
use kafkatool_core_fuzz::word;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if data.len() < 9 {
        return;
    }
    let base = i64::from(i32::from_be_bytes([data[0], data[1], data[2], data[3]]));
    let interval = i64::from(u32::from_be_bytes([data[4], data[5], data[6], data[7]]) % 65536);
    let mut rows = Vec::new();
    let mut at = 0i64;
    for b in data[9..].chunks_exact(40) {
        let size = 61 + (word(b, 1) & 0xffff);
        let position = if word(b, 0) & 15 == 0 { word(b, 0) } else { at };
        rows.push(Framed { position, size, crc_invalid: word(b, 2) & 31 == 0,
                           last_offset: base.saturating_add(word(b, 3) >> (data[8] % 64)), max_timestamp: word(b, 4) });
        at = position.saturating_add(size);
    }
    let (kept, valid, _end) = recover_scan(&rows, base, interval);
    assert!(kept <= rows.len() && valid >= 0);
});
