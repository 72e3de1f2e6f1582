//! The rules compiled once into a position automaton (Glushkov's construction,
//! which the paper's indexing of action occurrences describes: after the
//! occurrence `a_i` the rest of the rules is the same whatever came before,
//! Proposition 1). A state is a start (of the rules, or of a pattern's
//! expression) or an action occurrence; every transition into occurrence `i`
//! performs action `a_i`. Patterns' expressions get their own start states.

use crate::error::{ErrorKind, Pos, RbgError};
use crate::syntax::{Action, Cmp, Expr, Re};

/// The most transitions the automaton may have.
pub const MAX_TRANSITIONS: usize = 1 << 25;

/// What entering a state does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Act {
    /// A start state: entered by no transition.
    Start,
    Shift(u16),
    /// Offset into [`Automaton::on`] of the flags of the pieces accepted.
    On(u32),
    Off(u16),
    /// Variable and index into [`Automaton::exprs`].
    Assign(u16, u32),
    Compare(u32, Cmp, u32),
    /// Pattern expression (index into [`Automaton::starts`]) and whether it is `{? }`.
    Pattern(u32, bool),
    /// 0 for the keeper, `p + 1` for the player `p`.
    Switch(u16),
}

/// The compiled rules.
#[derive(Clone, Debug, Default)]
pub(crate) struct Automaton {
    pub(crate) acts: Vec<Act>,
    /// Transitions of state `s`: `targets[offsets[s]..offsets[s + 1]]`.
    pub(crate) offsets: Vec<u32>,
    pub(crate) targets: Vec<u32>,
    /// Whether the expression the state belongs to may end in it.
    pub(crate) accept: Vec<bool>,
    /// Start state of every expression: 0 the rules, then the patterns'.
    pub(crate) starts: Vec<u32>,
    /// The pieces ons accept: one flag per piece for each on, one after the other.
    pub(crate) on: Vec<bool>,
    pub(crate) exprs: Vec<Expr>,
    /// The deepest nesting of patterns.
    pub(crate) pattern_depth: usize,
    /// Where each state's action is written (the start of its expression for a start state).
    pub(crate) pos: Vec<Pos>,
}

impl Automaton {
    /// The targets of the transitions out of `s`.
    #[inline]
    pub(crate) fn next(&self, s: u32) -> &[u32] {
        &self.targets[self.offsets[s as usize] as usize..self.offsets[s as usize + 1] as usize]
    }
}

/// Nullable, first and last of a subexpression.
struct Info {
    nullable: bool,
    first: Vec<u32>,
    last: Vec<u32>,
}

struct Builder {
    a: Automaton,
    follow: Vec<Vec<u32>>,
    size: usize,
}

/// Compiles the rules; `bounds` are the variables' bounds.
pub(crate) fn compile(rules: &Re, bounds: &[i64]) -> Result<Automaton, RbgError> {
    check_stars(rules, bounds)?;
    let mut b = Builder {
        a: Automaton::default(),
        follow: Vec::new(),
        size: 0,
    };
    b.expression(rules, 0)?;
    let mut a = b.a;
    // Deduplicate each state's targets, keeping the first occurrence's order.
    let mut seen = vec![u32::MAX; a.acts.len()];
    a.offsets.push(0);
    for (s, list) in b.follow.iter().enumerate() {
        for &t in list {
            if seen[t as usize] != s as u32 {
                seen[t as usize] = s as u32;
                a.targets.push(t);
            }
        }
        a.offsets.push(a.targets.len() as u32);
    }
    Ok(a)
}

impl Builder {
    fn state(&mut self, act: Act, pos: Pos) -> u32 {
        self.a.acts.push(act);
        self.a.pos.push(pos);
        self.a.accept.push(false);
        self.follow.push(Vec::new());
        (self.a.acts.len() - 1) as u32
    }

    fn link(&mut self, from: &[u32], to: &[u32], pos: Pos) -> Result<(), RbgError> {
        self.size += from.len() * to.len();
        if self.size > MAX_TRANSITIONS {
            let reason = format!("the rules' automaton has more than {MAX_TRANSITIONS} transitions");
            return Err(RbgError::new(ErrorKind::RulesTooLarge, pos, reason));
        }
        for &f in from {
            self.follow[f as usize].extend_from_slice(to);
        }
        Ok(())
    }

    /// Compiles a whole expression (the rules, `depth` 0, or a pattern's) with
    /// its own start state; returns the expression's index.
    fn expression(&mut self, re: &Re, depth: usize) -> Result<u32, RbgError> {
        self.a.pattern_depth = self.a.pattern_depth.max(depth);
        let start = self.state(Act::Start, first_pos(re));
        let id = self.a.starts.len() as u32;
        self.a.starts.push(start);
        let info = self.glushkov(re, depth)?;
        self.link(&[start], &info.first, first_pos(re))?;
        for &l in &info.last {
            self.a.accept[l as usize] = true;
        }
        self.a.accept[start as usize] = info.nullable;
        Ok(id)
    }

    fn action(&mut self, action: &Action, pos: Pos, depth: usize) -> Result<Act, RbgError> {
        let expr = |b: &mut Builder, e: &Expr| {
            b.a.exprs.push(e.clone());
            (b.a.exprs.len() - 1) as u32
        };
        Ok(match action {
            Action::Shift(d) => Act::Shift(*d),
            Action::On(set) => {
                self.a.on.extend_from_slice(set);
                Act::On((self.a.on.len() - set.len()) as u32)
            }
            Action::Off(p) => Act::Off(*p),
            Action::Assign(v, e) => Act::Assign(*v, expr(self, e)),
            Action::Compare(l, op, r) => Act::Compare(expr(self, l), *op, expr(self, r)),
            Action::Switch(p) => {
                if depth > 0 {
                    return Err(RbgError::new(
                        ErrorKind::IllFormed,
                        pos,
                        "a switch inside a pattern",
                    ));
                }
                Act::Switch(p.map_or(0, |p| p + 1))
            }
            Action::Pattern(positive, inner) => Act::Pattern(self.expression(inner, depth + 1)?, *positive),
        })
    }

    fn glushkov(&mut self, re: &Re, depth: usize) -> Result<Info, RbgError> {
        Ok(match re {
            Re::Act(action, pos) => {
                let act = self.action(action, *pos, depth)?;
                let s = self.state(act, *pos);
                Info {
                    nullable: false,
                    first: vec![s],
                    last: vec![s],
                }
            }
            Re::Sum(items) => {
                let mut out = Info {
                    nullable: false,
                    first: Vec::new(),
                    last: Vec::new(),
                };
                for item in items {
                    let i = self.glushkov(item, depth)?;
                    out.nullable |= i.nullable;
                    out.first.extend(i.first);
                    out.last.extend(i.last);
                }
                out
            }
            Re::Concat(items) => {
                let mut out = Info {
                    nullable: true,
                    first: Vec::new(),
                    last: Vec::new(),
                };
                for item in items {
                    let i = self.glushkov(item, depth)?;
                    self.link(&out.last, &i.first, first_pos(item))?;
                    if out.nullable {
                        out.first.extend_from_slice(&i.first);
                    }
                    if i.nullable {
                        out.last.extend(i.last);
                    } else {
                        out.last = i.last;
                    }
                    out.nullable &= i.nullable;
                }
                out
            }
            Re::Star(inner) => {
                let i = self.glushkov(inner, depth)?;
                self.link(&i.last, &i.first, first_pos(inner))?;
                Info { nullable: true, ..i }
            }
        })
    }
}

fn first_pos(re: &Re) -> Pos {
    match re {
        Re::Act(_, pos) => *pos,
        Re::Concat(v) | Re::Sum(v) => v.first().map_or_else(Pos::default, first_pos),
        Re::Star(r) => first_pos(r),
    }
}

/// Rejects a star over an expression with a non-empty word of modifiers that
/// are always valid (offs, and assignments of a constant within the bound),
/// such as `[x]*`: its repetitions could apply modifiers without end (against
/// the paper's first condition of a proper description).
fn check_stars(re: &Re, bounds: &[i64]) -> Result<(), RbgError> {
    always_words(re, bounds).map(|_| ())
}

/// Whether `re` has the empty word, and a non-empty word of always valid modifiers.
fn always_words(re: &Re, bounds: &[i64]) -> Result<(bool, bool), RbgError> {
    Ok(match re {
        Re::Act(Action::Off(_), _) => (false, true),
        Re::Act(Action::Assign(v, Expr::Num(n)), _) => (false, (0..=bounds[*v as usize]).contains(n)),
        Re::Act(Action::Pattern(_, inner), _) => {
            always_words(inner, bounds)?;
            (false, false)
        }
        Re::Act(..) => (false, false),
        Re::Sum(items) => {
            let mut out = (false, false);
            for item in items {
                let (e, w) = always_words(item, bounds)?;
                out = (out.0 | e, out.1 | w);
            }
            out
        }
        Re::Concat(items) => {
            let mut out = (true, false);
            for item in items {
                let (e, w) = always_words(item, bounds)?;
                out = (out.0 && e, (out.1 && (e || w)) || (out.0 && w));
            }
            out
        }
        Re::Star(inner) => {
            let (_, w) = always_words(inner, bounds)?;
            if w {
                let reason = "a star over modifiers that are always valid repeats them without end";
                return Err(RbgError::new(ErrorKind::IllFormed, first_pos(inner), reason));
            }
            (true, false)
        }
    })
}
