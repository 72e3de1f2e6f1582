//! The lanes evaluator: batched flat Monte-Carlo, one playout per bit of a
//! 512-bit lane word. Each step evaluates the state-only part for every lane,
//! chooses every lane's joint move from that lane's own random generator exactly
//! as the scalar driver does (per role in order, `gen_range(0..legal count)` over
//! the legal moves in input order), evaluates the move part, and loads the next
//! states; a lane that reached a terminal state restarts from the initial state.

use super::compiled::{CompiledNet, Gate, Step};
use crate::machine::{Game, State};
use crate::playout::{stream_rng, PlayoutTotals};
use rand::Rng;
use rand_xoshiro::Xoshiro256PlusPlus;
use std::sync::Arc;

/// Words per lane vector.
pub const LANE_WORDS: usize = 8;
/// Playouts run side by side.
pub const LANES: usize = LANE_WORDS * 64;

/// One bit per lane.
type Lane = [u64; LANE_WORDS];

const NONE: Lane = [0; LANE_WORDS];
const ALL: Lane = [!0; LANE_WORDS];

/// Per-thread state of [`LANES`] simultaneous random playouts.
pub struct LanePlayouts {
    game: Arc<Game>,
    net: Arc<CompiledNet>,
    values: Vec<Lane>,
    /// The next value of every base, before the bases are overwritten.
    next: Vec<Lane>,
    rngs: Vec<Xoshiro256PlusPlus>,
    depths: Vec<u64>,
    /// Per lane: legal moves counted, then the rank of the move still to pass.
    counts: Vec<u32>,
    /// Per lane and role: the move chosen in the last step (`u32::MAX`: none).
    chosen: Vec<u32>,
    /// Lanes that played a move in the last step.
    moved: Lane,
    initial: Vec<bool>,
    totals: PlayoutTotals,
    wide: bool,
}

impl LanePlayouts {
    /// Lanes over `game`; lane `l` draws from `stream_rng(seed, first_stream + l)`.
    pub fn new(game: Arc<Game>, seed: u64, first_stream: u64) -> LanePlayouts {
        let net = Arc::clone(&game.net);
        let roles = game.roles.len();
        let initial: Vec<bool> = game.initial.0.iter().by_vals().collect();
        let mut lanes = LanePlayouts {
            values: vec![NONE; net.slots],
            next: vec![NONE; net.base_slots.len()],
            rngs: (0..LANES as u64)
                .map(|l| stream_rng(seed, first_stream + l))
                .collect(),
            depths: vec![0; LANES],
            counts: vec![0; LANES],
            chosen: vec![u32::MAX; LANES * roles],
            moved: NONE,
            totals: PlayoutTotals::new(roles),
            wide: wide_vectors(),
            initial,
            game,
            net,
        };
        for (b, &slot) in lanes.net.base_slots.iter().enumerate() {
            lanes.values[slot as usize] = if lanes.initial[b] { ALL } else { NONE };
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
                .base_slots
                .iter()
                .map(|&s| (self.values[s as usize][word] >> bit) & 1 != 0)
                .collect(),
        )
    }

    /// The joint move (input indexes in role order) lane `lane` played in the
    /// last step, or `None` if it was in a terminal state (or one where some role
    /// had no legal move) and restarted.
    pub fn last_joint(&self, lane: usize) -> Option<&[u32]> {
        let roles = self.game.roles.len();
        let moved = (self.moved[lane / 64] >> (lane % 64)) & 1 != 0;
        moved.then(|| &self.chosen[lane * roles..(lane + 1) * roles])
    }

    /// Visits one state in every lane and moves on.
    pub fn step(&mut self) {
        let net = Arc::clone(&self.net);
        self.evaluate(0, net.state_steps);
        self.totals.nodes += LANES as u64;
        let terminal = self.values[net.terminal_slot as usize];
        self.finish_playouts(&terminal);
        let mut active = not(&terminal);
        self.clear_inputs();
        for role in 0..self.game.roles.len() {
            self.choose(role, &mut active);
        }
        self.moved = active;
        self.evaluate(net.state_steps, net.steps.len());
        // Read every next value before writing any base: a next value may be a base.
        let restart = not(&active);
        for (b, &next) in net.next_slots.iter().enumerate() {
            let next = and(&self.values[next as usize], &active);
            self.next[b] = if self.initial[b] {
                or(&next, &restart)
            } else {
                next
            };
        }
        for (&slot, next) in net.base_slots.iter().zip(&self.next) {
            self.values[slot as usize] = *next;
        }
        for_each_lane(&active, |lane| self.depths[lane] += 1);
    }

    fn finish_playouts(&mut self, terminal: &Lane) {
        let roles = self.game.roles.len();
        let goals = &self.game.goals;
        let goal_slots = &self.net.goal_slots;
        let values = &self.values;
        let totals = &mut self.totals;
        let depths = &mut self.depths;
        for_each_lane(terminal, |lane| {
            let (word, bit) = (lane / 64, lane % 64);
            let mut best = vec![0i64; roles];
            let mut reached = vec![false; roles];
            for (&(role, value), &slot) in goals.iter().zip(goal_slots) {
                if (values[slot as usize][word] >> bit) & 1 != 0 && (!reached[role] || value > best[role]) {
                    best[role] = value;
                    reached[role] = true;
                }
            }
            totals.finish(depths[lane], &best);
            depths[lane] = 0;
        });
    }

    fn clear_inputs(&mut self) {
        for chosen in &mut self.chosen {
            if *chosen != u32::MAX {
                self.values[self.net.input_slots[*chosen as usize] as usize] = NONE;
                *chosen = u32::MAX;
            }
        }
    }

    /// Draws `role`'s move in every active lane; a lane where the role has no
    /// legal move is abandoned (it restarts without a result).
    fn choose(&mut self, role: usize, active: &mut Lane) {
        let net = &self.net;
        let roles = self.game.roles.len();
        let moves = &self.game.role_moves[role];
        let counts = &mut self.counts;
        for_each_lane(active, |lane| counts[lane] = 0);
        for m in moves {
            let legal = and(&self.values[net.legal_slots[m.0 as usize] as usize], active);
            for_each_lane(&legal, |lane| counts[lane] += 1);
        }
        let rngs = &mut self.rngs;
        let mut abandoned = NONE;
        for_each_lane(active, |lane| {
            if counts[lane] == 0 {
                abandoned[lane / 64] |= 1 << (lane % 64);
                self.totals.abandoned += 1;
                self.depths[lane] = 0;
            } else {
                counts[lane] = rngs[lane].gen_range(0..counts[lane] as usize) as u32;
            }
        });
        *active = and(active, &not(&abandoned));
        for m in moves {
            let legal = and(&self.values[net.legal_slots[m.0 as usize] as usize], active);
            let input = net.input_slots[m.0 as usize] as usize;
            let chosen = &mut self.chosen;
            let values = &mut self.values;
            for_each_lane(&legal, |lane| {
                if counts[lane] == 0 {
                    values[input][lane / 64] |= 1 << (lane % 64);
                    chosen[lane * roles + role] = m.0;
                }
                counts[lane] = counts[lane].wrapping_sub(1);
            });
        }
    }

    fn evaluate(&mut self, first: usize, last: usize) {
        #[cfg(target_arch = "x86_64")]
        if self.wide {
            // SAFETY: `wide` is set only when the CPU has AVX-512F.
            unsafe { evaluate_avx512(&self.net, &mut self.values, first, last) };
            return;
        }
        evaluate(&self.net, &mut self.values, first, last);
    }
}

/// Whether the CPU has 512-bit vectors.
fn wide_vectors() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("avx512f")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn evaluate_avx512(net: &CompiledNet, values: &mut [Lane], first: usize, last: usize) {
    evaluate(net, values, first, last)
}

#[inline(always)]
fn evaluate(net: &CompiledNet, values: &mut [Lane], first: usize, last: usize) {
    for step in &net.steps[first..last] {
        match *step {
            Step::Gates(start, end) => {
                for slot in start..end {
                    values[slot as usize] = gate(net, values, slot);
                }
            }
            Step::Cycle(start, end) => {
                values[start as usize..end as usize].fill(NONE);
                loop {
                    let mut changed = false;
                    for slot in start..end {
                        let v = gate(net, values, slot);
                        if v != values[slot as usize] {
                            values[slot as usize] = v;
                            changed = true;
                        }
                    }
                    if !changed {
                        break;
                    }
                }
            }
        }
    }
}

#[inline(always)]
fn gate(net: &CompiledNet, values: &[Lane], slot: u32) -> Lane {
    let inputs = net.inputs(slot);
    match net.gates[slot as usize] {
        Gate::And => inputs.iter().fold(ALL, |acc, &i| and(&acc, &values[i as usize])),
        Gate::Or => inputs.iter().fold(NONE, |acc, &i| or(&acc, &values[i as usize])),
        Gate::Not => not(&values[inputs[0] as usize]),
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
