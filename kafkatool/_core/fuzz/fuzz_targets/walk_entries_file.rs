//! `walk_entries_path`'s core: `walk::scan_entries` (the walk with legacy magic 0/1 framing) over arbitrary bytes
//! in memory (`SliceSource`, with the invariants of the `walk_entries` target), then over the same bytes as a file
//! read by the reader thread in small chunks (`StreamSource`, 1 to 8 KiB from the input) and by the windowed
//! reader (`FileSource`): no panic, and the same result from all three (a file walk stops at a legacy message
//! larger than its window). The file is written per input under TMPDIR (a memory file system such as /dev/shm
//! keeps that cheap).
#![no_main]

use _native::walk::{scan_entries, FileSource, StreamSource};
use kafkatool_core_fuzz::{args, entries_in_memory, scratch_file, FUZZ_MAX_OUTPUT as MAX_OUTPUT};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let (seg, pos, limit, stop, verify, pick) = args(data);
    let found = entries_in_memory(seg, pos, limit, stop, verify);
    if pos < limit {
        let (file, path, chunk) = scratch_file(seg, "walk-entries", pick);
        let streamed = StreamSource::with(&file, pos as u64, limit as u64, chunk, |src| {
            scan_entries(src, pos, limit, stop, verify, MAX_OUTPUT)
        });
        let mut windowed = FileSource::open(path.to_str().unwrap_or_default(), chunk).expect("scratch file");
        let read = scan_entries(&mut windowed, pos, limit, stop, verify, MAX_OUTPUT);
        // a legacy message larger than the reader's window stops a file walk there (the Python walker reads it)
        if found.1.message_size.iter().all(|&n| n as usize <= chunk) {
            assert_eq!(streamed, found, "file read in {chunk}-byte chunks differs from memory");
            assert_eq!(read, found, "file read in a {chunk}-byte window differs from memory");
        } else {
            assert!(streamed.0.reached <= found.0.reached && read.0.reached <= found.0.reached);
        }
    }
});
