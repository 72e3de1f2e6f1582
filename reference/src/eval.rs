//! Bottom-up evaluation: joins that run a [`Plan`], and the fixpoint of one
//! component of the dependency graph.
//!
//! A component is evaluated by semi-naive iteration: a first round runs every
//! clause over all known facts; each later round runs, for every recursive
//! literal of every clause, a plan that reads that literal from the facts that
//! were new in the previous round (the *delta*) and everything else from all facts.
//! A derivation that uses a fact new in round k is thus found in round k + 1, and
//! the iteration stops when a round finds nothing new. Non-recursive components
//! finish after the first round. Facts are added after each plan has run, so a join
//! never sees its relation change under it.

use crate::database::Db;
use crate::pattern::{find, instantiate, matches, same, Bindings, Pat};
use crate::plan::{KeySource, Plan, Step};
use crate::program::PredId;
use crate::relation::key_hash;
use crate::terms::{TermId, Terms};

/// The plans of one component.
#[derive(Clone, Debug, Default)]
pub(crate) struct ComponentPlans {
    /// The relations of the component.
    pub(crate) preds: Vec<PredId>,
    /// One plan per clause, reading whole relations.
    pub(crate) first: Vec<Plan>,
    /// One plan per recursive literal of a clause, starting with that literal's delta.
    pub(crate) deltas: Vec<Plan>,
}

/// A component needed more work than its budget allowed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Overflow;

/// What an evaluation may still do: derivations (rule instances whose body
/// holds) and join steps (candidate facts tried, whether they match or not).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Budget {
    derivations: usize,
    steps: usize,
}

impl Budget {
    /// At most `derivations` derivations and `steps` join steps.
    pub(crate) fn new(derivations: usize, steps: usize) -> Budget {
        Budget { derivations, steps }
    }

    /// At most `n` join steps (and so at most that many derivations).
    pub(crate) fn steps(n: usize) -> Budget {
        Budget {
            derivations: usize::MAX,
            steps: n,
        }
    }
}

/// Evaluates a component to its fixpoint, adding the facts found to `db`. The
/// work done is taken from `budget`; past it the evaluation stops with the
/// facts found so far.
pub(crate) fn evaluate(
    plans: &ComponentPlans,
    db: &mut impl Db,
    terms: &mut Terms,
    budget: &mut Budget,
) -> Result<(), Overflow> {
    let fresh = || vec![Vec::new(); plans.preds.len()];
    let mut new_facts: Vec<Vec<TermId>> = fresh();
    for plan in &plans.first {
        derive(plan, &[], plans, db, terms, &mut new_facts, budget)?;
    }
    while new_facts.iter().any(|facts| !facts.is_empty()) {
        let delta = std::mem::replace(&mut new_facts, fresh());
        for plan in &plans.deltas {
            let Some(slot) = plan.delta.and_then(|p| slot_of(plans, p)) else {
                continue;
            };
            if !delta[slot].is_empty() {
                derive(plan, &delta[slot], plans, db, terms, &mut new_facts, budget)?;
            }
        }
    }
    Ok(())
}

fn slot_of(plans: &ComponentPlans, pred: PredId) -> Option<usize> {
    plans.preds.iter().position(|&p| p == pred)
}

/// Runs `plan` and adds the head instances it finds; the new ones are also
/// recorded in `new_facts`. The derivations made are taken from `budget`.
fn derive(
    plan: &Plan,
    delta: &[TermId],
    plans: &ComponentPlans,
    db: &mut impl Db,
    terms: &mut Terms,
    new_facts: &mut [Vec<TermId>],
    budget: &mut Budget,
) -> Result<(), Overflow> {
    if let Pat::Ground(head) = plan.head {
        if db.relation(plan.head_pred).contains(head) {
            return Ok(());
        }
    }
    let mut join = Join {
        plan,
        db: &*db,
        terms: &*terms,
        delta,
        bindings: Bindings::new(plan.vars),
        found: 0,
        steps: 0,
        budget: *budget,
        head_values: Vec::new(),
        done: false,
    };
    join.run(0);
    let (found, steps, head_values) = (join.found, join.steps, join.head_values);
    if found > budget.derivations || steps > budget.steps {
        return Err(Overflow);
    }
    budget.derivations -= found;
    budget.steps -= steps;
    if found == 0 {
        return Ok(());
    }
    let slot = slot_of(plans, plan.head_pred);
    let mut bindings = Bindings::new(plan.vars);
    let mut add = |bindings: &Bindings| {
        let Some(fact) = instantiate(&plan.head, terms, bindings) else {
            return;
        };
        if db.relation_mut(plan.head_pred).insert(fact, terms) {
            if let Some(slot) = slot {
                new_facts[slot].push(fact);
            }
        }
    };
    let width = plan.head_vars.len();
    if width == 0 {
        add(&bindings);
        return Ok(());
    }
    for values in head_values.chunks_exact(width) {
        for (&var, &value) in plan.head_vars.iter().zip(values) {
            bindings.bind(var, value);
        }
        add(&bindings);
        bindings.undo(0);
    }
    Ok(())
}

/// The state of one run of a plan: a depth-first search over its steps, one level
/// per step (so the depth is bounded by the length of one rule body).
struct Join<'a, 't, D: Db> {
    plan: &'a Plan,
    db: &'a D,
    terms: &'a Terms<'t>,
    delta: &'a [TermId],
    bindings: Bindings,
    /// Number of derivations.
    found: usize,
    /// Number of candidate facts tried.
    steps: usize,
    /// The work allowed; the search stops after one more derivation or step.
    budget: Budget,
    /// The values of the head variables, `plan.head_vars.len()` per derivation.
    head_values: Vec<TermId>,
    /// Set once a ground head is derived: one derivation is enough.
    done: bool,
}

impl<D: Db> Join<'_, '_, D> {
    fn run(&mut self, at: usize) {
        let plan = self.plan;
        let Some(step) = plan.steps.get(at) else {
            self.emit();
            return;
        };
        let (db, terms) = (self.db, self.terms);
        match step {
            Step::Scan { pred, pattern, index } => {
                let relation = db.relation(*pred);
                let candidates = match index {
                    None => relation.facts(),
                    Some(index) => match self.key(&index.keys) {
                        Some(key) => relation.lookup(index.number, key),
                        None => &[],
                    },
                };
                self.each_match(pattern, candidates, at);
            }
            Step::ScanDelta { pattern } => self.each_match(pattern, self.delta, at),
            Step::Member {
                pred,
                pattern,
                negated,
            } => {
                let holds = find(pattern, terms, &self.bindings)
                    .is_some_and(|fact| db.relation(*pred).contains(fact));
                if holds != *negated {
                    self.run(at + 1);
                }
            }
            Step::Distinct(a, b) => {
                if !same(a, b, terms, &self.bindings) {
                    self.run(at + 1);
                }
            }
            Step::Equal(a, b) => {
                if same(a, b, terms, &self.bindings) {
                    self.run(at + 1);
                }
            }
        }
    }

    /// Runs the rest of the plan once for every candidate `pattern` matches.
    fn each_match(&mut self, pattern: &Pat, candidates: &[TermId], at: usize) {
        for &fact in candidates {
            if self.done {
                return;
            }
            self.steps += 1;
            if self.steps > self.budget.steps {
                self.done = true;
                return;
            }
            let mark = self.bindings.mark();
            if matches(pattern, fact, self.terms, &mut self.bindings) {
                self.run(at + 1);
            }
            self.bindings.undo(mark);
        }
    }

    /// The hash of an index key under the current bindings.
    fn key(&self, keys: &[KeySource]) -> Option<u64> {
        key_hash(keys.iter().map(|k| match k {
            KeySource::Ground(g) => Some(*g),
            KeySource::Var(v) => self.bindings.get(*v),
        }))
    }

    fn emit(&mut self) {
        let start = self.head_values.len();
        for &var in &self.plan.head_vars {
            match self.bindings.get(var) {
                Some(value) => self.head_values.push(value),
                None => {
                    // Unreachable for safe clauses; never derive from a partial binding.
                    self.head_values.truncate(start);
                    return;
                }
            }
        }
        self.found += 1;
        self.done = self.plan.head_vars.is_empty() || self.found > self.budget.derivations;
    }
}
