//! The sweep evaluator: every gate of the state-only part after each state, every
//! gate of the move part after each joint move, in layer order, one byte per slot.
//! The gates are compiled into runs of one kind of operation (two-input `and`s,
//! `not`s, ...) over gates that do not read each other, so that evaluating them
//! branches on neither gate kinds nor input values.

use super::compiled::{CompiledNet, Gate, Step};
use super::{bit, fixpoint, pack, role_words, Evaluator, GateValue};
use std::sync::Arc;

/// One run of a [`Program`]: `count` gates of one kind whose operands start at
/// `at` in [`Program::operands`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Run {
    /// Operands `out, a, b` per gate: `out = a and b`.
    And2 { at: u32, count: u32 },
    /// Operands `out, a, b` per gate: `out = a or b`.
    Or2 { at: u32, count: u32 },
    /// Operands `out, a` per gate: `out = not a`.
    Not { at: u32, count: u32 },
    /// Operands `out, n, n inputs` per gate: `out` = all inputs (true for none).
    And { at: u32, count: u32 },
    /// Operands `out, n, n inputs` per gate: `out` = any input (false for none).
    Or { at: u32, count: u32 },
    /// A cyclic component, slots `start..end`, to its least fixpoint.
    Cycle(u32, u32),
}

/// A range of evaluation steps compiled into runs.
#[derive(Clone, Debug, Default)]
pub(crate) struct Program {
    runs: Vec<Run>,
    operands: Vec<u32>,
}

impl Program {
    /// Compiles the gates of `steps` that are `taken`: each range of acyclic
    /// gates is cut into independent sets (no gate reads another of its set),
    /// and each set into one run per kind of operation.
    pub(crate) fn new(net: &CompiledNet, steps: &[Step], taken: &[bool]) -> Program {
        let mut program = Program::default();
        for &step in steps {
            match step {
                Step::Cycle(start, end) if taken[start as usize] => program.runs.push(Run::Cycle(start, end)),
                Step::Cycle(..) => {}
                Step::Gates(start, end) => {
                    let mut set_start = start;
                    for slot in start..end {
                        if net.inputs(slot).iter().any(|&i| i >= set_start) {
                            program.add_set(net, taken, set_start, slot);
                            set_start = slot;
                        }
                    }
                    program.add_set(net, taken, set_start, end);
                }
            }
        }
        program
    }

    /// Adds the runs of the independent gates `start..end` that are `taken`.
    fn add_set(&mut self, net: &CompiledNet, taken: &[bool], start: u32, end: u32) {
        /// A kind of run: which gates it takes, how it is made, and whether its
        /// records give their number of inputs.
        struct Kind {
            takes: fn(Gate, usize) -> bool,
            run: fn(u32, u32) -> Run,
            counted: bool,
        }
        let kinds = [
            Kind {
                takes: |gate, inputs| gate == Gate::And && inputs == 2,
                run: |at, count| Run::And2 { at, count },
                counted: false,
            },
            Kind {
                takes: |gate, inputs| gate == Gate::Or && inputs == 2,
                run: |at, count| Run::Or2 { at, count },
                counted: false,
            },
            Kind {
                takes: |gate, _| gate == Gate::Not,
                run: |at, count| Run::Not { at, count },
                counted: false,
            },
            Kind {
                takes: |gate, inputs| gate == Gate::And && inputs != 2,
                run: |at, count| Run::And { at, count },
                counted: true,
            },
            Kind {
                takes: |gate, inputs| gate == Gate::Or && inputs != 2,
                run: |at, count| Run::Or { at, count },
                counted: true,
            },
        ];
        for kind in kinds {
            let at = self.operands.len() as u32;
            let mut count = 0;
            for slot in (start..end).filter(|&s| taken[s as usize]) {
                let inputs = net.inputs(slot);
                if (kind.takes)(net.gates[slot as usize], inputs.len()) {
                    count += 1;
                    self.operands.push(slot);
                    if kind.counted {
                        self.operands.push(inputs.len() as u32);
                    }
                    self.operands.extend(inputs);
                }
            }
            if count > 0 {
                self.runs.push((kind.run)(at, count));
            }
        }
    }

    /// Evaluates the runs over `values`.
    pub(crate) fn run(&self, net: &CompiledNet, values: &mut [bool]) {
        let operands = &self.operands;
        let records = |at: u32, count: u32, width: usize| {
            operands[at as usize..at as usize + count as usize * width].chunks_exact(width)
        };
        for &run in &self.runs {
            match run {
                Run::And2 { at, count } => {
                    for op in records(at, count, 3) {
                        values[op[0] as usize] = values[op[1] as usize] & values[op[2] as usize];
                    }
                }
                Run::Or2 { at, count } => {
                    for op in records(at, count, 3) {
                        values[op[0] as usize] = values[op[1] as usize] | values[op[2] as usize];
                    }
                }
                Run::Not { at, count } => {
                    for op in records(at, count, 2) {
                        values[op[0] as usize] = !values[op[1] as usize];
                    }
                }
                Run::And { at, count } | Run::Or { at, count } => {
                    let all = matches!(run, Run::And { .. });
                    let mut k = at as usize;
                    for _ in 0..count {
                        let (out, n) = (operands[k] as usize, operands[k + 1] as usize);
                        let inputs = &operands[k + 2..k + 2 + n];
                        values[out] = if all {
                            inputs.iter().fold(true, |v, &i| v & values[i as usize])
                        } else {
                            inputs.iter().fold(false, |v, &i| v | values[i as usize])
                        };
                        k += 2 + n;
                    }
                }
                Run::Cycle(start, end) => fixpoint(values, start, end, false, net),
            }
        }
    }
}

/// What every sweep evaluator of one net shares.
#[derive(Debug)]
pub(crate) struct Plan {
    /// The part that depends on the state only, less the gates read only on
    /// the way to goals ([`CompiledNet::goal_only`]); the part that depends on
    /// moves; and those gates, evaluated when goals are asked for.
    state: Program,
    moves: Program,
    goals: Program,
    /// Per role, the legality slots of its inputs, in input order.
    legal_slots: Vec<Vec<u32>>,
    /// Role `r`'s legality takes words `role_words[r]..role_words[r + 1]` of the
    /// legality set, bit `at` for its input at position `at`.
    role_words: Vec<usize>,
}

impl Plan {
    /// Compiles the three parts of `net` and lays out its legality set.
    fn new(net: &CompiledNet) -> Plan {
        let goal_only = net.goal_only();
        let kept: Vec<bool> = goal_only.iter().map(|&g| !g).collect();
        let (state, moves) = net.steps.split_at(net.state_steps);
        Plan {
            state: Program::new(net, state, &kept),
            moves: Program::new(net, moves, &kept),
            goals: Program::new(net, &net.steps, &goal_only),
            legal_slots: net
                .role_inputs
                .iter()
                .map(|inputs| inputs.iter().map(|&m| net.legal_slots[m as usize]).collect())
                .collect(),
            role_words: role_words(net),
        }
    }
}

/// Per-thread evaluation state over a shared [`CompiledNet`].
#[derive(Clone, Debug)]
pub struct Sweep {
    net: Arc<CompiledNet>,
    plan: Arc<Plan>,
    values: Vec<bool>,
    /// The legality of every role's inputs, packed as [`Plan::role_words`] says.
    legal: Vec<u64>,
    moves: Vec<u32>,
    /// Whether the gates read only on the way to goals hold the values of the state loaded.
    goals_fresh: bool,
}

impl Sweep {
    /// A fresh evaluator (all values false).
    pub fn new(net: Arc<CompiledNet>) -> Sweep {
        let plan = Arc::clone(net.sweep_plan.get_or_init(|| Arc::new(Plan::new(&net))));
        Sweep {
            values: vec![false; net.slots],
            legal: vec![0; plan.role_words.last().copied().unwrap_or(0)],
            plan,
            net,
            moves: Vec::new(),
            goals_fresh: false,
        }
    }
}

impl Evaluator for Sweep {
    #[inline]
    fn legal_words(&self, role: usize) -> &[u64] {
        &self.legal[self.plan.role_words[role]..self.plan.role_words[role + 1]]
    }

    fn load_state(&mut self, state: &[u64]) {
        for (b, &slot) in self.net.base_slots.iter().enumerate() {
            self.values[slot as usize] = bit(state, b);
        }
        self.plan.state.run(&self.net, &mut self.values);
        for (role, slots) in self.plan.legal_slots.iter().enumerate() {
            let words = &mut self.legal[self.plan.role_words[role]..self.plan.role_words[role + 1]];
            pack(words, slots.len(), |at| self.values[slots[at] as usize]);
        }
        self.goals_fresh = false;
    }

    fn load_moves(&mut self, moves: &[u32]) {
        for &m in &self.moves {
            self.values[self.net.input_slots[m as usize] as usize] = false;
        }
        for &m in moves {
            self.values[self.net.input_slots[m as usize] as usize] = true;
        }
        self.moves.clear();
        self.moves.extend_from_slice(moves);
        self.plan.moves.run(&self.net, &mut self.values);
    }

    #[inline]
    fn value(&self, slot: u32) -> bool {
        self.values[slot as usize]
    }

    fn refresh_goals(&mut self) {
        if !self.goals_fresh {
            self.plan.goals.run(&self.net, &mut self.values);
            self.goals_fresh = true;
        }
    }
}

/// One value per slot: a gate from its inputs' values.
impl GateValue<bool> for CompiledNet {
    #[inline(always)]
    fn value(&self, values: &[bool], slot: u32) -> bool {
        let inputs = self.inputs(slot);
        match self.gates[slot as usize] {
            Gate::And => inputs.iter().all(|&i| values[i as usize]),
            Gate::Or => inputs.iter().any(|&i| values[i as usize]),
            Gate::Not => !values[inputs[0] as usize],
        }
    }
}
