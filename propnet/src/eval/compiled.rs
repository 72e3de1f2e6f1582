//! The compiled form of a layered circuit: every node gets a slot in evaluation
//! order (bases, inputs, then gates layer by layer), gate fan-ins are stored
//! contiguously, and the gates that depend only on the state come before those
//! that depend on moves, so one step evaluates each gate at most once.

use crate::circuit::{Circuit, NodeKind};
use crate::layer::Layering;

/// How a gate combines its inputs.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Gate {
    /// All inputs true (true without inputs: the constant true).
    And,
    /// Any input true (false without inputs: the constant false).
    Or,
    /// The single input false.
    Not,
}

/// One unit of evaluation.
#[derive(Clone, Debug)]
pub enum Step {
    /// Evaluate one gate.
    Gate(u32),
    /// Evaluate a cyclic component (gates `start..end`) to its least fixpoint.
    Cycle(u32, u32),
}

/// A circuit laid out for evaluation.
#[derive(Clone, Debug)]
pub struct CompiledNet {
    /// Number of value slots.
    pub slots: usize,
    /// Slot of each base.
    pub base_slots: Vec<u32>,
    /// Slot of each input.
    pub input_slots: Vec<u32>,
    /// Gate kind of each slot (meaningful for gate slots only).
    pub gates: Vec<Gate>,
    /// Fan-in of slot `s`: `fanin[offsets[s]..offsets[s + 1]]`.
    pub offsets: Vec<u32>,
    /// Fan-in slots, contiguous per gate.
    pub fanin: Vec<u32>,
    /// Evaluation steps; `steps[..state_steps]` depend on the state only.
    pub steps: Vec<Step>,
    /// Number of steps that do not depend on moves.
    pub state_steps: usize,
    /// Slot telling whether each input is legal.
    pub legal_slots: Vec<u32>,
    /// Slot of each goal output, in the order of the circuit's goals.
    pub goal_slots: Vec<u32>,
    /// Slot of the terminal output.
    pub terminal_slot: u32,
    /// Slot giving each base's next value.
    pub next_slots: Vec<u32>,
}

impl CompiledNet {
    /// Lays out `circuit` in the order of `layering`.
    pub fn new(circuit: &Circuit, layering: &Layering) -> CompiledNet {
        let n = circuit.nodes.len();
        let mut depends_on_move = vec![false; n];
        for component in &layering.components {
            let moved = component.iter().any(|id| {
                let node = &circuit.nodes[id.index()];
                matches!(node.kind, NodeKind::Input(_))
                    || node.inputs.iter().any(|i| depends_on_move[i.index()])
            });
            for id in component {
                depends_on_move[id.index()] = moved;
            }
        }
        // Slot order: bases, inputs, then state-only components, then move components.
        let mut slot = vec![u32::MAX; n];
        let mut next_slot = 0u32;
        let mut assign = |id: usize, slot: &mut Vec<u32>| {
            slot[id] = next_slot;
            next_slot += 1;
        };
        let mut base_nodes = vec![0; circuit.bases.len()];
        let mut input_nodes = vec![0; circuit.inputs.len()];
        for (i, node) in circuit.nodes.iter().enumerate() {
            match node.kind {
                NodeKind::Base(b) => base_nodes[b as usize] = i,
                NodeKind::Input(m) => input_nodes[m as usize] = i,
                _ => {}
            }
        }
        for &i in base_nodes.iter().chain(&input_nodes) {
            assign(i, &mut slot);
        }
        let is_gate = |id: usize| !matches!(circuit.nodes[id].kind, NodeKind::Base(_) | NodeKind::Input(_));
        let mut ordered = Vec::new();
        for moves in [false, true] {
            for component in &layering.components {
                let gates: Vec<usize> = component
                    .iter()
                    .map(|id| id.index())
                    .filter(|&id| is_gate(id) && depends_on_move[id] == moves)
                    .collect();
                if gates.is_empty() {
                    continue;
                }
                let cyclic = component.len() > 1
                    || circuit.nodes[gates[0]]
                        .inputs
                        .iter()
                        .any(|i| i.index() == gates[0]);
                ordered.push((gates, cyclic, moves));
            }
        }
        for (gates, _, _) in &ordered {
            for &g in gates {
                assign(g, &mut slot);
            }
        }
        let slots = next_slot as usize;
        let mut by_slot = vec![0usize; slots];
        for (id, &s) in slot.iter().enumerate() {
            by_slot[s as usize] = id;
        }
        let mut gates = Vec::with_capacity(slots);
        let mut offsets = Vec::with_capacity(slots + 1);
        let mut fanin = Vec::new();
        offsets.push(0);
        for &id in &by_slot {
            let node = &circuit.nodes[id];
            let (gate, inputs): (Gate, &[_]) = match node.kind {
                NodeKind::Constant(true) | NodeKind::And => (Gate::And, &node.inputs),
                NodeKind::Constant(false) | NodeKind::Or | NodeKind::Base(_) | NodeKind::Input(_) => {
                    (Gate::Or, &node.inputs)
                }
                NodeKind::Not => (Gate::Not, &node.inputs),
            };
            gates.push(gate);
            fanin.extend(inputs.iter().map(|i| slot[i.index()]));
            offsets.push(fanin.len() as u32);
        }
        let mut steps = Vec::new();
        let mut state_steps = 0;
        for (group, cyclic, moves) in &ordered {
            let first = slot[group[0]];
            if *cyclic {
                steps.push(Step::Cycle(first, first + group.len() as u32));
            } else {
                steps.extend(group.iter().map(|&g| Step::Gate(slot[g])));
            }
            if !moves {
                state_steps = steps.len();
            }
        }
        CompiledNet {
            slots,
            base_slots: base_nodes.iter().map(|&i| slot[i]).collect(),
            input_slots: input_nodes.iter().map(|&i| slot[i]).collect(),
            gates,
            offsets,
            fanin,
            steps,
            state_steps,
            legal_slots: circuit.inputs.iter().map(|i| slot[i.legal.index()]).collect(),
            goal_slots: circuit.goals.iter().map(|g| slot[g.node.index()]).collect(),
            terminal_slot: slot[circuit.terminal.index()],
            next_slots: circuit.bases.iter().map(|b| slot[b.next.index()]).collect(),
        }
    }
}
