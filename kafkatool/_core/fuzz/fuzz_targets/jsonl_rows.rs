//! `jsonl_rows`'s core: `jsonl::jsonl_rows` (the `dump-segment -f jsonl` entry rows) over arbitrary bytes, the
//! options from the input's first byte. No panic; the rows are whole UTF-8 lines, one per entry written; it
//! stops inside the chunk and the limit.
#![no_main]

use _native::jsonl::{jsonl_rows, Decoder, Options, HEAD_FIELDS};
use libfuzzer_sys::fuzz_target;

const DECODERS: [Decoder; 4] = [Decoder::Utf8, Decoder::Hex, Decoder::Base64, Decoder::Nothing];

fuzz_target!(|data: &[u8]| {
    let pick = data.first().copied().unwrap_or(0);
    let chunk = data.get(1..).unwrap_or(&[]);
    let n = chunk.len() as u64;
    let limit = if pick & 0x80 != 0 { n / 2 } else { n };
    let shown = (pick & 2 == 2).then(|| (DECODERS[(pick >> 2) as usize & 3], DECODERS[(pick >> 4) as usize & 3]));
    let opts = Options { deep: pick & 1 == 1 || shown.is_some(), data: shown, max_output: 1 << 20 };
    let rows = jsonl_rows(chunk, 0, limit, b"\"f\"", opts);
    assert!(rows.stop <= limit.max(0), "stopped at {} of {limit}", rows.stop);
    let text = std::str::from_utf8(&rows.text).expect("rows are UTF-8");
    assert_eq!(text.matches('\n').count() as u64, rows.count);
    assert_eq!(rows.heads.len() as u64, rows.count * HEAD_FIELDS as u64);
    assert!(text.is_empty() || text.ends_with("\"f\"}\n"));
});
