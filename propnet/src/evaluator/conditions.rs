//! When a gate's value does not matter: a gate whose every reader is an `and`
//! that also reads some slot `c`, or a gate that does not matter while `c` is
//! false either, cannot change any output while `c` is false, so the sweep may
//! skip it then; likewise with `or`s and `c` true. In turn-taking games, the
//! move generation of the role not to move is often read only through `and`s
//! with "it is my turn" (English checkers: a fifth of the state part).
//!
//! A gate skipped holds a stale value; a reader that has no condition reads it
//! only together with `c`, which decides that reader's value. So `c` itself
//! must always be right: a condition's slot never has a condition.

use crate::layout::{CompiledNet, FaninWalk, Gate, Visit};

pub(crate) use crate::jit::Condition;

/// Per slot, a condition under which its value does not matter, or `None`.
/// Only `eligible` gates get one (acyclic, evaluated by the sweep), and only
/// a condition on a slot that does not depend on the gate, that has no
/// condition itself, and that `usable(gate, slot)` allows (a slot evaluated
/// before the gate whenever it is). A gate whose readers allow several
/// conditions takes one that a reader has, so that gates that do not matter
/// together are skipped together.
///
/// An eligible `output` (whose value always matters) gets a condition only
/// if the condition *forces* it: an `and` reading the slot, skipped while it
/// is false, is false then; an `or` reading it, skipped while it is true, is
/// true. Whoever skips it must store that value, `skip_when` (see
/// [`forced`]). Of the literals that force it, it takes the one that forces
/// the most outputs (whose turn it is, rather than one move's own test).
pub(crate) fn conditions(
    net: &CompiledNet,
    eligible: &[bool],
    output: &[bool],
    usable: impl Fn(u32, u32) -> bool,
) -> Vec<Option<Condition>> {
    // Per slot, how many eligible outputs it could force.
    let mut forces = vec![0u32; net.slots()];
    for gate in (net.first_gate()..net.slots() as u32).filter(|&g| eligible[g as usize] && output[g as usize])
    {
        for literal in forcing(net, gate) {
            forces[literal.slot as usize] += 1;
        }
    }
    let mut condition: Vec<Option<Condition>> = vec![None; net.slots()];
    // Slots chosen as conditions before their own turn came (readers come
    // after the slots they read, and are decided first): they get none.
    let mut is_condition = vec![false; net.slots()];
    let mut walk = FaninWalk::new(net);
    for gate in (net.first_gate()..net.slots() as u32).rev() {
        if !eligible[gate as usize] || is_condition[gate as usize] {
            continue;
        }
        let mut candidates: Option<Vec<Condition>> = None;
        if output[gate as usize] {
            candidates = Some(forcing(net, gate).collect());
        }
        for &reader in net.fanout(gate).iter().filter(|_| !output[gate as usize]) {
            // The literals that decide this reader whatever `gate` holds, and
            // the reader's own condition.
            let mut deciding: Vec<Condition> = match net.gates()[reader as usize] {
                Gate::Not => Vec::new(),
                kind => net
                    .fanin(reader)
                    .iter()
                    .filter(|&&i| i != gate)
                    .map(|&slot| Condition {
                        slot,
                        skip_when: kind == Gate::Or,
                    })
                    .collect(),
            };
            deciding.extend(condition[reader as usize]);
            let kept = match candidates.take() {
                None => deciding,
                Some(mut so_far) => {
                    so_far.retain(|c| deciding.contains(c));
                    so_far
                }
            };
            let none_left = kept.is_empty();
            candidates = Some(kept);
            if none_left {
                break;
            }
        }
        let Some(mut candidates) = candidates else {
            continue;
        };
        candidates.retain(|c| {
            condition[c.slot as usize].is_none()
                && usable(gate, c.slot)
                && !depends_on(&mut walk, c.slot, gate)
        });
        let shared = net
            .fanout(gate)
            .iter()
            .filter_map(|&r| condition[r as usize])
            .find(|c| candidates.contains(c));
        let chosen = shared.or_else(|| {
            candidates
                .iter()
                .min_by_key(|c| (std::cmp::Reverse(forces[c.slot as usize]), **c))
                .copied()
        });
        if let Some(c) = chosen {
            is_condition[c.slot as usize] = true;
        }
        condition[gate as usize] = chosen;
    }
    condition
}

/// The literals that force `gate` (see [`conditions`]): each operand of an
/// `and` with `skip_when` false, of an `or` with `skip_when` true.
fn forcing(net: &CompiledNet, gate: u32) -> impl Iterator<Item = Condition> + '_ {
    let skip_when = match net.gates()[gate as usize] {
        Gate::And => Some(false),
        Gate::Or => Some(true),
        Gate::Not => None,
    };
    skip_when.into_iter().flat_map(move |skip_when| {
        net.fanin(gate)
            .iter()
            .map(move |&slot| Condition { slot, skip_when })
    })
}

/// Whether `condition` forces `gate`: skipped under it, the gate must hold
/// `condition.skip_when`.
#[cfg(test)]
fn forced(net: &CompiledNet, gate: u32, condition: Condition) -> bool {
    forcing(net, gate).any(|c| c == condition)
}

/// Whether `slot` depends on the acyclic gate `on`: a walk up the fan-in
/// that does not go past slots before `on` (slots are in topological order,
/// and a cyclic component lies wholly before or after an acyclic gate).
fn depends_on(walk: &mut FaninWalk, slot: u32, on: u32) -> bool {
    !walk.walk(slot, |s| match s.cmp(&on) {
        std::cmp::Ordering::Equal => Visit::Stop,
        std::cmp::Ordering::Less => Visit::Skip,
        std::cmp::Ordering::Greater => Visit::Up,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two players take turns marking an empty cell next to one of theirs; the
    /// player to move with no such cell is stuck, which ends the game.
    const NEIGHBOURS: &str = "(role a) (role b)
        (init (control a)) (init (cell 1 a)) (init (cell 2 e)) (init (cell 3 e))
        (init (cell 4 e)) (init (cell 5 b))
        (next_to 1 2) (next_to 2 3) (next_to 3 4) (next_to 4 5)
        (<= (adjacent ?c ?d) (next_to ?c ?d)) (<= (adjacent ?c ?d) (next_to ?d ?c))
        (<= (can_mark ?r ?c) (true (cell ?c e)) (adjacent ?c ?d) (true (cell ?d ?r)))
        (<= (legal ?r (mark ?c)) (true (control ?r)) (can_mark ?r ?c))
        (<= (legal a noop) (true (control b)))
        (<= (legal b noop) (true (control a)))
        (<= (any_mark ?r) (can_mark ?r ?c))
        (<= (stuck ?r) (true (control ?r)) (not (any_mark ?r)))
        (<= terminal (stuck ?r))
        (<= (next (cell ?c ?r)) (does ?r (mark ?c)))
        (<= (next (cell ?c ?x)) (true (cell ?c ?x)) (not (marked ?c)))
        (<= (marked ?c) (does ?r (mark ?c)))
        (<= (next (control a)) (true (control b)))
        (<= (next (control b)) (true (control a)))
        (<= (goal ?r 0) (stuck ?r))
        (<= (goal ?r 100) (role ?r) (not (stuck ?r)))";

    #[test]
    fn the_move_generation_of_the_role_not_to_move_does_not_matter() {
        let loaded = crate::load(NEIGHBOURS, &crate::LoadConfig::default()).unwrap();
        let (net, game) = (&loaded.game.net(), &loaded.game);
        let control = |role: &str| {
            let base = game
                .facts()
                .iter()
                .position(|f| *f == format!("(control {role})"));
            net.base_slots()[base.expect("a control base")]
        };
        let outputs: Vec<u32> = [net.terminal_slot()]
            .into_iter()
            .chain(net.goal_slots().iter().copied())
            .chain(net.legal_slots().iter().copied())
            .chain(net.next_slots().iter().copied())
            .collect();
        let eligible: Vec<bool> = (0..net.slots() as u32)
            .map(|s| {
                s >= net.first_gate() && !outputs.contains(&s) && net.cycle_start()[s as usize] == u32::MAX
            })
            .collect();
        let condition = conditions(net, &eligible, &vec![false; net.slots()], |_, _| true);
        for role in ["a", "b"] {
            let turn = Condition {
                slot: control(role),
                skip_when: false,
            };
            assert!(
                condition.iter().filter(|&&c| c == Some(turn)).count() >= 2,
                "the cells {role} can mark do not depend on its turn: {condition:?}"
            );
        }
        // Each condition is right: every reader of the gate is decided by it,
        // or has it too; its slot has none and does not depend on the gate.
        let mut walk = FaninWalk::new(net);
        for (gate, c) in condition
            .iter()
            .enumerate()
            .filter_map(|(g, c)| c.map(|c| (g as u32, c)))
        {
            assert!(eligible[gate as usize]);
            assert_eq!(
                condition[c.slot as usize], None,
                "the condition of {gate} has one"
            );
            assert!(!depends_on(&mut walk, c.slot, gate));
            for &reader in net.fanout(gate) {
                let decides = net.fanin(reader).contains(&c.slot)
                    && net.gates()[reader as usize] == if c.skip_when { Gate::Or } else { Gate::And };
                assert!(
                    decides || condition[reader as usize] == Some(c),
                    "reader {reader} of {gate} is not decided by {c:?}"
                );
            }
        }
    }

    #[test]
    fn legality_outputs_are_forced_by_the_turn() {
        let loaded = crate::load(NEIGHBOURS, &crate::LoadConfig::default()).unwrap();
        let (net, game) = (&loaded.game.net(), &loaded.game);
        let mut output = vec![false; net.slots()];
        for &slot in net.legal_slots() {
            output[slot as usize] = true;
        }
        let eligible: Vec<bool> = (0..net.slots() as u32)
            .map(|s| s >= net.first_gate() && net.cycle_start()[s as usize] == u32::MAX)
            .collect();
        let condition = conditions(net, &eligible, &output, |_, _| true);
        let mut forced_marks = 0;
        for (m, text) in game.moves().iter().enumerate() {
            let legal = net.legal_slots()[m];
            if legal < net.first_gate() {
                continue;
            }
            let Some(c) = condition[legal as usize] else {
                continue;
            };
            // An output only ever gets a condition that forces it.
            assert!(forced(net, legal, c), "{text}: {c:?} does not force it");
            if text.starts_with("(mark") {
                let role = &game.roles()[game.move_roles()[m]];
                let base = game
                    .facts()
                    .iter()
                    .position(|f| *f == format!("(control {role})"));
                assert_eq!(
                    c,
                    Condition {
                        slot: net.base_slots()[base.expect("a control base")],
                        skip_when: false
                    },
                    "{text} is forced by its role's turn"
                );
                forced_marks += 1;
            }
        }
        assert!(forced_marks >= 4, "{forced_marks} marks forced by the turn");
    }
}
