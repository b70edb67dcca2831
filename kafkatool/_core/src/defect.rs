//! Bad input as data: a defect names the byte position and the field, and no panic ever reaches Python.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

/// One defect found in the input: where (absolute byte position in the file), which field, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Defect {
    pub position: u64,
    pub field: &'static str,
    pub reason: String,
}

impl Defect {
    pub fn new(position: u64, field: &'static str, reason: impl Into<String>) -> Self {
        Defect { position, field, reason: reason.into() }
    }

    /// The defect as the Python tuple `(position, field, reason)`.
    pub fn into_tuple(self) -> (u64, &'static str, String) {
        (self.position, self.field, self.reason)
    }
}

/// Run `f`, turning a panic (a bug in the crate, never expected) into a Python `ValueError` naming the entry
/// point, so that no Rust panic unwinds into the interpreter.
pub fn guard<T>(entry: &'static str, f: impl FnOnce() -> PyResult<T>) -> PyResult<T> {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)) {
        Ok(result) => result,
        Err(payload) => {
            let what = payload
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".to_string());
            Err(PyValueError::new_err(format!("kafkatool._native.{entry}: internal error: {what}")))
        }
    }
}
