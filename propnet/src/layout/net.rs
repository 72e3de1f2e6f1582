//! The compiled form of a layered circuit, shared by every evaluator: every node
//! gets a slot in evaluation order (bases, inputs, then gates layer by layer),
//! fan-ins and fan-outs are stored contiguously, and the gates that depend only on
//! the state come before those that depend on moves, so one step evaluates each
//! gate at most once.

use crate::ir::{Circuit, NodeKind, VerifyError};
use crate::layout::Layering;

/// How a gate combines its operands.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Gate {
    /// All operands true (true without any: the constant true).
    And,
    /// Any operand true (false without any: the constant false).
    Or,
    /// The single operand false.
    Not,
}

/// One unit of evaluation: a range of gate slots.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Step {
    /// Acyclic gates `start..end`, each evaluated once, in order.
    Gates(u32, u32),
    /// A cyclic component (gates `start..end`), evaluated to its least fixpoint.
    Cycle(u32, u32),
}

/// A circuit laid out for evaluation. Its fields are private and read through
/// accessors of the same names: a net is made only by [`CompiledNet::new`] and
/// never changed after, so the evaluators compiled from it and their unchecked
/// indexing stay valid. It caches no evaluator: evaluators sit above it.
#[derive(Clone, Debug)]
pub struct CompiledNet {
    /// Number of value slots.
    slots: usize,
    /// The first gate slot (bases and inputs come before it).
    first_gate: u32,
    /// Slot of each base.
    base_slots: Vec<u32>,
    /// Slot of each move proposition.
    move_slots: Vec<u32>,
    /// Gate kind of each slot (meaningful for gate slots only).
    gates: Vec<Gate>,
    /// Fan-in of slot `s`: `fanins[fanin_offsets[s]..fanin_offsets[s + 1]]`.
    fanin_offsets: Vec<u32>,
    /// Every slot's fan-in, contiguous per slot.
    fanins: Vec<u32>,
    /// Fan-out of slot `s`: `fanouts[fanout_offsets[s]..fanout_offsets[s + 1]]`.
    fanout_offsets: Vec<u32>,
    /// Every slot's fan-out, contiguous per slot, each ascending.
    fanouts: Vec<u32>,
    /// First slot of the cyclic component holding each slot (`u32::MAX` outside cycles).
    cycle_start: Vec<u32>,
    /// Evaluation steps; `steps[..state_steps]` depend on the state only.
    steps: Vec<Step>,
    /// Number of steps that do not depend on moves.
    state_steps: usize,
    /// Slot telling whether each input is legal.
    legal_slots: Vec<u32>,
    /// The move propositions of each role, ascending.
    role_moves: Vec<Vec<u32>>,
    /// Slot of each goal output, in the order of the circuit's goals.
    goal_slots: Vec<u32>,
    /// Slot of the terminal output.
    terminal_slot: u32,
    /// Slot giving each base's next value.
    next_slots: Vec<u32>,
    /// Slot of each percept output (GDL-II), in the order of the circuit's percepts.
    percept_slots: Vec<u32>,
    /// The initial state: bit `b` is base `b`'s initial value.
    initial: Vec<u64>,
}

impl CompiledNet {
    /// Lays out `circuit` in the order of `layering`, once both are verified
    /// ([`Circuit::verify`], [`Layering::verify`]): every index the evaluators
    /// read unchecked comes from here.
    pub fn new(circuit: &Circuit, layering: &Layering) -> Result<CompiledNet, VerifyError> {
        circuit.verify()?;
        layering.verify(circuit)?;
        Ok(CompiledNet::lay_out(circuit, layering))
    }

    /// [`CompiledNet::new`] of a verified circuit and layering.
    fn lay_out(circuit: &Circuit, layering: &Layering) -> CompiledNet {
        let depends_on_move = depends_on_move(circuit, layering);
        // Slot order: bases, inputs, then state-only components, then move components.
        let mut slot = vec![u32::MAX; circuit.nodes.len()];
        let (base_nodes, input_nodes) = base_and_input_nodes(circuit);
        for (s, &i) in base_nodes.iter().chain(&input_nodes).enumerate() {
            slot[i] = s as u32;
        }
        let first_gate = (base_nodes.len() + input_nodes.len()) as u32;
        let ordered = gate_groups(circuit, layering, &depends_on_move);
        let ordered = place_groups(circuit, layering, ordered, &mut slot, first_gate);
        let slots = first_gate as usize + ordered.iter().map(|(g, _, _)| g.len()).sum::<usize>();
        let (gates, fanin_offsets, fanins) = gates_and_fanins(circuit, &slot, slots);
        let (fanout_offsets, fanouts) = transpose(slots, &fanin_offsets, &fanins);
        let (cycle_start, steps, state_steps) = evaluation_steps(&ordered, &slot, slots);
        CompiledNet {
            slots,
            first_gate,
            base_slots: base_nodes.iter().map(|&i| slot[i]).collect(),
            move_slots: input_nodes.iter().map(|&i| slot[i]).collect(),
            gates,
            fanin_offsets,
            fanins,
            fanout_offsets,
            fanouts,
            cycle_start,
            steps,
            state_steps,
            legal_slots: circuit.inputs.iter().map(|i| slot[i.legal.index()]).collect(),
            role_moves: (0..circuit.roles.len())
                .map(|r| {
                    (0..circuit.inputs.len() as u32)
                        .filter(|&m| circuit.inputs[m as usize].role == r)
                        .collect()
                })
                .collect(),
            goal_slots: circuit.goals.iter().map(|g| slot[g.node.index()]).collect(),
            terminal_slot: slot[circuit.terminal.index()],
            next_slots: circuit.bases.iter().map(|b| slot[b.next.index()]).collect(),
            percept_slots: circuit.percepts.iter().map(|p| slot[p.node.index()]).collect(),
            initial: {
                let mut bits = vec![0u64; circuit.bases.len().div_ceil(64)];
                for (b, base) in circuit.bases.iter().enumerate() {
                    bits[b >> 6] |= (base.initial as u64) << (b & 63);
                }
                bits
            },
        }
    }

    /// Number of value slots.
    #[inline]
    pub fn slots(&self) -> usize {
        self.slots
    }

    /// The first gate slot (bases and inputs come before it).
    #[inline]
    pub fn first_gate(&self) -> u32 {
        self.first_gate
    }

    /// Slot of each base.
    #[inline]
    pub fn base_slots(&self) -> &[u32] {
        &self.base_slots
    }

    /// Slot of each move proposition.
    #[inline]
    pub fn move_slots(&self) -> &[u32] {
        &self.move_slots
    }

    /// Gate kind of each slot (meaningful for gate slots only).
    #[inline]
    pub fn gates(&self) -> &[Gate] {
        &self.gates
    }

    /// Fan-in of slot `s`: `fanins()[fanin_offsets()[s]..fanin_offsets()[s + 1]]`
    /// (what [`CompiledNet::fanin`] gives).
    #[inline]
    pub fn fanin_offsets(&self) -> &[u32] {
        &self.fanin_offsets
    }

    /// Every slot's fan-in, contiguous per slot.
    #[inline]
    pub fn fanins(&self) -> &[u32] {
        &self.fanins
    }

    /// Fan-out of slot `s`: `fanouts()[fanout_offsets()[s]..fanout_offsets()[s + 1]]`
    /// (what [`CompiledNet::fanout`] gives).
    #[inline]
    pub fn fanout_offsets(&self) -> &[u32] {
        &self.fanout_offsets
    }

    /// Every slot's fan-out, contiguous per slot, each ascending.
    #[inline]
    pub fn fanouts(&self) -> &[u32] {
        &self.fanouts
    }

    /// First slot of the cyclic component holding each slot (`u32::MAX` outside cycles).
    #[inline]
    pub fn cycle_start(&self) -> &[u32] {
        &self.cycle_start
    }

    /// Evaluation steps; `steps[..state_steps]` depend on the state only.
    #[inline]
    pub fn steps(&self) -> &[Step] {
        &self.steps
    }

    /// Number of steps that do not depend on moves.
    #[inline]
    pub fn state_steps(&self) -> usize {
        self.state_steps
    }

    /// Slot telling whether each input is legal.
    #[inline]
    pub fn legal_slots(&self) -> &[u32] {
        &self.legal_slots
    }

    /// The move propositions of each role, ascending.
    #[inline]
    pub fn role_moves(&self) -> &[Vec<u32>] {
        &self.role_moves
    }

    /// Slot of each goal output, in the order of the circuit's goals.
    #[inline]
    pub fn goal_slots(&self) -> &[u32] {
        &self.goal_slots
    }

    /// Slot of the terminal output.
    #[inline]
    pub fn terminal_slot(&self) -> u32 {
        self.terminal_slot
    }

    /// Slot giving each base's next value.
    #[inline]
    pub fn next_slots(&self) -> &[u32] {
        &self.next_slots
    }

    /// Slot of each percept output (GDL-II), in the order of the circuit's percepts.
    #[inline]
    pub fn percept_slots(&self) -> &[u32] {
        &self.percept_slots
    }

    /// The value of every slot for the state whose base `b` is bit `b` of
    /// `state` and the move propositions `moves`: the plain evaluation of the
    /// net, step by step (a cycle from all false to its least fixpoint). No
    /// evaluator runs it; it answers the rare queries no evaluator is compiled for
    /// (percepts), so it is written to be obviously right, not fast.
    pub fn evaluate(&self, state: &[u64], moves: &[u32]) -> Vec<bool> {
        let mut values = vec![false; self.slots];
        for (b, &slot) in self.base_slots.iter().enumerate() {
            values[slot as usize] = state.get(b >> 6).is_some_and(|w| w >> (b & 63) & 1 == 1);
        }
        for &m in moves {
            if let Some(&slot) = self.move_slots.get(m as usize) {
                values[slot as usize] = true;
            }
        }
        let gate = |values: &[bool], s: u32| {
            let mut operands = self.fanin(s).iter().map(|&i| values[i as usize]);
            match self.gates[s as usize] {
                Gate::And => operands.all(|v| v),
                Gate::Or => operands.any(|v| v),
                Gate::Not => !operands.any(|v| v),
            }
        };
        for &step in &self.steps {
            match step {
                Step::Gates(start, end) => {
                    for s in start..end {
                        values[s as usize] = gate(&values, s);
                    }
                }
                // No negation on a cycle (the layering refuses it): rising values
                // reach the least fixpoint.
                Step::Cycle(start, end) => loop {
                    let mut changed = false;
                    for s in start..end {
                        let v = gate(&values, s);
                        changed |= v != values[s as usize];
                        values[s as usize] = v;
                    }
                    if !changed {
                        break;
                    }
                },
            }
        }
        values
    }

    /// The initial state: bit `b` is base `b`'s initial value.
    #[inline]
    pub fn initial(&self) -> &[u64] {
        &self.initial
    }

    /// The fan-in of `slot`: the slots it reads.
    #[inline]
    pub fn fanin(&self, slot: u32) -> &[u32] {
        let s = slot as usize;
        &self.fanins[self.fanin_offsets[s] as usize..self.fanin_offsets[s + 1] as usize]
    }

    /// Per slot, whether it is a gate read only on the way to goals: neither
    /// terminal, nor any legality, nor any next value depends on it. Goals are
    /// asked for in terminal states only, so an evaluator may leave these
    /// gates until then (reversi: the piece counts, 72% of the circuit).
    pub fn goal_only(&self) -> Vec<bool> {
        let mut needed = vec![false; self.slots];
        let mut stack: Vec<u32> = std::iter::once(self.terminal_slot)
            .chain(self.legal_slots.iter().copied())
            .chain(self.next_slots.iter().copied())
            .collect();
        while let Some(slot) = stack.pop() {
            if !std::mem::replace(&mut needed[slot as usize], true) {
                stack.extend(self.fanin(slot));
            }
        }
        (0..self.slots)
            .map(|s| s >= self.first_gate as usize && !needed[s])
            .collect()
    }

    /// Per slot, whether it is a gate of the part that depends on moves.
    pub fn in_move_part(&self) -> Vec<bool> {
        let mut in_moves = vec![false; self.slots];
        for &step in &self.steps[self.state_steps..] {
            let (Step::Gates(start, end) | Step::Cycle(start, end)) = step;
            in_moves[start as usize..end as usize].fill(true);
        }
        in_moves
    }

    /// The fan-out of `slot`: the slots that read it, ascending.
    #[inline]
    pub fn fanout(&self, slot: u32) -> &[u32] {
        let s = slot as usize;
        &self.fanouts[self.fanout_offsets[s] as usize..self.fanout_offsets[s + 1] as usize]
    }
}

/// The gates of one component of a layering, in a part of the net: their node
/// indices, whether the component is cyclic, and whether it depends on moves.
type Group = (Vec<usize>, bool, bool);

/// Per node of `circuit`, whether it depends on an input, component by
/// component of `layering` (a component depends on moves as a whole).
fn depends_on_move(circuit: &Circuit, layering: &Layering) -> Vec<bool> {
    let mut depends_on_move = vec![false; circuit.nodes.len()];
    for component in layering.components.iter() {
        let moved = component.iter().any(|id| {
            let node = &circuit.nodes[id.index()];
            matches!(node.kind, NodeKind::Input(_)) || node.fanin.iter().any(|i| depends_on_move[i.index()])
        });
        for id in component {
            depends_on_move[id.index()] = moved;
        }
    }
    depends_on_move
}

/// The node of each base of `circuit`, and of each input, in their orders.
fn base_and_input_nodes(circuit: &Circuit) -> (Vec<usize>, Vec<usize>) {
    let mut base_nodes = vec![0; circuit.bases.len()];
    let mut input_nodes = vec![0; circuit.inputs.len()];
    for (i, node) in circuit.nodes.iter().enumerate() {
        match node.kind {
            NodeKind::Base(b) => base_nodes[b as usize] = i,
            NodeKind::Input(m) => input_nodes[m as usize] = i,
            _ => {}
        }
    }
    (base_nodes, input_nodes)
}

/// The gates of each component of `layering`, those of the state-only part
/// (not `depends_on_move`) first, then those of the move part.
fn gate_groups(circuit: &Circuit, layering: &Layering, depends_on_move: &[bool]) -> Vec<Group> {
    let is_gate = |id: usize| !matches!(circuit.nodes[id].kind, NodeKind::Base(_) | NodeKind::Input(_));
    let mut ordered = Vec::new();
    for moves in [false, true] {
        for component in layering.components.iter() {
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
                    .fanin
                    .iter()
                    .any(|i| i.index() == gates[0]);
            ordered.push((gates, cyclic, moves));
        }
    }
    ordered
}

/// Orders the `groups` and gives their gates slots from `first_gate` on, in
/// `slot`: within each part, layer by layer; within a layer, by the first slot
/// read, so that the gates reading a slot sit together. Returns them in order.
fn place_groups(
    circuit: &Circuit,
    layering: &Layering,
    groups: Vec<Group>,
    slot: &mut [u32],
    first_gate: u32,
) -> Vec<Group> {
    let mut next_slot = first_gate;
    let mut sorted = Vec::with_capacity(groups.len());
    let mut rest = groups;
    for moves in [false, true] {
        let (mut part, others): (Vec<_>, Vec<_>) = rest.into_iter().partition(|e| e.2 == moves);
        rest = others;
        part.sort_by_key(|e| layering.level[e.0[0]]);
        let mut start = 0;
        while start < part.len() {
            let level = layering.level[part[start].0[0]];
            let end = start
                + part[start..]
                    .iter()
                    .take_while(|e| layering.level[e.0[0]] == level)
                    .count();
            let first_read = |e: &Group| {
                e.0.iter()
                    .flat_map(|&g| circuit.nodes[g].fanin.iter())
                    .map(|i| slot[i.index()])
                    .min()
                    .unwrap_or(0)
            };
            part[start..end].sort_by_cached_key(first_read);
            for e in &part[start..end] {
                for &g in &e.0 {
                    slot[g] = next_slot;
                    next_slot += 1;
                }
            }
            start = end;
        }
        sorted.extend(part);
    }
    sorted
}

/// The gate of each of the `slots` (nodes placed by `slot`), and the fan-ins
/// of all, contiguous, with each one's offset.
fn gates_and_fanins(circuit: &Circuit, slot: &[u32], slots: usize) -> (Vec<Gate>, Vec<u32>, Vec<u32>) {
    let mut by_slot = vec![0usize; slots];
    for (id, &s) in slot.iter().enumerate() {
        if s != u32::MAX {
            by_slot[s as usize] = id;
        }
    }
    let mut gates = Vec::with_capacity(slots);
    let mut fanin_offsets = Vec::with_capacity(slots + 1);
    let mut fanins = Vec::new();
    fanin_offsets.push(0);
    for &id in &by_slot {
        let node = &circuit.nodes[id];
        let gate = match node.kind {
            NodeKind::Constant(true) | NodeKind::And => Gate::And,
            NodeKind::Constant(false) | NodeKind::Or | NodeKind::Base(_) | NodeKind::Input(_) => Gate::Or,
            NodeKind::Not => Gate::Not,
        };
        gates.push(gate);
        fanins.extend(node.fanin.iter().map(|i| slot[i.index()]));
        fanin_offsets.push(fanins.len() as u32);
    }
    (gates, fanin_offsets, fanins)
}

/// The evaluation of the `ordered` groups placed by `slot`: per slot its cyclic
/// component's first slot (or `u32::MAX`), the steps, and how many of them
/// the state-only part takes.
fn evaluation_steps(ordered: &[Group], slot: &[u32], slots: usize) -> (Vec<u32>, Vec<Step>, usize) {
    let mut cycle_start = vec![u32::MAX; slots];
    let mut steps: Vec<Step> = Vec::new();
    let mut state_steps = 0;
    for (group, cyclic, moves) in ordered {
        let start = slot[group[0]];
        let end = start + group.len() as u32;
        if *cyclic {
            cycle_start[start as usize..end as usize].fill(start);
            steps.push(Step::Cycle(start, end));
        } else {
            // Merge with the previous range unless it belongs to the state-only part
            // and this one does not.
            let same_part = !moves || steps.len() > state_steps;
            match steps.last_mut() {
                Some(Step::Gates(_, last_end)) if *last_end == start && same_part => *last_end = end,
                _ => steps.push(Step::Gates(start, end)),
            }
        }
        if !moves {
            state_steps = steps.len();
        }
    }
    (cycle_start, steps, state_steps)
}

/// The fan-out lists of a fan-in adjacency, each ascending.
fn transpose(slots: usize, offsets: &[u32], fanins: &[u32]) -> (Vec<u32>, Vec<u32>) {
    let mut counts = vec![0u32; slots + 1];
    for &i in fanins {
        counts[i as usize + 1] += 1;
    }
    for s in 0..slots {
        counts[s + 1] += counts[s];
    }
    let fanout_offsets = counts.clone();
    let mut fanouts = vec![0u32; fanins.len()];
    for gate in 0..slots {
        for &i in &fanins[offsets[gate] as usize..offsets[gate + 1] as usize] {
            fanouts[counts[i as usize] as usize] = gate as u32;
            counts[i as usize] += 1;
        }
    }
    (fanout_offsets, fanouts)
}

/// What a [`FaninWalk`] does at a slot it reaches.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Visit {
    /// Go on up the slot's fan-in.
    Up,
    /// Not up the slot's fan-in.
    Skip,
    /// End the walk.
    Stop,
}

/// Walks up the fan-ins of a net, reaching each slot at most once per walk:
/// slots are stamped with the number of the walk that reached them, so a
/// walk costs what it reaches, not the size of the net.
pub(crate) struct FaninWalk<'a> {
    net: &'a CompiledNet,
    /// Per slot, the last walk that reached it (walks are numbered from 1).
    reached: Vec<u32>,
    walks: u32,
}

impl<'a> FaninWalk<'a> {
    /// Walks over `net`.
    pub(crate) fn new(net: &'a CompiledNet) -> FaninWalk<'a> {
        FaninWalk {
            net,
            reached: vec![0; net.slots],
            walks: 0,
        }
    }

    /// Walks from `from` (reached first) up the fan-ins, depth first, doing at
    /// each slot what `visit` says; false if `visit` stopped the walk.
    pub(crate) fn walk(&mut self, from: u32, mut visit: impl FnMut(u32) -> Visit) -> bool {
        self.walks += 1;
        let mut stack = vec![from];
        while let Some(slot) = stack.pop() {
            if std::mem::replace(&mut self.reached[slot as usize], self.walks) == self.walks {
                continue;
            }
            match visit(slot) {
                Visit::Up => stack.extend(self.net.fanin(slot)),
                Visit::Skip => {}
                Visit::Stop => return false,
            }
        }
        true
    }
}
