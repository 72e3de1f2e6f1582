//! The interpreter's public face: a game prepared once, then queried state by state.
//!
//! Preparing a game normalizes and checks its rules, splits the dependency graph
//! into components, evaluates every static component once and plans the joins of
//! the dynamic ones. A query then builds a fresh set of dynamic relations for its
//! state and evaluates only the components the queried relations depend on, in
//! dependency order: `legal`, `goal` and `terminal` together (kept for the state
//! queried last, since users ask for all three), or `next` with the joint move.

use crate::database::{Db, StateDb};
use crate::error::ReferenceError;
use crate::eval::{evaluate, Budget, ComponentPlans};
use crate::last::LastQuery;
use crate::prepare::{prepare, Prepared};
use crate::program::PredId;
use crate::state::RefState;
use crate::terms::{Node, OutputBudget, TermId, Terms};
use ggpnet_kif::{parse_term, term_to_string, Description, SymbolId, SymbolTable, Term};
use std::num::NonZeroUsize;
use std::sync::Arc;

/// The most join steps (candidate facts tried, whether they match or not) one
/// query may take unless [`Reference::with_max_join_steps`] says otherwise:
/// far more than any game of the corpus needs for a state (the seven it runs
/// on the interpreter take milliseconds a state), and a bound on the work of
/// rules that multiply large relations or try bindings that never match.
pub const DEFAULT_MAX_JOIN_STEPS: usize = 20_000_000;

/// A GDL game ready to be played by direct evaluation of its rules.
///
/// ```
/// use ggpnet_reference::Reference;
/// let game = ggpnet_kif::parse(
///     "(role r) (init (at 0)) (succ 0 1) (succ 1 2)
///      (<= (legal r step) (true (at ?x)) (succ ?x ?y))
///      (<= (next (at ?y)) (does r step) (true (at ?x)) (succ ?x ?y))
///      (<= terminal (true (at 2))) (<= (goal r 100) (true (at 2)))",
/// ).unwrap();
/// let reference = Reference::new(&game).unwrap();
/// let mut state = reference.initial_state();
/// while !reference.is_terminal(&state)? {
///     assert_eq!(reference.legal_moves(&state, 0)?, ["step"]);
///     state = reference.next_state(&state, &["step".to_string()])?;
/// }
/// assert_eq!(state.facts(), ["(at 2)"]);
/// assert_eq!(reference.goals(&state)?, [vec![100]]);
/// # Ok::<(), ggpnet_reference::ReferenceError>(())
/// ```
///
/// Every query is bounded: one that needs more than
/// [`Reference::get_max_join_steps`] join steps fails with
/// [`ReferenceError::WorkLimit`] instead of running on.
#[derive(Debug)]
pub struct Reference {
    /// The prepared game, shared by clones.
    game: Arc<Prepared>,
    initial: RefState,
    /// The most join steps one query may take.
    max_join_steps: usize,
    /// The outputs of the state queried last: a state's legal moves, goals and
    /// terminal flag are computed together, once.
    last: LastQuery<RefState, StateOutputs>,
}

/// What the queries on one state return.
#[derive(Debug)]
struct StateOutputs {
    /// Per role: the legal moves as (canonical string, term), sorted by string.
    legal: Vec<Vec<(String, Term)>>,
    /// Per role: the goal values, sorted.
    goals: Vec<Vec<i64>>,
    terminal: bool,
}

/// Clones share the prepared game and each keep their own cache of the state
/// queried last: clone one per thread.
impl Clone for Reference {
    fn clone(&self) -> Reference {
        Reference {
            game: Arc::clone(&self.game),
            initial: self.initial.clone(),
            max_join_steps: self.max_join_steps,
            last: LastQuery::new(),
        }
    }
}

impl Reference {
    /// Checks and prepares a description: rules are normalized, checked for
    /// safety and stratification, and the static relations are computed.
    pub fn new(description: &Description) -> Result<Reference, ReferenceError> {
        let default = NonZeroUsize::new(DEFAULT_MAX_JOIN_STEPS).expect("a positive default");
        Reference::with_max_join_steps(description, default)
    }

    /// [`Reference::new`] with at most `limit` join steps per query (the
    /// initial state's included) instead of [`DEFAULT_MAX_JOIN_STEPS`].
    ///
    /// ```
    /// use ggpnet_reference::{Reference, ReferenceError};
    /// use std::num::NonZeroUsize;
    /// // 10^4 bindings tried in every state, none of which matches.
    /// let game = ggpnet_kif::parse(
    ///     "(role r) (init (d 1)) (init (d 2)) (init (d 3)) (init (d 4)) (init (d 5))
    ///      (init (d 6)) (init (d 7)) (init (d 8)) (init (d 9)) (init (d 10))
    ///      (<= (legal r go) (true (d ?a)) (true (d ?b)) (true (d ?c)) (true (d ?e))
    ///          (distinct (f ?a ?b ?c ?e) (f ?a ?b ?c ?e)))",
    /// ).unwrap();
    /// let limit = NonZeroUsize::new(1000).unwrap();
    /// let reference = Reference::with_max_join_steps(&game, limit).unwrap();
    /// let refused = reference.legal_moves(&reference.initial_state(), 0);
    /// assert_eq!(refused, Err(ReferenceError::WorkLimit { limit: 1000 }));
    /// ```
    pub fn with_max_join_steps(
        description: &Description,
        limit: NonZeroUsize,
    ) -> Result<Reference, ReferenceError> {
        let game = Arc::new(prepare(description)?);
        let mut reference = Reference {
            initial: RefState::from_terms(Vec::new(), &game.symbols),
            max_join_steps: limit.get(),
            game,
            last: LastQuery::new(),
        };
        reference.initial = reference.compute_initial_state()?;
        Ok(reference)
    }

    /// The most join steps one query may take.
    pub fn get_max_join_steps(&self) -> usize {
        self.max_join_steps
    }

    /// The roles, in the order of the `role` facts, as canonical strings.
    pub fn roles(&self) -> Vec<String> {
        self.game.role_names.clone()
    }

    /// The initial state: every `init` fact.
    pub fn initial_state(&self) -> RefState {
        self.initial.clone()
    }

    /// The legal moves of role number `role` (in [`Reference::roles`] order) in
    /// `state`, sorted by byte order, without duplicates; empty for an unknown role.
    pub fn legal_moves(&self, state: &RefState, role: usize) -> Result<Vec<String>, ReferenceError> {
        let outputs = self.outputs(state)?;
        Ok(outputs.legal.get(role).map_or_else(Vec::new, |moves| {
            moves.iter().map(|(text, _)| text.clone()).collect()
        }))
    }

    /// True when `terminal` holds in `state`.
    pub fn is_terminal(&self, state: &RefState) -> Result<bool, ReferenceError> {
        Ok(self.outputs(state)?.terminal)
    }

    /// For each role, every goal value derivable in `state`, sorted numerically,
    /// without duplicates. Values that are not integers (possible only through a
    /// goal rule whose value is a variable) are left out.
    pub fn goals(&self, state: &RefState) -> Result<Vec<Vec<i64>>, ReferenceError> {
        Ok(self.outputs(state)?.goals.clone())
    }

    /// The state after every role plays its move of `joint` (one canonical move per
    /// role, in role order) in `state`. Fails when the number of moves is wrong or
    /// a move is not legal for its role.
    pub fn next_state(&self, state: &RefState, joint: &[String]) -> Result<RefState, ReferenceError> {
        let moves = self.joint_terms(state, joint)?;
        let mut session = Session::new(self, state.terms(), moves.iter().map(Some));
        session.ensure(&self.game.cones.next)?;
        session.state_of(self.game.outputs.next)
    }

    /// The terms of the moves of `joint`, each checked legal in `state` for its role.
    fn joint_terms(&self, state: &RefState, joint: &[String]) -> Result<Vec<Term>, ReferenceError> {
        let roles = &self.game.role_names;
        if joint.len() != roles.len() {
            return Err(ReferenceError::WrongJointLength {
                expected: roles.len(),
                found: joint.len(),
            });
        }
        let outputs = self.outputs(state)?;
        let mut moves = Vec::with_capacity(joint.len());
        for ((chosen, legal), role) in joint.iter().zip(&outputs.legal).zip(roles) {
            match legal.binary_search_by(|(text, _)| text.as_str().cmp(chosen)) {
                Ok(i) => moves.push(legal[i].1.clone()),
                Err(_) => {
                    return Err(ReferenceError::IllegalMove {
                        role: role.clone(),
                        chosen: chosen.clone(),
                    })
                }
            }
        }
        Ok(moves)
    }

    /// Per role, the percepts of GDL-II after `joint` in `state`: every `p`
    /// with `(sees r p)` true there, as canonical strings sorted by byte order,
    /// without duplicates. Refuses `joint` as [`Reference::next_state`] does.
    pub fn percepts(&self, state: &RefState, joint: &[String]) -> Result<Vec<Vec<String>>, ReferenceError> {
        let moves = self.joint_terms(state, joint)?;
        let mut session = Session::new(self, state.terms(), moves.iter().map(Some));
        session.ensure(&self.game.cones.sees)?;
        let mut seen = vec![Vec::new(); self.game.roles.len()];
        let mut budget = OutputBudget::new();
        for (role, percept) in session.role_pairs(self.game.outputs.sees) {
            seen[role].push(term_to_string(
                &session.terms.to_term(percept, &mut budget)?,
                &self.game.symbols,
            ));
        }
        for percepts in &mut seen {
            percepts.sort_unstable();
            percepts.dedup();
        }
        Ok(seen)
    }

    /// Whether some rule defines `sees` (the game is GDL-II).
    pub fn defines_sees(&self) -> bool {
        self.game.defines_sees
    }

    /// Reads a state of this game from canonical (or any valid KIF) strings.
    /// Fails on text that is not one ground term, and on symbols that occur
    /// nowhere in the game (no rule could ever see such a fact).
    ///
    /// ```
    /// use ggpnet_reference::Reference;
    /// let game = ggpnet_kif::parse("(role r) (init (at 1)) (<= (legal r go) (true (at 1)))").unwrap();
    /// let reference = Reference::new(&game).unwrap();
    /// let state = reference.state_from_facts(&["(at  1)".to_string()]).unwrap();
    /// assert_eq!(state, reference.initial_state());
    /// assert!(reference.state_from_facts(&["(at 2)".to_string()]).is_err());
    /// ```
    pub fn state_from_facts(&self, facts: &[String]) -> Result<RefState, ReferenceError> {
        let mut symbols = self.game.symbols.clone();
        let mut terms = Vec::with_capacity(facts.len());
        for fact in facts {
            let invalid = |reason: String| ReferenceError::InvalidFact {
                fact: fact.clone(),
                reason,
            };
            let term = parse_term(fact, &mut symbols).map_err(|e| invalid(e.to_string()))?;
            if !term.is_ground() {
                return Err(invalid("it contains a variable".into()));
            }
            if symbols.len() != self.game.symbols.len() {
                return Err(invalid("it uses a symbol that occurs nowhere in the game".into()));
            }
            terms.push(term);
        }
        Ok(RefState::from_terms(terms, &self.game.symbols))
    }

    /// The legal moves, goals and terminal flag of `state`, from the cache if it
    /// was the last state queried.
    fn outputs(&self, state: &RefState) -> Result<Arc<StateOutputs>, ReferenceError> {
        self.last.get(state, |s| self.compute_outputs(s))
    }

    fn compute_outputs(&self, state: &RefState) -> Result<StateOutputs, ReferenceError> {
        let game = &self.game;
        let mut session = Session::new(self, state.terms(), std::iter::empty());
        session.ensure(&game.cones.legal)?;
        session.ensure(&game.cones.goal)?;
        session.ensure(&game.cones.terminal)?;
        let mut outputs = StateOutputs {
            legal: vec![Vec::new(); game.roles.len()],
            goals: vec![Vec::new(); game.roles.len()],
            terminal: !session.facts(game.outputs.terminal).is_empty(),
        };
        let mut budget = OutputBudget::new();
        for (role, action) in session.role_pairs(game.outputs.legal) {
            let action = session.terms.to_term(action, &mut budget)?;
            let text = term_to_string(&action, &game.symbols);
            outputs.legal[role].push((text, action));
        }
        for moves in &mut outputs.legal {
            moves.sort_unstable_by(|a, b| a.0.cmp(&b.0));
            moves.dedup_by(|a, b| a.0 == b.0);
        }
        for (role, value) in session.role_pairs(game.outputs.goal) {
            if let Node::Atom(symbol) = session.terms.node(value) {
                if let Ok(value) = game.symbols.name(*symbol).parse::<i64>() {
                    outputs.goals[role].push(value);
                }
            }
        }
        for values in &mut outputs.goals {
            values.sort_unstable();
            values.dedup();
        }
        Ok(outputs)
    }

    /// The symbols of the prepared game. Terms given to
    /// [`Reference::derive_next`] and [`Reference::derive_outputs`] use them,
    /// or a clone extended with names of its own (as rtGDL's lifetimes do).
    pub fn symbols(&self) -> &SymbolTable {
        &self.game.symbols
    }

    /// The arguments of the `next` facts derived from `facts` as the `true`
    /// facts and the moves of `joint` (per role in order, `None` for a role
    /// that does not move) as the `does` facts: unsorted, possibly with
    /// duplicates. No legality check: this is the evaluation an interpreter
    /// built on this one (rtGDL's, which gives the rules other facts than a
    /// state's) performs itself. The terms may use symbols past the game's
    /// (see [`Reference::symbols`]): no rule mentions them, so they are only
    /// carried along.
    pub fn derive_next(&self, facts: &[Term], joint: &[Option<Term>]) -> Result<Vec<Term>, ReferenceError> {
        let game = &self.game;
        let mut session = Session::new(self, facts, joint.iter().map(Option::as_ref));
        session.ensure(&game.cones.next)?;
        let next = session.facts(game.outputs.next).iter();
        let next = next.filter_map(|&f| session.terms.args(f).first());
        let mut budget = OutputBudget::new();
        let terms = next.map(|&f| session.terms.to_term(f, &mut budget));
        Ok(terms.collect::<Result<_, _>>()?)
    }

    /// The moves of the `legal` facts, the values of the `goal` facts and
    /// whether `terminal` holds, derived from `facts` as the `true` facts,
    /// as terms (see [`Reference::derive_next`]).
    pub fn derive_outputs(&self, facts: &[Term]) -> Result<Derived, ReferenceError> {
        let game = &self.game;
        let mut session = Session::new(self, facts, std::iter::empty());
        session.ensure(&game.cones.legal)?;
        session.ensure(&game.cones.goal)?;
        session.ensure(&game.cones.terminal)?;
        let mut derived = Derived {
            legal: vec![Vec::new(); game.roles.len()],
            goals: vec![Vec::new(); game.roles.len()],
            terminal: !session.facts(game.outputs.terminal).is_empty(),
        };
        let mut budget = OutputBudget::new();
        for (role, action) in session.role_pairs(game.outputs.legal) {
            derived.legal[role].push(session.terms.to_term(action, &mut budget)?);
        }
        for (role, value) in session.role_pairs(game.outputs.goal) {
            derived.goals[role].push(session.terms.to_term(value, &mut budget)?);
        }
        Ok(derived)
    }

    fn compute_initial_state(&self) -> Result<RefState, ReferenceError> {
        let nothing = RefState::from_terms(Vec::new(), &self.game.symbols);
        let mut session = Session::new(self, nothing.terms(), std::iter::empty());
        session.ensure(&self.game.cones.init)?;
        session.state_of(self.game.outputs.init)
    }
}

/// What [`Reference::derive_outputs`] found, unsorted and possibly with
/// duplicates.
#[derive(Clone, Debug)]
pub struct Derived {
    /// Per role (in [`Reference::roles`] order), the moves of its `legal` facts.
    pub legal: Vec<Vec<Term>>,
    /// Per role, the values of its `goal` facts (any term).
    pub goals: Vec<Vec<Term>>,
    /// Whether `terminal` holds.
    pub terminal: bool,
}

/// The evaluation of one state (and possibly one joint move).
struct Session<'r> {
    terms: Terms<'r>,
    db: StateDb<'r>,
    plans: &'r [ComponentPlans],
    roles: &'r [TermId],
    symbols: &'r SymbolTable,
    evaluated: Vec<bool>,
    /// The work the query may still do.
    budget: Budget,
    /// The query's limit, for the error.
    limit: usize,
}

impl<'r> Session<'r> {
    /// `facts` as the `true` facts and, per role in order, its move of
    /// `joint` (if any) as a `does` fact.
    fn new<'m>(
        reference: &'r Reference,
        facts: &[Term],
        joint: impl IntoIterator<Item = Option<&'m Term>>,
    ) -> Session<'r> {
        let game = &reference.game;
        let mut terms = Terms::over(&game.store);
        let mut db = StateDb::new(&game.frozen, &game.dynamic);
        for (pred, facts) in &game.dynamic_facts {
            let relation = db.relation_mut(*pred);
            facts.iter().for_each(|&f| {
                relation.insert(f, &terms);
            });
        }
        for fact in facts {
            if let Some(fact) = terms.intern(fact) {
                let sentence = terms.compound(SymbolId::TRUE, &[fact]);
                db.relation_mut(game.outputs.truth).insert(sentence, &terms);
            }
        }
        for (&role, action) in game.roles.iter().zip(joint) {
            if let Some(action) = action.and_then(|a| terms.intern(a)) {
                let sentence = terms.compound(SymbolId::DOES, &[role, action]);
                db.relation_mut(game.outputs.does).insert(sentence, &terms);
            }
        }
        Session {
            terms,
            db,
            plans: &game.plans,
            roles: &game.roles,
            symbols: &game.symbols,
            evaluated: vec![false; game.plans.len()],
            budget: Budget::steps(reference.max_join_steps),
            limit: reference.max_join_steps,
        }
    }

    /// Evaluates the components of `cone` not evaluated yet, in order.
    fn ensure(&mut self, cone: &[usize]) -> Result<(), ReferenceError> {
        for &c in cone {
            if !std::mem::replace(&mut self.evaluated[c], true) {
                evaluate(&self.plans[c], &mut self.db, &mut self.terms, &mut self.budget)
                    .map_err(|_| ReferenceError::WorkLimit { limit: self.limit })?;
            }
        }
        Ok(())
    }

    /// The facts of `pred` (complete once its cone is evaluated).
    fn facts(&self, pred: PredId) -> &[TermId] {
        self.db.relation(pred).facts()
    }

    /// For the facts `(pred r x)` of a relation such as `legal` or `goal`: the number
    /// of role `r` and `x`, leaving out facts whose `r` is no role.
    fn role_pairs(&self, pred: PredId) -> Vec<(usize, TermId)> {
        self.facts(pred)
            .iter()
            .filter_map(|&fact| match self.terms.args(fact) {
                [role, x] => {
                    let number = self.roles.iter().position(|r| r == role)?;
                    Some((number, *x))
                }
                _ => None,
            })
            .collect()
    }

    /// The state made of the arguments of the facts `(pred f)`, such as `init` or `next`.
    fn state_of(&self, pred: PredId) -> Result<RefState, ReferenceError> {
        let mut budget = OutputBudget::new();
        let facts = self
            .facts(pred)
            .iter()
            .filter_map(|&fact| self.terms.args(fact).first())
            .map(|&f| self.terms.to_term(f, &mut budget))
            .collect::<Result<_, _>>()?;
        Ok(RefState::from_terms(facts, self.symbols))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn game(source: &str) -> Reference {
        Reference::new(&ggpnet_kif::parse(source).unwrap()).unwrap()
    }

    fn rejection(source: &str) -> ReferenceError {
        Reference::new(&ggpnet_kif::parse(source).unwrap()).unwrap_err()
    }

    fn moves(reference: &Reference) -> Vec<String> {
        reference.legal_moves(&reference.initial_state(), 0).unwrap()
    }

    /// Every query of a state past the limit fails, each time (a failure is
    /// not cached); with room enough the same game answers as by default.
    #[test]
    fn queries_past_the_work_limit_fail() {
        let rules = "(role r) (init (d 1)) (init (d 2)) (init (d 3)) (init (d 4))
            (<= (p ?a ?b ?c) (true (d ?a)) (true (d ?b)) (true (d ?c)))
            (<= (legal r (m ?a)) (p ?a ?b ?c)) (<= (next (d ?x)) (true (d ?x)))
            (<= (sees r ?a) (does r (m ?a)) (p ?a ?b ?c)) (<= terminal (true x)) (goal r 0)";
        let description = ggpnet_kif::parse(rules).unwrap();
        let tight = Reference::with_max_join_steps(&description, NonZeroUsize::new(50).unwrap()).unwrap();
        assert_eq!(tight.get_max_join_steps(), 50);
        let start = tight.initial_state();
        let limit = Err(ReferenceError::WorkLimit { limit: 50 });
        for _ in 0..2 {
            assert_eq!(tight.legal_moves(&start, 0), limit);
            assert_eq!(
                tight.is_terminal(&start),
                limit.clone().map(|_: Vec<String>| false)
            );
            assert_eq!(
                tight.goals(&start),
                limit.clone().map(|_: Vec<String>| Vec::new())
            );
        }
        let joint = ["(m 1)".to_string()];
        assert_eq!(
            tight.next_state(&start, &joint),
            Err(ReferenceError::WorkLimit { limit: 50 })
        );
        let roomy = Reference::with_max_join_steps(&description, NonZeroUsize::new(1000).unwrap()).unwrap();
        let default = Reference::new(&description).unwrap();
        assert_eq!(default.get_max_join_steps(), DEFAULT_MAX_JOIN_STEPS);
        assert_eq!(roomy.legal_moves(&start, 0), default.legal_moves(&start, 0));
        assert_eq!(moves(&roomy), ["(m 1)", "(m 2)", "(m 3)", "(m 4)"]);
        // Past 100 steps before the percepts are reached; within 1000.
        let tighter = Reference::with_max_join_steps(&description, NonZeroUsize::new(100).unwrap()).unwrap();
        assert!(tighter.percepts(&start, &joint).is_err());
        assert_eq!(roomy.percepts(&start, &joint).unwrap(), [["1"]]);
    }

    /// Walks `reference` from its initial state by its only move until a
    /// query fails; the steps taken and the failure.
    fn walk_until_refused(reference: &Reference) -> (usize, ReferenceError) {
        let mut state = reference.initial_state();
        for steps in 0.. {
            let step = reference.next_state(&state, &["go".to_string()]);
            match step.and_then(|next| reference.legal_moves(&next, 0).map(|_| next)) {
                Ok(next) => state = next,
                Err(e) => return (steps, e),
            }
        }
        unreachable!("the walk ends with a refusal")
    }

    /// Terms that double or deepen at every step leave the interpreter only
    /// within its bounds: a term nested past [`MAX_TERM_DEPTH`], or more than
    /// [`MAX_OUTPUT_SYMBOLS`] symbols in one state, is refused, never
    /// written out (the doubling term would take 2^steps symbols).
    #[test]
    fn terms_past_the_bounds_are_refused() {
        let game = |next: &str| {
            let rules = format!(
                "(role r) (init (c 0)) (<= (legal r go) (true (c ?x))) {next} (<= terminal (true (c done))) (goal r 0)"
            );
            Reference::new(&ggpnet_kif::parse(&rules).unwrap()).unwrap()
        };
        let doubling = game("(<= (next (c (p ?x ?x))) (true (c ?x)))");
        let (steps, refusal) = walk_until_refused(&doubling);
        assert_eq!(steps, 18, "2^19 symbols fit in the budget, 2^20 do not");
        assert!(
            matches!(refusal, ReferenceError::TermsTooLarge { symbols, depth: 21 } if symbols > u64::from(crate::MAX_OUTPUT_SYMBOLS)),
            "{refusal:?}"
        );
        let deepening = game("(<= (next (c (s ?x))) (true (c ?x)))");
        let (steps, refusal) = walk_until_refused(&deepening);
        assert_eq!(steps, crate::MAX_TERM_DEPTH as usize - 2);
        assert_eq!(
            refusal,
            ReferenceError::TermsTooLarge {
                symbols: u64::from(crate::MAX_TERM_DEPTH) + 1,
                depth: u64::from(crate::MAX_TERM_DEPTH) + 1
            }
        );
    }

    fn state(reference: &Reference, facts: &[&str]) -> RefState {
        let facts: Vec<String> = facts.iter().map(|f| f.to_string()).collect();
        reference.state_from_facts(&facts).unwrap()
    }

    #[test]
    fn distinct_waits_for_the_literals_that_bind_it() {
        // games-test/test_distinct_beginning_rule.kif: 2 legal moves, not 4.
        let r = game(
            "(role you) (<= (foo ?a ?b) (distinct ?a ?b) (p ?a) (q ?b)) (p a) (p b) (q a) (q b)
             (<= (legal you (do ?a ?b)) (foo ?a ?b)) (next win) (<= terminal (true win))
             (goal you 100)",
        );
        assert_eq!(moves(&r), ["(do a b)", "(do b a)"]);
    }

    #[test]
    fn negated_distinct_is_equality() {
        let r = game(
            "(role r) (p a) (p b) (p c) (q b) (q c) (q d)
             (<= (legal r (pick ?x)) (p ?x) (q ?y) (not (distinct ?x ?y)))
             (<= (legal r (same ?x)) (p ?x) (not (distinct ?x b)))",
        );
        assert_eq!(moves(&r), ["(pick b)", "(pick c)", "(same b)"]);
    }

    #[test]
    fn nested_or_anywhere_in_a_body() {
        let r = game(
            "(role r) (d 1) (d 2) (d 3) (d 4) (d 5) (p 1) (q 2) (s 3) (init on)
             (<= (legal r (m ?x)) (d ?x) (or (p ?x) (not (or (q ?x) (s ?x)))))
             (<= (legal r (n ?x)) (d ?x) (or (and1 ?x) (or (q ?x) (and (true on) (s ?x)))))
             (<= (legal r (o ?x)) (d ?x) (not (or (not (q ?x)) (not (true on)))))",
        );
        // m: 1 (p), 4 and 5 (neither q nor s). n: 2 only, `and` being an ordinary,
        // undefined relation. o: not (not q or not on) = q and on: 2.
        assert_eq!(moves(&r), ["(m 1)", "(m 4)", "(m 5)", "(n 2)", "(o 2)"]);
    }

    #[test]
    fn recursion_reaches_its_fixpoint() {
        // A static transitive closure and a dynamic one over the state, with a cycle.
        let r = game(
            "(role r) (edge a b) (edge b c) (edge c a) (edge c d)
             (<= (path ?x ?y) (edge ?x ?y)) (<= (path ?x ?z) (edge ?x ?y) (path ?y ?z))
             (init (link x y)) (init (link y z)) (init (link z y))
             (<= (conn ?x ?y) (true (link ?x ?y)))
             (<= (conn ?x ?z) (conn ?x ?y) (true (link ?y ?z)))
             (<= (legal r (static ?y)) (path d ?y)) (<= (legal r (static ?y)) (path a ?y))
             (<= (legal r (dynamic ?y)) (conn x ?y))",
        );
        assert_eq!(
            moves(&r),
            [
                "(dynamic y)",
                "(dynamic z)",
                "(static a)",
                "(static b)",
                "(static c)",
                "(static d)"
            ]
        );
    }

    #[test]
    fn long_recursive_chains_and_deep_rule_chains_do_not_overflow() {
        let mut source = String::from("(role r) (init (at 0)) (reach 0)\n");
        for i in 0..5000 {
            source.push_str(&format!("(succ {i} {})\n", i + 1));
        }
        source.push_str("(<= (reach ?y) (reach ?x) (succ ?x ?y))\n");
        // A chain of 3000 relations, each defined from the previous one.
        source.push_str("(<= (p0 ?x) (true (at ?x)))\n");
        for i in 1..3000 {
            source.push_str(&format!("(<= (p{i} ?x) (p{} ?x))\n", i - 1));
        }
        source.push_str("(<= (legal r (go ?x)) (p2999 ?x) (reach 5000))\n");
        let r = game(&source);
        assert_eq!(moves(&r), ["(go 0)"]);
    }

    #[test]
    fn negation_is_evaluated_stratum_by_stratum() {
        let r = game(
            "(role r) (node a) (node b) (node c) (node d) (edge a b) (edge b c)
             (<= (reach a) (node a)) (<= (reach ?y) (reach ?x) (edge ?x ?y))
             (<= (cut ?x) (node ?x) (not (reach ?x)))
             (<= (legal r (visit ?x)) (reach ?x) (not (cut ?x)))
             (<= (legal r (skip ?x)) (cut ?x))",
        );
        assert_eq!(moves(&r), ["(skip d)", "(visit a)", "(visit b)", "(visit c)"]);
    }

    #[test]
    fn unsafe_rules_are_rejected_with_the_rule() {
        let e = rejection("(role r) (<= (legal r ?m) (not (p ?m)))");
        assert_eq!(
            e.to_string(),
            "unsafe rule (<= (legal r ?m) (not (p ?m))): variable ?m occurs in the head \
             but in no positive literal"
        );
        let e = rejection("(role r) (p 1) (<= (legal r (m ?x)) (p ?x) (distinct ?x ?y))");
        assert!(
            matches!(
                e,
                ReferenceError::UnsafeRule {
                    place: "a distinct",
                    ..
                }
            ),
            "{e}"
        );
    }

    #[test]
    fn unstratified_rules_are_rejected_with_the_rule() {
        let e = rejection("(role r) (d 1) (<= (p ?x) (d ?x) (not (q ?x))) (<= (q ?x) (d ?x) (not (p ?x)))");
        let ReferenceError::Unstratified { rule, relation } = &e else {
            panic!("{e}");
        };
        assert!(
            rule.starts_with("(<= (p ?x)") || rule.starts_with("(<= (q ?x)"),
            "{e}"
        );
        assert!(relation == "q/1" || relation == "p/1", "{e}");
        // Rule by rule, a relation may depend negatively on other instances of itself.
        let r = game(
            "(role r) (<= (goal r 0) (true lost)) (<= (goal r 100) (not (goal r 0)))
             (legal r wait)",
        );
        assert_eq!(r.goals(&r.initial_state()).unwrap(), [vec![100]]);
        assert_eq!(r.goals(&state(&r, &["lost"])).unwrap(), [vec![0]]);
    }

    #[test]
    fn illegal_moves_and_bad_joints_are_refused() {
        let r = game(
            "(role x) (role o) (init (control x))
             (<= (legal ?p (mark 1)) (role ?p) (true (control ?p)))
             (<= (legal ?p noop) (role ?p) (not (true (control ?p))))
             (<= (next (done ?p ?m)) (does ?p ?m))",
        );
        let s = r.initial_state();
        let joint = |moves: &[&str]| moves.iter().map(|m| m.to_string()).collect::<Vec<_>>();
        let e = r.next_state(&s, &joint(&["(mark 1)", "(mark 1)"])).unwrap_err();
        assert_eq!(
            e,
            ReferenceError::IllegalMove {
                role: "o".into(),
                chosen: "(mark 1)".into()
            }
        );
        assert!(e.to_string().contains("(mark 1) is not legal for role o"));
        let e = r.next_state(&s, &joint(&["(mark 1)"])).unwrap_err();
        assert!(matches!(
            e,
            ReferenceError::WrongJointLength {
                expected: 2,
                found: 1
            }
        ));
        let next = r.next_state(&s, &joint(&["(mark 1)", "noop"])).unwrap();
        assert_eq!(next.facts(), ["(done o noop)", "(done x (mark 1))"]);
    }

    #[test]
    fn goals_are_sorted_numerically_and_must_be_integers() {
        let r = game(
            "(role r) (goal r 100) (goal r 9) (goal r 50) (<= (goal r 50) (true x))
             (<= (goal nobody 1) (true x))",
        );
        assert_eq!(r.goals(&state(&r, &["x"])).unwrap(), [vec![9, 50, 100]]);
        let e = rejection("(role r) (goal r high)");
        assert!(e.to_string().contains("goal value high is not an integer"), "{e}");
    }

    #[test]
    fn terms_keep_their_shape_and_undefined_relations_are_false() {
        let r = game(
            "(role r) (init (f)) (init f) (init (g (f) 010))
             (<= (legal r call) (true (f))) (<= (legal r constant) (true f))
             (<= (legal r number) (true (g ?x 10))) (<= (legal r never) undefined)
             (<= (legal r (nested ?y)) (true (g ?y ?n)))",
        );
        assert_eq!(
            r.initial_state().facts(),
            ["(f)", "(g (f) 010)", "f"],
            "canonical strings, sorted by bytes"
        );
        assert_eq!(moves(&r), ["(nested (f))", "call", "constant"]);
        let only_constant = state(&r, &["f"]);
        assert_eq!(r.legal_moves(&only_constant, 0).unwrap(), ["constant"]);
        assert!(r.legal_moves(&only_constant, 7).unwrap().is_empty());
    }

    #[test]
    fn zero_argument_sentences_stay_apart_from_constants() {
        // Built by hand so as not to depend on how the parser spells `(q)`.
        let mut description = ggpnet_kif::parse(
            "(role r) (init x) (<= q (true x)) (<= (legal r constant) q) (<= (legal r call) q)",
        )
        .unwrap();
        let q = description.symbols.get("q").unwrap();
        description.rules[2].head = Term::Compound(q, Vec::new());
        description.rules[4].body[0] = ggpnet_kif::Literal::Atom(Term::Compound(q, Vec::new()));
        let r = Reference::new(&description).unwrap();
        assert_eq!(moves(&r), ["call"]);
    }

    #[test]
    fn terminal_and_next_follow_the_rules() {
        let r = game(
            "(role r) (init (count 0)) (succ 0 1) (succ 1 2) (legal r tick)
             (<= (next (count ?y)) (true (count ?x)) (succ ?x ?y))
             (<= terminal (true (count 2)))",
        );
        let mut s = r.initial_state();
        let mut seen = Vec::new();
        while !r.is_terminal(&s).unwrap() {
            seen.push(s.facts());
            s = r.next_state(&s, &["tick".to_string()]).unwrap();
        }
        assert_eq!(seen, [["(count 0)"], ["(count 1)"]]);
        assert_eq!(s.facts(), ["(count 2)"]);
    }

    #[test]
    fn states_are_read_from_text() {
        let r = game("(role r) (init (cell 1 b)) (<= (legal r (mark ?x)) (true (cell ?x b)))");
        let s = state(&r, &["( cell  1 b )", "(cell 1 b)"]);
        assert_eq!(s, r.initial_state(), "canonical and deduplicated");
        let bad = |fact: &str| r.state_from_facts(&[fact.to_string()]).unwrap_err();
        assert!(bad("(cell ?x b)").to_string().contains("variable"));
        assert!(bad("(cell 2 b)").to_string().contains("occurs nowhere"));
        assert!(bad("(cell 1").to_string().contains("parse error"));
    }

    #[test]
    fn relations_too_big_to_compute_are_computed_on_demand() {
        // `far` has 40^6 instances; callers only ever ask about bound arguments.
        let mut source = String::from("(role r) (init (at 3)) (init (at 7))\n");
        for i in 0..40 {
            source.push_str(&format!("(n {i})\n"));
        }
        source.push_str(
            "(<= (far ?a ?b ?c ?d ?e ?f) (n ?a) (n ?b) (n ?c) (n ?d) (n ?e) (n ?f) (distinct ?a ?f))
             (<= (legal r (pair ?x ?y)) (true (at ?x)) (true (at ?y)) (far ?x 1 2 3 4 ?y))
             (<= (legal r (alone ?x)) (true (at ?x)) (not (far ?x 1 2 3 4 3)))",
        );
        let r = game(&source);
        assert_eq!(moves(&r), ["(alone 3)", "(pair 3 7)", "(pair 7 3)"]);
    }

    #[test]
    fn lazy_recursive_relations_follow_the_state() {
        // Reachability over empty cells of a ring, asked only from the piece's cell.
        let r = game(
            "(role r) (adj 1 2) (adj 2 3) (adj 3 4) (adj 4 5) (adj 5 1)
             (init (piece 1)) (init (empty 2)) (init (empty 3)) (init (empty 4))
             (<= (free ?x ?y) (adj ?x ?y) (true (empty ?y)))
             (<= (free ?x ?z) (adj ?x ?y) (true (empty ?y)) (free ?y ?z))
             (<= (legal r (move ?x ?y)) (true (piece ?x)) (free ?x ?y))
             (<= (next (piece ?y)) (does r (move ?x ?y)))
             (<= (next (empty ?x)) (does r (move ?x ?y)))
             (<= (next (empty ?z)) (true (empty ?z)) (does r (move ?x ?y)) (distinct ?z ?y))",
        );
        let s = r.initial_state();
        assert_eq!(
            r.legal_moves(&s, 0).unwrap(),
            ["(move 1 2)", "(move 1 3)", "(move 1 4)"]
        );
        let s = r.next_state(&s, &["(move 1 3)".to_string()]).unwrap();
        assert_eq!(s.facts(), ["(empty 1)", "(empty 2)", "(empty 4)", "(piece 3)"]);
        assert_eq!(r.legal_moves(&s, 0).unwrap(), ["(move 3 4)"]);
    }
}
