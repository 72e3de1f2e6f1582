//! Differential testing: random playouts played on the propnet and on the
//! reference interpreter side by side, comparing at every step the state, every
//! role's legal moves, terminal and goals.

use crate::propnet::Loaded;
use ggpnet_reference::Reference;
use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

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
    let mut machine = loaded.machine();
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
    for playout in 0..playouts {
        report.playouts += 1;
        let mut state = machine.initial_state();
        let mut ref_state = reference.initial_state();
        for step in 0..=max_steps {
            report.steps += 1;
            let at = format!("playout {playout} step {step}");
            let ours = machine.state_to_kif(&state);
            let theirs = ref_state.facts();
            if ours != theirs {
                report.first_difference =
                    Some(format!("{at}: state: propnet {ours:?}, reference {theirs:?}"));
                return report;
            }
            let terminal = machine.is_terminal(&state);
            if terminal != reference.is_terminal(&ref_state) {
                report.first_difference = Some(format!("{at}: terminal: propnet {terminal}"));
                return report;
            }
            let goals = machine.goals(&state);
            let ref_goals = reference.goals(&ref_state);
            if goals != ref_goals {
                report.first_difference =
                    Some(format!("{at}: goals: propnet {goals:?}, reference {ref_goals:?}"));
                return report;
            }
            if terminal || step == max_steps {
                break;
            }
            let mut joint = Vec::with_capacity(roles.len());
            let mut joint_text = Vec::with_capacity(roles.len());
            for (role, name) in roles.iter().enumerate() {
                let legal = machine.legal_moves(&state, role);
                let mut ours: Vec<String> =
                    legal.iter().map(|&m| machine.move_to_kif(m).to_owned()).collect();
                ours.sort_unstable();
                let theirs = reference.legal_moves(&ref_state, role);
                if ours != theirs {
                    report.first_difference = Some(format!(
                        "{at}: legal moves of {name}: propnet {ours:?}, reference {theirs:?}"
                    ));
                    return report;
                }
                if legal.is_empty() {
                    report.first_difference =
                        Some(format!("{at}: {name} has no legal move in a non-terminal state"));
                    return report;
                }
                let chosen = legal[rng.gen_range(0..legal.len())];
                joint_text.push(machine.move_to_kif(chosen).to_owned());
                joint.push(chosen);
            }
            state = match machine.next_state(&state, &joint) {
                Ok(s) => s,
                Err(e) => {
                    report.first_difference = Some(format!("{at}: propnet: {e}"));
                    return report;
                }
            };
            ref_state = match reference.next_state(&ref_state, &joint_text) {
                Ok(s) => s,
                Err(e) => {
                    report.first_difference = Some(format!("{at}: reference: {e}"));
                    return report;
                }
            };
        }
    }
    report
}
