//! Real-time GDL (rtGDL) on the reference interpreter: the oracle of the
//! spec's Definition 1, with no restriction on the game.
//!
//! The rules are embedded into GDL ([`embed`]: a state pair
//! `(t, f)` is the fact `(rt:lifetime t f)`, `(expired F)` reads the fact
//! `(rt:expired F)`), and the GDL interpreter evaluates the embedding on
//! exactly the facts of Definition 1:
//!
//! - legal moves, goals and `terminal` of a state S: SM[G ∪ S^true], the
//!   pairs of S and nothing else (so `expired` never holds there);
//! - the update u(Δt, M, S): SM[G ∪ M^does ∪ μ(S, Δt) ∪ S^exp_Δt], where
//!   μ lowers every lifetime t > Δt by Δt and S^exp holds `expired(f)` for
//!   every pair with t ≤ Δt; the new state is every derived `next(t, f)`.
//!
//! A state is a set of (lifetime, fact) pairs: one fact may hold with two
//! lifetimes at once if the rules say so. Lifetimes are exact
//! ([`Lifetime`]), printed canonically when they become terms; a time value
//! that is no symbol of the game (μ makes new ones, such as `0.37`) gets a
//! name in a copy of the game's symbol table made for one evaluation, so the
//! interpreter carries it along like any constant no rule mentions.

use crate::error::RtError;
use crate::syntax::embed;
use crate::time::{Lifetime, Time};
use ggpnet_kif::{parse_term, term_to_string, Description, SymbolId, SymbolTable, Term};
use ggpnet_reference::{LastQuery, Reference};
use std::sync::Arc;

/// An rtGDL state: a finite set of (lifetime, fact) pairs, facts in
/// canonical KIF.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct RtState {
    /// Sorted by fact, then lifetime; no duplicates.
    pairs: Vec<(Lifetime, String)>,
}

impl RtState {
    fn new(mut pairs: Vec<(Lifetime, String)>) -> RtState {
        pairs.sort_unstable_by(|a, b| (&a.1, a.0).cmp(&(&b.1, b.0)));
        pairs.dedup();
        RtState { pairs }
    }

    /// The (lifetime, fact) pairs, sorted by fact then lifetime.
    pub fn pairs(&self) -> &[(Lifetime, String)] {
        &self.pairs
    }

    /// The spec's t_u: the time until the first fact expires (`None` when
    /// every lifetime is infinite).
    pub fn next_expiry(&self) -> Option<Time> {
        self.pairs.iter().filter_map(|(l, _)| l.time()).min()
    }
}

/// What one state's queries return, computed together once.
#[derive(Debug)]
struct Outputs {
    /// Per role, the legal moves in canonical KIF, sorted, without duplicates.
    legal: Vec<Vec<String>>,
    /// Per role, the integer goal values, sorted, without duplicates.
    goals: Vec<Vec<i64>>,
    terminal: bool,
}

/// An rtGDL game ready to be played by direct evaluation of its rules.
///
/// ```
/// use ggpnet_rtgdl::{RtReference, Time};
/// let game = ggpnet_kif::parse(
///     "(role r) (init 1.0 (appear cat))
///      (<= (next 3.0 (gone ?c)) (expired (appear ?c)))
///      (<= (next ?t (gone ?c)) (true ?t (gone ?c)))
///      (<= (next 1.0 (appear ?c)) (expired (gone ?c)))
///      (<= (next ?t (appear ?c)) (true ?t (appear ?c)))",
/// ).unwrap();
/// let game = RtReference::new(&game).unwrap();
/// let start = game.initial_state();
/// let t = |s: &str| Time::parse(s).unwrap();
/// assert!(game.update(&start, t("0.25"), &[None]).is_err()); // no event at 0.25
/// let state = game.update(&start, t("1"), &[None]).unwrap();
/// let (lifetime, fact) = &state.pairs()[0];
/// assert_eq!((lifetime.to_string(), fact.as_str()), ("3".to_string(), "(gone cat)"));
/// ```
#[derive(Debug)]
pub struct RtReference {
    /// The interpreter of the embedding.
    gdl: Reference,
    /// `rt:lifetime` in the embedding.
    lifetime: SymbolId,
    /// `rt:expired` in the embedding.
    expired: SymbolId,
    initial: RtState,
    /// The outputs of the state queried last.
    last: LastQuery<RtState, Outputs>,
}

/// Clones share the prepared game and each keep their own cache.
impl Clone for RtReference {
    fn clone(&self) -> RtReference {
        RtReference {
            gdl: self.gdl.clone(),
            lifetime: self.lifetime,
            expired: self.expired,
            initial: self.initial.clone(),
            last: LastQuery::new(),
        }
    }
}

impl RtReference {
    /// Checks an rtGDL description ([`check`](crate::syntax::check), then
    /// the interpreter's checks of the embedding) and computes its initial state.
    pub fn new(description: &Description) -> Result<RtReference, RtError> {
        let embedded = embed(description).map_err(RtError::Invalid)?;
        let gdl = Reference::new(&embedded.description).map_err(RtError::Interpreter)?;
        let mut game = RtReference {
            initial: RtState::new(Vec::new()),
            gdl,
            lifetime: embedded.lifetime,
            expired: embedded.expired,
            last: LastQuery::new(),
        };
        let mut symbols = game.gdl.symbols().clone();
        let init: Vec<Term> = game
            .gdl
            .initial_state()
            .facts()
            .iter()
            .map(|fact| game.read(fact, &mut symbols))
            .collect();
        game.initial = game.state_of(&init, &symbols)?;
        Ok(game)
    }

    /// The roles, in the order of the `role` facts.
    pub fn roles(&self) -> Vec<String> {
        self.gdl.roles()
    }

    /// The initial state: every `init(t, f)`.
    pub fn initial_state(&self) -> RtState {
        self.initial.clone()
    }

    /// The legal moves of role number `role` in `state`, canonical KIF, sorted,
    /// without duplicates; empty for an unknown role.
    pub fn legal_moves(&self, state: &RtState, role: usize) -> Result<Vec<String>, RtError> {
        Ok(self.outputs(state)?.legal.get(role).cloned().unwrap_or_default())
    }

    /// Whether `terminal` holds in `state`.
    pub fn is_terminal(&self, state: &RtState) -> Result<bool, RtError> {
        Ok(self.outputs(state)?.terminal)
    }

    /// Per role, the integer goal values derivable in `state`, sorted, without
    /// duplicates (other values are left out, as [`Reference::goals`] does).
    pub fn goals(&self, state: &RtState) -> Result<Vec<Vec<i64>>, RtError> {
        Ok(self.outputs(state)?.goals.clone())
    }

    /// The spec's u(Δt, M, S): the state after `elapsed` time since `state`
    /// began, with `moves` (one per role in order, `None` for a role that did
    /// not move). Refused: a wrong number of moves, an illegal move, no
    /// elapsed time, time past the next expiry, or no event (no move and
    /// nothing expiring at `elapsed`); and a derived lifetime that is not a
    /// positive time or `infinity`.
    pub fn update(
        &self,
        state: &RtState,
        elapsed: Time,
        moves: &[Option<String>],
    ) -> Result<RtState, RtError> {
        let roles = self.roles();
        check_update(roles.len(), state.next_expiry(), elapsed, moves)?;
        let mut symbols = self.gdl.symbols().clone();
        let outputs = self.outputs(state)?;
        let mut joint = Vec::with_capacity(moves.len());
        for ((chosen, legal), role) in moves.iter().zip(&outputs.legal).zip(&roles) {
            let Some(chosen) = chosen else {
                joint.push(None);
                continue;
            };
            let illegal = || RtError::IllegalMove {
                role: role.clone(),
                chosen: chosen.clone(),
            };
            let term = parse_term(chosen, &mut symbols).map_err(|_| illegal())?;
            if legal.binary_search(&term_to_string(&term, &symbols)).is_err() {
                return Err(illegal());
            }
            joint.push(Some(term));
        }
        let mut facts = Vec::with_capacity(state.pairs.len());
        for (lifetime, fact) in &state.pairs {
            let fact = self.read(fact, &mut symbols);
            facts.push(match lifetime.after(elapsed) {
                Some(left) => self.pair(left, fact, &mut symbols),
                None => Term::Compound(self.expired, vec![fact]),
            });
        }
        let next = self
            .gdl
            .derive_next(&facts, &joint)
            .map_err(RtError::Interpreter)?;
        self.state_of(&next, &symbols)
    }

    /// `fact`, a canonical fact of a state of this game, as a term over `symbols`.
    fn read(&self, fact: &str, symbols: &mut SymbolTable) -> Term {
        parse_term(fact, symbols).expect("state facts are canonical KIF printed by this game")
    }

    /// The term `(rt:lifetime lifetime fact)`.
    fn pair(&self, lifetime: Lifetime, fact: Term, symbols: &mut SymbolTable) -> Term {
        let time = Term::Atom(symbols.intern(&lifetime.to_string()));
        Term::Compound(self.lifetime, vec![time, fact])
    }

    /// The state of the derived terms `(rt:lifetime t f)` (the arguments of
    /// `init` or `next`), refusing a `t` that is not a lifetime.
    fn state_of(&self, derived: &[Term], symbols: &SymbolTable) -> Result<RtState, RtError> {
        let mut pairs = Vec::with_capacity(derived.len());
        for term in derived {
            let Term::Compound(f, args) = term else {
                unreachable!("the embedding wraps every init and next head")
            };
            debug_assert_eq!(*f, self.lifetime);
            let fact = term_to_string(&args[1], symbols);
            let value = term_to_string(&args[0], symbols);
            let lifetime = match &args[0] {
                Term::Atom(_) => Lifetime::parse(&value),
                _ => Err("a compound term is not a lifetime".into()),
            };
            let lifetime = lifetime.map_err(|reason| RtError::InvalidLifetime {
                fact: fact.clone(),
                lifetime: value,
                reason,
            })?;
            pairs.push((lifetime, fact));
        }
        Ok(RtState::new(pairs))
    }

    /// The legal moves, goals and terminal flag of `state`, from the cache if
    /// it was the state queried last.
    fn outputs(&self, state: &RtState) -> Result<Arc<Outputs>, RtError> {
        self.last.get(state, |s| self.compute_outputs(s))
    }

    fn compute_outputs(&self, state: &RtState) -> Result<Outputs, RtError> {
        let mut symbols = self.gdl.symbols().clone();
        let facts: Vec<Term> = state
            .pairs
            .iter()
            .map(|(l, f)| {
                let fact = self.read(f, &mut symbols);
                self.pair(*l, fact, &mut symbols)
            })
            .collect();
        let derived = self.gdl.derive_outputs(&facts).map_err(RtError::Interpreter)?;
        let legal = derived
            .legal
            .iter()
            .map(|moves| {
                let mut moves: Vec<String> = moves.iter().map(|m| term_to_string(m, &symbols)).collect();
                moves.sort_unstable();
                moves.dedup();
                moves
            })
            .collect();
        let goals = derived
            .goals
            .iter()
            .map(|values| {
                let mut values: Vec<i64> = values
                    .iter()
                    .filter_map(|v| match v {
                        Term::Atom(s) => symbols.name(*s).parse().ok(),
                        _ => None,
                    })
                    .collect();
                values.sort_unstable();
                values.dedup();
                values
            })
            .collect();
        Ok(Outputs {
            legal,
            goals,
            terminal: derived.terminal,
        })
    }
}

/// Checks the input of the spec's u(Δt, M, S) on a state whose next expiry
/// is `expiry`, in a game of `roles` roles: one optional move per role, Δt
/// positive and at most the expiry, and an event at Δt (a move, or the
/// expiry itself). The moves' legality is the engine's to check.
pub(crate) fn check_update(
    roles: usize,
    expiry: Option<Time>,
    elapsed: Time,
    moves: &[Option<String>],
) -> Result<(), RtError> {
    if moves.len() != roles {
        return Err(RtError::WrongJointLength {
            expected: roles,
            found: moves.len(),
        });
    }
    if elapsed.is_zero() {
        return Err(RtError::NoElapsedTime);
    }
    if let Some(expiry) = expiry.filter(|&t| elapsed > t) {
        return Err(RtError::PastExpiry { elapsed, expiry });
    }
    if moves.iter().all(Option::is_none) && expiry != Some(elapsed) {
        return Err(RtError::NoEvent { elapsed });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(s: &str) -> Time {
        Time::parse(s).unwrap()
    }

    fn shown(state: &RtState) -> Vec<String> {
        state.pairs().iter().map(|(l, f)| format!("{l} {f}")).collect()
    }

    /// The spec's Example 3 (the Cheshire cat), made a game: the cat is
    /// visible for 1.0, gone for 3.0, and so on.
    const CAT: &str = "(role hunter) (init 1.0 (appear cat)) (init infinity (score 0))
        (<= (next 3.0 (disappear ?c)) (expired (appear ?c)))
        (<= (next ?t (disappear ?c)) (true ?t (disappear ?c)))
        (<= (next 1.0 (appear ?c)) (expired (disappear ?c)))
        (<= (next ?t (appear ?c)) (true ?t (appear ?c)) (not (does hunter (catch ?c))))
        (<= (legal hunter (catch ?c)) (true ?t (appear ?c)))
        (<= (next infinity caught) (does hunter (catch ?c)))
        (<= (next ?t (score ?s)) (true ?t (score ?s)))
        (<= terminal (true infinity caught))
        (<= (goal hunter 100) (true infinity caught))
        (<= (goal hunter 0) (not (true infinity caught)))";

    fn cat() -> RtReference {
        RtReference::new(&ggpnet_kif::parse(CAT).unwrap()).unwrap()
    }

    #[test]
    fn mu_and_expired_by_hand() {
        let game = cat();
        let s0 = game.initial_state();
        assert_eq!(shown(&s0), ["1 (appear cat)", "infinity (score 0)"]);
        assert_eq!(s0.next_expiry(), Some(t("1")));
        assert_eq!(game.legal_moves(&s0, 0).unwrap(), ["(catch cat)"]);
        // At 1.0 the cat disappears for 3.0.
        let s1 = game.update(&s0, t("1.0"), &[None]).unwrap();
        assert_eq!(shown(&s1), ["3 (disappear cat)", "infinity (score 0)"]);
        assert!(game.legal_moves(&s1, 0).unwrap().is_empty());
        // 0.37 later the lifetime is lowered, not reset: only an event can happen then,
        // and the hunter has no move; the expiry at 3.0 brings it back for 1.0.
        assert!(game.update(&s1, t("0.37"), &[None]).is_err());
        let s2 = game.update(&s1, t("3"), &[None]).unwrap();
        assert_eq!(shown(&s2), ["1 (appear cat)", "infinity (score 0)"]);
        // A move at 0.63 lowers the cat's lifetime to 0.37 (a new constant), and catches it.
        let s3 = game
            .update(&s2, t("0.63"), &[Some("(catch  cat)".into())])
            .unwrap();
        assert_eq!(shown(&s3), ["infinity (score 0)", "infinity caught"]);
        assert!(game.is_terminal(&s3).unwrap());
        assert_eq!(game.goals(&s3).unwrap(), [vec![100]]);
        assert_eq!(game.goals(&s2).unwrap(), [vec![0]]);
    }

    #[test]
    fn lowered_lifetimes_become_canonical_constants() {
        let game = RtReference::new(
            &ggpnet_kif::parse(
                "(role r) (init 1.5 clock) (init infinity (timer 1.5))
                 (<= (legal r stop) (true ?t clock))
                 (<= (next infinity (timer ?t)) (does r stop) (true ?t clock))
                 (<= (next ?t clock) (true ?t clock))
                 (<= (next ?t (timer ?x)) (true ?t (timer ?x)) (not (does r stop)))
                 (<= (next ?x restart) (does r stop) (true infinity (timer ?x)))",
            )
            .unwrap(),
        )
        .unwrap();
        let s0 = game.initial_state();
        let s1 = game.update(&s0, t("0.25"), &[Some("stop".into())]).unwrap();
        // The clock at 1.25 is copied into the timer, the old timer's value 1.5 becomes a lifetime.
        assert_eq!(shown(&s1), ["infinity (timer 1.25)", "1.25 clock", "1.5 restart"]);
        let s2 = game.update(&s1, t("1.25"), &[Some("stop".into())]).unwrap();
        // The clock expires at 1.25 as the move arrives (`stop` was legal in s1, the
        // state before): no `true ?t clock` any more, so no new timer; the timer is
        // dropped by `stop` and its value becomes the lifetime of `restart`.
        assert_eq!(shown(&s2), ["1.25 restart"]);
    }

    #[test]
    fn bad_updates_and_lifetimes_are_refused() {
        let game = cat();
        let s0 = game.initial_state();
        let reason = |e: RtError| e.to_string();
        assert!(reason(game.update(&s0, Time::ZERO, &[None]).unwrap_err()).contains("positive"));
        assert!(reason(game.update(&s0, t("1.5"), &[None]).unwrap_err()).contains("past the next expiry"));
        assert!(reason(
            game.update(&s0, t("0.5"), &[Some("(catch dog)".into())])
                .unwrap_err()
        )
        .contains("not legal"));
        assert!(reason(game.update(&s0, t("0.5"), &[]).unwrap_err()).contains("one move per role"));
        let bad = RtReference::new(
            &ggpnet_kif::parse(
                "(role r) (init infinity (at x)) (<= (next ?x (at ?x)) (true ?t (at ?x))) (legal r go)",
            )
            .unwrap(),
        )
        .unwrap();
        let e = bad
            .update(&bad.initial_state(), t("1"), &[Some("go".into())])
            .unwrap_err();
        assert!(matches!(e, RtError::InvalidLifetime { .. }), "{e:?}");
        assert_eq!(
            e.to_string(),
            "error: fact (at x) derived with lifetime x: 'x' is not a decimal number"
        );
    }
}
