//! Scrambled games, as ggp-base's game server sends them: every symbol of the
//! rules other than a keyword, `distinct`, `not`, `or`, `<=` and an integer is
//! replaced by a made-up word, consistently (roles and moves too), so that a
//! player can only work from the rules it is given.

use crate::propnet::random::Stream;
use ggpnet_kif::SExpr;
use std::collections::HashMap;

/// Symbols that keep their name.
const KEPT: [&str; 16] = [
    "role", "init", "true", "next", "legal", "does", "goal", "terminal", "base", "input", "random",
    "distinct", "not", "or", "<=", "sees",
];

/// A one-to-one renaming of a game's symbols.
#[derive(Clone, Debug)]
pub struct Scrambler {
    forward: HashMap<String, String>,
    /// Keys in lower case: players may change the case.
    backward: HashMap<String, String>,
}

impl Scrambler {
    /// A renaming of every symbol of `rules` (KIF), drawn from `seed`.
    pub fn new(rules: &str, seed: u64) -> Result<Scrambler, String> {
        let exprs = ggpnet_kif::sexprs(rules).map_err(|e| e.to_string())?;
        let mut symbols = Vec::new();
        let mut stack: Vec<&SExpr<'_>> = exprs.iter().collect();
        while let Some(expr) = stack.pop() {
            match expr {
                SExpr::Symbol(s, _) if !kept(s) => symbols.push(*s),
                SExpr::Symbol(..) => {}
                SExpr::List(items, _) => stack.extend(items),
            }
        }
        symbols.sort_unstable();
        symbols.dedup();
        let mut rng = Stream::new(seed, 0);
        let mut forward = HashMap::new();
        let mut backward = HashMap::new();
        for symbol in symbols {
            let word = loop {
                let word = made_up_word(&mut rng);
                let word = match symbol.starts_with('?') {
                    true => format!("?{word}"),
                    false => word,
                };
                if !backward.contains_key(&word) && !kept(&word) {
                    break word;
                }
            };
            backward.insert(word.clone(), symbol.to_owned());
            forward.insert(symbol.to_owned(), word);
        }
        Ok(Scrambler { forward, backward })
    }

    /// `text` (KIF) with every symbol renamed; text that does not parse is kept as is.
    pub fn scramble(&self, text: &str) -> String {
        self.rename(text, |s| self.forward.get(s).cloned())
    }

    /// `text` (KIF) with the renaming undone (symbols matched in any case).
    pub fn unscramble(&self, text: &str) -> String {
        self.rename(text, |s| self.backward.get(&s.to_lowercase()).cloned())
    }

    fn rename(&self, text: &str, name: impl Fn(&str) -> Option<String>) -> String {
        let Ok(exprs) = ggpnet_kif::sexprs(text) else {
            return text.to_owned();
        };
        let mut out = String::new();
        for (i, expr) in exprs.iter().enumerate() {
            if i > 0 {
                out.push(' ');
            }
            write_renamed(expr, &name, &mut out);
        }
        out
    }
}

/// Writes `expr` with its symbols renamed; nesting is bounded by the reader.
fn write_renamed(expr: &SExpr<'_>, name: &impl Fn(&str) -> Option<String>, out: &mut String) {
    match expr {
        SExpr::Symbol(s, _) => out.push_str(&name(s).unwrap_or_else(|| (*s).to_owned())),
        SExpr::List(items, _) => {
            out.push('(');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(' ');
                }
                write_renamed(item, name, out);
            }
            out.push(')');
        }
    }
}

fn kept(symbol: &str) -> bool {
    KEPT.iter().any(|k| k.eq_ignore_ascii_case(symbol)) || symbol.parse::<i64>().is_ok()
}

/// A pronounceable word of two to four syllables.
fn made_up_word(rng: &mut Stream) -> String {
    const ONSETS: [&str; 16] = [
        "b", "d", "f", "g", "k", "l", "m", "n", "p", "r", "s", "t", "v", "z", "br", "st",
    ];
    const VOWELS: [&str; 6] = ["a", "e", "i", "o", "u", "ou"];
    let syllables = 2 + rng.draw(3);
    (0..syllables)
        .map(|_| {
            format!(
                "{}{}",
                ONSETS[rng.draw(ONSETS.len())],
                VOWELS[rng.draw(VOWELS.len())]
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renames_all_but_keywords_and_numbers_and_undoes_it() {
        let rules =
            "(role xplayer) (<= (legal ?p (mark ?x 1)) (true (cell ?x 1 b)) (not (distinct ?p xplayer)))";
        let s = Scrambler::new(rules, 3).unwrap();
        let scrambled = s.scramble(rules);
        for gone in ["xplayer", "mark", "cell", "?p", "?x"] {
            assert!(!scrambled.contains(gone), "{scrambled}");
        }
        for kept in ["role", "legal", "true", "not", "distinct", " 1"] {
            assert!(scrambled.contains(kept), "{scrambled}");
        }
        assert_eq!(
            s.unscramble(&scrambled),
            ggpnet_kif::sexprs(rules)
                .unwrap()
                .iter()
                .map(|e| e.to_string())
                .collect::<Vec<_>>()
                .join(" ")
        );
        let m = s.scramble("(mark 3 1)");
        assert_eq!(s.unscramble(&m.to_uppercase()), "(mark 3 1)");
        assert_eq!(s.unscramble("((("), "(((");
    }
}
