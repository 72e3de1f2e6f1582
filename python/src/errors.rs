//! The Rust errors as the Python exceptions of `ggpnet.errors`, by kind: a
//! parse error with its line and column, a grounding limit with its name and
//! value, an illegal move with its role and move, and so on.
//!
//! The exception classes are written in Python (`ggpnet/errors.py`, so that
//! they can inherit from `ValueError` too and carry docstrings); an error is
//! made by calling the class with the message and setting its attributes,
//! which `BaseException`'s pickling keeps.

use ggpnet::grounder::{ErrorKind, GdlError, Limit};
use ggpnet::kif::ParseError;
use ggpnet::propnet::MachineError;
use ggpnet::realtime::RtError;
use ggpnet::{Error, LoadError, Refusal, SettingError};
use pyo3::prelude::*;

/// A value of an exception's attribute.
pub enum Attr {
    /// A number.
    Int(i128),
    /// A text.
    Text(String),
}

impl From<u32> for Attr {
    /// The number.
    fn from(n: u32) -> Attr {
        Attr::Int(n.into())
    }
}

impl From<usize> for Attr {
    /// The number.
    fn from(n: usize) -> Attr {
        Attr::Int(n as i128)
    }
}

impl From<&str> for Attr {
    /// The text.
    fn from(text: &str) -> Attr {
        Attr::Text(text.to_owned())
    }
}

impl From<String> for Attr {
    /// The text.
    fn from(text: String) -> Attr {
        Attr::Text(text)
    }
}

/// The exception `class` of `ggpnet.errors` with `message` and `attrs` set.
pub fn raise(class: &str, message: impl Into<String>, attrs: Vec<(&str, Attr)>) -> PyErr {
    let message = message.into();
    Python::attach(|py| match build(py, class, &message, attrs) {
        Ok(error) => error,
        Err(failure) => failure,
    })
}

/// The exception `class` with `message` and `attrs`, or why it could not be made.
fn build(py: Python<'_>, class: &str, message: &str, attrs: Vec<(&str, Attr)>) -> PyResult<PyErr> {
    let module = py.import("ggpnet.errors")?;
    let error = module.getattr(class)?.call1((message,))?;
    for (name, value) in attrs {
        match value {
            Attr::Int(n) => error.setattr(name, n)?,
            Attr::Text(text) => error.setattr(name, text)?,
        }
    }
    Ok(PyErr::from_value(error))
}

/// A message without the leading `error: ` of the Rust errors' `Display`.
pub fn bare(shown: String) -> String {
    match shown.strip_prefix("error: ") {
        Some(rest) => rest.to_owned(),
        None => shown,
    }
}

/// A KIF parse error: `ParseError` with its line and column.
pub fn parse_error(e: &ParseError, message: String) -> PyErr {
    let attrs = vec![("line", e.span.line.into()), ("column", e.span.column.into())];
    raise("ParseError", message, attrs)
}

/// The name of a grounding limit: the setting of `Game.load` that raises it.
fn limit_name(limit: Limit) -> &'static str {
    match limit {
        Limit::Rules => "max_ground_rules",
        Limit::Atoms => "max_ground_atoms",
        Limit::Depth => "max_term_depth",
        Limit::Memory => "max_ground_bytes",
        Limit::Steps => "max_join_steps",
        Limit::Time => "max_ground_time",
        Limit::Expansion => "expansion",
        _ => "other",
    }
}

/// An invalid game (`GdlError`, with its kind and rule), or a limit passed
/// (`LimitError`, with the limit's name and value).
pub fn gdl_error(e: &GdlError, message: String) -> PyErr {
    let kind = match e.kind {
        ErrorKind::TooLarge { limit, max } => {
            let attrs = vec![("limit", limit_name(limit).into()), ("value", max.into())];
            return raise("LimitError", message, attrs);
        }
        ErrorKind::Arity => "arity",
        ErrorKind::Unsafe => "unsafe",
        ErrorKind::Unstratified => "unstratified",
        ErrorKind::RecursionRestriction => "recursion",
        ErrorKind::Keyword => "keyword",
        ErrorKind::Unplayable => "unplayable",
    };
    let mut attrs = vec![("kind", kind.into())];
    if let Some(span) = e.span {
        attrs.push(("line", span.line.into()));
        attrs.push(("column", span.column.into()));
    }
    if let Some(rule) = &e.rule {
        attrs.push(("rule", rule.as_str().into()));
    }
    raise("GdlError", message, attrs)
}

/// Why the propnet could not be built.
fn propnet_load_error(e: &ggpnet::propnet::LoadError, message: String) -> PyErr {
    use ggpnet::propnet::LoadError as P;
    match e {
        P::Parse(p) => parse_error(p, message),
        P::Gdl(g) => gdl_error(g, message),
        P::Build(_) | P::Cycle(_) | P::Invalid(_) => raise("LoadError", message, Vec::new()),
    }
}

/// A game that could not be loaded, by kind.
pub fn load_error(e: &LoadError) -> PyErr {
    let message = bare(e.to_string());
    match e {
        LoadError::Propnet(p) => propnet_load_error(p, message),
        LoadError::Interpreter { refusal, .. } => match refusal {
            Refusal::Parse(p) => parse_error(p, message),
            Refusal::Invalid(g) => gdl_error(g, message),
            Refusal::NoLegalMove { role } => {
                let attrs = vec![("kind", "unplayable".into()), ("rule", Attr::Text(role.clone()))];
                raise("GdlError", message, attrs)
            }
            _ => raise("LoadError", message, Vec::new()),
        },
        LoadError::RealTime(_) => raise("RealTimeGameError", message, Vec::new()),
        _ => raise("LoadError", message, Vec::new()),
    }
}

/// A setting out of its range.
pub fn setting_error(e: &SettingError) -> PyErr {
    let attrs = vec![("setting", e.setting().into()), ("reason", e.reason().into())];
    raise("SettingError", e.to_string(), attrs)
}

/// A setting out of its range, given as the keyword argument `keyword`
/// (which the error names, as Python callers wrote it).
pub fn keyword_error(keyword: &'static str, e: &SettingError) -> PyErr {
    let attrs = vec![("setting", keyword.into()), ("reason", e.reason().into())];
    raise("SettingError", format!("{keyword} {}", e.reason()), attrs)
}

/// A refusal of the state machine, by kind.
fn machine_error(e: &MachineError, message: String) -> PyErr {
    match e {
        MachineError::IllegalMove { role, text } => {
            let attrs = vec![("role", role.as_str().into()), ("move", text.as_str().into())];
            raise("IllegalMoveError", message, attrs)
        }
        MachineError::UnknownMove { role, text } => {
            let attrs = vec![("role", role.as_str().into()), ("move", text.as_str().into())];
            raise("UnknownMoveError", message, attrs)
        }
        MachineError::UnknownFact { fact } => {
            raise("UnknownFactError", message, vec![("fact", fact.as_str().into())])
        }
        MachineError::UnknownRole { name, .. } => {
            raise("NoSuchRoleError", message, vec![("role", name.as_str().into())])
        }
        MachineError::Unreadable { .. } => refused("unreadable", message),
        MachineError::WrongJointLength { .. } => refused("joint_length", message),
        MachineError::WrongRole { .. } => refused("wrong_role", message),
        MachineError::NoSuchMove { .. } => raise("ForeignMoveError", message, Vec::new()),
        _ => refused("other", message),
    }
}

/// A `RefusedError` of `kind`.
fn refused(kind: &str, message: String) -> PyErr {
    raise("RefusedError", message, vec![("kind", kind.into())])
}

/// A refused request of the agent API, by kind.
pub fn error(e: &Error) -> PyErr {
    let message = bare(e.to_string());
    match e {
        Error::ForeignState => raise("ForeignStateError", message, Vec::new()),
        Error::ForeignMove => raise("ForeignMoveError", message, Vec::new()),
        Error::NoSuchRole { role, .. } => raise("NoSuchRoleError", message, vec![("role", (*role).into())]),
        Error::Refused(m) => machine_error(m, message),
        Error::InvalidSetting(e) => setting_error(e),
        Error::TooManyJointMoves { count } => raise(
            "TooManyJointMovesError",
            message,
            vec![("count", Attr::Int(*count as i128))],
        ),
        Error::Playouts(_) => raise("PlayoutsError", message, Vec::new()),
        Error::Interpreter(_) => raise("InterpreterError", message, Vec::new()),
        _ => raise("Error", message, Vec::new()),
    }
}

/// A refusal of an rtGDL game, by kind.
pub fn rt_error(e: &RtError) -> PyErr {
    let message = e.message();
    let at = |span: ggpnet::kif::Span| vec![("line", span.line.into()), ("column", span.column.into())];
    match e {
        RtError::Parse(p) => parse_error(p, message),
        RtError::Invalid(r) | RtError::OutsideFragment(r) => {
            let mut attrs = at(r.span);
            attrs.push(("kind", "rtgdl".into()));
            raise("GdlError", message, attrs)
        }
        RtError::Gdl(g) => gdl_error(g, message),
        RtError::Propnet { error, .. } => propnet_load_error(error, message),
        RtError::Interpreter(_) => raise("InterpreterError", message, Vec::new()),
        RtError::IllegalMove { role, chosen } => {
            let attrs = vec![("role", role.as_str().into()), ("move", chosen.as_str().into())];
            raise("IllegalMoveError", message, attrs)
        }
        RtError::ForeignState => raise("ForeignStateError", message, Vec::new()),
        RtError::NoSuchRole { role, .. } => raise("NoSuchRoleError", message, vec![("role", (*role).into())]),
        RtError::InvalidSetting(e) => setting_error(e),
        RtError::WrongJointLength { .. } => refused("joint_length", message),
        RtError::NoElapsedTime | RtError::PastExpiry { .. } | RtError::NoEvent { .. } => {
            refused("time", message)
        }
        _ => refused("other", message),
    }
}
