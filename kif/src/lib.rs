//! KIF/GDL front end: tokens, an AST with interned symbols, precise parse
//! errors (line:column and what was expected), and a canonical printer.
//!
//! GDL keywords are matched case-insensitively and printed in lower case; every
//! other symbol keeps its case. Numbers are ordinary symbols (`10` differs from `010`).

#![warn(missing_docs)]
#![cfg_attr(not(test), warn(clippy::too_many_lines))]
#![forbid(unsafe_code)]

mod ast;
mod gdl2;
mod impossible;
mod lexer;
mod parser;
mod print;
mod symbol;
mod unfold;

pub use ast::{Literal, Rule, Span, Term, Warning, TUPLE};
pub use gdl2::{is_gdl2, read_as_gdl2};
pub use parser::{parse, parse_term, sexprs, Description, ParseError, SExpr, MAX_NESTING};
pub use print::{rule_to_string, term_to_string, write_term};
pub use symbol::{SymbolId, SymbolTable, KEYWORDS};
