//! Producer-state replay over batch header columns: Kafka's `ProducerStateManager` (storage,
//! `org.apache.kafka.storage.internals.log`) as `LogSegment.recover` / `UnifiedLog.rebuildProducerState` apply
//! batches (replication/recovery origin: nothing is rejected), with the client-origin checks of
//! `ProducerAppendInfo` evaluated on the side as per-batch verdict flags.
//!
//! The rules are kafkatool's Python reference, `kafkatool/storage/producer_state.py` (`ProducerStateEntry`,
//! `BatchMetadata` with the last five batches, `appendDataBatch`, `appendEndTxnMarker` with `completeTxn` and
//! `lastStableOffset`), `kafkatool/engine/producer_state.py` (which check gets which verdict, the leniencies of
//! a forensic replay) and `kafkatool/storage/transaction_version.py` (TV_2: a COMMIT that bumps the epoch; a
//! marker then must bump the epoch, Kafka 4.1+'s `checkProducerEpoch`). This module mirrors them step for step;
//! the differential tests (tests/test_native_producers.py) compare both on generated and real logs.
//!
//! State crosses in and out as plain vectors (Python rebuilds its objects from them), batches come in as
//! columns and the verdicts go out as columns. Where an offset would leave the 64-bit range (Python's ints do
//! not overflow) the replay stops before that batch and says how many batches it applied: the caller hands the
//! rest to the Python path.

use std::collections::{HashMap, HashSet, VecDeque};

use numpy::{PyArray1, PyReadonlyArray1};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::defect::guard;

/// `RecordBatch.NO_SEQUENCE`.
pub const NO_SEQUENCE: i64 = -1;
/// `RecordBatch.NO_PRODUCER_EPOCH`.
pub const NO_PRODUCER_EPOCH: i64 = -1;
/// `Integer.MAX_VALUE`: sequences wrap to 0 after it.
pub const MAX_SEQUENCE: i64 = i32::MAX as i64;
/// `Short.MAX_VALUE`: the last epoch of a producer id.
pub const MAX_PRODUCER_EPOCH: i64 = 32767;
/// `ProducerStateEntry.NUM_BATCHES_TO_RETAIN`.
pub const NUM_BATCHES_TO_RETAIN: usize = 5;
const NO_COORDINATOR_EPOCH: i64 = -1;
const TRANSACTIONAL_FLAG: i64 = 0x10;
const CONTROL_FLAG: i64 = 0x20;

/// Marker column values: no transaction marker (data batch, other control record, undecodable), ABORT, COMMIT.
pub const MARKER_NONE: i8 = -1;
pub const MARKER_ABORT: i8 = 0;
pub const MARKER_COMMIT: i8 = 1;

/// Verdict bits, in the order `CheckedProducerState` reports them for one batch.
pub const EPOCH_REGRESSION: u16 = 1;
pub const EPOCH_BUMP_WITHOUT_RESET: u16 = 1 << 1;
pub const SEQUENCE_RESET: u16 = 1 << 2;
pub const SEQUENCE_GAP: u16 = 1 << 3;
pub const SEQUENCE_OVERLAP: u16 = 1 << 4;
pub const DUPLICATE_BATCH: u16 = 1 << 5;
pub const NON_TRANSACTIONAL_IN_TXN: u16 = 1 << 6;
pub const MARKER_STALE_EPOCH: u16 = 1 << 7;
pub const MARKER_EPOCH_NOT_BUMPED: u16 = 1 << 8;
pub const COORDINATOR_EPOCH_REGRESSION: u16 = 1 << 9;
pub const MARKER_WITHOUT_TRANSACTION: u16 = 1 << 10;

/// `DefaultRecordBatch.incrementSequence`.
pub fn increment_sequence(sequence: i64, increment: i64) -> i64 {
    if sequence > MAX_SEQUENCE - increment {
        increment - (MAX_SEQUENCE - sequence) - 1
    } else {
        sequence + increment
    }
}

/// `DefaultRecordBatch.decrementSequence`.
pub fn decrement_sequence(sequence: i64, decrement: i64) -> i64 {
    if sequence < decrement {
        MAX_SEQUENCE - (decrement - sequence) + 1
    } else {
        sequence - decrement
    }
}

/// `ProducerAppendInfo.inSequence`.
pub fn in_sequence(last: i64, next: i64) -> bool {
    next == last + 1 || (next == 0 && last == MAX_SEQUENCE)
}

/// `BatchMetadata`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BatchMeta {
    pub last_seq: i64,
    pub last_offset: i64,
    pub offset_delta: i64,
    pub timestamp: i64,
}

impl BatchMeta {
    fn first_seq(&self) -> i64 {
        decrement_sequence(self.last_seq, self.offset_delta)
    }
    fn first_offset(&self) -> i64 {
        self.last_offset - self.offset_delta
    }
}

/// `ProducerStateEntry`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub producer_id: i64,
    pub epoch: i64,
    pub coordinator_epoch: i64,
    pub last_timestamp: i64,
    pub txn_first: Option<i64>,
    pub batches: VecDeque<BatchMeta>,
}

impl Entry {
    pub fn new(producer_id: i64) -> Self {
        Entry {
            producer_id,
            epoch: NO_PRODUCER_EPOCH,
            coordinator_epoch: NO_COORDINATOR_EPOCH,
            last_timestamp: -1,
            txn_first: None,
            batches: VecDeque::with_capacity(NUM_BATCHES_TO_RETAIN),
        }
    }
    fn last_seq(&self) -> i64 {
        self.batches.back().map_or(NO_SEQUENCE, |b| b.last_seq)
    }
    fn maybe_update_epoch(&mut self, epoch: i64) {
        if self.epoch != epoch {
            self.batches.clear();
            self.epoch = epoch;
        }
    }
    fn add_batch(&mut self, epoch: i64, meta: BatchMeta) {
        self.maybe_update_epoch(epoch);
        if self.batches.len() == NUM_BATCHES_TO_RETAIN {
            self.batches.pop_front();
        }
        self.batches.push_back(meta);
        self.last_timestamp = meta.timestamp;
    }
    fn find_duplicate(&self, epoch: i64, first_seq: i64, last_seq: i64) -> Option<BatchMeta> {
        if epoch != self.epoch {
            return None;
        }
        self.batches.iter().copied().find(|b| b.last_seq == last_seq && b.first_seq() == first_seq)
    }
}

/// A transaction (`TxnMetadata` joined with its `CompletedTxn`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Txn {
    pub producer_id: i64,
    pub epoch: i64,
    pub first_offset: i64,
    pub first_timestamp: i64,
    pub completed: bool,
    pub last_offset: i64,
    pub aborted: bool,
    pub last_stable_offset: i64,
    pub end_timestamp: i64,
    pub coordinator_epoch: i64,
}

/// One batch's header fields as the replay needs them.
#[derive(Debug, Clone, Copy)]
pub struct Batch {
    pub base_offset: i64,
    pub last_offset_delta: i64,
    pub producer_id: i64,
    pub producer_epoch: i64,
    pub base_sequence: i64,
    pub attributes: i64,
    pub max_timestamp: i64,
    pub marker: i8,
    pub coordinator_epoch: i64,
}

/// What one batch's checks found: the verdict bits and the state they were judged against.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Verdict {
    pub flags: u16,
    pub prev_epoch: i64,
    pub prev_last_seq: i64,
    pub prev_txn_first: i64,
    pub prev_coordinator_epoch: i64,
    pub duplicate_first_offset: i64,
}

/// `EpochBumpEvidence`.
#[derive(Debug, Clone, Default)]
pub struct Evidence {
    pub bumps: i64,
    pub plain: i64,
    pub abort_bumps: i64,
    pub bumped: Vec<i64>,
    bumped_set: HashSet<i64>,
    pub data_epoch: HashMap<i64, i64>,
}

impl Evidence {
    fn data(&mut self, pid: i64, epoch: i64, transactional: bool) {
        if transactional {
            self.data_epoch.entry(pid).or_insert(epoch);
        }
    }
    fn marker(&mut self, pid: i64, epoch: i64, commit: bool) {
        let Some(data) = self.data_epoch.remove(&pid) else { return };
        if epoch == data + 1 {
            if commit {
                self.bumps += 1;
                if self.bumped_set.insert(pid) {
                    self.bumped.push(pid);
                }
            } else {
                self.abort_bumps += 1;
            }
        } else if epoch == data {
            self.plain += 1;
        }
    }
    fn bumps_at_marker(&self, pid: i64, epoch: i64, commit: bool) -> bool {
        commit && self.data_epoch.get(&pid).is_some_and(|d| epoch == d + 1)
    }
    pub fn add_bumped(&mut self, pid: i64) {
        if self.bumped_set.insert(pid) {
            self.bumped.push(pid);
        }
    }
}

/// `ProducerStateManager` with `CheckedProducerState`'s checks.
#[derive(Debug, Default)]
pub struct Replay {
    /// Entries in the order they were first put (Python's dict order; the Java order is Python's to derive).
    pub entries: Vec<Entry>,
    at: HashMap<i64, usize>,
    /// Every transaction handled: the first `given` are the caller's open ones, in its `ongoing` order.
    pub txns: Vec<Txn>,
    /// `ongoing` in Python dict order: (first offset, transaction, still there).
    ongoing: Vec<(i64, usize, bool)>,
    ongoing_at: HashMap<i64, usize>,
    /// Transactions appended to `transactions`, in order.
    pub appended: Vec<usize>,
    pub map_end_offset: i64,
    pub last_timestamp: i64,
    pub evidence: Evidence,
    pub checks: bool,
    pub client_checks: bool,
    pub tv2_allowed: bool,
    pub keep_committed: bool,
    /// `appendDataBatch`'s `InvalidTxnStateException` (every origin): a non-transactional batch inside its
    /// producer's open transaction stops the replay before it (the Python path raises there).
    pub refuse_invalid_txn: bool,
}

impl Replay {
    pub fn put(&mut self, entry: Entry) {
        self.at.insert(entry.producer_id, self.entries.len());
        self.entries.push(entry);
    }

    fn entry_index(&mut self, pid: i64) -> usize {
        if let Some(&i) = self.at.get(&pid) {
            return i;
        }
        self.put(Entry::new(pid));
        self.entries.len() - 1
    }

    /// An open transaction of the caller's, at `first_offset`, in `ongoing` order.
    pub fn add_ongoing(&mut self, txn: Txn) {
        let key = txn.first_offset;
        self.txns.push(txn);
        self.ongoing_insert(key, self.txns.len() - 1);
    }

    fn ongoing_insert(&mut self, key: i64, handle: usize) {
        if let Some(&slot) = self.ongoing_at.get(&key) {
            self.ongoing[slot].1 = handle; // a dict keeps an overwritten key's place
        } else {
            self.ongoing_at.insert(key, self.ongoing.len());
            self.ongoing.push((key, handle, true));
        }
    }

    fn ongoing_pop(&mut self, key: i64) -> Option<usize> {
        let slot = self.ongoing_at.remove(&key)?;
        self.ongoing[slot].2 = false;
        Some(self.ongoing[slot].1)
    }

    /// `ongoing` as it stands: (first offset, transaction) in dict order.
    pub fn ongoing(&self) -> impl Iterator<Item = (i64, usize)> + '_ {
        self.ongoing.iter().filter(|o| o.2).map(|o| (o.0, o.1))
    }

    /// `lastStableOffset(completedTxn)`: the first other open transaction, else past the marker (checked
    /// representable before the batch is applied).
    fn last_stable_offset_after(&self, pid: i64, marker_offset: i64) -> i64 {
        let other = self.ongoing().filter(|&(_, h)| self.txns[h].producer_id != pid).map(|(k, _)| k).min();
        other.unwrap_or(marker_offset.saturating_add(1))
    }

    fn check_sequence(&self, e: &Entry, b: &Batch, v: &mut Verdict) {
        let (epoch, first_seq) = (b.producer_epoch, b.base_sequence);
        if first_seq == NO_SEQUENCE || (epoch == e.epoch && e.last_seq() == NO_SEQUENCE) {
            return;
        }
        let last = e.last_seq();
        if epoch != e.epoch {
            if first_seq != 0 && e.epoch != NO_PRODUCER_EPOCH {
                v.flags |= EPOCH_BUMP_WITHOUT_RESET;
            }
            return;
        }
        if e.epoch == NO_PRODUCER_EPOCH || in_sequence(last, first_seq) {
            return;
        }
        v.flags |= if first_seq == 0 && last > 0 {
            SEQUENCE_RESET
        } else if first_seq > last + 1 {
            SEQUENCE_GAP
        } else {
            SEQUENCE_OVERLAP
        };
    }

    fn check_data(&self, b: &Batch, last_seq: i64, v: &mut Verdict) {
        let Some(&i) = self.at.get(&b.producer_id) else { return };
        let e = &self.entries[i];
        let epoch = b.producer_epoch;
        if epoch < e.epoch {
            v.flags |= EPOCH_REGRESSION;
        } else if e.epoch != NO_PRODUCER_EPOCH && self.client_checks {
            self.check_sequence(e, b, v);
        }
        if let Some(dup) = e.find_duplicate(epoch, b.base_sequence, last_seq) {
            if b.base_sequence != NO_SEQUENCE && self.client_checks {
                v.flags |= DUPLICATE_BATCH;
                v.duplicate_first_offset = dup.first_offset();
            }
        }
        if e.txn_first.is_some() && b.attributes & TRANSACTIONAL_FLAG == 0 {
            v.flags |= NON_TRANSACTIONAL_IN_TXN;
        }
    }

    fn check_marker(&self, b: &Batch, v: &mut Verdict) -> Option<bool> {
        if b.marker == MARKER_NONE {
            return None;
        }
        let pid = b.producer_id;
        let fresh;
        let known = self.at.get(&pid).map(|&i| &self.entries[i]);
        let e = match known {
            Some(e) => e,
            None => {
                fresh = Entry::new(pid);
                &fresh
            }
        };
        let epoch = b.producer_epoch;
        let commit = b.marker == MARKER_COMMIT;
        let tv2 = self.tv2_allowed
            && (self.evidence.bumped_set.contains(&pid) || self.evidence.bumps_at_marker(pid, epoch, commit));
        if known.is_some() && epoch < e.epoch {
            v.flags |= MARKER_STALE_EPOCH;
        } else if known.is_some() && tv2 {
            // check_marker_epoch under TV_2 (below TV_2 it is the stale-epoch test just made)
            let retry = epoch == e.epoch && (e.txn_first.is_none() || epoch == MAX_PRODUCER_EPOCH);
            if !(epoch > e.epoch || retry) {
                v.flags |= MARKER_EPOCH_NOT_BUMPED;
            }
        }
        if e.coordinator_epoch > b.coordinator_epoch {
            v.flags |= COORDINATOR_EPOCH_REGRESSION;
        }
        if e.txn_first.is_none() {
            v.flags |= MARKER_WITHOUT_TRANSACTION;
        }
        Some(commit)
    }

    /// Whether the producer has an open transaction.
    fn in_txn(&self, pid: i64) -> bool {
        self.at.get(&pid).is_some_and(|&i| self.entries[i].txn_first.is_some())
    }

    /// Check then apply one batch; `None` (nothing changed) when an offset leaves the 64-bit range or the
    /// batch is refused (`refuse_invalid_txn`).
    pub fn append(&mut self, b: &Batch) -> Option<Verdict> {
        let last_offset = b.base_offset.checked_add(b.last_offset_delta)?;
        let map_end = last_offset.checked_add(1)?;
        let mut v = Verdict::default();
        let pid = b.producer_id;
        let control = b.attributes & CONTROL_FLAG != 0;
        let transactional = b.attributes & TRANSACTIONAL_FLAG != 0;
        let last_seq = if b.base_sequence == NO_SEQUENCE {
            NO_SEQUENCE
        } else {
            increment_sequence(b.base_sequence, b.last_offset_delta)
        };
        b.base_offset.checked_add(1)?; // a marker's last stable offset may be its offset + 1
        if self.refuse_invalid_txn && pid >= 0 && !control && !transactional && self.in_txn(pid) {
            return None; // InvalidTxnStateException: the Python path raises it
        }
        if self.checks && pid >= 0 {
            if let Some(&i) = self.at.get(&pid) {
                let e = &self.entries[i];
                v.prev_epoch = e.epoch;
                v.prev_last_seq = e.last_seq();
                v.prev_txn_first = e.txn_first.unwrap_or(-1);
                v.prev_coordinator_epoch = e.coordinator_epoch;
            } else {
                v.prev_epoch = NO_PRODUCER_EPOCH;
                v.prev_last_seq = NO_SEQUENCE;
                v.prev_txn_first = -1;
                v.prev_coordinator_epoch = NO_COORDINATOR_EPOCH;
            }
            if control {
                if let Some(commit) = self.check_marker(b, &mut v) {
                    self.evidence.marker(pid, b.producer_epoch, commit);
                }
            } else {
                self.check_data(b, last_seq, &mut v);
                self.evidence.data(pid, b.producer_epoch, transactional);
            }
        }
        if b.max_timestamp > self.last_timestamp {
            self.last_timestamp = b.max_timestamp;
        }
        if pid >= 0 {
            if control {
                if b.marker != MARKER_NONE {
                    self.end_txn(b);
                }
            } else {
                self.append_data(b, last_seq, last_offset, transactional);
            }
        }
        self.map_end_offset = map_end;
        Some(v)
    }

    fn append_data(&mut self, b: &Batch, last_seq: i64, last_offset: i64, transactional: bool) {
        let i = self.entry_index(b.producer_id);
        let meta = BatchMeta {
            last_seq,
            last_offset,
            offset_delta: last_offset - b.base_offset,
            timestamp: b.max_timestamp,
        };
        let e = &mut self.entries[i];
        e.add_batch(b.producer_epoch, meta);
        if e.txn_first.is_none() && transactional {
            e.txn_first = Some(b.base_offset);
            self.txns.push(Txn {
                producer_id: b.producer_id,
                epoch: b.producer_epoch,
                first_offset: b.base_offset,
                first_timestamp: b.max_timestamp,
                completed: false,
                last_offset: 0,
                aborted: false,
                last_stable_offset: 0,
                end_timestamp: 0,
                coordinator_epoch: 0,
            });
            let h = self.txns.len() - 1;
            self.ongoing_insert(b.base_offset, h);
            if self.keep_committed {
                self.appended.push(h);
            }
        }
    }

    fn end_txn(&mut self, b: &Batch) {
        let pid = b.producer_id;
        let i = self.entry_index(pid);
        let aborted = b.marker == MARKER_ABORT;
        if let Some(first) = self.entries[i].txn_first {
            if let Some(h) = self.ongoing_pop(first) {
                let lso = self.last_stable_offset_after(pid, b.base_offset);
                let t = &mut self.txns[h];
                t.completed = true;
                t.last_offset = b.base_offset;
                t.aborted = aborted;
                t.last_stable_offset = lso;
                t.end_timestamp = b.max_timestamp;
                t.coordinator_epoch = b.coordinator_epoch;
                if aborted && !self.keep_committed {
                    self.appended.push(h);
                }
            }
        }
        let e = &mut self.entries[i];
        e.maybe_update_epoch(b.producer_epoch);
        e.coordinator_epoch = b.coordinator_epoch;
        e.txn_first = None;
        e.last_timestamp = b.max_timestamp;
    }
}

// -- Python binding -------------------------------------------------------------------------------------

fn col<'py, T: numpy::Element + Copy>(d: &Bound<'py, PyDict>, name: &str) -> PyResult<Vec<T>> {
    let item = d
        .get_item(name)?
        .ok_or_else(|| PyValueError::new_err(format!("replay_producers: column {name:?} missing")))?;
    let arr: PyReadonlyArray1<'py, T> = item.extract().map_err(|_| {
        PyValueError::new_err(format!("replay_producers: column {name:?} has the wrong type"))
    })?;
    Ok(arr.as_array().iter().copied().collect())
}

fn scalar(d: &Bound<'_, PyDict>, name: &str) -> PyResult<i64> {
    d.get_item(name)?
        .ok_or_else(|| PyValueError::new_err(format!("replay_producers: value {name:?} missing")))?
        .extract()
}

fn flag(d: &Bound<'_, PyDict>, name: &str) -> PyResult<bool> {
    d.get_item(name)?
        .ok_or_else(|| PyValueError::new_err(format!("replay_producers: flag {name:?} missing")))?
        .extract()
}

fn same_len(name: &str, n: usize, cols: &[usize]) -> PyResult<()> {
    if cols.iter().any(|&c| c != n) {
        return Err(PyValueError::new_err(format!("replay_producers: the {name} columns differ in length")));
    }
    Ok(())
}

/// The caller's state, or `None` when a cached batch's first offset is not representable (Python's path then).
fn load_state(state: &Bound<'_, PyDict>) -> PyResult<Option<Replay>> {
    let mut r = Replay {
        map_end_offset: scalar(state, "map_end_offset")?,
        last_timestamp: scalar(state, "last_timestamp")?,
        checks: flag(state, "checks")?,
        client_checks: flag(state, "client_checks")?,
        tv2_allowed: flag(state, "tv2_allowed")?,
        keep_committed: flag(state, "keep_committed")?,
        refuse_invalid_txn: flag(state, "refuse_invalid_txn")?,
        ..Replay::default()
    };
    let pid: Vec<i64> = col(state, "p_producer_id")?;
    let epoch: Vec<i64> = col(state, "p_epoch")?;
    let coord: Vec<i64> = col(state, "p_coordinator_epoch")?;
    let ts: Vec<i64> = col(state, "p_last_timestamp")?;
    let txn: Vec<i64> = col(state, "p_txn_first")?;
    let has_txn: Vec<bool> = col(state, "p_has_txn")?;
    let nb: Vec<i64> = col(state, "p_batches")?;
    same_len("producer", pid.len(), &[epoch.len(), coord.len(), ts.len(), txn.len(), has_txn.len(), nb.len()])?;
    let b_seq: Vec<i64> = col(state, "b_last_seq")?;
    let b_off: Vec<i64> = col(state, "b_last_offset")?;
    let b_delta: Vec<i64> = col(state, "b_offset_delta")?;
    let b_ts: Vec<i64> = col(state, "b_timestamp")?;
    same_len("cached batch", b_seq.len(), &[b_off.len(), b_delta.len(), b_ts.len()])?;
    let mut k = 0usize;
    for i in 0..pid.len() {
        let mut e = Entry::new(pid[i]);
        e.epoch = epoch[i];
        e.coordinator_epoch = coord[i];
        e.last_timestamp = ts[i];
        e.txn_first = if has_txn[i] { Some(txn[i]) } else { None };
        let n = usize::try_from(nb[i]).map_err(|_| PyValueError::new_err("replay_producers: negative batch count"))?;
        if n > NUM_BATCHES_TO_RETAIN || k + n > b_seq.len() {
            return Err(PyValueError::new_err("replay_producers: cached batch counts do not add up"));
        }
        for j in k..k + n {
            if b_off[j].checked_sub(b_delta[j]).is_none() {
                return Ok(None);
            }
            e.batches.push_back(BatchMeta {
                last_seq: b_seq[j],
                last_offset: b_off[j],
                offset_delta: b_delta[j],
                timestamp: b_ts[j],
            });
        }
        k += n;
        r.put(e);
    }
    let t_first: Vec<i64> = col(state, "t_first_offset")?;
    let t_pid: Vec<i64> = col(state, "t_producer_id")?;
    let t_epoch: Vec<i64> = col(state, "t_epoch")?;
    let t_ts: Vec<i64> = col(state, "t_first_timestamp")?;
    same_len("transaction", t_first.len(), &[t_pid.len(), t_epoch.len(), t_ts.len()])?;
    for i in 0..t_first.len() {
        r.add_ongoing(Txn {
            producer_id: t_pid[i],
            epoch: t_epoch[i],
            first_offset: t_first[i],
            first_timestamp: t_ts[i],
            completed: false,
            last_offset: 0,
            aborted: false,
            last_stable_offset: 0,
            end_timestamp: 0,
            coordinator_epoch: 0,
        });
    }
    r.evidence.bumps = scalar(state, "e_bumps")?;
    r.evidence.plain = scalar(state, "e_plain")?;
    r.evidence.abort_bumps = scalar(state, "e_abort_bumps")?;
    for p in col::<i64>(state, "e_bumped")? {
        r.evidence.add_bumped(p);
    }
    let d_pid: Vec<i64> = col(state, "e_data_pid")?;
    let d_epoch: Vec<i64> = col(state, "e_data_epoch")?;
    same_len("evidence", d_pid.len(), &[d_epoch.len()])?;
    for (p, e) in d_pid.into_iter().zip(d_epoch) {
        r.evidence.data_epoch.insert(p, e);
    }
    Ok(Some(r))
}

fn batches(cols: &Bound<'_, PyDict>) -> PyResult<Vec<Batch>> {
    let base: Vec<i64> = col(cols, "base_offset")?;
    let delta: Vec<i32> = col(cols, "last_offset_delta")?;
    let pid: Vec<i64> = col(cols, "producer_id")?;
    let epoch: Vec<i16> = col(cols, "producer_epoch")?;
    let seq: Vec<i32> = col(cols, "base_sequence")?;
    let attrs: Vec<i16> = col(cols, "attributes")?;
    let ts: Vec<i64> = col(cols, "max_timestamp")?;
    let marker: Vec<i8> = col(cols, "marker")?;
    let coord: Vec<i32> = col(cols, "coordinator_epoch")?;
    let n = base.len();
    same_len("batch", n, &[delta.len(), pid.len(), epoch.len(), seq.len(), attrs.len(), ts.len(), marker.len(), coord.len()])?;
    Ok((0..n)
        .map(|i| Batch {
            base_offset: base[i],
            last_offset_delta: delta[i] as i64,
            producer_id: pid[i],
            producer_epoch: epoch[i] as i64,
            base_sequence: seq[i] as i64,
            attributes: (attrs[i] as i64) & 0xFFFF,
            max_timestamp: ts[i],
            marker: marker[i],
            coordinator_epoch: coord[i] as i64,
        })
        .collect())
}

fn put<'py, T: numpy::Element>(py: Python<'py>, out: &Bound<'py, PyDict>, name: &str, v: Vec<T>) -> PyResult<()> {
    out.set_item(name, PyArray1::from_vec(py, v))
}

fn export<'py>(py: Python<'py>, r: &Replay, verdicts: &[Verdict], applied: usize) -> PyResult<Bound<'py, PyDict>> {
    let out = PyDict::new(py);
    out.set_item("applied", applied as i64)?;
    out.set_item("map_end_offset", r.map_end_offset)?;
    out.set_item("last_timestamp", r.last_timestamp)?;
    put(py, &out, "flags", verdicts.iter().map(|v| v.flags).collect())?;
    put(py, &out, "prev_epoch", verdicts.iter().map(|v| v.prev_epoch).collect())?;
    put(py, &out, "prev_last_seq", verdicts.iter().map(|v| v.prev_last_seq).collect())?;
    put(py, &out, "prev_txn_first", verdicts.iter().map(|v| v.prev_txn_first).collect())?;
    put(py, &out, "prev_coordinator_epoch", verdicts.iter().map(|v| v.prev_coordinator_epoch).collect())?;
    put(py, &out, "duplicate_first_offset", verdicts.iter().map(|v| v.duplicate_first_offset).collect())?;
    let es = &r.entries;
    put(py, &out, "p_producer_id", es.iter().map(|e| e.producer_id).collect())?;
    put(py, &out, "p_epoch", es.iter().map(|e| e.epoch).collect())?;
    put(py, &out, "p_coordinator_epoch", es.iter().map(|e| e.coordinator_epoch).collect())?;
    put(py, &out, "p_last_timestamp", es.iter().map(|e| e.last_timestamp).collect())?;
    put(py, &out, "p_txn_first", es.iter().map(|e| e.txn_first.unwrap_or(-1)).collect())?;
    put(py, &out, "p_has_txn", es.iter().map(|e| e.txn_first.is_some()).collect())?;
    put(py, &out, "p_batches", es.iter().map(|e| e.batches.len() as i64).collect())?;
    let metas: Vec<BatchMeta> = es.iter().flat_map(|e| e.batches.iter().copied()).collect();
    put(py, &out, "b_last_seq", metas.iter().map(|b| b.last_seq).collect())?;
    put(py, &out, "b_last_offset", metas.iter().map(|b| b.last_offset).collect())?;
    put(py, &out, "b_offset_delta", metas.iter().map(|b| b.offset_delta).collect())?;
    put(py, &out, "b_timestamp", metas.iter().map(|b| b.timestamp).collect())?;
    let ts = &r.txns;
    put(py, &out, "t_producer_id", ts.iter().map(|t| t.producer_id).collect())?;
    put(py, &out, "t_epoch", ts.iter().map(|t| t.epoch).collect())?;
    put(py, &out, "t_first_offset", ts.iter().map(|t| t.first_offset).collect())?;
    put(py, &out, "t_first_timestamp", ts.iter().map(|t| t.first_timestamp).collect())?;
    put(py, &out, "t_completed", ts.iter().map(|t| t.completed).collect())?;
    put(py, &out, "t_last_offset", ts.iter().map(|t| t.last_offset).collect())?;
    put(py, &out, "t_aborted", ts.iter().map(|t| t.aborted).collect())?;
    put(py, &out, "t_last_stable_offset", ts.iter().map(|t| t.last_stable_offset).collect())?;
    put(py, &out, "t_end_timestamp", ts.iter().map(|t| t.end_timestamp).collect())?;
    put(py, &out, "t_coordinator_epoch", ts.iter().map(|t| t.coordinator_epoch).collect())?;
    put(py, &out, "appended", r.appended.iter().map(|&h| h as i64).collect())?;
    let (keys, handles): (Vec<i64>, Vec<i64>) = r.ongoing().map(|(k, h)| (k, h as i64)).unzip();
    put(py, &out, "ongoing_first_offset", keys)?;
    put(py, &out, "ongoing_txn", handles)?;
    let ev = &r.evidence;
    out.set_item("e_bumps", ev.bumps)?;
    out.set_item("e_plain", ev.plain)?;
    out.set_item("e_abort_bumps", ev.abort_bumps)?;
    put(py, &out, "e_bumped", ev.bumped.clone())?;
    let (dp, de): (Vec<i64>, Vec<i64>) = ev.data_epoch.iter().map(|(p, e)| (*p, *e)).unzip();
    put(py, &out, "e_data_pid", dp)?;
    put(py, &out, "e_data_epoch", de)?;
    Ok(out)
}

/// Replay batch columns over a producer state (both dicts of NumPy columns and scalars; see
/// `kafkatool/engine/producer_state.py`, which builds and reads them). Returns the state after the batches,
/// the per-batch verdict columns and `applied`, the batches applied (fewer than given when an offset leaves
/// the 64-bit range or a batch is refused, `refuse_invalid_txn`: the rest is the Python path's).
#[pyfunction]
fn replay_producers<'py>(
    py: Python<'py>,
    state: &Bound<'py, PyDict>,
    columns: &Bound<'py, PyDict>,
) -> PyResult<Bound<'py, PyDict>> {
    guard("replay_producers", || {
        let Some(mut r) = load_state(state)? else {
            let out = PyDict::new(py);
            out.set_item("applied", -1)?;
            return Ok(out);
        };
        let bs = batches(columns)?;
        let mut verdicts = Vec::with_capacity(bs.len());
        for b in &bs {
            match r.append(b) {
                Some(v) => verdicts.push(v),
                None => break,
            }
        }
        let applied = verdicts.len();
        export(py, &r, &verdicts, applied)
    })
}

/// How `LogSegment.recover`'s pass over a segment's batches ended (see [`recover_scan`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RecoverEnd {
    /// The valid prefix ends here (a gap, a CRC failure or the end of the segment).
    Done,
    /// `LogSegmentOffsetOverflowException`: the row's last offset is not relative to the base.
    Overflow,
    /// `InvalidOffsetException` of the offset index: (offset, last offset appended).
    OffsetIndex(i64, i64),
    /// `InvalidOffsetException` of the time index: (offset, last offset appended).
    TimeIndex(i64, i64),
}

/// One batch as `LogSegment.recover` sees it.
#[derive(Debug, Clone, Copy)]
pub struct Framed {
    pub position: i64,
    pub size: i64,
    pub crc_invalid: bool,
    pub last_offset: i64,
    pub max_timestamp: i64,
}

/// `LogSegment.recover`'s per-batch pass (as `kafkatool/engine/segment_recovery.py` models it): the valid
/// prefix (contiguous, CRC not failed), the offset-overflow check, and the offset and time index rebuilt every
/// `interval` bytes with their ordering checks. Returns the rows kept, the bytes they span and how it ended
/// (an exception ends it at row `kept`).
pub fn recover_scan(rows: &[Framed], base: i64, interval: i64) -> (usize, i64, RecoverEnd) {
    const NO_TIMESTAMP: i64 = -1;
    let (mut valid, mut last_index_entry) = (0i64, 0i64);
    let mut idx_last: Option<i64> = None;
    let (mut ts_last, mut max_ts) = ((NO_TIMESTAMP, base), (NO_TIMESTAMP, -1i64));
    let mut ts_entries = false;
    for (kept, r) in rows.iter().enumerate() {
        if r.position != valid || r.crc_invalid {
            return (kept, valid, RecoverEnd::Done);
        }
        match r.last_offset.checked_sub(base) {
            Some(rel) if (0..=i32::MAX as i64).contains(&rel) => {}
            _ => return (kept, valid, RecoverEnd::Overflow),
        }
        if r.max_timestamp > max_ts.0 {
            max_ts = (r.max_timestamp, r.last_offset);
        }
        if valid - last_index_entry > interval {
            if let Some(last) = idx_last {
                if r.last_offset <= last {
                    return (kept, valid, RecoverEnd::OffsetIndex(r.last_offset, last));
                }
            }
            idx_last = Some(r.last_offset);
            if ts_entries && max_ts.1 < ts_last.1 {
                return (kept, valid, RecoverEnd::TimeIndex(max_ts.1, ts_last.1));
            }
            if max_ts.0 > ts_last.0 {
                ts_last = max_ts;
                ts_entries = true;
            }
            last_index_entry = valid;
        }
        valid += r.size;
    }
    (rows.len(), valid, RecoverEnd::Done)
}

/// [`recover_scan`] over columns: `(kept, valid bytes, end, a, b)` with `end` 0 done, 1 offset overflow,
/// 2 offset index, 3 time index (`a`, `b`: the offsets the exception names).
#[pyfunction]
#[allow(clippy::too_many_arguments)]
fn recover_segment_scan(
    position: PyReadonlyArray1<'_, i64>,
    size: PyReadonlyArray1<'_, i64>,
    crc_invalid: PyReadonlyArray1<'_, bool>,
    last_offset: PyReadonlyArray1<'_, i64>,
    max_timestamp: PyReadonlyArray1<'_, i64>,
    base: i64,
    interval: i64,
) -> PyResult<(usize, i64, u8, i64, i64)> {
    guard("recover_segment_scan", || {
        let (p, s, c, l, t) =
            (position.as_array(), size.as_array(), crc_invalid.as_array(), last_offset.as_array(), max_timestamp.as_array());
        let n = p.len();
        same_len("recovery", n, &[s.len(), c.len(), l.len(), t.len()])?;
        let rows: Vec<Framed> = (0..n)
            .map(|i| Framed { position: p[i], size: s[i], crc_invalid: c[i], last_offset: l[i], max_timestamp: t[i] })
            .collect();
        let (kept, valid, end) = recover_scan(&rows, base, interval);
        Ok(match end {
            RecoverEnd::Done => (kept, valid, 0, 0, 0),
            RecoverEnd::Overflow => (kept, valid, 1, 0, 0),
            RecoverEnd::OffsetIndex(a, b) => (kept, valid, 2, a, b),
            RecoverEnd::TimeIndex(a, b) => (kept, valid, 3, a, b),
        })
    })
}

/// Add this module's Python functions to `kafkatool._native`.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(replay_producers, m)?)?;
    m.add_function(wrap_pyfunction!(recover_segment_scan, m)?)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn data(base: i64, delta: i64, pid: i64, epoch: i64, seq: i64, txn: bool) -> Batch {
        Batch {
            base_offset: base,
            last_offset_delta: delta,
            producer_id: pid,
            producer_epoch: epoch,
            base_sequence: seq,
            attributes: if txn { TRANSACTIONAL_FLAG } else { 0 },
            max_timestamp: base.saturating_add(1000),
            marker: MARKER_NONE,
            coordinator_epoch: 0,
        }
    }

    fn marker(base: i64, pid: i64, epoch: i64, commit: bool, coord: i64) -> Batch {
        Batch {
            base_offset: base,
            last_offset_delta: 0,
            producer_id: pid,
            producer_epoch: epoch,
            base_sequence: -1,
            attributes: TRANSACTIONAL_FLAG | CONTROL_FLAG,
            max_timestamp: base.saturating_add(1000),
            marker: if commit { MARKER_COMMIT } else { MARKER_ABORT },
            coordinator_epoch: coord,
        }
    }

    fn replay() -> Replay {
        Replay { checks: true, client_checks: true, tv2_allowed: true, keep_committed: true, ..Replay::default() }
    }

    #[test]
    fn sequences_wrap_as_kafka_does() {
        assert_eq!(increment_sequence(MAX_SEQUENCE, 1), 0);
        assert_eq!(decrement_sequence(0, 1), MAX_SEQUENCE);
        assert!(in_sequence(MAX_SEQUENCE, 0));
        assert!(!in_sequence(5, 7));
    }

    #[test]
    fn gap_duplicate_and_epoch_regression() {
        let mut r = replay();
        assert_eq!(r.append(&data(0, 2, 7, 0, 0, false)).unwrap().flags, 0);
        assert_eq!(r.append(&data(3, 2, 7, 0, 5, false)).unwrap().flags, SEQUENCE_GAP);
        let dup = r.append(&data(6, 2, 7, 0, 5, false)).unwrap();
        assert_eq!(dup.flags, SEQUENCE_OVERLAP | DUPLICATE_BATCH);
        assert_eq!(dup.duplicate_first_offset, 3);
        assert_eq!(r.append(&data(9, 0, 7, -1, 0, false)).unwrap().flags, EPOCH_REGRESSION);
        assert_eq!(r.entries[0].batches.len(), 1); // the epoch change forgot the cached batches
    }

    #[test]
    fn transactions_and_last_stable_offset() {
        let mut r = replay();
        r.append(&data(0, 0, 1, 0, 0, true));
        r.append(&data(1, 0, 2, 0, 0, true));
        r.append(&marker(2, 1, 0, false, 3));
        let t = &r.txns[0];
        assert!(t.completed && t.aborted);
        assert_eq!(t.last_stable_offset, 1); // producer 2's transaction is still open
        assert_eq!(r.ongoing().collect::<Vec<_>>(), vec![(1, 1)]);
        r.append(&marker(3, 2, 1, true, 3)); // TV_2: the commit bumps the epoch
        assert_eq!(r.txns[1].last_stable_offset, 4);
        assert_eq!(r.evidence.bumps, 1);
        let v = r.append(&marker(4, 2, 1, true, 2)).unwrap();
        assert_eq!(v.flags, COORDINATOR_EPOCH_REGRESSION | MARKER_WITHOUT_TRANSACTION);
        assert_eq!(r.map_end_offset, 5);
    }

    #[test]
    fn a_plain_batch_in_an_open_transaction_is_refused_or_flagged() {
        let mut r = Replay { refuse_invalid_txn: true, keep_committed: true, ..Replay::default() };
        assert!(r.append(&data(0, 0, 1, 0, 0, true)).is_some());
        assert!(r.append(&data(1, 0, 2, 0, 0, false)).is_some()); // another producer: no transaction of its own
        assert!(r.append(&data(2, 0, 1, 0, 1, false)).is_none()); // refused: nothing changed
        assert_eq!(r.map_end_offset, 2);
        let mut c = replay(); // the forensic replay flags it and carries on
        c.append(&data(0, 0, 1, 0, 0, true));
        assert_eq!(c.append(&data(1, 0, 1, 0, 1, false)).unwrap().flags, NON_TRANSACTIONAL_IN_TXN);
        assert_eq!(c.map_end_offset, 2);
    }

    fn framed(position: i64, size: i64, last_offset: i64) -> Framed {
        Framed { position, size, crc_invalid: false, last_offset, max_timestamp: last_offset }
    }

    #[test]
    fn recovery_keeps_the_valid_prefix_and_checks_the_rebuilt_index() {
        let rows = [framed(0, 100, 10), framed(100, 100, 20), framed(250, 100, 30)];
        assert_eq!(recover_scan(&rows, 0, 4096), (2, 200, RecoverEnd::Done));
        let back = [framed(0, 100, 10), framed(100, 100, 20), framed(200, 100, 15)];
        assert_eq!(recover_scan(&back, 0, 50), (2, 200, RecoverEnd::OffsetIndex(15, 20)));
        assert_eq!(recover_scan(&[framed(0, 100, 5)], 10, 4096), (0, 0, RecoverEnd::Overflow));
    }

    #[test]
    fn offsets_past_the_long_range_stop_the_replay() {
        let mut r = replay();
        assert!(r.append(&data(i64::MAX, 1, 1, 0, 0, false)).is_none());
        assert!(r.entries.is_empty());
    }
}
