//! Exactly-one groups of base propositions: sets of bases of which exactly one
//! holds in every reachable state, such as the contents of one board cell
//! (`(cell 3 4 ?piece)`, blank included) or whose turn it is (`(control ?role)`).
//!
//! Candidates are the bases of one relation that differ in one argument and of
//! which exactly one holds initially. They are proved together by induction with
//! a SAT solver (the Houdini scheme): assuming every remaining candidate holds in a
//! non-terminal state and each role plays exactly one legal move, the solver looks
//! for a transition after which some candidate has no member or two members true.
//! A candidate it finds one for is dropped, and the rest are checked again, until
//! none is refuted: the survivors are then inductive, so they hold in every
//! reachable state. The circuit is encoded as equations (Tseitin), which within a
//! recursive component admits more fixpoints than the circuit computes; that only
//! gives the solver more transitions to refute with, so what survives is still sound.
//!
//! The solver is batsat (MiniSat's algorithm): incremental under assumptions,
//! one dependency, and interruptible, so the time budget also bounds a single
//! hard query.

use crate::ir::{Circuit, NodeKind};
use batsat::{lbool, BasicCallbacks, BasicSolver, Lit, SolverInterface, SolverOpts};
use rustc_hash::FxHashMap;
use std::time::{Duration, Instant};

/// Circuits larger than this are not analysed (the encoding grows with the circuit).
const MAX_NODES: usize = 400_000;

/// Groups of base indices (into [`Circuit::bases`]) proved exactly-one in every
/// reachable state. Gives up, returning no group, when the proof would take
/// longer than `budget`.
pub fn exactly_one_groups(circuit: &Circuit, budget: Duration) -> Vec<Vec<usize>> {
    let candidates = candidates(circuit);
    if candidates.is_empty() || circuit.nodes.len() > MAX_NODES {
        return Vec::new();
    }
    let deadline = Instant::now() + budget;
    let mut prover = Prover::new(circuit, deadline);
    let (base_nodes, _) = circuit.interface_nodes();
    let current: Vec<Lit> = base_nodes.iter().map(|n| prover.node[n.index()]).collect();
    let next: Vec<Lit> = circuit
        .bases
        .iter()
        .map(|b| prover.node[b.next.index()])
        .collect();
    let mut alive: Vec<bool> = vec![true; candidates.len()];
    let activations: Vec<Lit> = candidates
        .iter()
        .map(|group| prover.exactly_one_when(&group.iter().map(|&b| current[b]).collect::<Vec<_>>()))
        .collect();
    let at_least_two: Vec<Lit> = candidates
        .iter()
        .map(|group| prover.at_least_two_when(&group.iter().map(|&b| next[b]).collect::<Vec<_>>()))
        .collect();
    let not_terminal = !prover.node[circuit.terminal.index()];
    loop {
        let mut refuted = false;
        for g in 0..candidates.len() {
            if !alive[g] {
                continue;
            }
            if Instant::now() > deadline {
                return Vec::new();
            }
            let mut assumptions: Vec<Lit> = (0..candidates.len())
                .filter(|&h| alive[h])
                .map(|h| activations[h])
                .collect();
            assumptions.push(not_terminal);
            let base = assumptions.len();
            let violations: [Vec<Lit>; 2] = [
                vec![at_least_two[g]],
                candidates[g].iter().map(|&b| !next[b]).collect(),
            ];
            for violation in violations {
                assumptions.truncate(base);
                assumptions.extend(violation);
                match prover.solver.solve_limited(&assumptions) {
                    r if r == lbool::FALSE => continue,
                    r if r == lbool::TRUE => {}
                    _ => return Vec::new(), // interrupted at the deadline
                }
                // A counterexample transition refutes every candidate it breaks.
                for h in 0..candidates.len() {
                    let true_next = candidates[h].iter().filter(|&&b| prover.holds(next[b])).count();
                    if alive[h] && true_next != 1 {
                        alive[h] = false;
                        refuted = true;
                    }
                }
                break;
            }
        }
        if !refuted {
            break;
        }
    }
    candidates
        .into_iter()
        .zip(alive)
        .filter_map(|(group, alive)| alive.then_some(group))
        .collect()
}

/// Bases of one relation that differ only in one argument, with exactly one of
/// them true initially.
fn candidates(circuit: &Circuit) -> Vec<Vec<usize>> {
    let terms = &circuit.vocabulary.terms;
    let mut by_key: FxHashMap<(u32, usize, Vec<u32>), Vec<usize>> = FxHashMap::default();
    for (b, base) in circuit.bases.iter().enumerate() {
        let (relation, args) = (terms.functor(base.fact), terms.args(base.fact));
        for position in 0..args.len() {
            let rest: Vec<u32> = args
                .iter()
                .enumerate()
                .filter(|&(i, _)| i != position)
                .map(|(_, a)| a.index() as u32)
                .collect();
            by_key
                .entry((relation.index() as u32, position, rest))
                .or_default()
                .push(b);
        }
    }
    let mut groups: Vec<Vec<usize>> = by_key
        .into_values()
        .filter(|group| group.len() >= 2)
        .filter(|group| group.iter().filter(|&&b| circuit.bases[b].initial).count() == 1)
        .collect();
    groups.sort();
    groups.dedup();
    groups
}

/// The circuit and the move rules as clauses, with helpers for group constraints.
struct Prover {
    solver: BasicSolver,
    /// The literal of each node.
    node: Vec<Lit>,
}

impl Prover {
    /// Encodes every gate as an equation and the joint move as exactly one legal
    /// input per role; the solver gives up at `deadline`.
    fn new(circuit: &Circuit, deadline: Instant) -> Self {
        let mut callbacks = BasicCallbacks::new();
        callbacks.set_stop(move || Instant::now() > deadline);
        let mut solver = BasicSolver::new(SolverOpts::default(), callbacks);
        let node: Vec<Lit> = circuit.nodes.iter().map(|_| new_lit(&mut solver)).collect();
        let mut clause = Vec::new();
        let mut role_inputs: Vec<Vec<Lit>> = vec![Vec::new(); circuit.roles.len()];
        for (n, gate) in circuit.nodes.iter().enumerate() {
            let out = node[n];
            let ins = gate.fanin.iter().map(|i| node[i.index()]);
            match gate.kind {
                NodeKind::And => {
                    // out → every operand; all operands → out
                    clause.clear();
                    clause.push(out);
                    for i in ins {
                        add(&mut solver, &[!out, i]);
                        clause.push(!i);
                    }
                    add(&mut solver, &clause);
                }
                NodeKind::Or => {
                    // every operand → out; out → some operand
                    clause.clear();
                    clause.push(!out);
                    for i in ins {
                        add(&mut solver, &[out, !i]);
                        clause.push(i);
                    }
                    add(&mut solver, &clause);
                }
                NodeKind::Not => {
                    let i = node[gate.fanin[0].index()];
                    add(&mut solver, &[out, i]);
                    add(&mut solver, &[!out, !i]);
                }
                NodeKind::Constant(v) => add(&mut solver, &[if v { out } else { !out }]),
                NodeKind::Input(m) => {
                    let input = &circuit.inputs[m as usize];
                    add(&mut solver, &[!out, node[input.legal.index()]]);
                    role_inputs[input.role].push(out);
                }
                NodeKind::Base(_) => {}
            }
        }
        let mut prover = Prover { solver, node };
        for inputs in role_inputs {
            add(&mut prover.solver, &inputs);
            prover.at_most_one(&inputs, None);
        }
        prover
    }

    /// Clauses saying at most one of `lits` holds (a ladder of auxiliary
    /// variables), each weakened by `!guard` when there is a guard.
    fn at_most_one(&mut self, lits: &[Lit], guard: Option<Lit>) {
        let mut earlier: Option<Lit> = None; // "one of the literals so far holds"
        for &x in lits {
            let so_far = new_lit(&mut self.solver);
            let guarded =
                |clause: &[Lit]| -> Vec<Lit> { clause.iter().copied().chain(guard.map(|g| !g)).collect() };
            add(&mut self.solver, &guarded(&[!x, so_far]));
            if let Some(e) = earlier {
                add(&mut self.solver, &guarded(&[!e, so_far]));
                add(&mut self.solver, &guarded(&[!e, !x]));
            }
            earlier = Some(so_far);
        }
    }

    /// A new literal that, when assumed, makes exactly one of `members` hold.
    fn exactly_one_when(&mut self, members: &[Lit]) -> Lit {
        let active = new_lit(&mut self.solver);
        let mut clause = vec![!active];
        clause.extend(members);
        add(&mut self.solver, &clause);
        self.at_most_one(members, Some(active));
        active
    }

    /// A new literal that, when assumed, makes at least two of `members` hold.
    fn at_least_two_when(&mut self, members: &[Lit]) -> Lit {
        let mut one_so_far: Option<Lit> = None;
        let mut two_so_far: Option<Lit> = None;
        for &member in members {
            let one = new_lit(&mut self.solver);
            let two = new_lit(&mut self.solver);
            // one → one_before ∨ member; two → two_before ∨ (one_before ∧ member)
            let or_before = |l: Option<Lit>, rest: &[Lit]| -> Vec<Lit> {
                l.into_iter().chain(rest.iter().copied()).collect()
            };
            add(&mut self.solver, &or_before(one_so_far, &[!one, member]));
            add(&mut self.solver, &or_before(two_so_far, &[!two, member]));
            match one_so_far {
                Some(o) => add(&mut self.solver, &or_before(two_so_far, &[!two, o])),
                None => add(&mut self.solver, &[!two]),
            }
            one_so_far = Some(one);
            two_so_far = Some(two);
        }
        two_so_far.expect("groups have at least two members")
    }

    /// Whether `lit` holds in the last model.
    fn holds(&self, lit: Lit) -> bool {
        let value = self.solver.get_model()[lit.var().idx() as usize];
        (value == lbool::TRUE) == lit.sign()
    }
}

/// A literal of a fresh variable.
fn new_lit(solver: &mut BasicSolver) -> Lit {
    Lit::new(solver.new_var_default(), true)
}

/// Adds `clause` to the solver.
fn add(solver: &mut BasicSolver, clause: &[Lit]) {
    solver.add_clause_reuse(&mut clause.to_vec());
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::opt::OptimizeConfig;
    use crate::pipeline::{load, LoadConfig};

    /// Turns alternate, the player to move toggles a lamp, a step counter runs to 3.
    /// A second lamp starts `off` and a move turns it `on` without turning `off`
    /// off, so its two bases are a candidate (one initially) that is not invariant.
    const GAME: &str = "
        (role a) (role b)
        (init (lamp off)) (init (control a)) (init (lamp2 off)) (init (step 0))
        (succ 0 1) (succ 1 2) (succ 2 3)
        (<= (legal ?r switch) (true (control ?r)))
        (<= (legal ?r wait) (role ?r) (not (true (control ?r))))
        (<= (next (lamp on)) (does ?r switch) (true (lamp off)))
        (<= (next (lamp off)) (does ?r switch) (true (lamp on)))
        (<= (next (lamp ?s)) (true (lamp ?s)) (not (true (control a))) (not (true (control b))))
        (<= (next (lamp ?s)) (true (lamp ?s)) (does a wait) (does b wait))
        (<= (next (lamp2 on)) (does ?r switch))
        (<= (next (lamp2 ?s)) (true (lamp2 ?s)))
        (<= (next (control a)) (true (control b)))
        (<= (next (control b)) (true (control a)))
        (<= (next (step ?n)) (true (step ?m)) (succ ?m ?n))
        (<= terminal (true (step 3)))
        (<= (goal ?r 50) (role ?r))
    ";

    fn groups_of(game: &str) -> Vec<Vec<String>> {
        let loaded =
            load(game, &LoadConfig::new().optimize(OptimizeConfig::exact())).expect("the game loads");
        let circuit = &loaded.circuit;
        let mut named: Vec<Vec<String>> = exactly_one_groups(circuit, Duration::from_secs(10))
            .into_iter()
            .map(|group| {
                group
                    .iter()
                    .map(|&b| circuit.vocabulary.kif(circuit.bases[b].fact))
                    .collect()
            })
            .collect();
        named.sort();
        named
    }

    #[test]
    fn proves_the_invariant_groups_and_only_those() {
        assert_eq!(
            groups_of(GAME),
            vec![
                vec!["(control a)".to_string(), "(control b)".to_string()],
                vec!["(lamp off)".to_string(), "(lamp on)".to_string()],
                vec![
                    "(step 0)".to_string(),
                    "(step 1)".to_string(),
                    "(step 2)".to_string(),
                    "(step 3)".to_string()
                ],
            ]
        );
    }
}
