//! `walk_path`'s core: `walk::scan_chain` over a file read by the reader thread in small chunks (`StreamSource`;
//! the chunk size, 1 to 8 KiB, from the input, so batches straddle chunk boundaries), against the same bytes
//! in memory (`SliceSource`, `walk_bytes`): no panic, the same result, the loop's invariants. The file is written
//! per input under TMPDIR (a memory file system such as /dev/shm keeps that cheap).
#![no_main]

use _native::walk::{scan_chain, SliceSource, StreamSource};
use kafkatool_core_fuzz::{args, invariants, scratch_file};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let (seg, pos, limit, stop, verify, pick) = args(data);
    let chain = scan_chain(&mut SliceSource(seg), pos, limit, stop, verify);
    invariants(&chain, pos, limit, verify);
    if pos < limit {
        let (file, _, chunk) = scratch_file(seg, "walk", pick);
        let streamed = StreamSource::with(&file, pos as u64, limit as u64, chunk, |src| {
            scan_chain(src, pos, limit, stop, verify)
        });
        assert_eq!(streamed, chain, "file read in {chunk}-byte chunks differs from memory");
    }
});
