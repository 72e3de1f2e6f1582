//! Differential testing: random playouts played on the propnet and on the
//! reference interpreter side by side, comparing at every step the state, every
//! role's legal moves, terminal and goals, and every role's percepts (GDL-II)
//! after the joint move; and the lanes evaluator against the
//! scalar playout driver, move by move, on the same random streams.

use ggpnet::propnet::driver::LanePlayouts;
use ggpnet::propnet::driver::{Playout, PlayoutTotals};
use ggpnet::propnet::evaluator::EvaluatorKind;
use ggpnet::propnet::evaluator::LANES;
use ggpnet::propnet::random::Stream;
use ggpnet::propnet::{Game, Loaded, Move, State, StateMachine};
use ggpnet_reference::{RefState, Reference};
use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use std::sync::Arc;

/// The outcome of a differential run.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DiffReport {
    /// Playouts played.
    pub playouts: usize,
    /// States compared.
    pub steps: usize,
    /// The first disagreement, if any.
    pub first_difference: Option<String>,
}

/// Plays `playouts` random playouts of at most `max_steps` moves (moves drawn
/// from the propnet's legal lists with a generator seeded by `seed`).
pub fn differential(
    loaded: &Loaded,
    reference: &Reference,
    playouts: usize,
    max_steps: usize,
    seed: u64,
) -> DiffReport {
    let machine = loaded.machine();
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    let mut report = DiffReport::default();
    let roles = machine.roles().to_vec();
    if roles != reference.roles() {
        report.first_difference = Some(format!(
            "roles: propnet {roles:?}, reference {:?}",
            reference.roles()
        ));
        return report;
    }
    let mut sides = SideBySide {
        machine,
        reference,
        roles,
    };
    for playout in 0..playouts {
        report.playouts += 1;
        let mut state = sides.machine.initial_state();
        let mut ref_state = reference.initial_state();
        for step in 0..=max_steps {
            report.steps += 1;
            match sides.compare(&state, &ref_state, step == max_steps, &mut rng) {
                Ok(Some(next)) => (state, ref_state) = next,
                Ok(None) => break,
                Err(e) => {
                    report.first_difference = Some(format!("playout {playout} step {step}: {e}"));
                    return report;
                }
            }
        }
    }
    report
}

/// The propnet's state machine and the reference interpreter of one game
/// (with the same roles), played side by side.
struct SideBySide<'a> {
    machine: StateMachine,
    reference: &'a Reference,
    roles: Vec<String>,
}

impl SideBySide<'_> {
    /// Compares the propnet in `state` with the reference in `ref_state`
    /// (state, terminal, goals); the next states after a random joint move, or
    /// `None` where the playout ends (terminal, or the `last` step).
    fn compare(
        &mut self,
        state: &State,
        ref_state: &RefState,
        last: bool,
        rng: &mut Xoshiro256PlusPlus,
    ) -> Result<Option<(State, RefState)>, String> {
        let ours = self.machine.state_to_kif(state);
        let theirs = ref_state.facts();
        if ours != theirs {
            return Err(format!("state: propnet {ours:?}, reference {theirs:?}"));
        }
        let terminal = self.machine.is_terminal(state);
        if terminal
            != self
                .reference
                .is_terminal(ref_state)
                .map_err(|e| format!("reference: {e}"))?
        {
            return Err(format!("terminal: propnet {terminal}"));
        }
        let goals = self.machine.goals(state);
        let ref_goals = self
            .reference
            .goals(ref_state)
            .map_err(|e| format!("reference: {e}"))?;
        if goals != ref_goals {
            return Err(format!("goals: propnet {goals:?}, reference {ref_goals:?}"));
        }
        if terminal || last {
            return Ok(None);
        }
        let (joint, joint_text) = self.random_joint_move(state, ref_state, rng)?;
        self.play(state, ref_state, &joint, &joint_text).map(Some)
    }

    /// A random joint move from the propnet's legal moves in `state`, and its
    /// text, once every role's legal moves equal the reference's in `ref_state`.
    fn random_joint_move(
        &mut self,
        state: &State,
        ref_state: &RefState,
        rng: &mut Xoshiro256PlusPlus,
    ) -> Result<(Vec<Move>, Vec<String>), String> {
        let mut joint = Vec::with_capacity(self.roles.len());
        let mut joint_text = Vec::with_capacity(self.roles.len());
        for (role, name) in self.roles.iter().enumerate() {
            let legal = self.machine.legal_moves(state, role);
            let mut ours: Vec<String> = legal
                .iter()
                .map(|&m| self.machine.move_to_kif(m).to_owned())
                .collect();
            ours.sort_unstable();
            let theirs = self
                .reference
                .legal_moves(ref_state, role)
                .map_err(|e| format!("reference: {e}"))?;
            if ours != theirs {
                return Err(format!(
                    "legal moves of {name}: propnet {ours:?}, reference {theirs:?}"
                ));
            }
            if legal.is_empty() {
                return Err(format!("{name} has no legal move in a non-terminal state"));
            }
            let chosen = legal[rng.gen_range(0..legal.len())];
            joint_text.push(self.machine.move_to_kif(chosen).to_owned());
            joint.push(chosen);
        }
        Ok((joint, joint_text))
    }

    /// Plays `joint` (`joint_text` for the reference) on both sides, comparing
    /// the percepts: the next states.
    fn play(
        &mut self,
        state: &State,
        ref_state: &RefState,
        joint: &[Move],
        joint_text: &[String],
    ) -> Result<(State, RefState), String> {
        let percepts = self
            .machine
            .percepts(state, joint)
            .map_err(|e| format!("propnet: {e}"))?;
        match self.reference.percepts(ref_state, joint_text) {
            Ok(theirs) if theirs == percepts => {}
            Ok(theirs) => {
                return Err(format!(
                    "percepts after {joint_text:?}: propnet {percepts:?}, reference {theirs:?}"
                ))
            }
            Err(e) => return Err(format!("reference: {e}")),
        }
        let next = self
            .machine
            .next_state(state, joint)
            .map_err(|e| format!("propnet: {e}"))?;
        let ref_next = self
            .reference
            .next_state(ref_state, joint_text)
            .map_err(|e| format!("reference: {e}"))?;
        Ok((next, ref_next))
    }
}

/// Lanes compared with the scalar driver: the first and last of every word and a
/// few in between.
const CHECKED_LANES: [usize; 16] = [
    0,
    1,
    2,
    37,
    63,
    64,
    127,
    128,
    200,
    255,
    256,
    319,
    384,
    447,
    500,
    LANES - 1,
];

/// Runs the lanes evaluator for `steps` steps from the initial state and, for a
/// sample of its lanes, the scalar driver on the same generator streams;
/// compares, step by step, the state each lane visits and the joint move it
/// plays (or that it restarts).
pub fn lanes_against_scalar(game: &Arc<Game>, seed: u64, steps: usize) -> DiffReport {
    lanes_against_scalar_from(game, game.initial(), seed, steps)
}

/// [`lanes_against_scalar`] with every playout starting from `from`, a state of `game`.
pub fn lanes_against_scalar_from(game: &Arc<Game>, from: &State, seed: u64, steps: usize) -> DiffReport {
    // Playouts longer than the steps compared are cut alike on both sides, so
    // that the scalar side stores no more than it compares.
    let max_depth = steps as u64 + 1;
    let mut lanes = LanePlayouts::new(Arc::clone(game), from, (seed, 0), max_depth);
    // Per checked lane: the state visited at each step and the joint move played (None: restarted).
    let mut seen: Vec<Vec<(State, Option<Vec<u32>>)>> = vec![Vec::new(); CHECKED_LANES.len()];
    for _ in 0..steps {
        let states: Vec<State> = CHECKED_LANES.iter().map(|&l| lanes.state(l)).collect();
        lanes.step();
        for ((record, &lane), state) in seen.iter_mut().zip(&CHECKED_LANES).zip(states) {
            record.push((state, lanes.last_joint(lane)));
        }
    }
    let mut report = DiffReport::default();
    let mut machine = StateMachine::new(Arc::clone(game));
    let mut playout = Playout::new(&machine, max_depth);
    playout.start_from(from);
    for (record, &lane) in seen.iter().zip(&CHECKED_LANES) {
        let mut rng = Stream::new(seed, lane as u64);
        let mut scalar: Vec<(State, Option<Vec<u32>>)> = Vec::new();
        let mut totals = PlayoutTotals::new(game.roles().len());
        while scalar.len() < steps {
            playout.run(&mut machine, &mut rng, &mut totals, |state, joint| {
                scalar.push((state.clone(), Some(joint.iter().map(|m| m.0).collect())));
            });
            // The end state of the playout, from which the lane restarts.
            scalar.push((playout.last_state().clone(), None));
        }
        report.playouts += 1;
        for (step, (ours, theirs)) in record.iter().zip(&scalar).enumerate() {
            report.steps += 1;
            if ours != theirs {
                let show = |(state, joint): &(State, Option<Vec<u32>>)| {
                    let moves = joint.as_ref().map_or("restart".to_owned(), |j| {
                        j.iter()
                            .map(|&m| game.moves()[m as usize].as_str())
                            .collect::<Vec<_>>()
                            .join(" ")
                    });
                    format!("{} -> {moves}", machine.state_to_kif(state).join(" "))
                };
                report.first_difference = Some(format!(
                    "lane {lane} step {step}: lanes {}, scalar {}",
                    show(ours),
                    show(theirs)
                ));
                return report;
            }
        }
    }
    report
}

/// Plays `playouts` random playouts of at most `max_steps` moves on the sweep
/// and the differential evaluator side by side (the same moves, drawn with a
/// generator seeded by `seed`), comparing at every step terminal, goals, every
/// role's legal moves and the next state; then the lanes evaluator against the
/// scalar driver for `max_steps` steps.
pub fn evaluators_agree(game: &Arc<Game>, playouts: usize, max_steps: usize, seed: u64) -> DiffReport {
    let mut sweep = StateMachine::with_evaluator(Arc::clone(game), EvaluatorKind::Sweep);
    let mut differential = StateMachine::with_evaluator(Arc::clone(game), EvaluatorKind::Differential);
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    let mut report = DiffReport::default();
    for playout in 0..playouts {
        report.playouts += 1;
        let mut state = sweep.initial_state();
        for step in 0..=max_steps {
            report.steps += 1;
            let compared = compare_scalar(&mut sweep, &mut differential, &state, &mut rng);
            match compared {
                Err(difference) => {
                    report.first_difference = Some(format!("playout {playout} step {step}: {difference}"));
                    return report;
                }
                Ok(None) => break,
                Ok(Some(next)) => state = next,
            }
            if step == max_steps {
                break;
            }
        }
    }
    let lanes = lanes_against_scalar(game, seed, max_steps);
    report.steps += lanes.steps;
    report.first_difference = lanes.first_difference;
    report
}

/// Compares the two machines in `state`; the next state after a random joint
/// move, or `None` where the playout ends (terminal, or a role without a legal move).
fn compare_scalar(
    a: &mut StateMachine,
    b: &mut StateMachine,
    state: &State,
    rng: &mut Xoshiro256PlusPlus,
) -> Result<Option<State>, String> {
    let terminal = a.is_terminal(state);
    if terminal != b.is_terminal(state) {
        return Err(format!("terminal: sweep {terminal}, differential {}", !terminal));
    }
    let goals = a.goals(state);
    if goals != b.goals(state) {
        return Err(format!(
            "goals: sweep {goals:?}, differential {:?}",
            b.goals(state)
        ));
    }
    if terminal {
        return Ok(None);
    }
    let mut joint = Vec::new();
    for role in 0..a.roles().len() {
        let legal = a.legal_moves(state, role);
        let theirs = b.legal_moves(state, role);
        if legal != theirs {
            return Err(format!(
                "legal moves of role {role}: sweep {legal:?}, differential {theirs:?}"
            ));
        }
        if legal.is_empty() {
            return Ok(None);
        }
        joint.push(legal[rng.gen_range(0..legal.len())]);
    }
    let next = a.next_state(state, &joint).map_err(|e| format!("sweep: {e}"))?;
    let theirs = b
        .next_state(state, &joint)
        .map_err(|e| format!("differential: {e}"))?;
    if next != theirs {
        return Err(format!(
            "next state: sweep {:?}, differential {:?}",
            a.state_to_kif(&next),
            b.state_to_kif(&theirs)
        ));
    }
    Ok(Some(next))
}
