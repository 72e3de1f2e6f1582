//! The lanes evaluator: batched flat Monte-Carlo, one playout per bit of a
//! 512-bit lane word. Each step evaluates the state-only part for every lane,
//! chooses every lane's joint move from that lane's own random generator exactly
//! as the scalar driver does (per role in order, [`draw`] over the legal moves in
//! input order), evaluates the move part, and loads the next
//! states; a lane that reached a terminal state restarts from the start state,
//! and so does a lane whose playout reached the depth limit (abandoned, as the
//! scalar driver abandons it).

use super::compiled::{CompiledNet, Gate, Step};
use super::{fixpoint, Engine, EvaluatorKind, GateValue};
use crate::machine::{Game, Move, State};
use crate::playout::PlayoutTotals;
use crate::random::{Block, Stream};
use std::collections::HashMap;
use std::sync::Arc;

/// Words per lane vector.
pub const LANE_WORDS: usize = 8;
/// Playouts run side by side.
pub const LANES: usize = LANE_WORDS * 64;

/// One bit per lane.
type Lane = [u64; LANE_WORDS];

const NONE: Lane = [0; LANE_WORDS];
const ALL: Lane = [!0; LANE_WORDS];

/// The lanes engine of one net: its state-only part and move part as runs
/// of like gates, shared by every thread.
#[derive(Debug)]
pub struct Lanes {
    net: Arc<CompiledNet>,
    state_part: Program,
    move_part: Program,
    /// Value slots of the move part's gates (the net's and the complements
    /// it adds).
    slots: usize,
}

impl Lanes {
    /// The engine of `net`.
    pub fn new(net: &Arc<CompiledNet>) -> Lanes {
        let (move_gates, move_steps) = LaneGates::complementing_frames(net);
        Lanes {
            state_part: Program::new(&LaneGates::plain(net), &net.steps()[..net.state_steps()]),
            move_part: Program::new(&move_gates, &move_steps),
            slots: move_gates.slots(),
            net: Arc::clone(net),
        }
    }
}

impl Engine for Lanes {
    /// One lane word per value slot.
    type Cache = Vec<Lane>;

    fn kind(&self) -> EvaluatorKind {
        EvaluatorKind::Lanes
    }

    fn net(&self) -> &Arc<CompiledNet> {
        &self.net
    }

    /// All values false in every lane.
    fn cache(&self) -> Vec<Lane> {
        vec![NONE; self.slots]
    }
}

/// Per-thread state of [`LANES`] simultaneous random playouts.
pub struct LanePlayouts {
    game: Arc<Game>,
    net: Arc<CompiledNet>,
    engine: Arc<Lanes>,
    values: Vec<Lane>,
    /// The next value of every base, before the bases are overwritten.
    next: Vec<Lane>,
    /// The lanes' random streams, eight to a block.
    streams: Vec<Block>,
    /// Steps taken so far.
    steps: u64,
    /// The step at which each lane's playout visited its start state: its
    /// depth is `steps` less that.
    starts: Vec<u64>,
    /// At most the earliest of `starts`.
    earliest_start: u64,
    /// Moves after which a playout is abandoned.
    max_depth: u64,
    /// The moves walked in the last step (legal in some active lane), whose
    /// inputs hold its choices: the first `walked` of them.
    walk: Vec<u32>,
    walked: usize,
    /// Per role, the best goal of the lane being finished.
    goal_scratch: Vec<Option<i64>>,
    /// Lanes that played a move in the last step.
    moved: Lane,
    /// The value of each base in the state every playout starts from.
    start: Vec<bool>,
    totals: PlayoutTotals,
    /// The widest vector registers the CPU has, in bits.
    vector_bits: u32,
}

impl LanePlayouts {
    /// Lanes over `game` whose playouts all start from `from` (a state of the
    /// game); with `streams` = `(seed, first_stream)`, lane `l` draws from
    /// `Stream::new(seed, first_stream + l)`; a playout that reaches `max_depth`
    /// moves (at least 1) without ending is abandoned.
    pub fn new(game: Arc<Game>, from: &State, streams: (u64, u64), max_depth: u64) -> LanePlayouts {
        let engine = Arc::new(Lanes::new(game.net()));
        LanePlayouts::with_engine(engine, game, from, streams, max_depth)
    }

    /// [`LanePlayouts::new`] on an engine of the game's net that other
    /// threads share.
    pub fn with_engine(
        engine: Arc<Lanes>,
        game: Arc<Game>,
        from: &State,
        streams: (u64, u64),
        max_depth: u64,
    ) -> LanePlayouts {
        let (seed, first_stream) = streams;
        let net = Arc::clone(game.net());
        let roles = game.roles().len();
        let start: Vec<bool> = from.0.iter().by_vals().collect();
        let mut lanes = LanePlayouts {
            values: engine.cache(),
            engine,
            next: vec![NONE; net.base_slots().len()],
            streams: (0..LANES as u64 / 8)
                .map(|b| {
                    Block::new(std::array::from_fn(|i| {
                        Stream::new(seed, first_stream + 8 * b + i as u64)
                    }))
                })
                .collect(),
            steps: 0,
            starts: vec![0; LANES],
            earliest_start: 0,
            max_depth: max_depth.max(1),
            walk: vec![0; game.role_moves().iter().map(Vec::len).sum()],
            walked: 0,
            moved: NONE,
            goal_scratch: Vec::new(),
            totals: PlayoutTotals::new(roles),
            vector_bits: vector_bits(),
            start,
            game,
            net,
        };
        for (b, &slot) in lanes.net.base_slots().iter().enumerate() {
            lanes.values[slot as usize] = if lanes.start[b] { ALL } else { NONE };
        }
        lanes
    }

    /// What the finished playouts and visited states add up to.
    pub fn totals(&self) -> &PlayoutTotals {
        &self.totals
    }

    /// The state lane `lane` is in now (the one the next step visits).
    pub fn state(&self, lane: usize) -> State {
        let (word, bit) = (lane / 64, lane % 64);
        State(
            self.net
                .base_slots()
                .iter()
                .map(|&s| (self.values[s as usize][word] >> bit) & 1 != 0)
                .collect(),
        )
    }

    /// The joint move (input indexes in role order) lane `lane` played in the
    /// last step, or `None` if it was in a terminal state (or one where some role
    /// had no legal move) and restarted.
    pub fn last_joint(&self, lane: usize) -> Option<Vec<u32>> {
        let (word, bit) = (lane / 64, lane % 64);
        let taken =
            |m: &&Move| (self.values[self.net.input_slots()[m.0 as usize] as usize][word] >> bit) & 1 != 0;
        if (self.moved[word] >> bit) & 1 == 0 {
            return None;
        }
        // The moves' inputs still hold the last step's choices.
        self.game
            .role_moves()
            .iter()
            .map(|moves| moves.iter().find(taken).map(|m| m.0))
            .collect()
    }

    /// Visits one state in every lane and moves on.
    pub fn step(&mut self) {
        match self.vector_bits {
            // SAFETY: `vector_bits` is 512 only when the CPU has AVX-512F.
            #[cfg(target_arch = "x86_64")]
            512 => unsafe { self.step_avx512() },
            // SAFETY: `vector_bits` is 256 only when the CPU has AVX2.
            #[cfg(target_arch = "x86_64")]
            256 => unsafe { self.step_avx2() },
            _ => self.step_lanes::<128>(0),
        }
    }

    /// [`Self::step`] compiled for AVX-512F.
    ///
    /// # Safety
    /// The CPU must have AVX-512F.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx512f")]
    unsafe fn step_avx512(&mut self) {
        self.step_lanes::<512>(0)
    }

    /// [`Self::step`] compiled for AVX2.
    ///
    /// # Safety
    /// The CPU must have AVX2.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    unsafe fn step_avx2(&mut self) {
        self.step_lanes::<256>(0)
    }

    /// [`Self::step`], choosing moves with at least `fewest_planes` planes, in
    /// vector registers of `VECTOR_BITS` (the CPU must have them: AVX-512F for
    /// 512, AVX2 for 256; 128 is every x86-64's SSE2, or plain words elsewhere).
    #[inline(always)]
    fn step_lanes<const VECTOR_BITS: u32>(&mut self, fewest_planes: u32) {
        // The net is read through `self.net` at each use, not through a clone
        // of the `Arc`: its reference count is shared with the other threads.
        self.engine.state_part.run(&self.net, &mut self.values);
        self.totals.nodes += LANES as u64;
        let terminal = self.values[self.net.terminal_slot() as usize];
        self.finish_playouts(&terminal);
        let mut active = not(&terminal);
        if self.steps - self.earliest_start >= self.max_depth {
            self.abandon_at_limit(&mut active);
        }
        for &m in &self.walk[..std::mem::take(&mut self.walked)] {
            self.values[self.net.input_slots()[m as usize] as usize] = NONE;
        }
        for role in 0..self.game.roles().len() {
            self.choose::<VECTOR_BITS>(role, &mut active, fewest_planes);
        }
        self.moved = active;
        self.engine.move_part.run(&self.net, &mut self.values);
        // Read every next value before writing any base: a next value may be a base.
        let restart = not(&active);
        let net = &*self.net;
        for (b, &next) in net.next_slots().iter().enumerate() {
            let next = and(&self.values[next as usize], &active);
            self.next[b] = if self.start[b] { or(&next, &restart) } else { next };
        }
        for (&slot, next) in net.base_slots().iter().zip(&self.next) {
            self.values[slot as usize] = *next;
        }
        self.steps += 1;
        let (starts, steps) = (&mut self.starts, self.steps);
        for_each_lane(&restart, |lane| starts[lane] = steps);
    }

    /// Takes the lanes of `active` whose playout reached the depth limit out of
    /// it, counting their playouts as abandoned (they restart at the next step).
    fn abandon_at_limit(&mut self, active: &mut Lane) {
        let mut cut = NONE;
        for_each_lane(active, |lane| {
            if self.steps - self.starts[lane] >= self.max_depth {
                cut[lane / 64] |= 1 << (lane % 64);
                self.totals.abandoned += 1;
                self.totals.at_depth_limit += 1;
            }
        });
        *active = and(active, &not(&cut));
        let ongoing = self
            .starts
            .iter()
            .enumerate()
            .filter(|&(lane, _)| (cut[lane / 64] >> (lane % 64)) & 1 == 0);
        self.earliest_start = ongoing.map(|(_, &start)| start).min().unwrap_or(self.steps + 1);
    }

    fn finish_playouts(&mut self, terminal: &Lane) {
        let roles = self.game.roles().len();
        let goals = &self.game.goals();
        let goal_slots = self.net.goal_slots();
        let values = &self.values;
        let totals = &mut self.totals;
        let (starts, steps) = (&self.starts, self.steps);
        let best = &mut self.goal_scratch;
        for_each_lane(terminal, |lane| {
            let (word, bit) = (lane / 64, lane % 64);
            best.clear();
            best.resize(roles, None);
            for (&(role, value), &slot) in goals.iter().zip(goal_slots) {
                if (values[slot as usize][word] >> bit) & 1 != 0 {
                    best[role] = Some(best[role].map_or(value, |b: i64| b.max(value)));
                }
            }
            totals.finish_with(steps - starts[lane], best.iter().copied());
        });
    }

    /// Draws `role`'s move in every active lane; a lane where the role has no
    /// legal move is abandoned (it restarts without a result). Counts of legal
    /// moves and ranks of the drawn move are kept bit-sliced (plane `p` holds
    /// bit `p` of every lane's number), so counting and selecting cost a few word
    /// operations per move for all lanes at once. The number of planes is a
    /// constant of the code, so that the planes stay in registers: the fewest
    /// of the instances below that hold the count of the role's moves, and at
    /// least `fewest_planes` (more planes than needed count and select the same).
    #[inline(always)]
    fn choose<const VECTOR_BITS: u32>(&mut self, role: usize, active: &mut Lane, fewest_planes: u32) {
        match fewest_planes.max(usize::BITS - self.game.role_moves()[role].len().leading_zeros()) {
            0..=1 => self.choose_in::<1, VECTOR_BITS>(role, active),
            2 => self.choose_in::<2, VECTOR_BITS>(role, active),
            3 => self.choose_in::<3, VECTOR_BITS>(role, active),
            4 => self.choose_in::<4, VECTOR_BITS>(role, active),
            5 => self.choose_in::<5, VECTOR_BITS>(role, active),
            6 => self.choose_in::<6, VECTOR_BITS>(role, active),
            7 => self.choose_in::<7, VECTOR_BITS>(role, active),
            8 => self.choose_in::<8, VECTOR_BITS>(role, active),
            9..=10 => self.choose_in::<10, VECTOR_BITS>(role, active),
            11..=12 => self.choose_in::<12, VECTOR_BITS>(role, active),
            13..=16 => self.choose_in::<16, VECTOR_BITS>(role, active),
            17..=20 => self.choose_in::<20, VECTOR_BITS>(role, active),
            _ => self.choose_in::<32, VECTOR_BITS>(role, active),
        }
    }

    /// [`Self::choose`] with `P` planes.
    #[inline(always)]
    fn choose_in<const P: usize, const VECTOR_BITS: u32>(&mut self, role: usize, active: &mut Lane) {
        let net = &*self.net;
        let moves = &self.game.role_moves()[role];
        let legal_of = |values: &[Lane], m: &Move| values[net.legal_slots()[m.0 as usize] as usize];
        let mut planes = [NONE; P];
        let mut waiting = CarrySave::<P>::new();
        // Only the moves legal in some active lane are counted and walked
        // (in games of thousands of moves, a few of them).
        let first_walked = self.walked;
        let mut walked = first_walked;
        for m in moves {
            let legal = and(&legal_of(&self.values, m), active);
            if legal != NONE {
                waiting.add(&mut planes, legal);
                self.walk[walked] = m.0;
                walked += 1;
            }
        }
        self.walked = walked;
        waiting.flush(&mut planes);
        // Per word of 64 lanes: each lane's rank drawn below its count, into the planes.
        let mut abandoned = NONE;
        for w in 0..LANE_WORDS {
            if active[w] == 0 {
                continue;
            }
            // Lanes with one legal move take it without a draw (rank 0); lanes with
            // none are abandoned; only the others draw.
            let low = planes[0][w];
            let high = planes[1..].iter().fold(0, |acc, plane| acc | plane[w]);
            let empty = active[w] & !(low | high);
            abandoned[w] = empty;
            self.totals.abandoned += u64::from(empty.count_ones());
            // Eight lanes at a time: their counts from the planes, their ranks
            // drawn side by side, the ranks back into the planes.
            let drawing = active[w] & high;
            let mut ranks = [0u64; P];
            for group in 0..8 {
                let lanes = ((drawing >> (8 * group)) & 0xFF) as u8;
                if lanes == 0 {
                    continue;
                }
                let counts: [u8; P] = std::array::from_fn(|p| (planes[p][w] >> (8 * group)) as u8);
                let block = &mut self.streams[w * 8 + group];
                let drawn = match VECTOR_BITS {
                    // SAFETY: `step_lanes` runs with 512 only when the CPU has AVX-512F.
                    #[cfg(target_arch = "x86_64")]
                    512 => unsafe { block.draw_sliced_avx512(lanes, &counts) },
                    // SAFETY: and with 256 only when it has AVX2.
                    #[cfg(target_arch = "x86_64")]
                    256 => unsafe { block.draw_sliced_avx2(lanes, &counts) },
                    _ => block.draw_sliced(lanes, &counts),
                };
                for (rank, bits) in ranks.iter_mut().zip(drawn) {
                    *rank |= u64::from(bits) << (8 * group);
                }
            }
            for (plane, &rank) in planes.iter_mut().zip(&ranks) {
                plane[w] = rank;
            }
        }
        *active = and(active, &not(&abandoned));
        // Walk the moves in input order, counting each active lane's rank down at
        // every legal move; a lane takes the move where its rank drops below zero,
        // which is the borrow out of the top plane: that is the move's input.
        // Once below zero a rank never borrows out again (it stays above
        // -2^P), so no lane is taken out of the walk and the walk has no branch.
        for &m in &self.walk[first_walked..self.walked] {
            let mut borrow = and(&legal_of(&self.values, &Move(m)), active);
            for plane in &mut planes {
                let next_borrow = and(&borrow, &not(plane));
                *plane = xor(plane, &borrow);
                borrow = next_borrow;
            }
            self.values[net.input_slots()[m as usize] as usize] = borrow;
        }
    }
}

/// Bit-sliced counting with carry-save adders: an addend of weight 2^k waits
/// until a second one arrives, and the two go with plane `k` through one full
/// adder, whose carry moves on to weight 2^(k+1). Counting `n` one-bit addends
/// costs about 5 word operations each, against one operation per plane for a
/// ripple-carry increment.
struct CarrySave<const P: usize> {
    /// Bit `k` set: `addend[k]` waits at weight 2^k.
    waiting: u32,
    addend: [Lane; P],
}

impl<const P: usize> CarrySave<P> {
    fn new() -> Self {
        CarrySave {
            waiting: 0,
            addend: [NONE; P],
        }
    }

    /// Adds a one-bit-per-lane number to the counts in `planes`.
    #[inline(always)]
    fn add(&mut self, planes: &mut [Lane; P], bit: Lane) {
        let mut x = bit;
        for (k, plane) in planes.iter_mut().enumerate() {
            if self.waiting & (1 << k) == 0 {
                self.waiting |= 1 << k;
                self.addend[k] = x;
                return;
            }
            self.waiting &= !(1 << k);
            let y = self.addend[k];
            let partial = xor(plane, &y);
            let carry = or(&and(plane, &y), &and(&partial, &x));
            *plane = xor(&partial, &x);
            x = carry;
        }
    }

    /// Adds every waiting addend to `planes` (a ripple-carry increment each).
    #[inline(always)]
    fn flush(&mut self, planes: &mut [Lane; P]) {
        while self.waiting != 0 {
            let k = self.waiting.trailing_zeros() as usize;
            self.waiting &= self.waiting - 1;
            let mut carry = self.addend[k];
            for plane in &mut planes[k..] {
                let next_carry = and(plane, &carry);
                *plane = xor(plane, &carry);
                carry = next_carry;
            }
        }
    }
}

/// The widest vector registers of the CPU that the lanes evaluator uses, in
/// bits: 512 with AVX-512F, 256 with AVX2, else 128 (reported by benchmarks).
pub fn vector_bits() -> u32 {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx512f") {
            return 512;
        }
        if std::arch::is_x86_feature_detected!("avx2") {
            return 256;
        }
    }
    128
}

/// Gates of one kind and fan-in evaluated in a row: `count` gates, whose
/// slots are `outputs[first..first + count]` and whose inputs are
/// `inputs[first_input..]`, `fan_in` each.
#[derive(Clone, Copy, Debug)]
struct Run {
    gate: Gate,
    fan_in: usize,
    first: usize,
    first_input: usize,
    count: usize,
}

/// What a [`Program`] evaluates in order.
#[derive(Clone, Copy, Debug)]
enum Part {
    Gates(Run),
    /// The cyclic component `start..end`, to its least fixpoint.
    Cycle(u32, u32),
}

/// Steps of a net as runs of gates of one kind and fan-in: each step's gates
/// ordered by level (longest path from the step's sources, so every gate comes
/// after what it reads), then kind and fan-in, so that a run is one loop of a
/// fixed number of 512-bit operations per gate, without a branch per gate.
#[derive(Debug)]
struct Program {
    parts: Vec<Part>,
    outputs: Vec<u32>,
    inputs: Vec<u32>,
}

impl Program {
    fn new(gates: &LaneGates, steps: &[Step]) -> Program {
        let mut level = vec![0u32; gates.slots()];
        let mut program = Program {
            parts: Vec::new(),
            outputs: Vec::new(),
            inputs: Vec::new(),
        };
        for step in steps {
            let (start, end) = match *step {
                Step::Gates(start, end) => (start, end),
                Step::Cycle(start, end) => {
                    program.parts.push(Part::Cycle(start, end));
                    continue;
                }
            };
            for slot in start..end {
                let read = gates.inputs(slot).iter().map(|&i| level[i as usize] + 1);
                level[slot as usize] = read.max().unwrap_or(0);
            }
            let key = |&slot: &u32| {
                (
                    level[slot as usize],
                    gates.gate(slot) as u8,
                    gates.inputs(slot).len(),
                )
            };
            let mut slots: Vec<u32> = (start..end).collect();
            slots.sort_by_key(key);
            for group in slots.chunk_by(|a, b| key(a) == key(b)) {
                let fan_in = gates.inputs(group[0]).len();
                program.parts.push(Part::Gates(Run {
                    gate: gates.gate(group[0]),
                    fan_in,
                    first: program.outputs.len(),
                    first_input: program.inputs.len(),
                    count: group.len(),
                }));
                for &slot in group {
                    program.outputs.push(slot);
                    program.inputs.extend_from_slice(gates.inputs(slot));
                }
            }
        }
        program
    }

    /// Evaluates the program's gates over `values` (one per slot of `net`).
    #[inline(always)]
    fn run(&self, net: &CompiledNet, values: &mut [Lane]) {
        for part in &self.parts {
            match *part {
                Part::Gates(run) => match run.fan_in {
                    1 => self.run_gates::<1>(run, values),
                    2 => self.run_gates::<2>(run, values),
                    3 => self.run_gates::<3>(run, values),
                    4 => self.run_gates::<4>(run, values),
                    5 => self.run_gates::<5>(run, values),
                    6 => self.run_gates::<6>(run, values),
                    7 => self.run_gates::<7>(run, values),
                    8 => self.run_gates::<8>(run, values),
                    _ => self.run_wide_gates(run, values),
                },
                Part::Cycle(start, end) => fixpoint(values, start, end, NONE, &NetGates(net)),
            }
        }
    }

    /// The gates of `run`, whose fan-in is `N`.
    #[inline(always)]
    fn run_gates<const N: usize>(&self, run: Run, values: &mut [Lane]) {
        let outputs = &self.outputs[run.first..run.first + run.count];
        let inputs = &self.inputs[run.first_input..run.first_input + run.count * N];
        for (&slot, read) in outputs.iter().zip(inputs.chunks_exact(N)) {
            let first = values[read[0] as usize];
            let value = match run.gate {
                Gate::And => read[1..]
                    .iter()
                    .fold(first, |acc, &i| and(&acc, &values[i as usize])),
                Gate::Or => read[1..]
                    .iter()
                    .fold(first, |acc, &i| or(&acc, &values[i as usize])),
                Gate::Not => not(&first),
            };
            values[slot as usize] = value;
        }
    }

    /// The gates of `run`, of a fan-in without an instance above (0, or above 8).
    #[inline(always)]
    fn run_wide_gates(&self, run: Run, values: &mut [Lane]) {
        let outputs = &self.outputs[run.first..run.first + run.count];
        if run.fan_in == 0 {
            for &slot in outputs {
                values[slot as usize] = gate_value(run.gate, &[], values);
            }
            return;
        }
        let inputs = &self.inputs[run.first_input..run.first_input + run.count * run.fan_in];
        for (&slot, read) in outputs.iter().zip(inputs.chunks_exact(run.fan_in)) {
            values[slot as usize] = gate_value(run.gate, read, values);
        }
    }
}

/// A gate's value over words of lanes: and/or/not bit by bit.
#[inline(always)]
fn gate_value(gate: Gate, inputs: &[u32], values: &[Lane]) -> Lane {
    match gate {
        Gate::And => inputs.iter().fold(ALL, |acc, &i| and(&acc, &values[i as usize])),
        Gate::Or => inputs.iter().fold(NONE, |acc, &i| or(&acc, &values[i as usize])),
        Gate::Not => not(&values[inputs[0] as usize]),
    }
}

/// The gates the lanes evaluate: the net's, where some gates may read other
/// inputs than in the net and gates may be added after the net's slots.
///
/// In the move part, an `or` over most of a role's inputs reads the negated
/// `or` of the role's other inputs instead: in a lane that moves exactly one
/// input of each role is set, so the two agree (the frame rules of games such
/// as breakthrough, "every move that does not touch this cell", go from
/// hundreds of reads to a handful). The negations are computed by added gates,
/// before the rest of the move part. In a lane that does not move every input is
/// clear and the rewritten gates may differ, but its next state is not taken.
/// The optimizer's exclusive-inputs pass makes the same rewrite in the circuit,
/// where it is kept only if the circuit gets smaller, since the scalar
/// evaluators, which skip what did not change, do not gain from it.
struct LaneGates<'a> {
    net: &'a CompiledNet,
    /// Inputs that replace a net gate's inputs.
    rewritten: HashMap<u32, Vec<u32>>,
    /// Gates added at slots `net.slots..`.
    added: Vec<(Gate, Vec<u32>)>,
}

impl<'a> LaneGates<'a> {
    /// The net's gates as they are.
    fn plain(net: &'a CompiledNet) -> LaneGates<'a> {
        LaneGates {
            net,
            rewritten: HashMap::new(),
            added: Vec::new(),
        }
    }

    /// The net's gates with the move part's frame `or`s complemented, and the
    /// move part's steps (the added gates' step first).
    fn complementing_frames(net: &'a CompiledNet) -> (LaneGates<'a>, Vec<Step>) {
        let mut gates = LaneGates::plain(net);
        let groups: Vec<Vec<u32>> = net
            .role_inputs()
            .iter()
            .map(|inputs| {
                let mut slots: Vec<u32> = inputs.iter().map(|&m| net.input_slots()[m as usize]).collect();
                slots.sort_unstable();
                slots
            })
            .collect();
        let mut role_of = HashMap::new();
        for (role, slots) in groups.iter().enumerate() {
            role_of.extend(slots.iter().map(|&slot| (slot, role)));
        }
        for step in &net.steps()[net.state_steps()..] {
            let Step::Gates(start, end) = *step else { continue };
            for slot in start..end {
                if net.gates()[slot as usize] == Gate::Or {
                    gates.complement(slot, &groups, &role_of);
                }
            }
        }
        let first_added = net.slots() as u32;
        let mut steps = vec![Step::Gates(first_added, first_added + gates.added.len() as u32)];
        steps.extend_from_slice(&net.steps()[net.state_steps()..]);
        (gates, steps)
    }

    /// Rewrites the `or` at `slot` for every role most of whose inputs
    /// (`groups`, sorted slots; `role_of` maps an input slot to its role) it
    /// reads, where the negated `or` of the others is shorter.
    fn complement(&mut self, slot: u32, groups: &[Vec<u32>], role_of: &HashMap<u32, usize>) {
        let mut inputs = self.net.inputs(slot).to_vec();
        let mut read = vec![0usize; groups.len()];
        for input in &inputs {
            if let Some(&role) = role_of.get(input) {
                read[role] += 1;
            }
        }
        let mut sorted = inputs.clone();
        sorted.sort_unstable();
        let mut changed = false;
        for (role, group) in groups.iter().enumerate() {
            // The same bar as the optimizer's pass: the rewrite reads fewer
            // inputs than it drops, plus its two gates.
            if read[role] < 4 || group.len() + 2 >= 2 * read[role] {
                continue;
            }
            let rest: Vec<u32> = group
                .iter()
                .copied()
                .filter(|i| sorted.binary_search(i).is_err())
                .collect();
            if rest.is_empty() {
                continue;
            }
            let any_rest = self.add(Gate::Or, rest);
            let none_of_rest = self.add(Gate::Not, vec![any_rest]);
            inputs.retain(|i| role_of.get(i) != Some(&role));
            inputs.push(none_of_rest);
            changed = true;
        }
        if changed {
            self.rewritten.insert(slot, inputs);
        }
    }

    fn add(&mut self, gate: Gate, inputs: Vec<u32>) -> u32 {
        self.added.push((gate, inputs));
        (self.net.slots() + self.added.len() - 1) as u32
    }

    /// Slots in all: the net's and the added gates'.
    fn slots(&self) -> usize {
        self.net.slots() + self.added.len()
    }

    fn gate(&self, slot: u32) -> Gate {
        match (slot as usize).checked_sub(self.net.slots()) {
            Some(added) => self.added[added].0,
            None => self.net.gates()[slot as usize],
        }
    }

    fn inputs(&self, slot: u32) -> &[u32] {
        match (slot as usize).checked_sub(self.net.slots()) {
            Some(added) => &self.added[added].1,
            None => self
                .rewritten
                .get(&slot)
                .map_or(self.net.inputs(slot), Vec::as_slice),
        }
    }
}

/// The net's gates over words of lanes, for cyclic components (which the
/// lanes never rewrite).
struct NetGates<'a>(&'a CompiledNet);

impl GateValue<Lane> for NetGates<'_> {
    #[inline(always)]
    fn value(&self, values: &[Lane], slot: u32) -> Lane {
        gate_value(self.0.gates()[slot as usize], self.0.inputs(slot), values)
    }
}

#[inline(always)]
fn and(a: &Lane, b: &Lane) -> Lane {
    std::array::from_fn(|w| a[w] & b[w])
}

#[inline(always)]
fn or(a: &Lane, b: &Lane) -> Lane {
    std::array::from_fn(|w| a[w] | b[w])
}

#[inline(always)]
fn xor(a: &Lane, b: &Lane) -> Lane {
    std::array::from_fn(|w| a[w] ^ b[w])
}

#[inline(always)]
fn not(a: &Lane) -> Lane {
    std::array::from_fn(|w| !a[w])
}

/// Calls `f` with every lane whose bit is set, ascending.
#[inline(always)]
fn for_each_lane(lanes: &Lane, mut f: impl FnMut(usize)) {
    for (w, &word) in lanes.iter().enumerate() {
        let mut bits = word;
        while bits != 0 {
            f(w * 64 + bits.trailing_zeros() as usize);
            bits &= bits - 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::TURNS;
    use super::*;
    use crate::playout::DEFAULT_MAX_DEPTH;

    /// Every vector width the CPU has, and more planes than the moves need,
    /// make the same choices: lanes stepped each way stay equal to lanes stepped
    /// as `step` does (the fewest planes, in the widest registers).
    #[test]
    fn widths_and_planes_choose_the_same() {
        type Stepper = Box<dyn Fn(&mut LanePlayouts)>;
        let game = crate::load(TURNS, &crate::LoadConfig::default())
            .expect("the test game loads")
            .game;
        let mut ways: Vec<(&str, Stepper)> = vec![
            ("128-bit, 32 planes", Box::new(|l| l.step_lanes::<128>(32))),
            ("128-bit", Box::new(|l| l.step_lanes::<128>(0))),
        ];
        #[cfg(target_arch = "x86_64")]
        {
            if std::arch::is_x86_feature_detected!("avx2") {
                // SAFETY: the CPU has AVX2.
                ways.push(("256-bit", Box::new(|l| unsafe { l.step_avx2() })));
            }
            if std::arch::is_x86_feature_detected!("avx512f") {
                // SAFETY: the CPU has AVX-512F.
                ways.push(("512-bit", Box::new(|l| unsafe { l.step_avx512() })));
            }
        }
        let mut fewest = LanePlayouts::new(Arc::clone(&game), game.initial(), (7, 0), DEFAULT_MAX_DEPTH);
        let mut others: Vec<LanePlayouts> = ways
            .iter()
            .map(|_| LanePlayouts::new(Arc::clone(&game), game.initial(), (7, 0), DEFAULT_MAX_DEPTH))
            .collect();
        for step in 0..40 {
            fewest.step();
            for ((way, stepper), other) in ways.iter().zip(&mut others) {
                stepper(other);
                assert!(fewest.values == other.values, "{way}, step {step}");
                assert_eq!(fewest.moved, other.moved, "{way}, step {step}");
                assert_eq!(fewest.streams, other.streams, "{way}, step {step}");
            }
        }
        for ((way, _), other) in ways.iter().zip(&others) {
            assert_eq!(fewest.totals, other.totals, "{way}");
        }
        assert!(fewest.totals.playouts > 0, "no playout finished");
    }
}
