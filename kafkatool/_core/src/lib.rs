//! kafkatool's native core: the per-batch and per-record hot paths, in safe Rust.
//!
//! Each module is pure Rust over byte slices with its Python binding in one `register` function; results cross
//! into Python as NumPy columns, never as one Python object per record. Bad input is a defect value (position,
//! field, reason: `defect::Defect`), and no panic reaches Python (`defect::guard`). The layout constants come from
//! the construct schema (`layout.rs`, generated). Modules:
//! - `walk`: the segment walk (v2 and legacy framing, CRC-32C, header columns, batch boundaries and damage);
//! - `legacy`: magic 0/1 messages (framing, CRC-32, a compressed wrapper's inner span) for the walk;
//! - `codecs`: gzip, snappy (plain and xerial), lz4 (frame, and magic 0's broken header checksum), zstd, under
//!   explicit decompression limits;
//! - `records`: record decoding (varints, headers, control records) into columns;
//! - `text`: the shallow volume text writer (`--format kafka` batch lines);
//! - `text_deep`: the deep writer (`--format kafka --deep/--print-data`);
//! - `jsonl`: the `--format jsonl` entry rows of `dump-segment` (shallow, `--deep`, `--print-data`);
//! - `producers`: producer-state replay over batch columns (Kafka's ProducerStateManager);
//! - `table`: `dump-segment`'s default table, batch rows from header columns.
#![forbid(unsafe_code)]

use pyo3::prelude::*;

pub mod codecs;
pub mod defect;
pub mod jsonl;
pub mod layout;
pub mod legacy;
pub mod producers;
pub mod records;
pub mod table;
pub mod text;
pub mod text_deep;
pub mod walk;

/// The crate's version and the layout fingerprint it was generated from (see `layout.rs`).
#[pyfunction]
fn build_info() -> (String, String) {
    (env!("CARGO_PKG_VERSION").to_string(), layout::FINGERPRINT.to_string())
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(build_info, m)?)?;
    walk::register(m)?;
    codecs::register(m)?;
    records::register(m)?;
    text::register(m)?;
    text_deep::register(m)?;
    jsonl::register(m)?;
    producers::register(m)?;
    table::register(m)?;
    Ok(())
}
