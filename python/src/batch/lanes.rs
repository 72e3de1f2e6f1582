//! The lanes engine of the batch: the lanes in blocks of up to 512
//! (`LANES`), each block a `LaneMachine` of the propnet crate, which steps
//! every lane of the block with one evaluation of the net and gives the
//! observations, legal actions and terminal flags of all of them by
//! bit-matrix transposition. The blocks run on the threads side by side
//! (rayon, at most `threads` at once).
//!
//! Actions are chosen exactly as the scalar engine chooses them (the same
//! per-lane streams, the same draws over the same legal bits), and a lane
//! whose episode ends restarts from the initial state in the same step,
//! without another evaluation (the machine blends the initial state's
//! values in), so both engines give the same games.

use super::{Lane, Rows, Setup, Shape};
use ggpnet::propnet::driver::LaneMachine;
use ggpnet::propnet::evaluator::{Lanes, LANES};
use ggpnet::propnet::{Game, Move, State};
use rayon::prelude::*;
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
    /// The joint moves of the step, lanes x roles.
    joints: Vec<Move>,
    /// The lanes the step (or reset) concerns.
    chosen: Vec<bool>,
    terminal: Vec<bool>,
    restart: Vec<bool>,
    /// Legal bits, lanes x words, as `Lane::legal`.
    legal: Vec<u64>,
    goals: Vec<Option<i64>>,
}

impl Blocks {
    /// The blocks of `setup`'s lanes, every lane in the initial state.
    pub fn new(game: &Arc<Game>, setup: &Setup) -> Blocks {
        let count = setup.lanes.div_ceil(LANES).max(1);
        let per_block = setup.lanes.div_ceil(count).max(1);
        let evaluator = Arc::new(Lanes::new(game.net()));
        let blocks = (0..count)
            .map(|b| {
                let lanes = per_block.min(setup.lanes - b * per_block);
                Block::new(&evaluator, game, lanes)
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
    fn new(evaluator: &Arc<Lanes>, game: &Arc<Game>, lanes: usize) -> Block {
        let mut machine = LaneMachine::with_evaluator(Arc::clone(evaluator), Arc::clone(game))
            .expect("the game's evaluator");
        let initial = vec![game.initial().clone(); lanes];
        machine.load(&initial).expect("at most LANES initial states");
        Block {
            machine,
            joints: Vec::new(),
            chosen: vec![false; lanes],
            terminal: vec![false; lanes],
            restart: vec![false; lanes],
            legal: Vec::new(),
            goals: Vec::new(),
        }
    }

    /// Plays `actions` in the block's lanes whose episode goes on, on one
    /// evaluation of the net, and writes every row.
    fn step(&mut self, shape: &Shape, lanes: &mut [Lane], actions: &[i64], mut rows: Rows<'_>) {
        self.joints.clear();
        let moves = shape.game.role_moves();
        for (i, lane) in lanes.iter_mut().enumerate() {
            let mut row = rows.row(i);
            row.clear_step();
            self.chosen[i] = lane.ended.is_none();
            for role in 0..shape.roles {
                self.joints.push(match lane.ended {
                    // Not read: the lane does not move.
                    Some(_) => Move(0),
                    None => moves[role][shape.action(lane, role, actions[i * shape.roles + role])],
                });
            }
            if let Some(terminated) = lane.ended {
                *row.terminated = terminated;
                *row.truncated = !terminated;
            }
        }
        let checked = "actions checked by Batch::check, one per lane and role";
        self.machine.step_some(&self.joints, &self.chosen).expect(checked);
        for (lane, _) in lanes.iter_mut().zip(&self.chosen).filter(|&(_, &moved)| moved) {
            lane.steps += 1;
        }
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
        for (i, lane) in lanes.iter_mut().enumerate() {
            self.restart[i] = false;
            if !self.chosen[i] {
                continue;
            }
            let mut row = rows.row(i);
            let ended = if self.terminal[i] {
                self.machine.best_goals_into(i, &mut self.goals).expect(sized);
                shape.reward(&self.goals, &mut row);
                true
            } else {
                // Word by word: a copy of a length known at run time calls memmove.
                let bits = &self.legal[i * words..(i + 1) * words];
                lane.legal.iter_mut().zip(bits).for_each(|(to, &from)| *to = from);
                let cut = shape.stuck(&lane.legal) || lane.steps >= shape.max_steps;
                *row.truncated = cut;
                cut
            };
            if ended && shape.auto_reset {
                self.restart[i] = true;
                lane.steps = 0;
                lane.legal.copy_from_slice(&shape.initial_legal);
            } else if ended {
                lane.ended = Some(*row.terminated);
                lane.legal.fill(0);
            }
            write_mask(&lane.legal, row.mask);
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
