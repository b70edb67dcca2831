//! `jsonl_rows_inflated`'s core: `jsonl::jsonl_rows_inflated` (the row of one compressed batch whose payload
//! Python inflated) over arbitrary bytes, cut as the Python driver cuts them (`tests/fuzz/native.py`): the first
//! two bytes say where the batch ends and the inflated payload starts. No panic; the row is one whole UTF-8 line;
//! it stops at the batch or right after it.
#![no_main]

use _native::jsonl::{jsonl_rows_inflated, Decoder, Options};
use kafkatool_core_fuzz::inflated_cut;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let (pick, batch, inflated) = inflated_cut(data);
    let shown = (pick & 1 == 1).then_some((Decoder::Utf8, Decoder::Hex));
    let opts = Options { deep: true, data: shown, max_output: 1 << 20 };
    let rows = jsonl_rows_inflated(batch, 7, inflated, b"\"f\"", opts);
    assert!(rows.stop == 7 || rows.stop == 7 + batch.len() as u64, "stopped at {}", rows.stop);
    let text = std::str::from_utf8(&rows.text).expect("rows are UTF-8");
    assert_eq!(text.matches('\n').count() as u64, rows.count);
});
