//! What `Game.load` and `RtGame.load` are given: a path or the rules' text,
//! GDL (KIF) or a Simplified Boardgames game translated to GDL on reading.

use crate::errors::raise;
use crate::settings::bad_name;
use pyo3::exceptions::PyUserWarning;
use pyo3::prelude::*;
use pyo3::types::PyString;
use std::path::PathBuf;

/// The language of a game's text.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Format {
    /// GDL, GDL-II or rtGDL in KIF.
    Gdl,
    /// Simplified Boardgames.
    Sbg,
}

/// The GDL text of `source`: a path (an `os.PathLike`, or a `str` that is
/// not text, see [`is_text`]) whose file is read, or else the rules themselves. `format`
/// is `gdl` (or `kif`), `sbg`, or `None`: SBG for a path ending in `.sbg`,
/// else GDL. An SBG game is translated to GDL, its warnings given as Python
/// `UserWarning`s.
pub fn read(py: Python<'_>, source: &Bound<'_, PyAny>, format: Option<&str>) -> PyResult<String> {
    let given: Option<String> = match source.cast::<PyString>() {
        Ok(s) => Some(s.extract()?),
        Err(_) => None,
    };
    let (text, path) = match given {
        Some(text) if is_text(&text) => (text, None),
        _ => {
            let path: PathBuf = source.extract()?;
            (std::fs::read_to_string(&path)?, Some(path))
        }
    };
    let format = match format {
        None if path
            .as_ref()
            .is_some_and(|p| p.extension().is_some_and(|e| e == "sbg")) =>
        {
            Format::Sbg
        }
        None | Some("gdl" | "kif") => Format::Gdl,
        Some("sbg") => Format::Sbg,
        Some(other) => return Err(bad_name("format", other, "gdl, kif or sbg")),
    };
    match format {
        Format::Gdl => Ok(text),
        Format::Sbg => translate(py, &text),
    }
}

/// The GDL translation of the Simplified Boardgames game `text`.
fn translate(py: Python<'_>, text: &str) -> PyResult<String> {
    let parsed = ggpnet::sbg::parse(text).map_err(|e| {
        let attrs = vec![("line", e.line.into()), ("column", e.col.into())];
        raise("ParseError", format!("Simplified Boardgames: {e}"), attrs)
    })?;
    for warning in &parsed.warnings {
        let message = format!("Simplified Boardgames: {warning}");
        PyErr::warn(
            py,
            &py.get_type::<PyUserWarning>(),
            &std::ffi::CString::new(message)?,
            1,
        )?;
    }
    Ok(ggpnet::sbg::to_gdl(&parsed.rules))
}

/// Whether a `str` given as a game is the rules' text rather than a path:
/// it has a parenthesis (every GDL game does), a line break or `<<` (every
/// SBG game does).
fn is_text(given: &str) -> bool {
    given.contains(['(', '\n']) || given.contains("<<")
}
