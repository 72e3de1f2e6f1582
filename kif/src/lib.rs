//! KIF/GDL front end: tokens, an AST with interned symbols, precise parse
//! errors (line:column and what was expected), and a canonical printer.
//!
//! GDL keywords are matched case-insensitively and printed in lower case; every
//! other symbol keeps its case. Numbers are ordinary symbols (`10` differs from `010`).

#![forbid(unsafe_code)]

pub mod ast;
pub mod gdl2;
mod impossible;
pub mod lexer;
pub mod parser;
pub mod print;
pub mod symbol;
mod unfold;

pub use ast::{Literal, Rule, Span, Term, Warning};
pub use parser::{parse, parse_term, sexprs, Description, ParseError, SExpr};
pub use print::{rule_to_string, term_to_string, write_term};
pub use symbol::{SymbolId, SymbolTable, KEYWORDS};
