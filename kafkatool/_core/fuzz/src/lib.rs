//! What the fuzz targets share: the walk's argument mapping (the same as `tests/fuzz/native.py`'s `_walk_args`),
//! the fast loop's invariants, and the producer targets' row fields.
#![forbid(unsafe_code)]

use std::fs::File;
use std::io::Write;
use std::path::PathBuf;

use _native::walk::{scan_entries, Chain, LegacyColumns, SliceSource, UNKNOWN_SPAN};

/// The arguments the input's first 4 bytes choose (the same mapping as `tests/fuzz/native.py`'s `_walk_args`).
pub fn args(data: &[u8]) -> (&[u8], i64, i64, i64, bool, u8) {
    let mut head = [0u8; 4];
    for (i, b) in data.iter().take(4).enumerate() {
        head[i] = *b;
    }
    let seg = data.get(4..).unwrap_or(&[]);
    let n = seg.len() as i64;
    let pos = if head[0] < 200 { i64::from(head[0] % 8) } else { 0 };
    let limit = (n - if head[1] >= 128 { i64::from(head[1] % 32) } else { 0 }).max(0);
    let stop = if head[2] < 128 { limit } else { i64::from(head[2]) * n.max(1) / 256 };
    (seg, pos, limit, stop, head[3] % 2 == 0, head[3])
}

/// The `i`-th big-endian 8-byte word of `b` (the producer targets' row fields).
pub fn word(b: &[u8], i: usize) -> i64 {
    let mut w = [0u8; 8];
    w.copy_from_slice(&b[i * 8..i * 8 + 8]);
    i64::from_be_bytes(w)
}

/// The fast loop's invariants on one result.
pub fn invariants(chain: &Chain, pos: i64, limit: i64, verify: bool) {
    assert_eq!(chain.headers.len(), chain.positions.len() * 61);
    let mut last = -1;
    for &p in &chain.positions {
        assert!(p > last && p >= pos && p < limit, "position {p} out of order or range");
        last = p;
    }
    for b in &chain.bad_crc {
        assert!(verify && chain.positions.contains(b));
    }
    assert!(chain.reached >= pos);
}

/// The `*_inflated` targets' cut (the same as `tests/fuzz/native.py`'s): the first two bytes say where the batch
/// (from byte 2) ends and the payload said to be its inflated records starts; returns the first byte (options),
/// the batch and the payload.
pub fn inflated_cut(data: &[u8]) -> (u8, &[u8], &[u8]) {
    let head = [data.first().copied().unwrap_or(0), data.get(1).copied().unwrap_or(0)];
    let cut = u16::from_be_bytes(head) as usize % (data.len() + 1);
    (head[0], data.get(2..cut.max(2)).unwrap_or(&[]), &data[cut..])
}

/// The decompression cap of `tests/fuzz/targets.py` (`FUZZ_MAX_OUTPUT`).
pub const FUZZ_MAX_OUTPUT: usize = 1 << 20;

/// The legacy walk's invariants (`scan_entries`): legacy entries rising inside [pos, limit), none at a magic 2
/// batch's position, each message whole before `limit` and at least the smallest message, magic 0 or 1, a span
/// count of -1 (handed back) or more, all before `reached`.
pub fn legacy_invariants((chain, legacy): &(Chain, LegacyColumns), pos: i64, limit: i64) {
    let mut last = -1;
    for k in 0..legacy.len() {
        let p = legacy.position[k];
        assert!(p > last && p >= pos && p < limit, "legacy position {p} out of order or range");
        assert!(!chain.positions.contains(&p), "position {p} both a batch and a legacy entry");
        assert!(legacy.message_size[k] >= 14 && p + 12 + i64::from(legacy.message_size[k]) <= limit);
        assert!(legacy.magic[k] == 0 || legacy.magic[k] == 1);
        assert!(legacy.inner_count[k] >= UNKNOWN_SPAN);
        assert!(p < chain.reached);
        last = p;
    }
}

/// `scan_entries` over `seg` in memory with the arguments [`args`] chose, its invariants checked.
pub fn entries_in_memory(seg: &[u8], pos: i64, limit: i64, stop: i64, verify: bool) -> (Chain, LegacyColumns) {
    let found = scan_entries(&mut SliceSource(seg), pos, limit, stop, verify, FUZZ_MAX_OUTPUT);
    invariants(&found.0, pos, limit, verify);
    legacy_invariants(&found, pos, limit);
    found
}

/// `seg` written to a per-process scratch file named after `tag` under TMPDIR, open for reading, and its path;
/// the reader's chunk size the input's `pick` byte chooses (1 to 8 KiB, so entries straddle chunk boundaries).
pub fn scratch_file(seg: &[u8], tag: &str, pick: u8) -> (File, PathBuf, usize) {
    let path = std::env::temp_dir().join(format!("kafkatool-fuzz-{tag}-{}.log", std::process::id()));
    File::create(&path).and_then(|mut f| f.write_all(seg)).expect("scratch file");
    (File::open(&path).expect("scratch file"), path, 1024usize << ((pick >> 1) % 4))
}
