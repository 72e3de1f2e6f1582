//! Tokens of KIF, recognized with nom: parentheses, symbols, variables.
//!
//! Whitespace and `;` comments (to the end of the line) separate tokens.

use nom::branch::alt;
use nom::bytes::complete::{take_till, take_while1};
use nom::character::complete::{char, multispace1};
use nom::combinator::{map, recognize};
use nom::multi::many0_count;
use nom::sequence::preceded;
use nom::IResult;

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

fn is_symbol_char(c: char) -> bool {
    !(c.is_whitespace() || c == '(' || c == ')' || c == ';')
}

fn comment(input: &str) -> IResult<&str, &str> {
    recognize(preceded(char(';'), take_till(|c| c == '\n')))(input)
}

/// Skips whitespace and comments.
fn skip(input: &str) -> IResult<&str, usize> {
    many0_count(alt((multispace1, comment)))(input)
}

fn token(input: &str) -> IResult<&str, Token<'_>> {
    alt((
        map(char('('), |_| Token::Open),
        map(char(')'), |_| Token::Close),
        map(take_while1(is_symbol_char), Token::Symbol),
    ))(input)
}

/// Splits `source` into tokens with their byte offsets.
///
/// Every character is either part of a token, whitespace, or a comment, so
/// tokenizing cannot fail.
pub fn tokenize(source: &str) -> Vec<(usize, Token<'_>)> {
    let mut tokens = Vec::new();
    let mut rest = source;
    loop {
        if let Ok((after, _)) = skip(rest) {
            rest = after;
        }
        if rest.is_empty() {
            return tokens;
        }
        let offset = source.len() - rest.len();
        match token(rest) {
            Ok((after, tok)) => {
                tokens.push((offset, tok));
                rest = after;
            }
            // Unreachable by construction (every non-space character starts a token),
            // but never loop forever on surprising input.
            Err(_) => return tokens,
        }
    }
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
}
