//! (stub, filled by issue 23's work on this module)

use pyo3::prelude::*;

/// Add this module's Python functions to `kafkatool._native`.
pub fn register(_m: &Bound<'_, PyModule>) -> PyResult<()> {
    Ok(())
}
