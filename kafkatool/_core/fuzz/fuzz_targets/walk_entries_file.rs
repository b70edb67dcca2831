//! `walk_entries_path`'s core: `walk::scan_entries` (the walk with legacy magic 0/1 framing) over arbitrary bytes
//! in memory (`SliceSource`, the `walk_entries` target), then over the same bytes as a file read by the reader
//! thread in small chunks (`StreamSource`, 1 to 8 KiB from the input) and by the windowed reader (`FileSource`):
//! no panic, the same result from all three (a file walk stops at a legacy message larger than its window), and the walk's invariants (entries rising inside [pos, limit), the
//! magic 2 and legacy positions disjoint, each legacy message whole before `limit`, spans known, none or handed
//! back). The file is written per input under TMPDIR (a memory file system such as /dev/shm keeps that cheap).
#![no_main]

use std::fs::File;
use std::io::Write;

use _native::walk::{scan_entries, FileSource, SliceSource, StreamSource};
use kafkatool_core_fuzz::{args, invariants, legacy_invariants, FUZZ_MAX_OUTPUT as MAX_OUTPUT};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let (seg, pos, limit, stop, verify, pick) = args(data);
    let found = scan_entries(&mut SliceSource(seg), pos, limit, stop, verify, MAX_OUTPUT);
    invariants(&found.0, pos, limit, verify);
    legacy_invariants(&found, pos, limit);
    if pos < limit {
        let path = std::env::temp_dir().join(format!("kafkatool-fuzz-walk-entries-{}.log", std::process::id()));
        File::create(&path).and_then(|mut f| f.write_all(seg)).expect("scratch file");
        let file = File::open(&path).expect("scratch file");
        let chunk = 1024usize << ((pick >> 1) % 4);
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
