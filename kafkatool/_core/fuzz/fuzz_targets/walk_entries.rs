//! `walk_entries_bytes`'s core: `walk::scan_entries` (the walk with legacy magic 0/1 framing) over arbitrary bytes
//! in memory (`SliceSource`). The first 4 bytes choose the start, the limit and stop cuts and the CRC check, as
//! `tests/fuzz/native.py` does. No panic, and the walk's invariants: entries rising inside [pos, limit), the
//! magic 2 and legacy positions disjoint, each legacy message whole before `limit`, spans known, none or handed
//! back. `walk_entries_file` checks the file readers against this.
#![no_main]

use _native::walk::{scan_entries, SliceSource};
use kafkatool_core_fuzz::{args, invariants, legacy_invariants, FUZZ_MAX_OUTPUT};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let (seg, pos, limit, stop, verify, _) = args(data);
    let found = scan_entries(&mut SliceSource(seg), pos, limit, stop, verify, FUZZ_MAX_OUTPUT);
    invariants(&found.0, pos, limit, verify);
    legacy_invariants(&found, pos, limit);
});
