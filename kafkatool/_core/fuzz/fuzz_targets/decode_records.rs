//! `decode_records`'s core: `records::decode` over arbitrary record bytes with a record count taken from the
//! input's first two bytes (a few negative). No panic; a result's columns are all one row per record, inside
//! the data (`start + size <= len`, keys, values and headers within their record).
#![no_main]

use _native::records::decode;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let count = i64::from(u16::from_be_bytes([data.first().copied().unwrap_or(0), data.get(1).copied().unwrap_or(0)]))
        - 8;
    let body = data.get(2..).unwrap_or(&[]);
    if let Some(c) = decode(body, count) {
        let n = c.start.len();
        assert_eq!(n as i64, count);
        for i in 0..n {
            assert!(c.start[i] >= 0 && c.start[i] + c.size[i] <= body.len() as i64);
            for (o, l) in [(c.key_offset[i], c.key_length[i]), (c.value_offset[i], c.value_length[i])] {
                assert!(l < 0 || (o >= c.start[i] && o + l <= c.start[i] + c.size[i]));
            }
        }
    }
});
