//! `dls_batch_lines_bytes` / `dls_batch_lines_path`'s core: `text::batch_lines` (the shallow `-f kafka` batch
//! lines) over arbitrary bytes, the block size from the input's first byte. No panic; the text is UTF-8 lines;
//! it stops where it hands back, never before its start nor past the end.
#![no_main]

use _native::text::{batch_lines, Stop};
use _native::walk::SliceSource;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let block = 64usize << (data.first().copied().unwrap_or(0) % 12);
    let seg = data.get(1..).unwrap_or(&[]);
    let n = seg.len() as i64;
    let mut text: Vec<u8> = Vec::new();
    let stop = batch_lines(&mut SliceSource(seg), 0, n, n, block, &mut |chunk: &[u8]| {
        text.extend_from_slice(chunk);
        true
    });
    match stop {
        Stop::HandBack(at) => assert!((0..=n).contains(&at), "handed back at {at} of {n}"),
        Stop::Sink => panic!("the sink never refuses here"),
    }
    let text = std::str::from_utf8(&text).expect("UTF-8 text");
    assert!(text.is_empty() || text.ends_with('\n'));
});
