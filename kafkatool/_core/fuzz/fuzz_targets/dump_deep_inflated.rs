//! `dump_deep_inflated`'s core: `text_deep::dump_deep_inflated` (the lines of one compressed batch whose payload
//! Python inflated) over arbitrary bytes, cut as the Python driver cuts them (`tests/fuzz/native.py`): the first
//! two bytes say where the batch ends and the inflated payload starts; the options come from the first byte.
//! No panic; the text is whole lines; it stops at the batch or right after it.
#![no_main]

use _native::text_deep::{dump_deep_inflated, Options};
use kafkatool_core_fuzz::inflated_cut;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let (pick, batch, inflated) = inflated_cut(data);
    let opts = Options { print_data: pick & 1 == 1, skip_record_metadata: pick & 2 == 2, max_output: 1 << 20 };
    let deep = dump_deep_inflated(batch, 7, inflated, -1, opts);
    assert!(deep.stop == 7 || deep.stop == 7 + batch.len() as u64, "stopped at {}", deep.stop);
    assert!(deep.text.is_empty() || deep.text.ends_with('\n'));
});
