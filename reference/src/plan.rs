//! Join plans: the order in which a clause's body literals are evaluated.
//!
//! A plan is built greedily. Every literal whose variables are all bound becomes a
//! check as soon as possible: a negative literal, a `distinct`, an equality, or a
//! positive literal that is fully bound (a membership test). Among the remaining
//! positive literals the one with the smallest estimated number of matches is joined
//! next, through an index on whatever its bound arguments are. This is where the
//! rule "evaluate `distinct` only once its variables are bound" is implemented: a
//! check is never placed before the literals that bind it.
//!
//! For semi-naive evaluation a plan can start with a *delta* literal: that literal
//! reads only the facts found in the previous round.

use crate::pattern::Pat;
use crate::program::{CClause, CLit, PredId};
use crate::relation::{IndexSpec, SpecEntry};
use crate::terms::TermId;

/// Where a key subterm of an index lookup comes from.
#[derive(Clone, Debug)]
pub(crate) enum KeySource {
    /// A ground subterm of the pattern.
    Ground(TermId),
    /// The value of a bound variable.
    Var(u32),
}

/// How a scan finds its candidate facts.
#[derive(Clone, Debug)]
pub(crate) struct IndexUse {
    /// What the index files facts under.
    pub(crate) spec: IndexSpec,
    /// The index number in the relation, set by [`Plan::attach_indexes`].
    pub(crate) number: usize,
    /// The key subterms, in the order of the spec's keys.
    pub(crate) keys: Vec<KeySource>,
}

/// One step of a join.
#[derive(Clone, Debug)]
pub(crate) enum Step {
    /// Match the pattern against the facts of a relation (all of them, or those an
    /// index files under the current key), binding its free variables.
    Scan {
        /// The relation.
        pred: PredId,
        /// The sentence pattern.
        pattern: Pat,
        /// The index to narrow the candidates, if any.
        index: Option<IndexUse>,
    },
    /// Match the pattern against the facts new in the previous round.
    ScanDelta {
        /// The sentence pattern.
        pattern: Pat,
    },
    /// The fully bound sentence must hold (or, when `negated`, must not).
    Member {
        /// The relation.
        pred: PredId,
        /// The sentence pattern, all of whose variables are bound.
        pattern: Pat,
        /// True for a negative literal.
        negated: bool,
    },
    /// The two bound terms must differ.
    Distinct(Pat, Pat),
    /// The two bound terms must be equal.
    Equal(Pat, Pat),
}

/// An evaluation order for one clause.
#[derive(Clone, Debug)]
pub(crate) struct Plan {
    /// The relation of the head.
    pub(crate) head_pred: PredId,
    /// The head sentence.
    pub(crate) head: Pat,
    /// The variables of the head, each once.
    pub(crate) head_vars: Vec<u32>,
    /// Number of variables of the clause.
    pub(crate) vars: usize,
    /// The relation read as a delta by the first step, if any.
    pub(crate) delta: Option<PredId>,
    /// The steps, in order.
    pub(crate) steps: Vec<Step>,
    /// The body position of the literal of each step.
    pub(crate) order: Vec<usize>,
}

impl Plan {
    /// Plans `clause`; with `delta = Some(i)`, body literal `i` (which must be
    /// positive) is read from the delta first. `estimate(pred, spec)` guesses how
    /// many facts of `pred` a lookup through `spec` returns.
    pub(crate) fn new(
        clause: &CClause,
        delta: Option<usize>,
        estimate: &dyn Fn(PredId, &IndexSpec) -> f64,
    ) -> Plan {
        let mut bound = vec![false; clause.vars];
        let mut placed = vec![false; clause.body.len()];
        let mut steps = Vec::new();
        let mut order = Vec::new();
        let mut delta_pred = None;
        if let Some(i) = delta {
            if let Some(CLit::Pos(pred, pattern)) = clause.body.get(i) {
                steps.push(Step::ScanDelta {
                    pattern: pattern.clone(),
                });
                bind_all(pattern, &mut bound);
                placed[i] = true;
                order.push(i);
                delta_pred = Some(*pred);
            }
        }
        loop {
            for (i, lit) in clause.body.iter().enumerate() {
                if placed[i] {
                    continue;
                }
                if let Some(check) = as_check(lit, &bound) {
                    steps.push(check);
                    placed[i] = true;
                    order.push(i);
                }
            }
            let mut best: Option<Candidate> = None;
            for (i, lit) in clause.body.iter().enumerate() {
                let CLit::Pos(pred, pattern) = lit else {
                    continue;
                };
                if placed[i] {
                    continue;
                }
                let (spec, keys) = index_spec(pattern, &bound);
                let cost = estimate(*pred, &spec);
                if best.as_ref().is_none_or(|b| cost < b.cost) {
                    best = Some(Candidate {
                        cost,
                        position: i,
                        pred: *pred,
                        pattern,
                        spec,
                        keys,
                    });
                }
            }
            let Some(Candidate {
                position: i,
                pred,
                pattern,
                spec,
                keys,
                ..
            }) = best
            else {
                break;
            };
            let index = (!spec.entries.is_empty()).then_some(IndexUse {
                spec,
                number: 0,
                keys,
            });
            steps.push(Step::Scan {
                pred,
                pattern: pattern.clone(),
                index,
            });
            bind_all(pattern, &mut bound);
            placed[i] = true;
            order.push(i);
        }
        debug_assert!(placed.iter().all(|&p| p), "safe clauses place every literal");
        let mut head_vars = Vec::new();
        clause.head.for_each_var(&mut |v| {
            if !head_vars.contains(&v) {
                head_vars.push(v);
            }
        });
        Plan {
            head_pred: clause.head_pred,
            head: clause.head.clone(),
            head_vars,
            vars: clause.vars,
            delta: delta_pred,
            steps,
            order,
        }
    }

    /// Asks `index_for(pred, spec)` for the number of every index the plan uses.
    pub(crate) fn attach_indexes(&mut self, mut index_for: impl FnMut(PredId, &IndexSpec) -> usize) {
        for step in &mut self.steps {
            if let Step::Scan {
                pred,
                index: Some(index),
                ..
            } = step
            {
                index.number = index_for(*pred, &index.spec);
            }
        }
    }
}

/// A positive literal that could be joined next, with what joining it would take.
struct Candidate<'c> {
    cost: f64,
    position: usize,
    pred: PredId,
    pattern: &'c Pat,
    spec: IndexSpec,
    keys: Vec<KeySource>,
}

fn bind_all(pattern: &Pat, bound: &mut [bool]) {
    pattern.for_each_var(&mut |v| bound[v as usize] = true);
}

/// The check `lit` becomes once all its variables are bound, if they are.
fn as_check(lit: &CLit, bound: &[bool]) -> Option<Step> {
    match lit {
        CLit::Pos(pred, pattern) | CLit::Neg(pred, pattern) if pattern.is_bound_by(bound) => {
            Some(Step::Member {
                pred: *pred,
                pattern: pattern.clone(),
                negated: matches!(lit, CLit::Neg(..)),
            })
        }
        CLit::Distinct(a, b) if a.is_bound_by(bound) && b.is_bound_by(bound) => {
            Some(Step::Distinct(a.clone(), b.clone()))
        }
        CLit::Equal(a, b) if a.is_bound_by(bound) && b.is_bound_by(bound) => {
            Some(Step::Equal(a.clone(), b.clone()))
        }
        _ => None,
    }
}

/// The index a scan of `pattern` can use when the variables in `bound` are bound:
/// the shape of every function term that still has a free variable, and the
/// subterms that are ground or bound variables as the key.
fn index_spec(pattern: &Pat, bound: &[bool]) -> (IndexSpec, Vec<KeySource>) {
    let mut spec = IndexSpec::default();
    let mut keys = Vec::new();
    // The root's shape is the relation's own, so the walk starts at its arguments.
    if let Pat::Compound(_, args) = pattern {
        let mut work: Vec<(Vec<u16>, &Pat)> = Vec::new();
        for (i, arg) in args.iter().enumerate().rev() {
            work.push((vec![i as u16], arg));
        }
        while let Some((path, pat)) = work.pop() {
            match pat {
                Pat::Ground(g) => {
                    spec.entries.push(SpecEntry::Key(path.into()));
                    keys.push(KeySource::Ground(*g));
                }
                Pat::Var(v) if bound[*v as usize] => {
                    spec.entries.push(SpecEntry::Key(path.into()));
                    keys.push(KeySource::Var(*v));
                }
                Pat::Var(_) => {}
                Pat::Compound(f, args) => {
                    for (i, arg) in args.iter().enumerate().rev() {
                        let mut sub = path.clone();
                        sub.push(i as u16);
                        work.push((sub, arg));
                    }
                    spec.entries.push(SpecEntry::Shape {
                        path: path.into(),
                        functor: *f,
                        arity: args.len(),
                    });
                }
            }
        }
    }
    (spec, keys)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::normalize::normalize;
    use crate::program::{Program, Rules};
    use crate::terms::{TermStore, Terms};

    /// Plans the first clause of `source`; `estimate` sees relation names.
    fn plan_first(source: &str, estimate: &dyn Fn(&str, &IndexSpec) -> f64) -> Plan {
        let description = ggpnet_kif::parse(source).unwrap();
        let clauses = normalize(&description, &mut description.symbols.clone()).unwrap();
        let empty = TermStore::default();
        let mut terms = Terms::over(&empty);
        let rules = Rules::compile(&clauses, &mut terms);
        let program = Program::new(rules, &terms).unwrap();
        let by_name = |pred: PredId, spec: &IndexSpec| {
            let name = description.symbols.name(program.preds.key(pred).0);
            estimate(name, spec)
        };
        Plan::new(&program.clauses[0], None, &by_name)
    }

    #[test]
    fn checks_wait_for_their_variables_then_come_first() {
        let plan = plan_first(
            "(<= (foo ?a ?b) (distinct ?a ?b) (p ?a) (not (r ?a)) (q ?b))",
            &|_, _| 10.0,
        );
        let kinds: Vec<&str> = plan
            .steps
            .iter()
            .map(|s| match s {
                Step::Scan { .. } => "scan",
                Step::ScanDelta { .. } => "delta",
                Step::Member { negated: true, .. } => "not",
                Step::Member { .. } => "member",
                Step::Distinct(..) => "distinct",
                Step::Equal(..) => "equal",
            })
            .collect();
        assert_eq!(kinds, ["scan", "not", "scan", "distinct"]);
        assert_eq!(plan.order, [1, 2, 3, 0]);
        assert_eq!(plan.head_vars, [0, 1]);
    }

    #[test]
    fn bound_arguments_become_keys_and_cheaper_literals_go_first() {
        // Pretend q is much smaller than p: it is scanned first, then p by key.
        let plan = plan_first("(<= (h ?x) (p (f ?x ?y) a) (q ?y))", &|name, spec| {
            let size = if name == "q" { 5.0 } else { 100.0 };
            size / 10f64.powi(spec.keys() as i32)
        });
        let Step::Scan {
            index: Some(index), ..
        } = &plan.steps[1]
        else {
            panic!("expected an indexed scan: {plan:?}");
        };
        // (p (f ?x ?y) a) with ?y bound: shape of (f _ _), keys ?y and a.
        assert_eq!(index.spec.entries.len(), 3);
        assert!(matches!(
            index.keys[..],
            [KeySource::Var(_), KeySource::Ground(_)]
        ));
    }
}
