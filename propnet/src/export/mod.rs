//! Circuits for people and other tools: the cone feeding chosen outputs
//! ([`cone`]), Graphviz pictures ([`dot`]), a JSON dump that loads back
//! ([`json`]), and and-inverter graphs for logic-synthesis and model-checking
//! tools ([`aiger`]). The schema and the commands are in `docs/EXPORT.md`.

pub mod aiger;
pub mod cone;
pub mod dot;
pub mod json;

use std::fmt;

/// A refused export or import: unknown output names, a circuit too large for
/// the requested form, or an unreadable circuit file.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct ExportError {
    /// What was refused and why.
    pub message: String,
}

impl ExportError {
    pub(crate) fn new(message: impl Into<String>) -> ExportError {
        ExportError {
            message: message.into(),
        }
    }
}

impl fmt::Display for ExportError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "error: {}", self.message)
    }
}

impl std::error::Error for ExportError {}
