//! `decompress`'s core: `codecs::decompress` on arbitrary bytes. The first byte chooses the codec (1 gzip,
//! 2 snappy, 3 lz4, 4 zstd), the second magic 0, 1 or 2, as `tests/fuzz/native.py` does. No panic, and never
//! more than the cap out (a bomb is handed back, not inflated).
#![no_main]

use _native::codecs::decompress;
use libfuzzer_sys::fuzz_target;

const CAP: usize = 1 << 20;

fuzz_target!(|data: &[u8]| {
    let codec = 1 + data.first().copied().unwrap_or(0) % 4;
    let magic = (data.get(1).copied().unwrap_or(0) % 3) as i8;
    let payload = data.get(2..).unwrap_or(&[]);
    if let Some(out) = decompress(codec, payload, magic, CAP) {
        assert!(out.len() <= CAP, "{} bytes above the cap", out.len());
    }
});
