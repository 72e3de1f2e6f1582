//! High-level RBG's macro system: `#name = tokens` and `#name(a; b) = tokens`
//! definitions interleaved with the five sections; every later occurrence is
//! replaced (a macro sees only the macros defined before it, so expansion
//! always ends); `~` pastes two tokens into one. A macro referring to itself,
//! directly or through others, is rejected as [`ErrorKind::MacroRecursion`].

use crate::error::{ErrorKind, Pos, RbgError};
use crate::lexer::{single_word, Tok, Token};
use std::collections::HashMap;
use std::rc::Rc;

/// The most tokens all expansions together may produce.
pub(crate) const MAX_EXPANDED_TOKENS: usize = 2_000_000;
/// The deepest nesting of macro instantiations.
pub(crate) const MAX_MACRO_DEPTH: usize = 200;

/// The names of the sections, which no macro may take.
pub(crate) const SECTIONS: [&str; 5] = ["board", "players", "pieces", "variables", "rules"];

/// One section after macro expansion: its tokens, and where its `#` is.
#[derive(Clone, Debug, Default)]
pub(crate) struct Section {
    pub(crate) tokens: Vec<Token>,
    pub(crate) pos: Pos,
}

struct Macro {
    name: Rc<str>,
    params: Option<Vec<Rc<str>>>,
    body: Vec<Token>,
    pos: Pos,
}

/// Splits the text's tokens into definitions and expands the five sections,
/// returned in the order of [`SECTIONS`].
pub(crate) fn expand_sections(tokens: Vec<Token>) -> Result<[Section; 5], RbgError> {
    let mut macros: Vec<Macro> = Vec::new();
    let mut raw: [Option<(Vec<Token>, Pos, usize)>; 5] = Default::default();
    let mut rest = &tokens[..];
    if let Some(first) = rest.first().filter(|t| !t.tok.is("#")) {
        return Err(syntax(
            first.pos,
            "expected '#' starting a section or a macro",
            &first.tok,
        ));
    }
    while let Some(hash) = rest.first() {
        let end = rest[1..]
            .iter()
            .position(|t| t.tok.is("#"))
            .map_or(rest.len(), |k| k + 1);
        let (def, after) = rest.split_at(end);
        rest = after;
        let Some(Token {
            tok: Tok::Ident(name),
            pos,
        }) = def.get(1)
        else {
            return Err(RbgError::new(
                ErrorKind::Syntax,
                hash.pos,
                "expected a name after '#'",
            ));
        };
        if let Some(k) = SECTIONS.iter().position(|s| **s == **name) {
            if def.get(2).is_none_or(|t| !t.tok.is("=")) {
                return Err(RbgError::new(
                    ErrorKind::Syntax,
                    *pos,
                    format!("expected '=' after #{name}"),
                ));
            }
            if raw[k].is_some() {
                return Err(RbgError::new(
                    ErrorKind::Section,
                    *pos,
                    format!("section #{name} given twice"),
                ));
            }
            raw[k] = Some((def[3..].to_vec(), hash.pos, macros.len()));
        } else {
            macros.push(definition(name.clone(), *pos, &def[2..])?);
        }
    }
    let index = check_definitions(&macros)?;
    check_recursion(&macros, &index)?;
    let mut expander = Expander {
        macros: &macros,
        index,
        produced: 0,
    };
    let mut out: [Section; 5] = Default::default();
    for (k, slot) in raw.into_iter().enumerate() {
        let Some((body, pos, scope)) = slot else {
            let reason = format!("section #{} is missing", SECTIONS[k]);
            return Err(RbgError::new(
                ErrorKind::Section,
                Pos { line: 1, column: 1 },
                reason,
            ));
        };
        out[k] = Section {
            tokens: expander.expand(&body, scope, 0)?,
            pos,
        };
    }
    Ok(out)
}

fn syntax(pos: Pos, expected: &str, found: &Tok) -> RbgError {
    RbgError::new(
        ErrorKind::Syntax,
        pos,
        format!("{expected}, found '{}'", found.text()),
    )
}

/// Reads one macro definition after its name: optional parameters, `=`, body.
fn definition(name: Rc<str>, pos: Pos, def: &[Token]) -> Result<Macro, RbgError> {
    let mut at = 0;
    let mut params = None;
    if def.first().is_some_and(|t| t.tok.is("(")) {
        let mut list = Vec::new();
        at = 1;
        loop {
            match def.get(at) {
                Some(Token {
                    tok: Tok::Ident(p),
                    pos,
                }) => {
                    if list.contains(p) {
                        return Err(RbgError::new(
                            ErrorKind::Duplicate,
                            *pos,
                            format!("parameter {p} twice"),
                        ));
                    }
                    list.push(p.clone());
                }
                Some(t) => return Err(syntax(t.pos, "expected a parameter name", &t.tok)),
                None => {
                    return Err(RbgError::new(
                        ErrorKind::Syntax,
                        pos,
                        "unfinished macro parameters",
                    ))
                }
            }
            match def.get(at + 1) {
                Some(t) if t.tok.is(";") => at += 2,
                Some(t) if t.tok.is(")") => break,
                Some(t) => return Err(syntax(t.pos, "expected ';' or ')'", &t.tok)),
                None => {
                    return Err(RbgError::new(
                        ErrorKind::Syntax,
                        pos,
                        "unfinished macro parameters",
                    ))
                }
            }
        }
        at += 2;
        params = Some(list);
    }
    match def.get(at) {
        Some(t) if t.tok.is("=") => {}
        Some(t) => {
            return Err(syntax(
                t.pos,
                &format!("expected '=' in the definition of {name}"),
                &t.tok,
            ))
        }
        None => {
            return Err(RbgError::new(
                ErrorKind::Syntax,
                pos,
                format!("expected '=' after #{name}"),
            ))
        }
    }
    Ok(Macro {
        name,
        params,
        body: def[at + 1..].to_vec(),
        pos,
    })
}

/// Macro indices by name; rejects two definitions with the same name and arity,
/// or one with and one without parameters.
fn check_definitions(macros: &[Macro]) -> Result<HashMap<Rc<str>, Vec<usize>>, RbgError> {
    let mut index: HashMap<Rc<str>, Vec<usize>> = HashMap::new();
    for (k, m) in macros.iter().enumerate() {
        let same = index.entry(m.name.clone()).or_default();
        let arity = m.params.as_ref().map(Vec::len);
        for &other in same.iter() {
            let other_arity = macros[other].params.as_ref().map(Vec::len);
            if other_arity == arity || other_arity.is_none() || arity.is_none() {
                let reason = format!("macro {} defined twice (with clashing parameters)", m.name);
                return Err(RbgError::new(ErrorKind::Duplicate, m.pos, reason));
            }
        }
        same.push(k);
    }
    Ok(index)
}

/// The number of `;`-separated arguments in `toks`, which start just after a
/// `(`, if the parenthesis is closed.
fn count_args(toks: &[Token]) -> Option<(usize, usize)> {
    let (mut depth, mut args) = (0usize, 1);
    for (k, t) in toks.iter().enumerate() {
        if t.tok.is("(") {
            depth += 1;
        } else if t.tok.is(")") {
            if depth == 0 {
                return Some((args, k));
            }
            depth -= 1;
        } else if t.tok.is(";") && depth == 0 {
            args += 1;
        }
    }
    None
}

/// Rejects a cycle among the macros' references to each other.
fn check_recursion(macros: &[Macro], index: &HashMap<Rc<str>, Vec<usize>>) -> Result<(), RbgError> {
    let edges: Vec<Vec<(usize, Pos)>> = macros
        .iter()
        .map(|m| {
            let mut out = Vec::new();
            for (k, t) in m.body.iter().enumerate() {
                let Tok::Ident(name) = &t.tok else { continue };
                if m.params.as_ref().is_some_and(|p| p.contains(name)) {
                    continue;
                }
                let Some(cands) = index.get(name) else { continue };
                let called = if m.body.get(k + 1).is_some_and(|t| t.tok.is("(")) {
                    count_args(&m.body[k + 2..]).map(|(n, _)| n)
                } else {
                    None
                };
                let hit = cands.iter().find(|&&c| match &macros[c].params {
                    None => true,
                    Some(p) => Some(p.len()) == called,
                });
                if let Some(&c) = hit {
                    out.push((c, t.pos));
                }
            }
            out
        })
        .collect();
    // Iterative depth-first search with colours: 0 new, 1 on the path, 2 done.
    let mut colour = vec![0u8; macros.len()];
    for root in 0..macros.len() {
        if colour[root] != 0 {
            continue;
        }
        let mut stack = vec![(root, 0usize)];
        colour[root] = 1;
        while let Some(&mut (m, ref mut next)) = stack.last_mut() {
            if let Some(&(to, pos)) = edges[m].get(*next) {
                *next += 1;
                match colour[to] {
                    0 => {
                        colour[to] = 1;
                        stack.push((to, 0));
                    }
                    1 => {
                        let reason = format!(
                            "macro {} refers to {} recursively",
                            macros[m].name, macros[to].name
                        );
                        return Err(RbgError::new(ErrorKind::MacroRecursion, pos, reason));
                    }
                    _ => {}
                }
            } else {
                colour[m] = 2;
                stack.pop();
            }
        }
    }
    Ok(())
}

struct Expander<'a> {
    macros: &'a [Macro],
    index: HashMap<Rc<str>, Vec<usize>>,
    produced: usize,
}

impl Expander<'_> {
    /// Expands `toks` where the macros `0..scope` are visible.
    fn expand(&mut self, toks: &[Token], scope: usize, depth: usize) -> Result<Vec<Token>, RbgError> {
        if depth > MAX_MACRO_DEPTH {
            let pos = toks.first().map_or_else(Pos::default, |t| t.pos);
            let reason = format!("macro instantiations nested deeper than {MAX_MACRO_DEPTH}");
            return Err(RbgError::new(ErrorKind::MacroTooLarge, pos, reason));
        }
        let toks = paste(toks)?;
        let mut out = Vec::with_capacity(toks.len());
        let mut k = 0;
        while k < toks.len() {
            let t = &toks[k];
            k += 1;
            let Tok::Ident(name) = &t.tok else {
                out.push(t.clone());
                continue;
            };
            let cands: Vec<usize> = self
                .index
                .get(name)
                .map(|c| c.iter().copied().filter(|&c| c < scope).collect())
                .unwrap_or_default();
            if let Some(&m) = cands.iter().find(|&&m| self.macros[m].params.is_none()) {
                let body = self.macros[m].body.clone();
                out.extend(self.expand(&body, m, depth + 1)?);
            } else if !cands.is_empty() && toks.get(k).is_some_and(|t| t.tok.is("(")) {
                let (args, end) = split_args(&toks[k + 1..], t.pos)?;
                let m = cands.iter().copied().find(|&m| {
                    self.macros[m]
                        .params
                        .as_ref()
                        .is_some_and(|p| p.len() == args.len())
                });
                let Some(m) = m else {
                    let reason = format!("macro {name} has no definition with {} arguments", args.len());
                    return Err(RbgError::new(ErrorKind::MacroUse, t.pos, reason));
                };
                k += end + 2;
                let mut values = Vec::with_capacity(args.len());
                for arg in args {
                    values.push(self.expand(arg, scope, depth + 1)?);
                }
                let body = substitute(
                    self.macros[m].params.as_deref().unwrap_or(&[]),
                    &self.macros[m].body,
                    &values,
                );
                out.extend(self.expand(&body, m, depth + 1)?);
            } else {
                out.push(t.clone());
            }
            self.produced += 1;
        }
        self.produced += out.len();
        if self.produced > MAX_EXPANDED_TOKENS {
            let pos = toks.first().map_or_else(Pos::default, |t| t.pos);
            let reason = format!("macro expansion produces more than {MAX_EXPANDED_TOKENS} tokens");
            return Err(RbgError::new(ErrorKind::MacroTooLarge, pos, reason));
        }
        Ok(out)
    }
}

/// The arguments of a call, `toks` starting after its `(`: the slices between
/// `;` at depth 0, and the index of the closing `)`.
fn split_args(toks: &[Token], pos: Pos) -> Result<(Vec<&[Token]>, usize), RbgError> {
    let Some((_, end)) = count_args(toks) else {
        return Err(RbgError::new(
            ErrorKind::Syntax,
            pos,
            "macro call without its closing ')'",
        ));
    };
    let mut args = Vec::new();
    let (mut depth, mut start) = (0usize, 0);
    for (k, t) in toks[..end].iter().enumerate() {
        if t.tok.is("(") {
            depth += 1;
        } else if t.tok.is(")") {
            depth -= 1;
        } else if t.tok.is(";") && depth == 0 {
            args.push(&toks[start..k]);
            start = k + 1;
        }
    }
    args.push(&toks[start..end]);
    Ok((args, end))
}

/// The body with every parameter replaced by its value.
fn substitute(params: &[Rc<str>], body: &[Token], values: &[Vec<Token>]) -> Vec<Token> {
    let mut out = Vec::with_capacity(body.len());
    for t in body {
        match &t.tok {
            Tok::Ident(name) => match params.iter().position(|p| p == name) {
                Some(k) => out.extend(values[k].iter().cloned()),
                None => out.push(t.clone()),
            },
            _ => out.push(t.clone()),
        }
    }
    out
}

/// Joins `a ~ b` into one token; the result must be an identifier or a number.
fn paste(toks: &[Token]) -> Result<Vec<Token>, RbgError> {
    if !toks.iter().any(|t| t.tok.is("~")) {
        return Ok(toks.to_vec());
    }
    let mut out: Vec<Token> = Vec::with_capacity(toks.len());
    let mut k = 0;
    while k < toks.len() {
        let t = &toks[k];
        if t.tok.is("~") {
            let (Some(left), Some(right)) = (out.pop(), toks.get(k + 1)) else {
                return Err(RbgError::new(
                    ErrorKind::MacroUse,
                    t.pos,
                    "'~' needs a token on each side",
                ));
            };
            let text = format!("{}{}", left.tok.text(), right.tok.text());
            let Some(tok) = single_word(&text) else {
                let reason = format!("'~' pastes '{text}', which is not one identifier or number");
                return Err(RbgError::new(ErrorKind::MacroUse, t.pos, reason));
            };
            out.push(Token { tok, pos: left.pos });
            k += 2;
        } else {
            out.push(t.clone());
            k += 1;
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lexer::tokens;

    fn rules_of(text: &str) -> Result<String, RbgError> {
        let full = format!("#board = x #players = x #pieces = x #variables = {text}");
        let s = expand_sections(tokens(&full)?)?;
        Ok(s[4]
            .tokens
            .iter()
            .map(|t| t.tok.text())
            .collect::<Vec<_>>()
            .join(" "))
    }

    #[test]
    fn the_papers_examples() {
        let t =
            "#m0 = m1 #m1 = x #m2 = m1 #m3(a; b) = a + b #m4 = m3(x; y) #m5 = m3(;) #m6 = m3 #m7 = m1(x) \
                 #rules = m0 | m2 | m4 | m5 | m6 | m7";
        // '|' is not a token: use ','.
        let t = t.replace('|', ",");
        assert_eq!(rules_of(&t).unwrap(), "m1 , x , x + y , + , m3 , x ( x )");
        let t = "#n1 = x~y #n3(a; b) = a~b #rules = n1 n3(x; y) n3(1; 2) n3(x~y; z)";
        assert_eq!(rules_of(t).unwrap(), "xy xy 12 xyz");
        assert_eq!(
            rules_of("#p(a) = a #p(a; b) = b a #rules = p(1) p(1; 2)").unwrap(),
            "1 2 1"
        );
    }

    #[test]
    fn bad_macros() {
        assert_eq!(
            rules_of("#m3(a; b) = a~b #rules = m3(8; y)").unwrap_err().kind(),
            ErrorKind::MacroUse
        );
        assert_eq!(
            rules_of("#m = x m #rules = m").unwrap_err().kind(),
            ErrorKind::MacroRecursion
        );
        let e = rules_of("#a(x) = b(x) #b(y) = a(y) #rules = a(1)").unwrap_err();
        assert_eq!(e.kind(), ErrorKind::MacroRecursion);
        assert_eq!(
            rules_of("#m(a) = a #m = b #rules = m").unwrap_err().kind(),
            ErrorKind::Duplicate
        );
        assert_eq!(
            rules_of("#m(a) = a #rules = m(1;2)").unwrap_err().kind(),
            ErrorKind::MacroUse
        );
        let mut big = String::from("#a0 = x x x x");
        for k in 1..20 {
            big += &format!(" #a{k} = a{0} a{0} a{0} a{0}", k - 1);
        }
        big += " #rules = a19";
        assert_eq!(rules_of(&big).unwrap_err().kind(), ErrorKind::MacroTooLarge);
    }
}
