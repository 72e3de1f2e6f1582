//! The lanes engine of the batch: the lanes in blocks of up to 512
//! (`LANES`), each block a `LaneMachine` of the propnet crate, which steps
//! every lane of the block with one evaluation of the net and gives the
//! observations, legal actions and terminal flags of all of them by
//! bit-matrix transposition. The blocks run on the threads side by side,
//! each thread the same consecutive blocks at every step, the caller's
//! thread among them ([`super::team`]).
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
//! block keeps its lanes' facts as `LaneSet`s (lanes waiting for a reset;
//! per role, the lanes drawing), the random actions are drawn on the machine
//! from its legal bits, bit-sliced, eight lanes' streams at once, their
//! inputs set from the draw's words (`LaneMachine::step_drawing`; the block
//! keeps its lanes' streams side by side for it), given actions are set by
//! number and checked 512 lanes per move, the end tests, flags and restarts
//! are words, the legal bits stay the machine's words (given actions are
//! checked against them, `LaneMachine::is_legal`), and the observations and
//! masks come out of the transposition 64 bytes a store. Only the lanes
//! whose episode ends are visited one by one, for their step counts and the
//! goals the machine reads word-wise (`LaneMachine::goal_lanes`).

use super::team::Team;
use super::{all_drawn, Buffers, Lane, Rows, Setup, Shape};
use ggpnet::propnet::driver::{write_lane_flags, LaneMachine, LaneSet};
use ggpnet::propnet::evaluator::{Lanes, LANES, LANE_WORDS};
use ggpnet::propnet::random::{Stream, StreamGroup};
use ggpnet::propnet::State;
use std::ops::Range;
use std::sync::{Arc, Mutex};

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
    /// The threads that step the blocks, each the same share of them at every step.
    team: Team,
}

/// One lane machine and the scratch space of its steps.
struct Block {
    machine: LaneMachine,
    /// The actions of the step, lanes x roles, as numbers among each role's
    /// moves (read where given, not where drawn).
    picks: Vec<u32>,
    /// Per role, the lanes drawing its action in the step.
    drawn: Vec<LaneSet>,
    /// The lanes' random streams, eight to a group (lane `i` of the batch
    /// draws from stream `i` of the seed, as on the scalar engine).
    streams: Vec<StreamGroup>,
    /// The lanes whose episode ended without auto-reset, waiting for a reset.
    waiting: LaneSet,
    /// Legal bits, lanes x words, as `ScalarLane::legal` (for `sample`).
    legal: Vec<u64>,
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
            team: Team::new(setup.threads.clamp(1, count)),
        }
    }

    /// Threads the blocks are stepped on.
    pub fn threads(&self) -> usize {
        self.team.threads()
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

    /// Whether `action` (below `Shape::actions`) is legal for `role` in
    /// lane `lane` (of the batch), read from its machine's words.
    pub fn is_legal(&mut self, lane: usize, role: usize, action: usize) -> bool {
        let block = &mut self.blocks[lane / self.per_block];
        block
            .machine
            .is_legal(lane % self.per_block, role, action)
            .expect("a lane and a role of the batch")
    }

    /// Random legal actions of every lane (lanes x roles) into `out`, as
    /// `Shape::sample` draws them, from the lanes' streams.
    pub fn sample(&mut self, shape: &Shape, lanes: &[Lane], out: &mut [i64]) {
        let roles = shape.roles.max(1);
        let words = shape.legal_words();
        let runs = lanes
            .chunks(self.per_block)
            .zip(out.chunks_mut(self.per_block * roles));
        for (block, (lanes, out)) in self.blocks.iter_mut().zip(runs) {
            block.legal.resize(lanes.len() * words, 0);
            block
                .machine
                .legal_into(shape.actions, &mut block.legal)
                .expect("legal words sized for the block's lanes");
            let legal = block.legal.chunks(8 * words.max(1));
            let groups = lanes.chunks(8).zip(out.chunks_mut(8 * roles)).zip(legal);
            for (group, ((lanes, out), legal)) in block.streams.iter_mut().zip(groups) {
                let mut eight: [Stream; 8] = std::array::from_fn(|k| group.stream(k));
                let rows = out.chunks_exact_mut(roles).zip(legal.chunks(words.max(1)));
                for ((lane, rng), (out, legal)) in lanes.iter().zip(&mut eight).zip(rows) {
                    shape.sample(lane, legal, rng, out);
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
            let mut chosen = [0; LANE_WORDS];
            let mine = which
                .iter()
                .filter_map(|&i| i.checked_sub(b * per_block))
                .filter(|&i| i < lanes.len());
            for i in mine {
                chosen[i / 64] |= 1 << (i % 64);
                block.machine.set_state(i, start).expect("a state of the game");
                rows.row(i).clear_step();
            }
            if chosen.iter().any(|&w| w != 0) {
                block.waiting = and(&block.waiting, &not(&chosen));
                block.settle(shape, lanes, rows, &chosen);
            }
        }
    }

    /// Plays `actions` (checked by `Batch::check`) in every lane whose
    /// episode goes on and writes every row.
    pub fn step(&mut self, shape: &Shape, lanes: &mut [Lane], actions: &[i64], rows: Rows<'_>) {
        let per_block = self.per_block;
        let jobs: Vec<Job<'_, '_>> = self
            .blocks
            .iter_mut()
            .zip(lanes.chunks_mut(per_block))
            .zip(rows.chunks(per_block))
            .zip(actions.chunks(per_block * shape.roles))
            .collect();
        // Each job taken once, by the thread that runs it.
        let jobs: Vec<Mutex<Option<Job<'_, '_>>>> =
            jobs.into_iter().map(|job| Mutex::new(Some(job))).collect();
        self.team.run(jobs.len(), &|i| {
            let job = jobs[i].lock().unwrap_or_else(|e| e.into_inner()).take();
            let (((block, lanes), rows), actions) = job.expect("each block stepped once");
            block.step(shape, lanes, actions, rows);
        });
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
            drawn: vec![[0; LANE_WORDS]; shape.roles],
            streams,
            waiting: [0; LANE_WORDS],
            legal: Vec::new(),
        }
    }

    /// Plays `actions` in the block's lanes whose episode goes on, on one
    /// evaluation of the net, and writes every row. Random actions are drawn
    /// on the machine, which sets their inputs itself, eight lanes' streams
    /// at once, as the scalar engine draws them (see
    /// [`LaneMachine::step_drawing`]).
    fn step(&mut self, shape: &Shape, lanes: &mut [Lane], actions: &[i64], mut rows: Rows<'_>) {
        let going = and(&first_lanes(lanes.len()), &not(&self.waiting));
        let all_drawn = all_drawn(actions);
        // The given actions, read by the machine only where not drawn.
        self.picks.resize(actions.len(), 0);
        if !all_drawn {
            self.picks
                .iter_mut()
                .zip(actions)
                .for_each(|(p, &a)| *p = a as u32);
        }
        for (role, drawn) in self.drawn.iter_mut().enumerate() {
            *drawn = match all_drawn || Some(role) == shape.random_role {
                true => going,
                false => and(&going, &negative_lanes(actions, role, shape.roles)),
            };
        }
        let Buffers {
            rewards,
            terminated,
            truncated,
            ..
        } = &mut rows.out;
        rewards.fill(0.0);
        for_each_lane(&self.waiting, |i| {
            terminated[i] = lanes[i].ended == Some(true);
            truncated[i] = lanes[i].ended == Some(false);
        });
        for (i, lane) in lanes.iter_mut().enumerate() {
            lane.steps += (going[i / 64] >> (i % 64)) & 1;
        }
        let checked = "actions checked by Batch::check, one per lane and role, lanes with legal moves";
        self.machine
            .step_drawing(&self.picks, &going, &self.drawn, &mut self.streams)
            .expect(checked);
        self.settle(shape, lanes, rows, &going);
    }

    /// Writes the rows of the `chosen` lanes for their states (rewards and
    /// flags where the episode ends, restarting those with auto-reset), and
    /// every lane's legal actions and observation: word-wise, 64 lanes an
    /// operation, but for the lanes whose episode ends.
    fn settle(&mut self, shape: &Shape, lanes: &mut [Lane], rows: Rows<'_>, chosen: &LaneSet) {
        let sized = "buffers sized for the block's lanes";
        let terminal = and(&self.machine.terminal_lanes(), chosen);
        let stuck = or(&self.machine.stuck_lanes(), &at_limit(lanes, shape.max_steps));
        let cut = and(&and(chosen, &not(&terminal)), &stuck);
        // Rewards are zero in the chosen lanes (cleared by the caller): each
        // role's goal values come ascending, the highest written last.
        let (rewards, roles) = (&mut *rows.out.rewards, shape.roles);
        self.machine.goal_lanes(&terminal, |i, role, value| {
            rewards[i * roles + role] = value as f32;
        });
        write_lane_flags(chosen, &terminal, rows.out.terminated);
        write_lane_flags(chosen, &cut, rows.out.truncated);
        let ended = or(&terminal, &cut);
        if shape.auto_reset {
            for_each_lane(&ended, |i| lanes[i].steps = 0);
            self.machine.restart_lanes(&ended);
        } else {
            for_each_lane(&ended, |i| {
                lanes[i].ended = Some(terminal[i / 64] >> (i % 64) & 1 == 1)
            });
            self.waiting = or(&self.waiting, &ended);
        }
        self.machine
            .legal_mask_into(shape.actions, rows.out.mask)
            .expect(sized);
        let mask_row = shape.roles * shape.actions;
        for_each_lane(&self.waiting, |i| {
            rows.out.mask[i * mask_row..(i + 1) * mask_row].fill(false)
        });
        self.machine
            .observations_into(rows.out.observations)
            .expect(sized);
    }
}

/// What a step of a block takes: the block, its lanes, its rows and its actions.
type Job<'a, 'b> = (((&'a mut Block, &'a mut [Lane]), Rows<'b>), &'a [i64]);

/// The first `lanes` lanes (at most [`LANES`]).
fn first_lanes(lanes: usize) -> LaneSet {
    std::array::from_fn(|w| match lanes.saturating_sub(64 * w) {
        0 => 0,
        n if n >= 64 => !0,
        n => !0 >> (64 - n),
    })
}

/// The lanes whose action of `role` in `actions` (lanes x `roles`) is
/// negative (drawn at random).
fn negative_lanes(actions: &[i64], role: usize, roles: usize) -> LaneSet {
    let mut lanes = [0; LANE_WORDS];
    for (word, chunk) in lanes.iter_mut().zip(actions.chunks(64 * roles)) {
        *word = chunk
            .chunks_exact(roles)
            .enumerate()
            .fold(0, |bits, (i, lane)| bits | u64::from(lane[role] < 0) << i);
    }
    lanes
}

/// The lanes of `lanes` that took `max_steps` steps or more.
fn at_limit(lanes: &[Lane], max_steps: u64) -> LaneSet {
    let mut set = [0; LANE_WORDS];
    for (word, lanes) in set.iter_mut().zip(lanes.chunks(64)) {
        *word = lanes.iter().enumerate().fold(0, |bits, (i, lane)| {
            bits | u64::from(lane.steps >= max_steps) << i
        });
    }
    set
}

/// Calls `f` with every lane of `lanes`, ascending.
fn for_each_lane(lanes: &LaneSet, mut f: impl FnMut(usize)) {
    for (w, &word) in lanes.iter().enumerate() {
        let mut bits = word;
        while bits != 0 {
            f(w * 64 + bits.trailing_zeros() as usize);
            bits &= bits - 1;
        }
    }
}

/// The lanes in both sets.
fn and(a: &LaneSet, b: &LaneSet) -> LaneSet {
    std::array::from_fn(|w| a[w] & b[w])
}

/// The lanes in either set.
fn or(a: &LaneSet, b: &LaneSet) -> LaneSet {
    std::array::from_fn(|w| a[w] | b[w])
}

/// The lanes not in `a`.
fn not(a: &LaneSet) -> LaneSet {
    std::array::from_fn(|w| !a[w])
}
