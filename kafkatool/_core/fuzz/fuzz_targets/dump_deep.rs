//! `dump_deep`'s core: `text_deep::dump_deep` (the `--deep` / `--print-data` `-f kafka` lines) over arbitrary
//! bytes, the options from the input's first byte. No panic; the text is whole lines; it stops inside the chunk.
#![no_main]

use _native::text_deep::{dump_deep, Options};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let pick = data.first().copied().unwrap_or(0);
    let chunk = data.get(1..).unwrap_or(&[]);
    let n = chunk.len() as u64;
    let opts = Options { print_data: pick & 1 == 1, skip_record_metadata: pick & 2 == 2, max_output: 1 << 20 };
    let deep = dump_deep(chunk, 0, n, n, -1, opts);
    assert!(deep.stop <= n, "stopped at {} of {n}", deep.stop);
    assert!(deep.text.is_empty() || deep.text.ends_with('\n'));
});
