//! Cyclic components (recursion inside one state) against the reference
//! interpreter, state by state, on every evaluator: a game of paths over a
//! grid that one role opens and the other cuts. Reachability from the first
//! row is a recursion over the open cells; legality, goals and terminal read
//! it, and a second recursion over the cells open *or flipped by the move*
//! feeds the next state, so both the state's cycles and the moves' are
//! evaluated, from paths that grow, join and are cut. The propnet evaluates each
//! cyclic component to its least fixpoint (`propnet/src/layout/fixpoint.rs`);
//! a fixpoint that stops early or overshoots shows here as a different legal
//! move, goal, terminal or next state.

use ggpnet::propnet::evaluator::EvaluatorKind;
use ggpnet::propnet::{load, Loaded, Move, State, StateMachine};
use ggpnet_reference::{RefState, Reference};
use ggpnet_tools::differential::lanes_against_scalar;
use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use std::sync::Arc;

/// Side of the grid.
const SIDE: usize = 5;

/// The game: `opener` opens a closed cell, `cutter` closes a cell that
/// reaches the first row (or waits); `opener` wins once a path of open cells
/// joins the first row to the last, `cutter` if none has after 60 turns.
fn paths_game() -> String {
    let mut kif = String::from("(role opener) (role cutter) (init (control opener)) (init (step 0))\n");
    for i in 1..=SIDE {
        kif.push_str(&format!("(index {i}) "));
        if i < SIDE {
            kif.push_str(&format!("(succ {i} {}) ", i + 1));
        }
    }
    for s in 0..60 {
        kif.push_str(&format!("(tick {s} {}) ", s + 1));
    }
    kif.push_str(
        "
        (<= (adjacent ?x ?y ?a ?y) (succ ?x ?a) (index ?y))
        (<= (adjacent ?x ?y ?a ?y) (succ ?a ?x) (index ?y))
        (<= (adjacent ?x ?y ?x ?b) (succ ?y ?b) (index ?x))
        (<= (adjacent ?x ?y ?x ?b) (succ ?b ?y) (index ?x))
        (<= (legal opener (open ?x ?y)) (true (control opener)) (index ?x) (index ?y)
            (not (true (open ?x ?y))))
        (<= (legal cutter (close ?x ?y)) (true (control cutter)) (reach ?x ?y))
        (<= (legal cutter wait) (true (control cutter)))
        (<= (legal opener wait) (true (control cutter)))
        (<= (legal cutter wait) (true (control opener)))
        (<= (flipped ?x ?y) (does opener (open ?x ?y)))
        (<= (flipped ?x ?y) (does cutter (close ?x ?y)))
        (<= (next (open ?x ?y)) (does opener (open ?x ?y)))
        (<= (next (open ?x ?y)) (true (open ?x ?y)) (not (flipped ?x ?y)))
        (<= (next (control opener)) (true (control cutter)))
        (<= (next (control cutter)) (true (control opener)))
        (<= (next (step ?n)) (true (step ?m)) (tick ?m ?n))
        (<= (reach ?x 1) (true (open ?x 1)))
        (<= (reach ?x ?y) (reach ?a ?b) (adjacent ?a ?b ?x ?y) (true (open ?x ?y)))
        (<= (link ?x ?y) (true (open ?x ?y)))
        (<= (link ?x ?y) (flipped ?x ?y))
        (<= (wet ?x 1) (link ?x 1))
        (<= (wet ?x ?y) (wet ?a ?b) (adjacent ?a ?b ?x ?y) (link ?x ?y))
        (<= (next (soaked ?x ?y)) (wet ?x ?y))
        (<= across (reach ?x 5))
        (<= terminal across)
        (<= terminal (true (step 60)))
        (<= (goal opener 100) across) (<= (goal opener 0) (not across))
        (<= (goal cutter 0) across) (<= (goal cutter 100) (not across))",
    );
    kif
}

fn loaded() -> (Loaded, Reference) {
    let source = paths_game();
    let loaded = load(&source, &Default::default()).expect("the game loads");
    let description = ggpnet::kif::parse(&source).expect("the game parses");
    let reference = Reference::new(&description).expect("the reference loads it");
    (loaded, reference)
}

/// What a playout on one evaluator saw: paths cut and games won by a path.
#[derive(Default)]
struct Seen {
    steps: usize,
    cuts: usize,
    joined: usize,
}

/// Plays random playouts on `machine` and the reference side by side,
/// comparing the state, every role's legal moves, terminal and goals.
fn against_reference(machine: &mut StateMachine, reference: &Reference, seed: u64, seen: &mut Seen) {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    for playout in 0..40 {
        let mut state = machine.initial_state();
        let mut ref_state = reference.initial_state();
        for step in 0.. {
            let at = format!("seed {seed}, playout {playout}, step {step}");
            assert_eq!(machine.state_to_kif(&state), ref_state.facts(), "{at}: state");
            let terminal = machine.is_terminal(&state);
            assert_eq!(
                terminal,
                reference.is_terminal(&ref_state).unwrap(),
                "{at}: terminal"
            );
            assert_eq!(
                machine.goals(&state),
                reference.goals(&ref_state).unwrap(),
                "{at}: goals"
            );
            seen.steps += 1;
            if terminal {
                seen.joined += usize::from(machine.goals(&state)[0] == [100]);
                break;
            }
            (state, ref_state) = play(machine, reference, (&state, &ref_state), &mut rng, seen, &at);
        }
    }
}

/// Compares the legal moves of every role and plays a random joint move.
fn play(
    machine: &mut StateMachine,
    reference: &Reference,
    (state, ref_state): (&State, &RefState),
    rng: &mut Xoshiro256PlusPlus,
    seen: &mut Seen,
    at: &str,
) -> (State, RefState) {
    let mut joint: Vec<Move> = Vec::new();
    let mut joint_text = Vec::new();
    for role in 0..2 {
        let legal = machine.legal_moves(state, role);
        let mut ours: Vec<String> = legal.iter().map(|&m| machine.move_to_kif(m).to_owned()).collect();
        ours.sort_unstable();
        let theirs = reference.legal_moves(ref_state, role).unwrap();
        assert_eq!(ours, theirs, "{at}: legal moves of role {role}");
        // The cutter waits more often than not, so that paths also join.
        let wait = legal.iter().position(|&m| machine.move_to_kif(m) == "wait");
        let chosen = match wait {
            Some(w) if rng.gen_bool(0.7) => legal[w],
            _ => legal[rng.gen_range(0..legal.len())],
        };
        let text = machine.move_to_kif(chosen).to_owned();
        seen.cuts += usize::from(text.starts_with("(close"));
        joint.push(chosen);
        joint_text.push(text);
    }
    let next = machine.next_state(state, &joint).expect("a legal joint move");
    let ref_next = reference.next_state(ref_state, &joint_text).unwrap();
    (next, ref_next)
}

#[test]
fn cyclic_components_agree_with_the_reference_on_every_scalar_evaluator() {
    let (loaded, reference) = loaded();
    assert!(
        loaded.report.sccs >= 2,
        "{} cyclic components",
        loaded.report.sccs
    );
    for kind in EvaluatorKind::ALL.into_iter().filter(|k| k.is_scalar()) {
        let mut machine = StateMachine::with_evaluator(Arc::clone(&loaded.game), kind);
        let mut seen = Seen::default();
        for seed in [1, 2] {
            against_reference(&mut machine, &reference, seed, &mut seen);
        }
        let name = kind.name();
        assert!(seen.steps > 500, "{name}: {} states compared", seen.steps);
        assert!(seen.cuts > 50, "{name}: {} paths cut", seen.cuts);
        assert!(seen.joined > 5, "{name}: {} games won by a path", seen.joined);
    }
}

#[test]
fn cyclic_components_on_the_lanes_make_the_scalar_drivers_moves() {
    let (loaded, _) = loaded();
    for seed in [1, 5] {
        let report = lanes_against_scalar(&loaded.game, seed, 40);
        assert_eq!(report.first_difference, None, "seed {seed}");
        assert!(report.playouts >= 16, "{} lanes checked", report.playouts);
    }
}
