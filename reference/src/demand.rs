//! The demand transformation (also known as "magic sets"): rewriting rules so that
//! chosen relations are computed only for the argument values their callers ask for.
//!
//! Many games define relations meant to be queried top-down with bound arguments:
//! `(threatened_with_capture ?owner ?cx ?cy ?x ?y ?ignorex ?ignorey)` in chess has
//! millions of instances, of which a state needs a few hundred. Computed bottom-up in
//! full they make the interpreter crawl. For such a *lazy* relation `p`:
//!
//! - every body literal over `p` is given an *adornment*: the argument positions
//!   bound by the literals before it. "Before" is the order in which a top-down
//!   prover reads the body, the order game authors write for: left to right, with
//!   negations and `distinct` moved after the literals that bind their variables;
//! - a *demand* relation `d` stands for "these values of those arguments are asked
//!   for". A demand rule derives `(d args...)` from the literals evaluated before the
//!   call (positive ones and `distinct`; negative literals are left out, which only
//!   asks for more than needed);
//! - each rule of `p` gets a copy per adornment, whose body starts with the demand
//!   literal over the head's arguments at those positions.
//!
//! The facts of `p` derived this way are all true facts of `p`, and every fact a
//! caller can use was asked for: whenever a caller's body holds, the literals before
//! the call hold, so the demand for the values it uses was derived. The rewritten
//! program is evaluated by the same bottom-up engine; its analysis (components,
//! stratification, static or dynamic) is redone from scratch.

use crate::pattern::Pat;
use crate::plan::Plan;
use crate::program::{CClause, CLit, PredId, Rules};
use crate::terms::Terms;
use ggpnet_kif::{SymbolId, SymbolTable};
use std::collections::HashMap;

/// Argument positions bound at a call, in increasing order.
type Adornment = Vec<u16>;

/// Rewrites `rules` so that every relation marked in `lazy` is computed on demand.
/// Only the rules of the relations marked in `needed` are kept. New demand relations
/// get symbols in `symbols` that no game can spell (their names contain spaces).
///
/// Also returns, for each relation of the result, the lazy relation it is a demand
/// relation of, if it is one. Fails with the lazy relations that some caller reads
/// with no argument bound: they must be computed in full. The rules of such a
/// relation are then followed as those of an eager one at once, so that one failed
/// rewrite finds a whole chain of them.
pub(crate) fn transform(
    rules: &Rules,
    lazy: &[bool],
    needed: &[bool],
    symbols: &mut SymbolTable,
    terms: &mut Terms,
) -> Result<(Rules, Vec<Option<PredId>>), Vec<PredId>> {
    let mut rewriter = Rewriter {
        rules,
        lazy: lazy.to_vec(),
        symbols,
        terms,
        out: Rules {
            preds: rules.preds.clone(),
            clauses: Vec::new(),
            facts: rules.facts.clone(),
        },
        demands: HashMap::new(),
        work: Vec::new(),
        eager_calls: Vec::new(),
    };
    for clause in &rules.clauses {
        let head = clause.head_pred.index();
        if needed[head] && !lazy[head] {
            rewriter.expand(clause.clone());
        }
    }
    let mut rules_of = vec![Vec::new(); rules.preds.len()];
    for clause in &rules.clauses {
        rules_of[clause.head_pred.index()].push(clause);
    }
    while let Some(work) = rewriter.work.pop() {
        let pred = match &work {
            Work::Demanded(pred, ..) | Work::Eager(pred) => *pred,
        };
        for &clause in &rules_of[pred.index()] {
            let clause = match &work {
                Work::Demanded(_, adornment, demand) => rewriter.with_demand(clause, adornment, *demand),
                Work::Eager(_) => clause.clone(),
            };
            rewriter.expand(clause);
        }
    }
    let mut eager = rewriter.eager_calls;
    if eager.is_empty() {
        let mut demand_for = vec![None; rewriter.out.preds.len()];
        for ((pred, _), (demand, _)) in rewriter.demands {
            demand_for[demand.index()] = Some(pred);
        }
        Ok((rewriter.out, demand_for))
    } else {
        eager.sort_unstable();
        eager.dedup();
        Err(eager)
    }
}

/// Rules still to expand: those of a lazy relation for one adornment, or those of
/// a relation found to be needed in full.
enum Work {
    Demanded(PredId, Adornment, (PredId, SymbolId)),
    Eager(PredId),
}

struct Rewriter<'a, 't> {
    rules: &'a Rules,
    /// Per relation: still lazy.
    lazy: Vec<bool>,
    symbols: &'a mut SymbolTable,
    terms: &'a mut Terms<'t>,
    out: Rules,
    /// The demand relation of each (lazy relation, adornment), with its symbol.
    demands: HashMap<(PredId, Adornment), (PredId, SymbolId)>,
    /// Rules still to expand.
    work: Vec<Work>,
    /// Lazy relations read with no argument bound.
    eager_calls: Vec<PredId>,
}

impl Rewriter<'_, '_> {
    /// Adds `clause` to the output, with a demand rule for each of its calls of a
    /// lazy relation.
    fn expand(&mut self, clause: CClause) {
        // With every literal guessed the same size, the planner keeps source order
        // and only moves checks to where their variables are bound.
        let order = Plan::new(&clause, None, &|_, _| 1.0).order;
        let mut bound = vec![false; clause.vars];
        let mut prefix: Vec<CLit> = Vec::new();
        for position in order {
            let lit = &clause.body[position];
            if let CLit::Pos(pred, pattern) | CLit::Neg(pred, pattern) = lit {
                if self.lazy.get(pred.index()) == Some(&true) {
                    let adornment = self.bound_positions(pattern, &bound);
                    if adornment.is_empty() {
                        self.lazy[pred.index()] = false;
                        self.eager_calls.push(*pred);
                        self.work.push(Work::Eager(*pred));
                    } else {
                        let demand = self.demand(*pred, &adornment);
                        let head = self.project(pattern, &adornment, demand.1);
                        self.out.add(CClause {
                            head_pred: demand.0,
                            head,
                            body: prefix.clone(),
                            vars: clause.vars,
                            rule: clause.rule,
                        });
                    }
                }
            }
            match lit {
                CLit::Pos(_, pattern) => {
                    pattern.for_each_var(&mut |v| bound[v as usize] = true);
                    prefix.push(lit.clone());
                }
                CLit::Distinct(..) | CLit::Equal(..) => prefix.push(lit.clone()),
                CLit::Neg(..) => {}
            }
        }
        self.out.add(clause);
    }

    /// The copy of `clause` that derives only what demand `demand` asks for.
    fn with_demand(&mut self, clause: &CClause, adornment: &[u16], demand: (PredId, SymbolId)) -> CClause {
        let mut copy = clause.clone();
        let head = self.project(&clause.head, adornment, demand.1);
        copy.body.insert(0, CLit::Pos(demand.0, head));
        copy
    }

    /// The demand relation for calls of `pred` with `adornment`, made if new.
    fn demand(&mut self, pred: PredId, adornment: &Adornment) -> (PredId, SymbolId) {
        if let Some(&demand) = self.demands.get(&(pred, adornment.clone())) {
            return demand;
        }
        let (name, arity) = self.rules.preds.key(pred);
        let symbol = self.symbols.intern(&format!(
            "(demand {}/{arity} {adornment:?})",
            self.symbols.name(name)
        ));
        let id = self.out.preds.id(symbol, adornment.len());
        self.demands.insert((pred, adornment.clone()), (id, symbol));
        self.work
            .push(Work::Demanded(pred, adornment.clone(), (id, symbol)));
        (id, symbol)
    }

    /// The argument positions of the sentence `pattern` whose variables are all bound.
    fn bound_positions(&self, pattern: &Pat, bound: &[bool]) -> Adornment {
        match pattern {
            Pat::Ground(g) => (0..self.terms.args(*g).len() as u16).collect(),
            Pat::Var(_) => Vec::new(),
            Pat::Compound(_, args) => (0..args.len() as u16)
                .filter(|&i| args[usize::from(i)].is_bound_by(bound))
                .collect(),
        }
    }

    /// The sentence `(functor a_i...)` of the arguments of `pattern` at `positions`.
    fn project(&mut self, pattern: &Pat, positions: &[u16], functor: SymbolId) -> Pat {
        let args: Vec<Pat> = match pattern {
            Pat::Ground(g) => {
                let all = self.terms.args(*g);
                positions
                    .iter()
                    .map(|&i| Pat::Ground(all[usize::from(i)]))
                    .collect()
            }
            Pat::Compound(_, all) => positions.iter().map(|&i| all[usize::from(i)].clone()).collect(),
            Pat::Var(_) => Vec::new(),
        };
        Pat::compound(functor, args.into(), self.terms)
    }
}
