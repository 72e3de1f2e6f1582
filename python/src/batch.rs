//! The work of `ggpnet.VectorEnv`, in Rust alone: `n` games side by side on
//! the propnet, each stepped by given or random actions, with observations,
//! legal-action masks, rewards and end flags written into flat buffers
//! (numpy's arrays, borrowed by the caller). Two engines step the lanes:
//!
//! - scalar state machines: the lanes are split into blocks, one per thread,
//!   each stepping its lanes one after another on its state machine (or on
//!   the lanes' own, while they fit a memory budget);
//! - the lanes evaluator ([`lanes`]): blocks of up to 512 lanes, each a
//!   `LaneMachine` whose one evaluation of the net steps all its lanes, the
//!   blocks shared out over the caller's thread and helpers that live as
//!   long as the batch ([`team`]).
//!
//! Both draw random actions from the same per-lane streams in the same way,
//! so they give the same games; `Setup::evaluator` says which runs (see
//! [`engine_for`] for the automatic choice).
//!
//! The actions of a role are its inputs (every move that can ever be legal)
//! in input order, numbered from 0: the dense order of `Game.actions`.
//! Legality is checked against the engine's own legal bits (a copy per lane
//! on the scalar engine, the lane machines' words on the lanes), never the
//! numpy mask, so a caller that writes into the mask cannot make an illegal
//! move pass.

mod lanes;
mod team;

use ggpnet::propnet::{Game, Move, State, StateMachine};
use ggpnet::{EvaluatorKind, Stream};
use rayon::prelude::*;
use std::sync::Arc;

/// Fewest lanes worth a thread of their own.
const MIN_LANES_PER_BLOCK: usize = 16;

/// Most bytes the lanes' own state machines may take, estimated at
/// [`BYTES_PER_SLOT`] per value slot of the net; past it, the lanes of a
/// block share their block's machine.
const MACHINES_BUDGET: usize = 256 << 20;

/// Bytes a state machine's cache takes per value slot of the net, at most
/// (the sweep keeps a byte per slot, the differential evaluator a value and
/// a counter).
const BYTES_PER_SLOT: usize = 8;

/// What a batch is made with.
pub struct Setup {
    /// Lanes.
    pub lanes: usize,
    /// Most threads to step them on.
    pub threads: usize,
    /// Seed of the lanes' random streams (lane `i` draws from stream `i`).
    pub seed: u64,
    /// Whether a lane that ends starts again from the initial state in the same step.
    pub auto_reset: bool,
    /// Steps after which an episode is truncated.
    pub max_steps: u64,
    /// The evaluator: `Lanes` for the lanes engine, else the scalar
    /// evaluator of the state machines.
    pub evaluator: EvaluatorKind,
    /// Whether the machines run native code where the platform allows.
    pub native: bool,
}

/// An action refused by [`Batch::step`]: lane, role and action number.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Refused {
    /// The lane.
    pub lane: usize,
    /// The role.
    pub role: usize,
    /// The action given.
    pub action: i64,
}

/// The buffers a step writes: row `i` of each is lane `i`'s.
pub struct Buffers<'a> {
    /// Lanes x bases: 1 where the base holds.
    pub observations: &'a mut [u8],
    /// Lanes x roles x actions: whether the action is legal.
    pub mask: &'a mut [bool],
    /// Lanes x roles: the goals when the lane's episode ended in this step, else 0.
    pub rewards: &'a mut [f32],
    /// Lanes: whether the episode ended in a terminal state in this step.
    pub terminated: &'a mut [bool],
    /// Lanes: whether it was cut short (step limit, or a role without a legal move).
    pub truncated: &'a mut [bool],
}

/// One game of the batch: what either engine keeps of it.
struct Lane {
    /// Steps since its episode began.
    steps: u64,
    /// How its episode ended, when it waits for a reset (without auto-reset):
    /// `true` if terminated, `false` if truncated.
    ended: Option<bool>,
}

/// What the scalar engine keeps of a lane besides.
struct ScalarLane {
    /// Its random stream (random roles, negative actions, sampled actions);
    /// the lanes engine keeps its lanes' streams side by side instead.
    rng: Stream,
    /// Its state.
    state: State,
    /// Its legal actions, a bit per (role, action): bit `role * actions + a`
    /// (the lanes engine reads them from its machines' words instead).
    legal: Vec<u64>,
    /// Its own state machine, when the batch can afford one per lane: it
    /// keeps the lane's state loaded from one step to the next (no
    /// evaluation of it again, and the evaluators skip what did not change).
    machine: Option<Box<StateMachine>>,
}

/// How the lanes step.
enum Engine {
    /// Scalar state machines: per lane its state (and machine), and one
    /// worker per block of lanes.
    Scalar {
        states: Vec<ScalarLane>,
        workers: Vec<Worker>,
    },
    /// Lane machines of up to 512 lanes each.
    Lanes(lanes::Blocks),
}

/// A thread's machine and scratch space.
struct Worker {
    /// The state machine of the lanes without their own.
    machine: StateMachine,
    /// Scratch space.
    scratch: Scratch,
}

/// Buffers of one step of a lane.
struct Scratch {
    /// The next state, before it is swapped into its lane.
    next: State,
    /// Legal moves of one role.
    legal: Vec<Move>,
    /// The joint move.
    joint: Vec<Move>,
    /// Goals of a terminal state.
    goals: Vec<Option<i64>>,
}

/// What every block reads.
struct Shape {
    /// The compiled game.
    game: Arc<Game>,
    /// Roles.
    roles: usize,
    /// Actions per role in the mask (the most any role has).
    actions: usize,
    /// Bases.
    bases: usize,
    /// Each input's action number within its role.
    action_of: Vec<usize>,
    /// The role `random` of GDL-II, whose moves are always drawn.
    random_role: Option<usize>,
    /// See [`Setup::auto_reset`].
    auto_reset: bool,
    /// See [`Setup::max_steps`].
    max_steps: u64,
}

/// `n` games side by side.
pub struct Batch {
    /// The sizes and the game.
    shape: Shape,
    /// The games.
    lanes: Vec<Lane>,
    /// What steps them.
    engine: Engine,
}

/// The engine `VectorEnv` runs `lanes` lanes on when not told:
/// the lanes evaluator from [`lanes::FEWEST_LANES`] lanes on, scalar sweep
/// machines below (where one evaluation of 512 lanes costs more than the
/// few lanes' scalar steps).
pub fn engine_for(lanes: usize) -> EvaluatorKind {
    if lanes >= lanes::FEWEST_LANES {
        EvaluatorKind::Lanes
    } else {
        EvaluatorKind::Sweep
    }
}

impl Batch {
    /// The batch `setup` describes, every lane in the initial state (its
    /// buffers are written by [`Batch::reset`]).
    pub fn new(game: Arc<Game>, random_role: Option<usize>, setup: &Setup) -> Batch {
        let roles = game.roles().len();
        let actions = game.role_moves().iter().map(Vec::len).max().unwrap_or(0).max(1);
        let mut action_of = vec![0; game.moves().len()];
        for moves in game.role_moves() {
            for (i, m) in moves.iter().enumerate() {
                action_of[m.0 as usize] = i;
            }
        }
        let lanes = (0..setup.lanes)
            .map(|_| Lane {
                steps: 0,
                ended: None,
            })
            .collect();
        let shape = Shape {
            bases: game.facts().len(),
            game,
            roles,
            actions,
            action_of,
            random_role,
            auto_reset: setup.auto_reset,
            max_steps: setup.max_steps,
        };
        let engine = match setup.evaluator {
            EvaluatorKind::Lanes => Engine::Lanes(lanes::Blocks::new(&shape, setup)),
            _ => Engine::scalar(&shape.game, setup, shape.legal_words()),
        };
        Batch { shape, lanes, engine }
    }

    /// Lanes.
    pub fn lanes(&self) -> usize {
        self.lanes.len()
    }

    /// Roles.
    pub fn roles(&self) -> usize {
        self.shape.roles
    }

    /// Actions per role in the mask.
    pub fn actions(&self) -> usize {
        self.shape.actions
    }

    /// Bases.
    pub fn bases(&self) -> usize {
        self.shape.bases
    }

    /// Threads the steps run on.
    pub fn threads(&self) -> usize {
        match &self.engine {
            Engine::Scalar { workers, .. } => workers.len(),
            Engine::Lanes(blocks) => blocks.threads(),
        }
    }

    /// The evaluator the steps run on (`Lanes` for the lanes engine).
    pub fn evaluator(&self) -> EvaluatorKind {
        match &self.engine {
            Engine::Scalar { workers, .. } => workers[0].machine.evaluator(),
            Engine::Lanes(_) => EvaluatorKind::Lanes,
        }
    }

    /// The state of lane `lane` (below [`Batch::lanes`]).
    pub fn state(&self, lane: usize) -> State {
        match &self.engine {
            Engine::Scalar { states, .. } => states[lane].state.clone(),
            Engine::Lanes(blocks) => blocks.state(lane),
        }
    }

    /// Puts every lane of `which` (all when `None`) in the initial state (in
    /// `state` when given), reseeding its stream when `seed` is given, and
    /// writes their rows. Lanes past the batch are ignored by the caller's check.
    pub fn reset(
        &mut self,
        which: Option<&[usize]>,
        state: Option<&State>,
        seed: Option<u64>,
        out: Buffers<'_>,
    ) {
        let start = state.unwrap_or(self.shape.game.initial()).clone();
        let all: Vec<usize>;
        let which = match which {
            Some(which) => which,
            None => {
                all = (0..self.lanes.len()).collect();
                &all
            }
        };
        for &i in which {
            let lane = &mut self.lanes[i];
            lane.steps = 0;
            lane.ended = None;
        }
        if let Some(seed) = seed {
            match &mut self.engine {
                Engine::Scalar { states, .. } => {
                    for &i in which {
                        states[i].rng = Stream::new(seed, i as u64);
                    }
                }
                Engine::Lanes(blocks) => blocks.reseed(which, seed),
            }
        }
        let rows = Rows::new(&self.shape, out);
        match &mut self.engine {
            Engine::Scalar { states, workers } => reset_scalar(
                &self.shape,
                &mut self.lanes,
                states,
                &mut workers[0],
                which,
                &start,
                rows,
            ),
            Engine::Lanes(blocks) => blocks.reset(&self.shape, &mut self.lanes, which, &start, rows),
        }
    }

    /// Checks `actions` (lanes x roles): each must be a legal action of a
    /// lane whose episode goes on, or negative (drawn at random); the random
    /// role's are always drawn.
    pub fn check(&mut self, actions: &[i64]) -> Result<(), Refused> {
        if all_drawn(actions) {
            return Ok(());
        }
        let shape = &self.shape;
        for (i, lane) in self.lanes.iter().enumerate() {
            if lane.ended.is_some() {
                continue;
            }
            for role in 0..shape.roles {
                let action = actions[i * shape.roles + role];
                if action < 0 || Some(role) == shape.random_role {
                    continue;
                }
                let legal = (action as u64) < shape.actions as u64
                    && match &mut self.engine {
                        Engine::Scalar { states, .. } => {
                            bit(&states[i].legal, role * shape.actions + action as usize)
                        }
                        Engine::Lanes(blocks) => blocks.is_legal(i, role, action as usize),
                    };
                if !legal {
                    return Err(Refused {
                        lane: i,
                        role,
                        action,
                    });
                }
            }
        }
        Ok(())
    }

    /// Plays `actions` (checked by [`Batch::check`]) in every lane whose
    /// episode goes on, on the batch's threads, and writes every row.
    pub fn step(&mut self, actions: &[i64], out: Buffers<'_>) {
        let rows = Rows::new(&self.shape, out);
        match &mut self.engine {
            Engine::Scalar { states, workers } => {
                step_scalar(&self.shape, &mut self.lanes, states, workers, actions, rows)
            }
            Engine::Lanes(blocks) => blocks.step(&self.shape, &mut self.lanes, actions, rows),
        }
    }

    /// Uniformly random legal actions (lanes x roles), drawn from each lane's
    /// stream; -1 for the roles of a lane whose episode ended.
    pub fn sample(&mut self, out: &mut [i64]) {
        let shape = &self.shape;
        let rows = out.chunks_exact_mut(shape.roles.max(1));
        match &mut self.engine {
            Engine::Scalar { states, .. } => {
                for ((lane, own), row) in self.lanes.iter().zip(states.iter_mut()).zip(rows) {
                    shape.sample(lane, &own.legal, &mut own.rng, row);
                }
            }
            Engine::Lanes(blocks) => blocks.sample(shape, &self.lanes, out),
        }
    }
}

impl Engine {
    /// The scalar engine of `setup`: one worker per block of lanes, and each
    /// lane's own machine while they fit [`MACHINES_BUDGET`].
    fn scalar(game: &Arc<Game>, setup: &Setup, words: usize) -> Engine {
        let blocks = setup
            .threads
            .clamp(1, setup.lanes.div_ceil(MIN_LANES_PER_BLOCK).max(1));
        let workers = (0..blocks).map(|_| Worker::new(game, setup)).collect();
        let own_machines = setup.lanes.saturating_mul(game.net().slots() * BYTES_PER_SLOT) <= MACHINES_BUDGET;
        let states = (0..setup.lanes)
            .map(|i| ScalarLane {
                rng: Stream::new(setup.seed, i as u64),
                state: game.initial().clone(),
                legal: vec![0; words],
                machine: own_machines.then(|| Box::new(Worker::machine(game, setup))),
            })
            .collect();
        Engine::Scalar { states, workers }
    }
}

impl Shape {
    /// Words of a lane's legal bits ([`ScalarLane::legal`]).
    fn legal_words(&self) -> usize {
        (self.roles * self.actions).div_ceil(64)
    }
}

/// [`Batch::reset`] on the scalar engine: the lanes of `which` (their
/// counters reset) put in `start`, their rows written on `worker`.
fn reset_scalar(
    shape: &Shape,
    lanes: &mut [Lane],
    states: &mut [ScalarLane],
    worker: &mut Worker,
    which: &[usize],
    start: &State,
    mut rows: Rows<'_>,
) {
    for &i in which {
        states[i].state.clone_from(start);
        let mut row = rows.row(i);
        row.clear_step();
        worker.observe(shape, &mut lanes[i], &mut states[i], &mut row);
    }
}

/// [`Batch::step`] on the scalar engine: the lanes in one block per worker,
/// the blocks on the threads.
fn step_scalar(
    shape: &Shape,
    lanes: &mut [Lane],
    states: &mut [ScalarLane],
    workers: &mut [Worker],
    actions: &[i64],
    rows: Rows<'_>,
) {
    let per_block = lanes.len().div_ceil(workers.len());
    let blocks: Vec<_> = workers
        .iter_mut()
        .zip(lanes.chunks_mut(per_block))
        .zip(states.chunks_mut(per_block))
        .zip(rows.chunks(per_block))
        .zip(actions.chunks(per_block * shape.roles))
        .collect();
    if blocks.len() == 1 {
        blocks
            .into_iter()
            .for_each(|block| step_scalar_block(shape, block));
    } else {
        blocks
            .into_par_iter()
            .for_each(|block| step_scalar_block(shape, block));
    }
}

/// A block of the scalar engine: its worker, lanes, rows and actions.
type ScalarBlock<'a, 'b> = (
    (((&'a mut Worker, &'a mut [Lane]), &'a mut [ScalarLane]), Rows<'b>),
    &'a [i64],
);

/// Steps the lanes of `block` one after another on its worker.
fn step_scalar_block(shape: &Shape, block: ScalarBlock<'_, '_>) {
    let ((((worker, lanes), states), mut rows), actions) = block;
    for (i, (lane, own)) in lanes.iter_mut().zip(states.iter_mut()).enumerate() {
        let acts = &actions[i * shape.roles..(i + 1) * shape.roles];
        worker.step(shape, lane, own, acts, &mut rows.row(i));
    }
}

impl Worker {
    /// A worker for `game`.
    fn new(game: &Arc<Game>, setup: &Setup) -> Worker {
        Worker {
            machine: Worker::machine(game, setup),
            scratch: Scratch {
                next: game.initial().clone(),
                legal: Vec::new(),
                joint: Vec::new(),
                goals: Vec::new(),
            },
        }
    }

    /// A scalar state machine for `game` as `setup` says.
    fn machine(game: &Arc<Game>, setup: &Setup) -> StateMachine {
        StateMachine::with_evaluator_native(Arc::clone(game), setup.evaluator, setup.native)
    }

    /// One step of `lane` with its `actions` (one per role), its row
    /// written, on the lane's own machine if it has one.
    fn step(
        &mut self,
        shape: &Shape,
        lane: &mut Lane,
        own: &mut ScalarLane,
        actions: &[i64],
        row: &mut Row<'_>,
    ) {
        row.clear_step();
        if let Some(terminated) = lane.ended {
            *row.terminated = terminated;
            *row.truncated = !terminated;
            return;
        }
        let mut machine = own.machine.take();
        let m = machine.as_deref_mut().unwrap_or(&mut self.machine);
        self.scratch.play(m, shape, lane, own, actions, row);
        own.machine = machine;
    }

    /// Writes `lane`'s row for its state (see [`Scratch::observe`]), on
    /// the lane's own machine if it has one.
    fn observe(&mut self, shape: &Shape, lane: &mut Lane, own: &mut ScalarLane, row: &mut Row<'_>) {
        let mut machine = own.machine.take();
        let m = machine.as_deref_mut().unwrap_or(&mut self.machine);
        self.scratch.observe(m, shape, lane, own, row);
        own.machine = machine;
    }
}

impl Scratch {
    /// [`Worker::step`] of a lane whose episode goes on, in `own`'s state
    /// and drawing from its stream, on `m`.
    fn play(
        &mut self,
        m: &mut StateMachine,
        shape: &Shape,
        lane: &mut Lane,
        own: &mut ScalarLane,
        actions: &[i64],
        row: &mut Row<'_>,
    ) {
        self.joint.clear();
        for (role, &action) in actions.iter().enumerate() {
            let action = shape.action(&mut own.rng, &own.legal, role, action);
            self.joint.push(shape.game.role_moves()[role][action]);
        }
        let state = &mut own.state;
        // Asking whether the state is terminal loads it into the evaluator.
        m.is_terminal(state);
        m.next_into(&self.joint, &mut self.next);
        std::mem::swap(state, &mut self.next);
        lane.steps += 1;
        self.observe(m, shape, lane, own, row);
    }

    /// Writes `lane`'s row for `own`'s state: observation, legal actions,
    /// rewards and flags when it ended (then restarting it, with auto-reset).
    fn observe(
        &mut self,
        m: &mut StateMachine,
        shape: &Shape,
        lane: &mut Lane,
        own: &mut ScalarLane,
        row: &mut Row<'_>,
    ) {
        let ended = self.score(m, shape, lane, own, row);
        if ended && shape.auto_reset {
            own.state.clone_from(shape.game.initial());
            lane.steps = 0;
            self.score(m, shape, lane, own, row);
        } else if ended {
            lane.ended = Some(*row.terminated);
            own.legal.fill(0);
            row.mask.fill(false);
        }
        write_bits(own.state.0.as_raw_slice(), row.observations);
    }

    /// Writes `lane`'s legal actions in `own`'s state, or its rewards and
    /// end flags when its episode ends there; whether it ends.
    fn score(
        &mut self,
        m: &mut StateMachine,
        shape: &Shape,
        lane: &Lane,
        own: &mut ScalarLane,
        row: &mut Row<'_>,
    ) -> bool {
        let state = &own.state;
        own.legal.fill(0);
        row.mask.fill(false);
        if m.is_terminal(state) {
            m.best_goals_into(state, &mut self.goals);
            shape.reward(&self.goals, row);
            return true;
        }
        let mut stuck = false;
        for role in 0..shape.roles {
            m.legal_moves_into(state, role, &mut self.legal);
            stuck |= self.legal.is_empty();
            for mv in &self.legal {
                let at = role * shape.actions + shape.action_of[mv.0 as usize];
                own.legal[at / 64] |= 1 << (at % 64);
                row.mask[at] = true;
            }
        }
        if stuck || lane.steps >= shape.max_steps {
            *row.truncated = true;
            return true;
        }
        false
    }
}

impl Shape {
    /// The action `role` plays for `action` (given; drawn from `rng` among
    /// the lane's `legal` actions, as [`ScalarLane::legal`], when negative, and
    /// always for the random role); the lane goes on, so the role has a
    /// legal action, and a given one was checked by [`Batch::check`].
    fn action(&self, rng: &mut Stream, legal: &[u64], role: usize, action: i64) -> usize {
        match action {
            a if a >= 0 && Some(role) != self.random_role => a as usize,
            _ => draw(rng, legal, role, self.actions).expect("a lane that goes on has legal moves"),
        }
    }

    /// Writes into `out` (one per role) random legal actions of `lane`
    /// (its `legal` actions as [`ScalarLane::legal`]) drawn from its stream
    /// `rng`, or -1 where its episode ended.
    fn sample(&self, lane: &Lane, legal: &[u64], rng: &mut Stream, out: &mut [i64]) {
        for (role, action) in out.iter_mut().enumerate() {
            *action = match lane.ended {
                Some(_) => -1,
                None => draw(rng, legal, role, self.actions).map_or(-1, |a| a as i64),
            };
        }
    }

    /// Writes the rewards and the terminated flag of a lane whose episode
    /// ended in a terminal state with `goals` (per role, 0 for none).
    fn reward(&self, goals: &[Option<i64>], row: &mut Row<'_>) {
        for (reward, goal) in row.rewards.iter_mut().zip(goals) {
            *reward = goal.unwrap_or(0) as f32;
        }
        *row.terminated = true;
    }
}

/// Writes the bits of `words` into `out`, one byte each (0 or 1), as many
/// as `out` holds.
fn write_bits(words: &[u64], out: &mut [u8]) {
    for (chunk, &word) in out.chunks_mut(64).zip(words) {
        for (i, byte) in chunk.iter_mut().enumerate() {
            *byte = (word >> i) as u8 & 1;
        }
    }
}

/// Whether every action of `actions` is negative (drawn at random): the
/// sign bit of all of them ANDed, a pass without a branch per action, which
/// vectorises (a search stopping at the first other action does not).
pub(crate) fn all_drawn(actions: &[i64]) -> bool {
    actions.iter().fold(-1, |all, &a| all & a) < 0
}

/// Whether bit `at` of `words` is set.
fn bit(words: &[u64], at: usize) -> bool {
    words[at / 64] >> (at % 64) & 1 == 1
}

/// A uniformly random legal action of `role` among `legal` (as
/// [`Lane::legal`]; `None` if it has none): the rank drawn from `rng`
/// among the role's legal actions in order, as the drivers draw among legal moves.
fn draw(rng: &mut Stream, legal: &[u64], role: usize, actions: usize) -> Option<usize> {
    let first = role * actions;
    if first % 64 + actions <= 64 {
        // The role's bits in one word (every game of at most 64 actions a role,
        // most of them): the same rank, selected without the general walk.
        let mut word = (legal[first / 64] >> (first % 64)) & (!0u64 >> (64 - actions));
        if word == 0 {
            return None;
        }
        for _ in 0..rng.draw(word.count_ones() as usize) {
            word &= word - 1;
        }
        return Some(word.trailing_zeros() as usize);
    }
    draw_wide(rng, legal, first, actions)
}

/// [`draw`] of a role whose bits span words.
fn draw_wide(rng: &mut Stream, legal: &[u64], first: usize, actions: usize) -> Option<usize> {
    let count: usize = ones(legal, first, actions)
        .map(|(_, w)| w.count_ones() as usize)
        .sum();
    if count == 0 {
        return None;
    }
    let mut rank = rng.draw(count);
    for (base, mut word) in ones(legal, first, actions) {
        let here = word.count_ones() as usize;
        if rank >= here {
            rank -= here;
            continue;
        }
        for _ in 0..rank {
            word &= word - 1;
        }
        return Some(base + word.trailing_zeros() as usize - first);
    }
    unreachable!("the rank drawn is below the count of set bits")
}

/// The words of `words` covering bits `first..first + len`, each masked to
/// those bits, with the number of its bit 0.
fn ones(words: &[u64], first: usize, len: usize) -> impl Iterator<Item = (usize, u64)> + '_ {
    let end = first + len;
    (first / 64..end.div_ceil(64)).map(move |w| {
        let mut word = words[w];
        let base = w * 64;
        if base < first {
            word &= !0 << (first - base);
        }
        if base + 64 > end {
            word &= !0 >> (base + 64 - end);
        }
        (base, word)
    })
}

/// The rows of a run of lanes in the buffers.
struct Rows<'a> {
    /// Bases per observation row.
    bases: usize,
    /// Roles x actions per mask row.
    mask_row: usize,
    /// Roles per rewards row.
    roles: usize,
    /// The buffers of these lanes.
    out: Buffers<'a>,
}

/// One lane's row of each buffer.
struct Row<'a> {
    /// Its observation.
    observations: &'a mut [u8],
    /// Its legal actions.
    mask: &'a mut [bool],
    /// Its rewards.
    rewards: &'a mut [f32],
    /// Whether it terminated.
    terminated: &'a mut bool,
    /// Whether it was truncated.
    truncated: &'a mut bool,
}

impl<'a> Rows<'a> {
    /// The rows of `out` for `shape`.
    fn new(shape: &Shape, out: Buffers<'a>) -> Rows<'a> {
        Rows {
            bases: shape.bases,
            mask_row: shape.roles * shape.actions,
            roles: shape.roles,
            out,
        }
    }

    /// The first `lanes` lanes' rows and the rest.
    fn split(self, lanes: usize) -> (Rows<'a>, Rows<'a>) {
        let Rows {
            bases,
            mask_row,
            roles,
            out,
        } = self;
        let lanes = lanes.min(out.terminated.len());
        let (o1, o2) = out.observations.split_at_mut(lanes * bases);
        let (m1, m2) = out.mask.split_at_mut(lanes * mask_row);
        let (r1, r2) = out.rewards.split_at_mut(lanes * roles);
        let (t1, t2) = out.terminated.split_at_mut(lanes);
        let (u1, u2) = out.truncated.split_at_mut(lanes);
        let rows = |observations, mask, rewards, terminated, truncated| Rows {
            bases,
            mask_row,
            roles,
            out: Buffers {
                observations,
                mask,
                rewards,
                terminated,
                truncated,
            },
        };
        (rows(o1, m1, r1, t1, u1), rows(o2, m2, r2, t2, u2))
    }

    /// The rows in runs of `lanes` lanes (the last may be shorter).
    fn chunks(self, lanes: usize) -> Vec<Rows<'a>> {
        let mut runs = Vec::new();
        let mut rest = self;
        while !rest.out.terminated.is_empty() {
            let (run, more) = rest.split(lanes);
            runs.push(run);
            rest = more;
        }
        runs
    }

    /// Lane `i`'s rows.
    fn row(&mut self, i: usize) -> Row<'_> {
        Row {
            observations: &mut self.out.observations[i * self.bases..(i + 1) * self.bases],
            mask: &mut self.out.mask[i * self.mask_row..(i + 1) * self.mask_row],
            rewards: &mut self.out.rewards[i * self.roles..(i + 1) * self.roles],
            terminated: &mut self.out.terminated[i],
            truncated: &mut self.out.truncated[i],
        }
    }
}

impl Row<'_> {
    /// No rewards and no end yet.
    fn clear_step(&mut self) {
        self.rewards.fill(0.0);
        *self.terminated = false;
        *self.truncated = false;
    }
}
