//! `replay_producers`'s core: `producers::Replay::append` over batches whose header fields come from the input
//! (9 fields of 8 bytes a batch, some narrowed to their Kafka widths), with the checks on or off from the first
//! byte. No panic, no overflow: a batch it cannot apply ends the replay (`None`), as the binding hands it back.
#![no_main]

use _native::producers::{Batch, Replay, MARKER_NONE};
use kafkatool_core_fuzz::word;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let pick = data.first().copied().unwrap_or(0);
    let mut r = Replay::default();
    r.checks = pick & 1 == 1;
    r.client_checks = pick & 2 == 2;
    r.tv2_allowed = pick & 4 == 4;
    r.keep_committed = pick & 8 == 8;
    for b in data.get(1..).unwrap_or(&[]).chunks_exact(72) {
        let batch = Batch {
            base_offset: word(b, 0) >> (word(b, 8) & 63),
            last_offset_delta: i64::from(word(b, 1) as i32),
            producer_id: word(b, 2) % 8,
            producer_epoch: i64::from(word(b, 3) as i16),
            base_sequence: i64::from(word(b, 4) as i32),
            attributes: word(b, 5) & 0xff,
            max_timestamp: word(b, 6),
            marker: if word(b, 7) & 3 == 3 { MARKER_NONE } else { (word(b, 7) & 1) as i8 },
            coordinator_epoch: i64::from(word(b, 7) as i32 >> 2),
        };
        if r.append(&batch).is_none() {
            break;
        }
    }
    let _ = r.ongoing().count();
});
