//! `walk_bytes`'s core: `walk::scan_chain` over arbitrary bytes in memory (`SliceSource`). The first 4 bytes
//! choose the start, the limit and stop cuts and the CRC check, as `tests/fuzz/native.py` does. No panic, and the
//! result keeps the loop's invariants (positions rising inside [pos, limit), one 61-byte header each, bad CRCs
//! among them). `walk_file` checks the file reader against this.
#![no_main]

use _native::walk::{scan_chain, SliceSource};
use kafkatool_core_fuzz::{args, invariants};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let (seg, pos, limit, stop, verify, _) = args(data);
    let chain = scan_chain(&mut SliceSource(seg), pos, limit, stop, verify);
    invariants(&chain, pos, limit, verify);
});
