//! Tokens of KIF: parentheses, symbols, variables.
//!
//! Every Unicode whitespace character and `;` comments (to the end of the line,
//! whichever of `\n`, `\r\n` or `\r` ends it) separate tokens. The scanner is total: each step consumes at least one
//! character, so every input tokenizes completely.

/// One token and the byte offset where it starts.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Token<'a> {
    /// `(`
    Open,
    /// `)`
    Close,
    /// Any other run of characters: a name, a number, `<=`, or a `?variable`.
    Symbol(&'a str),
}

/// The characters that end a line: `\n`, `\r` (alone, as in old Mac files) and
/// both of `\r\n`.
pub(crate) const LINE_ENDS: [char; 2] = ['\n', '\r'];

fn is_symbol_char(c: char) -> bool {
    !(c.is_whitespace() || c == '(' || c == ')' || c == ';')
}

/// Splits `source` into tokens with their byte offsets.
///
/// Every character is part of a token, whitespace, or a comment, so tokenizing
/// cannot fail and never stops before the end of `source`.
pub fn tokenize(source: &str) -> Vec<(usize, Token<'_>)> {
    let mut tokens = Vec::new();
    let mut at = 0;
    while let Some(c) = source[at..].chars().next() {
        let rest = &source[at..];
        let len = match c {
            '(' | ')' => {
                tokens.push((at, if c == '(' { Token::Open } else { Token::Close }));
                1
            }
            ';' => rest.find(LINE_ENDS).unwrap_or(rest.len()),
            c if c.is_whitespace() => c.len_utf8(),
            _ => {
                let len = rest.find(|c| !is_symbol_char(c)).unwrap_or(rest.len());
                tokens.push((at, Token::Symbol(&rest[..len])));
                len
            }
        };
        at += len;
    }
    tokens
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_and_comments() {
        let toks: Vec<_> = tokenize("(<= (p ?x) ; comment ( \n (q ?x))")
            .into_iter()
            .map(|(_, t)| t)
            .collect();
        assert_eq!(
            toks,
            vec![
                Token::Open,
                Token::Symbol("<="),
                Token::Open,
                Token::Symbol("p"),
                Token::Symbol("?x"),
                Token::Close,
                Token::Open,
                Token::Symbol("q"),
                Token::Symbol("?x"),
                Token::Close,
                Token::Close
            ]
        );
    }

    #[test]
    fn offsets_point_at_tokens() {
        let toks = tokenize("  (a)");
        assert_eq!(toks[0].0, 2);
        assert_eq!(toks[1], (3, Token::Symbol("a")));
    }

    /// Every Unicode whitespace separates tokens, and what follows it is read.
    #[test]
    fn every_unicode_whitespace_separates_tokens() {
        for space in ['\u{0B}', '\u{0C}', '\u{85}', '\u{A0}', '\u{2028}', '\u{3000}'] {
            let source = format!("(a{space}b){space}(c)");
            let toks: Vec<_> = tokenize(&source).into_iter().map(|(_, t)| t).collect();
            assert_eq!(
                toks,
                vec![
                    Token::Open,
                    Token::Symbol("a"),
                    Token::Symbol("b"),
                    Token::Close,
                    Token::Open,
                    Token::Symbol("c"),
                    Token::Close
                ],
                "separator U+{:04X}",
                space as u32
            );
        }
    }

    /// A comment runs to the end of its line only; one at the end of input ends it.
    #[test]
    fn comments_end_at_newline_or_input_end() {
        let toks: Vec<_> = tokenize("a ; b\u{0C} c\nd ; e")
            .into_iter()
            .map(|(_, t)| t)
            .collect();
        assert_eq!(toks, vec![Token::Symbol("a"), Token::Symbol("d")]);
    }

    /// A comment ends at `\r` alone and at `\r\n` as at `\n`.
    #[test]
    fn comments_end_at_every_line_ending() {
        for end in ["\n", "\r\n", "\r"] {
            let source = format!("a ; b{end}c ; d{end}{end}e");
            let toks: Vec<_> = tokenize(&source).into_iter().map(|(_, t)| t).collect();
            let expected = vec![Token::Symbol("a"), Token::Symbol("c"), Token::Symbol("e")];
            assert_eq!(toks, expected, "{end:?}");
        }
    }
}
