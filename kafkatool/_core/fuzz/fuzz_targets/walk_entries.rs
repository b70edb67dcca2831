//! `walk_entries_bytes`'s core: `walk::scan_entries` (the walk with legacy magic 0/1 framing) over arbitrary bytes
//! in memory (`SliceSource`). The first 4 bytes choose the start, the limit and stop cuts and the CRC check, as
//! `tests/fuzz/native.py` does. No panic, and the walk's invariants: entries rising inside [pos, limit), the
//! magic 2 and legacy positions disjoint, each legacy message whole before `limit`, spans known, none or handed
//! back. `walk_entries_file` checks the file readers against this.
#![no_main]

use kafkatool_core_fuzz::{args, entries_in_memory};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let (seg, pos, limit, stop, verify, _) = args(data);
    entries_in_memory(seg, pos, limit, stop, verify);
});
