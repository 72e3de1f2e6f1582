//! Tokens of RBG text (the extended paper's "Lexical analysis"): identifiers,
//! natural numbers and punctuation, taken greedily; `//` and `/* */` comments.

use crate::error::{ErrorKind, Pos, RbgError};
use std::rc::Rc;

/// The punctuation tokens, longest first so that the greedy match takes `->>` before `->`.
const PUNCT: [&str; 32] = [
    "->>", "{?", "{!", "{$", "[$", "->", "!=", "==", "<=", ">=", "(", ")", "{", "}", "[", "]", "~", "#", "-",
    "+", "^", "/", "*", ",", ";", ":", "$", "=", "!", "?", "<", ">",
];

/// The largest input accepted, in bytes.
pub(crate) const MAX_TEXT: usize = 4 << 20;

/// One token.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Tok {
    /// An identifier (letters and digits, starting with a letter).
    Ident(Rc<str>),
    /// A natural number, as written.
    Nat(Rc<str>),
    /// A punctuation token from [`PUNCT`].
    Punct(&'static str),
}

impl Tok {
    /// The token as it would be written.
    pub(crate) fn text(&self) -> &str {
        match self {
            Tok::Ident(s) | Tok::Nat(s) => s,
            Tok::Punct(p) => p,
        }
    }

    /// Whether this is the punctuation `p`.
    pub(crate) fn is(&self, p: &str) -> bool {
        matches!(self, Tok::Punct(q) if *q == p)
    }
}

/// A token and where it starts.
#[derive(Clone, Debug)]
pub(crate) struct Token {
    pub(crate) tok: Tok,
    pub(crate) pos: Pos,
}

/// Reads `text` into tokens.
pub(crate) fn tokens(text: &str) -> Result<Vec<Token>, RbgError> {
    if text.len() > MAX_TEXT {
        let reason = format!(
            "the text has {} bytes, more than the limit {MAX_TEXT}",
            text.len()
        );
        return Err(RbgError::new(
            ErrorKind::RulesTooLarge,
            Pos { line: 1, column: 1 },
            reason,
        ));
    }
    let mut lexer = Lexer {
        chars: text.chars().collect(),
        at: 0,
        pos: Pos { line: 1, column: 1 },
    };
    let mut out = Vec::new();
    while let Some(token) = lexer.next_token()? {
        out.push(token);
    }
    Ok(out)
}

struct Lexer {
    chars: Vec<char>,
    at: usize,
    pos: Pos,
}

impl Lexer {
    fn peek(&self, k: usize) -> Option<char> {
        self.chars.get(self.at + k).copied()
    }

    fn bump(&mut self) {
        if self.chars[self.at] == '\n' {
            self.pos.line += 1;
            self.pos.column = 1;
        } else {
            self.pos.column += 1;
        }
        self.at += 1;
    }

    /// Skips whitespace and comments.
    fn skip(&mut self) -> Result<(), RbgError> {
        loop {
            match (self.peek(0), self.peek(1)) {
                (Some(c), _) if c.is_whitespace() => self.bump(),
                (Some('/'), Some('/')) => {
                    while self.peek(0).is_some_and(|c| c != '\n') {
                        self.bump();
                    }
                }
                (Some('/'), Some('*')) => {
                    let start = self.pos;
                    self.bump();
                    self.bump();
                    while !(self.peek(0) == Some('*') && self.peek(1) == Some('/')) {
                        if self.peek(0).is_none() {
                            return Err(RbgError::new(ErrorKind::BadToken, start, "unterminated comment"));
                        }
                        self.bump();
                    }
                    self.bump();
                    self.bump();
                }
                _ => return Ok(()),
            }
        }
    }

    fn next_token(&mut self) -> Result<Option<Token>, RbgError> {
        self.skip()?;
        let pos = self.pos;
        let Some(c) = self.peek(0) else {
            return Ok(None);
        };
        let start = self.at;
        let tok = if c.is_ascii_alphabetic() || c.is_ascii_digit() {
            while self.peek(0).is_some_and(|c| c.is_ascii_alphanumeric()) {
                if c.is_ascii_digit() && !self.peek(0).is_some_and(|c| c.is_ascii_digit()) {
                    break;
                }
                self.bump();
            }
            let word: String = self.chars[start..self.at].iter().collect();
            if c.is_ascii_digit() {
                Tok::Nat(word.into())
            } else {
                Tok::Ident(word.into())
            }
        } else {
            let rest = &self.chars[self.at..];
            let found = PUNCT
                .iter()
                .find(|p| p.chars().count() <= rest.len() && p.chars().zip(rest).all(|(a, b)| a == *b));
            let Some(p) = found else {
                return Err(RbgError::new(
                    ErrorKind::BadToken,
                    pos,
                    format!("unexpected character '{c}'"),
                ));
            };
            for _ in 0..p.len() {
                self.bump();
            }
            Tok::Punct(p)
        };
        Ok(Some(Token { tok, pos }))
    }
}

/// Reads `text` as exactly one identifier or natural number (the result of a
/// `~` paste), if it is one.
pub(crate) fn single_word(text: &str) -> Option<Tok> {
    let mut chars = text.chars();
    let first = chars.next()?;
    if first.is_ascii_alphabetic() && text.chars().all(|c| c.is_ascii_alphanumeric()) {
        Some(Tok::Ident(text.into()))
    } else if text.chars().all(|c| c.is_ascii_digit()) {
        Some(Tok::Nat(text.into()))
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(s: &str) -> Vec<String> {
        tokens(s)
            .unwrap()
            .iter()
            .map(|t| t.tok.text().to_string())
            .collect()
    }

    #[test]
    fn greedy_tokens_and_comments() {
        assert_eq!(
            texts("->>x ->y {?a} [$ v=1]"),
            ["->>", "x", "->", "y", "{?", "a", "}", "[$", "v", "=", "1", "]"]
        );
        assert_eq!(texts("-> /**/ > // c\n a1 12b"), ["->", ">", "a1", "12", "b"]);
        assert_eq!(texts("{$ a<=b != c}"), ["{$", "a", "<=", "b", "!=", "c", "}"]);
    }

    #[test]
    fn errors_name_the_place() {
        let e = tokens("a\n  %").unwrap_err();
        assert_eq!((e.kind(), e.line(), e.column()), (ErrorKind::BadToken, 2, 3));
        let e = tokens("a /* b").unwrap_err();
        assert_eq!((e.kind(), e.line(), e.column()), (ErrorKind::BadToken, 1, 3));
    }
}
