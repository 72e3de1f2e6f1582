//! The lanes engine of the batch: the lanes in blocks of up to 512
//! (`LANES`), each block a `LaneMachine` of the propnet crate, which steps
//! every lane of the block with one evaluation of the net and gives the
//! observations, legal actions and terminal flags of all of them by
//! bit-matrix transposition. The blocks run on the threads side by side
//! (rayon, at most `threads` at once).
//!
//! Actions are chosen exactly as the scalar engine chooses them (lane `i`
//! draws from stream `i` of the seed, a rank below the count of its legal
//! actions, the action of that rank), and a lane whose episode ends restarts
//! from the initial state in the same step, without another evaluation (the
//! machine blends the initial state's values in), so both engines give the
//! same games.
//!
//! The per-lane work is done word-wise where it can be, since it costs far
//! more than the evaluation when done lane by lane (docs/PYTHON.md): the
//! random actions are drawn on the machine from its legal bits, bit-sliced,
//! eight lanes' streams at once (`LaneMachine::draw_actions`; the block
//! keeps its lanes' streams side by side for it), the moves are set by
//! action number and checked 512 lanes per move (`LaneMachine::step_actions`),
//! and the observations come out of the transposition 64 bytes a store.

use super::{Buffers, Lane, Rows, Setup, Shape};
use ggpnet::propnet::driver::LaneMachine;
use ggpnet::propnet::evaluator::{Lanes, LANES};
use ggpnet::propnet::random::{Stream, StreamGroup};
use ggpnet::propnet::State;
use rayon::prelude::*;
use std::ops::Range;
use std::sync::Arc;

/// Fewest lanes the lanes engine is chosen for when `VectorEnv` is not
/// told (`engine_for`): below, a step of the scalar machines costs less
/// than one evaluation of 512 lanes (measured on connect four, breakthrough
/// and chess_200, docs/PYTHON.md).
pub const FEWEST_LANES: usize = 64;

/// The lanes in blocks of lane machines.
pub struct Blocks {
    blocks: Vec<Block>,
    /// Lanes per block (the last may hold fewer).
    per_block: usize,
    /// Most blocks stepped at once.
    threads: usize,
}

/// One lane machine and the scratch space of its steps (one entry per lane).
struct Block {
    machine: LaneMachine,
    /// The actions of the step, lanes x roles, as numbers among each role's moves.
    picks: Vec<u32>,
    /// The lanes the step (or reset) concerns.
    chosen: Vec<bool>,
    /// The lanes drawing the action of a role.
    drawing: Vec<bool>,
    /// The lanes' random streams, eight to a group (lane `i` of the batch
    /// draws from stream `i` of the seed, as on the scalar engine).
    streams: Vec<StreamGroup>,
    terminal: Vec<bool>,
    restart: Vec<bool>,
    /// Legal bits, lanes x words, as `Lane::legal`.
    legal: Vec<u64>,
    goals: Vec<Option<i64>>,
}

impl Blocks {
    /// The blocks of `setup`'s lanes, every lane in the initial state of
    /// `shape`'s game.
    pub fn new(shape: &Shape, setup: &Setup) -> Blocks {
        let count = setup.lanes.div_ceil(LANES).max(1);
        let per_block = setup.lanes.div_ceil(count).max(1);
        let evaluator = Arc::new(Lanes::new(shape.game.net()));
        let blocks = (0..count)
            .map(|b| {
                let first = b * per_block;
                let lanes = first..setup.lanes.min(first + per_block);
                Block::new(&evaluator, shape, lanes, setup.seed)
            })
            .collect();
        Blocks {
            blocks,
            per_block,
            threads: setup.threads.clamp(1, count),
        }
    }

    /// Most blocks stepped at once.
    pub fn threads(&self) -> usize {
        self.threads
    }

    /// The state of lane `lane` (of the batch).
    pub fn state(&self, lane: usize) -> State {
        let block = &self.blocks[lane / self.per_block];
        block
            .machine
            .state(lane % self.per_block)
            .expect("a lane of the batch")
    }

    /// Reseeds the streams of the lanes of `which` with `seed` (lane `i`
    /// draws from stream `i`).
    pub fn reseed(&mut self, which: &[usize], seed: u64) {
        for &i in which {
            let (block, lane) = (i / self.per_block, i % self.per_block);
            let group = &mut self.blocks[block].streams[lane / 8];
            let mut eight: [Stream; 8] = std::array::from_fn(|k| group.stream(k));
            eight[lane % 8] = Stream::new(seed, i as u64);
            *group = StreamGroup::new(eight);
        }
    }

    /// Random legal actions of every lane (lanes x roles) into `out`, as
    /// `Shape::sample` draws them, from the lanes' streams.
    pub fn sample(&mut self, shape: &Shape, lanes: &[Lane], out: &mut [i64]) {
        let roles = shape.roles.max(1);
        let runs = lanes
            .chunks(self.per_block)
            .zip(out.chunks_mut(self.per_block * roles));
        for (block, (lanes, out)) in self.blocks.iter_mut().zip(runs) {
            let groups = lanes.chunks(8).zip(out.chunks_mut(8 * roles));
            for (group, (lanes, out)) in block.streams.iter_mut().zip(groups) {
                let mut eight: [Stream; 8] = std::array::from_fn(|k| group.stream(k));
                for ((lane, rng), out) in lanes.iter().zip(&mut eight).zip(out.chunks_exact_mut(roles)) {
                    shape.sample(lane, rng, out);
                }
                *group = StreamGroup::new(eight);
            }
        }
    }

    /// Puts the lanes of `which` in `start` and writes their rows.
    pub fn reset(
        &mut self,
        shape: &Shape,
        lanes: &mut [Lane],
        which: &[usize],
        start: &State,
        rows: Rows<'_>,
    ) {
        let per_block = self.per_block;
        let runs = lanes.chunks_mut(per_block).zip(rows.chunks(per_block));
        for (b, (block, (lanes, mut rows))) in self.blocks.iter_mut().zip(runs).enumerate() {
            block.chosen.fill(false);
            let mine = which
                .iter()
                .filter_map(|&i| i.checked_sub(b * per_block))
                .filter(|&i| i < lanes.len());
            for i in mine {
                block.chosen[i] = true;
                block.machine.set_state(i, start).expect("a state of the game");
                rows.row(i).clear_step();
            }
            if block.chosen.contains(&true) {
                block.settle(shape, lanes, rows);
            }
        }
    }

    /// Plays `actions` (checked by `Batch::check`) in every lane whose
    /// episode goes on and writes every row.
    pub fn step(&mut self, shape: &Shape, lanes: &mut [Lane], actions: &[i64], rows: Rows<'_>) {
        let per_block = self.per_block;
        let blocks: Vec<_> = self
            .blocks
            .iter_mut()
            .zip(lanes.chunks_mut(per_block))
            .zip(rows.chunks(per_block))
            .zip(actions.chunks(per_block * shape.roles))
            .collect();
        let at_once = blocks.len().div_ceil(self.threads);
        blocks
            .into_par_iter()
            .with_min_len(at_once)
            .for_each(|(((block, lanes), rows), actions)| block.step(shape, lanes, actions, rows));
    }
}

impl Block {
    /// A block of `lanes` lanes in the initial state on `evaluator`.
    fn new(evaluator: &Arc<Lanes>, shape: &Shape, lanes: Range<usize>, seed: u64) -> Block {
        let game = &shape.game;
        let streams = lanes
            .clone()
            .step_by(8)
            .map(|first| StreamGroup::new(std::array::from_fn(|k| Stream::new(seed, (first + k) as u64))))
            .collect();
        let lanes = lanes.len();
        let mut machine = LaneMachine::with_evaluator(Arc::clone(evaluator), Arc::clone(game))
            .expect("the game's evaluator");
        machine
            .extend(lanes, game.initial())
            .expect("at most LANES initial states");
        Block {
            machine,
            picks: Vec::new(),
            chosen: vec![false; lanes],
            drawing: vec![false; lanes],
            streams,
            terminal: vec![false; lanes],
            restart: vec![false; lanes],
            legal: shape.initial_legal.repeat(lanes),
            goals: Vec::new(),
        }
    }

    /// Plays `actions` in the block's lanes whose episode goes on, on one
    /// evaluation of the net, and writes every row. Random actions are drawn
    /// on the machine, eight lanes' streams at once, as the scalar engine
    /// draws them (see [`LaneMachine::draw_actions`]).
    fn step(&mut self, shape: &Shape, lanes: &mut [Lane], actions: &[i64], mut rows: Rows<'_>) {
        let roles = shape.roles;
        self.picks.clear();
        self.picks.resize(lanes.len() * roles, 0);
        for (i, lane) in lanes.iter().enumerate() {
            self.chosen[i] = lane.ended.is_none();
        }
        let drawn = "one flag, stream and action per lane";
        for role in 0..roles {
            let random = Some(role) == shape.random_role;
            for (i, &action) in actions.iter().skip(role).step_by(roles).enumerate() {
                self.drawing[i] = self.chosen[i] && (action < 0 || random);
                if self.chosen[i] && !self.drawing[i] {
                    self.picks[i * roles + role] = action as u32;
                }
            }
            self.machine
                .draw_actions(role, &self.drawing, &mut self.streams, &mut self.picks)
                .expect(drawn);
        }
        let Buffers {
            rewards,
            terminated,
            truncated,
            ..
        } = &mut rows.out;
        rewards.fill(0.0);
        for ((lane, terminated), truncated) in lanes
            .iter_mut()
            .zip(terminated.iter_mut())
            .zip(truncated.iter_mut())
        {
            *terminated = lane.ended == Some(true);
            *truncated = lane.ended == Some(false);
            lane.steps += u64::from(lane.ended.is_none());
        }
        let checked = "actions checked by Batch::check, one per lane and role";
        self.machine
            .step_actions(&self.picks, &self.chosen)
            .expect(checked);
        self.settle(shape, lanes, rows);
    }

    /// Writes the rows of the chosen lanes for their states (legal actions,
    /// rewards and flags where the episode ends, restarting those with
    /// auto-reset), and every lane's observation.
    fn settle(&mut self, shape: &Shape, lanes: &mut [Lane], mut rows: Rows<'_>) {
        let sized = "buffers sized for the block's lanes";
        let words = shape.initial_legal.len();
        self.legal.resize(lanes.len() * words, 0);
        self.machine.terminal_into(&mut self.terminal).expect(sized);
        self.machine
            .legal_into(shape.actions, &mut self.legal)
            .expect(sized);
        let mask_row = shape.roles * shape.actions;
        for (i, lane) in lanes.iter_mut().enumerate() {
            self.restart[i] = false;
            if !self.chosen[i] {
                continue;
            }
            let ended = if self.terminal[i] {
                self.machine.best_goals_into(i, &mut self.goals).expect(sized);
                shape.reward(&self.goals, &mut rows.row(i));
                true
            } else {
                let legal = &self.legal[i * words..(i + 1) * words];
                let cut = shape.stuck(legal) || lane.steps >= shape.max_steps;
                rows.out.truncated[i] = cut;
                cut
            };
            let legal = &mut self.legal[i * words..(i + 1) * words];
            if ended && shape.auto_reset {
                self.restart[i] = true;
                lane.steps = 0;
                legal.copy_from_slice(&shape.initial_legal);
            } else if ended {
                lane.ended = Some(rows.out.terminated[i]);
                legal.fill(0);
            }
            // Word by word: a copy of a length known at run time calls memmove.
            lane.legal
                .iter_mut()
                .zip(&*legal)
                .for_each(|(to, &from)| *to = from);
            write_mask(legal, &mut rows.out.mask[i * mask_row..(i + 1) * mask_row]);
        }
        self.machine.restart(&self.restart).expect(sized);
        self.machine
            .observations_into(rows.out.observations)
            .expect(sized);
    }
}

/// Each byte value's bits as eight flags, lowest bit first.
const FLAGS_OF: [[bool; 8]; 256] = {
    let mut table = [[false; 8]; 256];
    let mut value = 0;
    while value < 256 {
        let mut bit = 0;
        while bit < 8 {
            table[value][bit] = (value >> bit) & 1 == 1;
            bit += 1;
        }
        value += 1;
    }
    table
};

/// Writes bit `i` of `words` into `out[i]`, eight at a time (a copy of a
/// constant size is one store), the rest one by one.
fn write_mask(words: &[u64], out: &mut [bool]) {
    for (k, flags) in out.chunks_exact_mut(8).enumerate() {
        let byte = (words[k / 8] >> (8 * (k % 8))) as u8;
        flags.copy_from_slice(&FLAGS_OF[byte as usize]);
    }
    let done = 8 * (out.len() / 8);
    for (i, flag) in out[done..].iter_mut().enumerate() {
        let at = done + i;
        *flag = (words[at / 64] >> (at % 64)) & 1 == 1;
    }
}
