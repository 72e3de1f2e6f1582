//! A state machine over up to [`LANES`] states at once, on the lanes
//! evaluator: each state in one lane (one bit of every 512-bit word of
//! values), every lane stepped by a joint move its caller gives.
//!
//! Why it is built this way:
//!
//! - One pass per step. [`LaneMachine::step`] evaluates the move part once
//!   for every lane and takes each lane's next state; the state part of the
//!   new states (legal moves, terminal, goals) is evaluated once, when the
//!   first query after the step asks for it, for every lane at once. A caller
//!   that steps and reads every lane pays one evaluation of the net per 512
//!   transitions.
//! - Given moves are checked before anything changes: a move of no role, of
//!   another role, or not legal in its lane's state is refused with the lane
//!   and the [`MachineError`] a scalar machine would give, and no lane moves.
//!   In a lane that moves exactly one input of each role is set, which the
//!   lanes evaluator's rewritten frame rules rely on; a lane that does not
//!   move sets none and keeps its state (its evaluated next state is not
//!   taken).
//! - Lanes restart without an evaluation: the state-part values of the start
//!   state are computed once (by the net's plain evaluation) and blended into
//!   the restarted lanes, slot by slot, which costs a word operation per slot
//!   instead of an evaluation of the state part.
//! - Per-lane data comes out by bit-matrix transposition: 64 rows (bases, or
//!   legal inputs) of all 512 lanes are transposed at once, as eight 64 x 64
//!   matrices side by side in the vector registers, so that a lane's row is
//!   a word of 64 bits, written out as bytes ([`LaneMachine::observations_into`])
//!   or as bit sets ([`LaneMachine::legal_into`]) without a per-bit loop,
//!   each lane's row as one run of stores into its slice of the output.
//!   Where the CPU has AVX-512BW a lane's 64 flags are one expansion and one
//!   store in a loop without a check per lane, and rows narrower than 64
//!   flags (the legal mask of a game of few moves) are packed several lanes
//!   to a 64-byte line; the transposed blocks are kept from call to call.
//!
//! - Random moves are drawn for all lanes at once
//!   ([`LaneMachine::draw_actions`]): counts of legal moves and ranks are
//!   bit-sliced, eight lanes' streams draw side by side, and each lane draws
//!   exactly as its stream alone would, so a caller stepping lanes one by one
//!   on scalar machines with the same streams plays the same games.
//!   [`LaneMachine::step_drawing`] draws every role's move in rounds: a lane
//!   draws only for the roles with a choice, role after role, so round `k`
//!   merges every lane's `k`-th such role into one pass over the streams (in
//!   a game of turns, one pass, where role after role walked the streams
//!   once per role). Moves
//!   given by number ([`LaneMachine::step_actions`]) are checked move by move
//!   for 512 lanes at once. Both exist because a caller stepping every lane
//!   spends far more on per-lane work than on the evaluation when that work
//!   is done lane by lane.
//! - A caller stepping every lane can stay word-wise throughout: lanes given
//!   and returned as [`LaneSet`]s, 64 lanes an operation.
//!   [`LaneMachine::step_drawing`] draws random moves and sets their inputs
//!   straight from the draw's words (the walk over the legal moves yields,
//!   per move, the word of lanes taking it: no action numbers written and
//!   read back, no legality check for a drawn move);
//!   [`LaneMachine::terminal_lanes`], [`LaneMachine::stuck_lanes`] and
//!   [`LaneMachine::restart_lanes`] give and take the end tests and the
//!   restarts as words; [`LaneMachine::legal_mask_into`] writes legal flags
//!   from the transposed words as observations are written;
//!   [`LaneMachine::goal_lanes`] reads the goals of the lanes that ended a
//!   goal a word of lanes at once. `VectorEnv`
//!   (python/src/batch/lanes.rs) spent about half its time on per-lane
//!   bookkeeping before these (docs/PYTHON.md).
//!
//! The evaluation runs in the widest vector registers the CPU has, as the
//! batched playouts do (`driver/lanes.rs`); observations are expanded from
//! bits to bytes 64 at a time with AVX-512BW where the CPU has it.

use crate::evaluator::{
    and, for_each_lane, not, or, xor, Evaluator, Lane, LaneValues, Lanes, OnLines, VectorWidth, LANES,
    LANE_WORDS, NO_LANES,
};
use crate::game::{Game, MachineError, Move, State};
use crate::layout::Step;
use crate::random::StreamGroup;
use std::fmt;
use std::ops::Range;
use std::sync::Arc;

/// A set of a machine's lanes as words: lane `l` is in it when bit `l % 64`
/// of word `l / 64` is set. The word-wise methods ([`LaneMachine::step_drawing`],
/// [`LaneMachine::terminal_lanes`], [`LaneMachine::restart_lanes`], ...) take
/// and give lanes this way, 64 lanes an operation; bits past the lanes loaded
/// are ignored where given and clear where returned.
///
/// ```
/// use ggpnet_propnet::driver::LaneSet;
///
/// let mut lanes: LaneSet = Default::default();
/// lanes[70 / 64] |= 1 << (70 % 64); // lane 70
/// assert_eq!(lanes[1], 0b100_0000);
/// ```
pub type LaneSet = [u64; LANE_WORDS];

/// A request a [`LaneMachine`] refused, by kind; `Display` gives the message.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum LaneError {
    /// More states than a machine has lanes ([`LANES`]).
    TooManyLanes {
        /// The number of states given.
        lanes: usize,
    },
    /// A lane number past the lanes loaded.
    NoSuchLane {
        /// The lane asked for.
        lane: usize,
        /// The lanes loaded.
        lanes: usize,
    },
    /// A role number past the game's roles.
    NoSuchRole {
        /// The role asked for.
        role: usize,
        /// The game's roles.
        roles: usize,
    },
    /// A state of another game (another number of bases).
    ForeignState {
        /// Bases of the state given.
        bases: usize,
        /// Bases of the game.
        expected: usize,
    },
    /// An evaluator made for another game's net.
    ForeignEvaluator,
    /// A slice of the wrong length.
    WrongLength {
        /// What the slice holds.
        what: &'static str,
        /// The length it must have.
        expected: usize,
        /// Its length.
        found: usize,
    },
    /// A stride of legal bits narrower than a role's moves.
    NarrowStride {
        /// The stride given.
        stride: usize,
        /// The most moves a role has.
        widest: usize,
    },
    /// An action number past its role's moves ([`LaneMachine::step_actions`]).
    NoSuchAction {
        /// The lane.
        lane: usize,
        /// The role.
        role: usize,
        /// The action number given.
        action: usize,
        /// The role's moves.
        actions: usize,
    },
    /// A move to draw for a role that has no legal move in the lane
    /// ([`LaneMachine::step_drawing`]).
    NoLegalMove {
        /// The lane.
        lane: usize,
        /// The role.
        role: usize,
    },
    /// A joint move refused in a lane, as a [`crate::StateMachine`] refuses it.
    Move {
        /// The lane.
        lane: usize,
        /// Why.
        error: MachineError,
    },
}

impl fmt::Display for LaneError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LaneError::TooManyLanes { lanes } => {
                write!(
                    f,
                    "{lanes} states given, but a lane machine holds at most {LANES}"
                )
            }
            LaneError::NoSuchLane { lane, lanes } => {
                write!(f, "no lane {lane}: {lanes} lanes are loaded")
            }
            LaneError::NoSuchRole { role, roles } => write!(f, "no role {role}: the game has {roles}"),
            LaneError::ForeignState { bases, expected } => write!(
                f,
                "a state of {bases} bases, not the game's {expected}: a state of another game"
            ),
            LaneError::ForeignEvaluator => f.write_str("a lanes evaluator of another game's net"),
            LaneError::WrongLength {
                what,
                expected,
                found,
            } => {
                write!(f, "{what}: {found} given, {expected} expected")
            }
            LaneError::NarrowStride { stride, widest } => {
                write!(
                    f,
                    "a stride of {stride} legal bits, but a role has {widest} moves"
                )
            }
            LaneError::NoSuchAction {
                lane,
                role,
                action,
                actions,
            } => write!(
                f,
                "lane {lane}: no action {action} of role {role}, which has {actions}"
            ),
            LaneError::NoLegalMove { lane, role } => {
                write!(f, "lane {lane}: role {role} has no legal move to draw")
            }
            LaneError::Move { lane, error } => write!(f, "lane {lane}: {error}"),
        }
    }
}

impl std::error::Error for LaneError {}

/// Up to [`LANES`] states of one game, stepped together on the lanes
/// evaluator with given joint moves (see the module documentation). Lanes
/// are numbered from 0 in the order the states were loaded.
///
/// ```
/// use ggpnet_propnet::driver::LaneMachine;
/// use ggpnet_propnet::{load, Move, StateMachine};
/// use std::sync::Arc;
///
/// let rules = "(role r) (init a)
///     (<= (legal r go) (true a)) (<= (legal r stay) (true a))
///     (<= (next b) (does r go)) (<= (next a) (does r stay))
///     (<= terminal (true b)) (<= (goal r 100) (true b)) (<= (goal r 0) (true a))";
/// let game = load(rules, &Default::default())?.game;
/// let start = game.initial().clone();
/// let mut lanes = LaneMachine::new(Arc::clone(&game));
/// lanes.load(&[start.clone(), start.clone(), start])?;
/// let machine = StateMachine::new(Arc::clone(&game));
/// let go = machine.parse_move(0, "go")?;
/// let stay = machine.parse_move(0, "stay")?;
/// lanes.step(&[go, stay, go])?; // one move per lane and role
/// let mut terminal = [false; 3];
/// lanes.terminal_into(&mut terminal)?;
/// assert_eq!(terminal, [true, false, true]);
/// assert_eq!(lanes.goals(0)?, vec![vec![100]]);
/// assert!(lanes.step(&[go, go, go]).is_err(), "go is not legal in b");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct LaneMachine {
    game: Arc<Game>,
    evaluator: Arc<Lanes>,
    values: LaneValues,
    /// Each base's value in the next states, before the bases are written.
    next: LaneValues,
    /// Lanes loaded: `0..lanes`.
    lanes: usize,
    /// Whether the state part holds the values of the states in the bases.
    fresh: bool,
    /// The last draw's outcome (scratch space): each action legal in some
    /// drawing lane, with the lanes that took it.
    taken: Vec<(u32, Lane)>,
    /// [`LaneMachine::step_drawing`]'s draw (scratch space): per role, each
    /// action legal in some drawing lane, with the lanes that took it.
    taken_by_role: Vec<Vec<(u32, Lane)>>,
    /// The moves whose inputs the last step set (to clear before the next;
    /// a move may be listed more than once).
    touched: Vec<u32>,
    /// Where restarted lanes go.
    start: Start,
    /// The slot ranges of the state part's steps.
    state_ranges: Vec<(u32, u32)>,
    /// The legal slot of each row of [`LaneMachine::legal_into`]'s bits at
    /// the stride last asked for (`NO_ROW` where a role has fewer moves).
    legal_rows: (usize, Vec<u32>),
    vector: VectorWidth,
    /// Whether the CPU has AVX-512BW (and F), which writes 64 observation
    /// bytes from a word of bits in two instructions.
    wide_bytes: bool,
    /// The transposed rows of the writers, kept from call to call.
    transposed: Transposed,
    /// The game's goals (indexes into `Game::goals`), by ascending value.
    goal_order: Vec<u32>,
}

/// The state restarted lanes take, and the value of every slot of the net's
/// state part (and bases) there.
struct Start {
    state: State,
    values: Vec<bool>,
}

/// A row of no slot in a transposition: zero in every lane.
const NO_ROW: u32 = u32::MAX;

impl LaneMachine {
    /// A machine of `game` with no lane loaded, on a lanes evaluator of its own.
    pub fn new(game: Arc<Game>) -> LaneMachine {
        let evaluator = Arc::new(Lanes::new(game.net()));
        LaneMachine::build(evaluator, game)
    }

    /// A machine of `game` on `evaluator`, which other machines may share;
    /// refused when it is an evaluator of another game's net.
    pub fn with_evaluator(evaluator: Arc<Lanes>, game: Arc<Game>) -> Result<LaneMachine, LaneError> {
        if !Arc::ptr_eq(evaluator.net(), game.net()) {
            return Err(LaneError::ForeignEvaluator);
        }
        Ok(LaneMachine::build(evaluator, game))
    }

    fn build(evaluator: Arc<Lanes>, game: Arc<Game>) -> LaneMachine {
        let net = game.net();
        let state_ranges = net.steps()[..net.state_steps()]
            .iter()
            .map(|step| match *step {
                Step::Gates(start, end) | Step::Cycle(start, end) => (start, end),
            })
            .collect();
        LaneMachine {
            values: evaluator.cache(),
            next: LaneValues::new(net.base_slots().len()),
            start: Start::of(&game, game.initial()),
            evaluator,
            lanes: 0,
            fresh: false,
            touched: Vec::new(),
            taken: Vec::new(),
            taken_by_role: Vec::new(),
            state_ranges,
            legal_rows: (0, Vec::new()),
            vector: VectorWidth::detect(),
            wide_bytes: wide_bytes(),
            transposed: Transposed::default(),
            goal_order: goal_order(&game),
            game,
        }
    }

    /// The game.
    pub fn game(&self) -> &Arc<Game> {
        &self.game
    }

    /// The lanes evaluator it runs on.
    pub fn evaluator(&self) -> &Arc<Lanes> {
        &self.evaluator
    }

    /// The number of lanes loaded.
    pub fn lanes(&self) -> usize {
        self.lanes
    }

    /// Loads `states` (of the game, at most [`LANES`]) into lanes
    /// `0..states.len()`, replacing every lane.
    pub fn load(&mut self, states: &[State]) -> Result<(), LaneError> {
        if states.len() > LANES {
            return Err(LaneError::TooManyLanes { lanes: states.len() });
        }
        states.iter().try_for_each(|s| self.check_state(s))?;
        for (lane, state) in states.iter().enumerate() {
            self.write_bases(lane..lane + 1, state);
        }
        self.lanes = states.len();
        self.fresh = false;
        Ok(())
    }

    /// Adds a lane in `state` (a state of the game); its number.
    pub fn push(&mut self, state: &State) -> Result<usize, LaneError> {
        self.extend(1, state).map(|added| added.start)
    }

    /// Adds `count` lanes in `state` (a state of the game), in one pass over
    /// the bases; their numbers.
    pub fn extend(&mut self, count: usize, state: &State) -> Result<Range<usize>, LaneError> {
        let added = self.lanes..self.lanes.saturating_add(count);
        if added.end > LANES {
            return Err(LaneError::TooManyLanes { lanes: added.end });
        }
        self.check_state(state)?;
        self.write_bases(added.clone(), state);
        self.lanes = added.end;
        self.fresh = false;
        Ok(added)
    }

    /// Removes every lane.
    pub fn clear(&mut self) {
        self.lanes = 0;
    }

    /// Puts lane `lane` in `state` (a state of the game).
    pub fn set_state(&mut self, lane: usize, state: &State) -> Result<(), LaneError> {
        self.check_lane(lane)?;
        self.check_state(state)?;
        self.write_bases(lane..lane + 1, state);
        self.fresh = false;
        Ok(())
    }

    /// Makes [`LaneMachine::restart`] put lanes in `state` (a state of the
    /// game; the initial state until this is called).
    pub fn set_start(&mut self, state: &State) -> Result<(), LaneError> {
        self.check_state(state)?;
        self.start = Start::of(&self.game, state);
        Ok(())
    }

    /// Puts every lane `l` with `which[l]` (one flag per lane loaded) in the
    /// start state, without evaluating the net.
    pub fn restart(&mut self, which: &[bool]) -> Result<(), LaneError> {
        let mask = self.mask(which)?;
        self.restart_lanes(&mask);
        Ok(())
    }

    /// [`LaneMachine::restart`] of the lanes of `lanes` (bits past the lanes
    /// loaded ignored).
    pub fn restart_lanes(&mut self, lanes: &LaneSet) {
        let mask = and(lanes, &self.loaded());
        if mask == NO_LANES {
            return;
        }
        match self.vector.bits() {
            // SAFETY: a `VectorWidth` is 512 only when the CPU has AVX-512F.
            #[cfg(target_arch = "x86_64")]
            512 => unsafe { self.blend_start_avx512(&mask) },
            // SAFETY: and 256 only when it has AVX2.
            #[cfg(target_arch = "x86_64")]
            256 => unsafe { self.blend_start_avx2(&mask) },
            _ => self.blend_start(&mask),
        }
    }

    /// [`Self::blend_start`] compiled for AVX-512F.
    ///
    /// # Safety
    /// The CPU must have AVX-512F.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx512f")]
    unsafe fn blend_start_avx512(&mut self, mask: &Lane) {
        self.blend_start(mask)
    }

    /// [`Self::blend_start`] compiled for AVX2.
    ///
    /// # Safety
    /// The CPU must have AVX2.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    unsafe fn blend_start_avx2(&mut self, mask: &Lane) {
        self.blend_start(mask)
    }

    /// Blends the start state's values into the lanes of `mask`: its bases,
    /// and its state part's values when the state part is evaluated.
    #[inline(always)]
    fn blend_start(&mut self, mask: &Lane) {
        let (values, start) = (&mut self.values, &self.start.values);
        // Branch-free, so that a run of slots is a run of vector operations.
        let blend = |value: &mut Lane, holds: bool| {
            let to = 0u64.wrapping_sub(u64::from(holds));
            for (v, m) in value.iter_mut().zip(mask) {
                *v = (*v & !m) | (to & m);
            }
        };
        for &slot in self.game.net().base_slots() {
            blend(&mut values[slot as usize], start[slot as usize]);
        }
        if self.fresh {
            for &(first, end) in &self.state_ranges {
                let (first, end) = (first as usize, end as usize);
                for (value, &holds) in values[first..end].iter_mut().zip(&start[first..end]) {
                    blend(value, holds);
                }
            }
        }
    }

    /// The state of lane `lane`.
    pub fn state(&self, lane: usize) -> Result<State, LaneError> {
        self.check_lane(lane)?;
        let (word, bit) = (lane / 64, lane % 64);
        let bases = self.game.net().base_slots().iter();
        Ok(State(
            bases
                .map(|&s| (self.values[s as usize][word] >> bit) & 1 != 0)
                .collect(),
        ))
    }

    /// Whether lane `lane`'s state is terminal.
    pub fn is_terminal(&mut self, lane: usize) -> Result<bool, LaneError> {
        self.check_lane(lane)?;
        self.refresh();
        Ok(self.bit(self.game.net().terminal_slot(), lane))
    }

    /// The legal moves of `role` in lane `lane`'s state, in input order.
    pub fn legal_moves(&mut self, lane: usize, role: usize) -> Result<Vec<Move>, LaneError> {
        self.check_lane(lane)?;
        let game = Arc::clone(&self.game);
        let roles = game.roles().len();
        let Some(moves) = game.role_moves().get(role) else {
            return Err(LaneError::NoSuchRole { role, roles });
        };
        self.refresh();
        let legal = game.net().legal_slots();
        Ok(moves
            .iter()
            .copied()
            .filter(|m| self.bit(legal[m.0 as usize], lane))
            .collect())
    }

    /// Every goal value derivable for each role in lane `lane`'s state, ascending.
    pub fn goals(&mut self, lane: usize) -> Result<Vec<Vec<i64>>, LaneError> {
        self.check_lane(lane)?;
        self.refresh();
        let mut goals = vec![Vec::new(); self.game.roles().len()];
        let slots = self.game.net().goal_slots();
        for (&(role, value), &slot) in self.game.goals().iter().zip(slots) {
            if self.bit(slot, lane) {
                goals[role].push(value);
            }
        }
        goals.iter_mut().for_each(|g| g.sort_unstable());
        Ok(goals)
    }

    /// Per role, the highest goal value derivable in lane `lane`'s state
    /// (`None` if none is), into `out`.
    pub fn best_goals_into(&mut self, lane: usize, out: &mut Vec<Option<i64>>) -> Result<(), LaneError> {
        self.check_lane(lane)?;
        self.refresh();
        out.clear();
        out.resize(self.game.roles().len(), None);
        let slots = self.game.net().goal_slots();
        for (&(role, value), &slot) in self.game.goals().iter().zip(slots) {
            if self.bit(slot, lane) {
                out[role] = Some(out[role].map_or(value, |best| best.max(value)));
            }
        }
        Ok(())
    }

    /// Calls `emit(lane, role, value)` for every lane of `lanes` (bits past
    /// the lanes loaded ignored) and every goal value derivable for a role
    /// in its state, each role's values ascending, so that the last value a
    /// lane and role get is the highest, as [`LaneMachine::best_goals_into`]
    /// gives it. Word-wise: a goal is tested for 512 lanes at once, where
    /// [`LaneMachine::best_goals_into`] tests every goal of one lane (the
    /// cheaper way to read the goals of many lanes that ended).
    ///
    /// ```
    /// use ggpnet_propnet::driver::{LaneMachine, LaneSet};
    /// use std::sync::Arc;
    ///
    /// let rules = "(role r) (init a) (<= (legal r go) (true a))
    ///     (<= (next b) (does r go)) (<= terminal (true b))
    ///     (<= (goal r 100) (true b)) (<= (goal r 50) (true b)) (<= (goal r 0) (true a))";
    /// let game = ggpnet_propnet::load(rules, &Default::default())?.game;
    /// let mut lanes = LaneMachine::new(Arc::clone(&game));
    /// lanes.extend(2, game.initial())?;
    /// lanes.step_actions(&[0, 0], &[false, true])?; // lane 1 goes to b
    /// let mut best = [None; 2];
    /// let both: LaneSet = [0b11, 0, 0, 0, 0, 0, 0, 0];
    /// lanes.goal_lanes(&both, |lane, _role, value| best[lane] = Some(value));
    /// assert_eq!(best, [Some(0), Some(100)]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn goal_lanes(&mut self, lanes: &LaneSet, mut emit: impl FnMut(usize, usize, i64)) {
        let lanes = and(lanes, &self.loaded());
        if lanes == NO_LANES {
            return;
        }
        self.refresh();
        let (goals, slots) = (self.game.goals(), self.game.net().goal_slots());
        for &g in &self.goal_order {
            let (role, value) = goals[g as usize];
            let holds = and(&self.values[slots[g as usize] as usize], &lanes);
            for_each_lane(&holds, |lane| emit(lane, role, value));
        }
    }

    /// Whether each lane's state is terminal, one flag per lane loaded.
    pub fn terminal_into(&mut self, out: &mut [bool]) -> Result<(), LaneError> {
        self.check_length("terminal flags", self.lanes, out.len())?;
        self.refresh();
        let terminal = self.values[self.game.net().terminal_slot() as usize];
        for (lane, flag) in out.iter_mut().enumerate() {
            *flag = (terminal[lane / 64] >> (lane % 64)) & 1 != 0;
        }
        Ok(())
    }

    /// Every lane's legal moves as bits: lane `l`'s are the words
    /// `out[l * w..(l + 1) * w]`, `w` = `(roles * stride).div_ceil(64)`, in
    /// which bit `r * stride + a` tells whether role `r`'s `a`-th move (in
    /// input order: the dense action order) is legal. `stride` is at least
    /// the most moves a role has.
    pub fn legal_into(&mut self, stride: usize, out: &mut [u64]) -> Result<(), LaneError> {
        let widest = self.game.role_moves().iter().map(Vec::len).max().unwrap_or(0);
        if stride < widest {
            return Err(LaneError::NarrowStride { stride, widest });
        }
        let words = self.game.roles().len().saturating_mul(stride).div_ceil(64);
        self.check_length("legal words", self.lanes.saturating_mul(words), out.len())?;
        if self.lanes == 0 {
            // Nothing to write, and no rows to lay out for a stride unbounded by `out`.
            return Ok(());
        }
        self.refresh();
        if self.legal_rows.0 != stride || self.legal_rows.1.is_empty() {
            self.legal_rows = (stride, self.legal_row_slots(stride));
        }
        let rows = &self.legal_rows.1;
        let scratch = &mut self.transposed;
        for_each_lane_row(&self.values, rows, self.lanes, scratch, |lane, chunk, bits| {
            out[lane * words + chunk] = bits;
        });
        Ok(())
    }

    /// Every lane's state as the words of a [`State`] (its bit set's words,
    /// base `b` at bit `b % 64` of word `b / 64`, zero past the bases): lane
    /// `l`'s are `out[l * w..(l + 1) * w]`, `w` = the bases in words. One
    /// transposition for all lanes, where [`LaneMachine::state`] reads a lane
    /// base by base.
    ///
    /// ```
    /// use ggpnet_propnet::driver::LaneMachine;
    /// use std::sync::Arc;
    /// let rules = "(role r) (init (at 0)) (<= (legal r go) (true (at 0)))
    ///     (<= (next (at 1)) (does r go)) (<= terminal (true (at 1))) (goal r 100)";
    /// let game = Arc::new(ggpnet_propnet::load(rules, &Default::default())?.game);
    /// let mut lanes = LaneMachine::new(Arc::clone(&game));
    /// lanes.extend(2, game.initial())?;
    /// let words = game.initial().0.as_raw_slice().len();
    /// let mut out = vec![0; 2 * words];
    /// lanes.states_into(&mut out)?;
    /// assert_eq!(&out[words..], game.initial().0.as_raw_slice());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn states_into(&mut self, out: &mut [u64]) -> Result<(), LaneError> {
        let rows = self.game.net().base_slots();
        let words = rows.len().div_ceil(64);
        self.check_length("state words", self.lanes * words, out.len())?;
        let scratch = &mut self.transposed;
        for_each_lane_row(&self.values, rows, self.lanes, scratch, |lane, chunk, bits| {
            out[lane * words + chunk] = bits;
        });
        Ok(())
    }

    /// Every lane's state as bytes, 1 where a base holds and 0 where not:
    /// lane `l`'s base `b` is `out[l * bases + b]` (bases in the game's order).
    pub fn observations_into(&mut self, out: &mut [u8]) -> Result<(), LaneError> {
        let bases = self.game.net().base_slots().len();
        self.check_length("observation bytes", self.lanes * bases, out.len())?;
        let rows = self.game.net().base_slots();
        #[cfg(target_arch = "x86_64")]
        if self.wide_bytes {
            // SAFETY: `wide_bytes` is set only when the CPU has AVX-512F and AVX-512BW.
            unsafe { write_rows_avx512(&self.values, rows, self.lanes, &mut self.transposed, out) };
            return Ok(());
        }
        write_rows(
            &self.values,
            rows,
            self.lanes,
            &mut self.transposed,
            out,
            write_flags,
        );
        Ok(())
    }

    /// Plays `joints` in every lane: lane `l`'s joint move is
    /// `joints[l * roles..(l + 1) * roles]`, one move per role in role order.
    /// Refused, before any lane moves, when a move is of no role, of another
    /// role, or not legal in its lane's state.
    pub fn step(&mut self, joints: &[Move]) -> Result<(), LaneError> {
        let moving = vec![true; self.lanes];
        self.step_some(joints, &moving)
    }

    /// [`LaneMachine::step`] in the lanes `l` with `moving[l]` (one flag per
    /// lane loaded); the others keep their state, and their joint moves in
    /// `joints` are not read.
    pub fn step_some(&mut self, joints: &[Move], moving: &[bool]) -> Result<(), LaneError> {
        let roles = self.game.roles().len();
        self.check_length("joint moves", self.lanes * roles, joints.len())?;
        let active = self.mask(moving)?;
        self.refresh();
        self.check_joints(joints, moving)?;
        self.clear_inputs();
        let move_slots = self.game.net().move_slots();
        for (lane, joint) in joints.chunks_exact(roles.max(1)).enumerate() {
            if !moving[lane] {
                continue;
            }
            for m in joint {
                let value = &mut self.values[move_slots[m.0 as usize] as usize];
                if value.iter().all(|&w| w == 0) {
                    self.touched.push(m.0);
                }
                value[lane / 64] |= 1 << (lane % 64);
            }
        }
        self.evaluate(Part::Moves(active));
        self.fresh = false;
        Ok(())
    }

    /// Draws a uniformly random legal move of `role` in every lane `l` with
    /// `drawing[l]` (one flag per lane loaded), from stream `l % 8` of
    /// `streams[l / 8]`, exactly as [`crate::random::Stream::draw`] draws a
    /// rank below the count of the role's legal moves (no draw for one) and
    /// the move of that rank is taken in input order; writes its number
    /// among the role's moves (as [`LaneMachine::step_actions`] takes it)
    /// into `actions[l * roles + role]`. A lane where the role has no legal
    /// move keeps its entry. Counts and ranks are bit-sliced (plane `p` holds
    /// bit `p` of every lane's number), so counting and selecting cost a few
    /// word operations per legal move for all lanes, and eight streams draw
    /// at once, as the lanes playouts draw (`driver/lanes.rs`).
    ///
    /// ```
    /// use ggpnet_propnet::driver::LaneMachine;
    /// use ggpnet_propnet::load;
    /// use ggpnet_propnet::random::{Stream, StreamGroup};
    /// use std::sync::Arc;
    ///
    /// let rules = "(role r) (init a)
    ///     (<= (legal r go) (true a)) (<= (legal r stay) (true a))
    ///     (<= (next b) (does r go)) (<= (next a) (does r stay))
    ///     (<= terminal (true b)) (goal r 0)";
    /// let game = load(rules, &Default::default())?.game;
    /// let mut lanes = LaneMachine::new(Arc::clone(&game));
    /// lanes.extend(3, game.initial())?;
    /// let mut streams = [StreamGroup::new(std::array::from_fn(|i| Stream::new(7, i as u64)))];
    /// let mut actions = [9; 3];
    /// lanes.draw_actions(0, &[true, true, false], &mut streams, &mut actions)?;
    /// let mut alone = Stream::new(7, 1);
    /// assert_eq!(actions[1] as usize, alone.draw(2), "lane 1 draws as stream 1 alone");
    /// assert_eq!(actions[2], 9, "lane 2 does not draw");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn draw_actions(
        &mut self,
        role: usize,
        drawing: &[bool],
        streams: &mut [StreamGroup],
        actions: &mut [u32],
    ) -> Result<(), LaneError> {
        let roles = self.game.roles().len();
        if role >= roles {
            return Err(LaneError::NoSuchRole { role, roles });
        }
        let mask = self.mask(drawing)?;
        self.check_length("stream groups", self.lanes.div_ceil(8), streams.len())?;
        self.check_length("actions", self.lanes * roles, actions.len())?;
        self.refresh();
        self.draw(role, mask, streams);
        for (a, lanes) in &self.taken {
            for_each_lane(lanes, |lane| actions[lane * roles + role] = *a);
        }
        Ok(())
    }

    /// [`LaneMachine::step_some`] with each move given by its number among
    /// its role's moves (input order: the dense action order of
    /// [`LaneMachine::legal_into`]): lane `l`'s role `r` plays
    /// `game.role_moves()[r][actions[l * roles + r]]`. Legality is checked
    /// move by move for 512 lanes at once, not lane by lane, which makes this
    /// the cheaper way to step many lanes. Refused, before any lane moves,
    /// when an action number is past its role's moves or a move is not legal
    /// in its lane's state.
    ///
    /// ```
    /// use ggpnet_propnet::driver::LaneMachine;
    /// use ggpnet_propnet::load;
    /// use std::sync::Arc;
    ///
    /// let rules = "(role r) (init a)
    ///     (<= (legal r go) (true a)) (<= (legal r stay) (true a))
    ///     (<= (next b) (does r go)) (<= (next a) (does r stay))
    ///     (<= terminal (true b)) (goal r 0)";
    /// let game = load(rules, &Default::default())?.game;
    /// let mut lanes = LaneMachine::new(Arc::clone(&game));
    /// lanes.extend(2, game.initial())?;
    /// lanes.step_actions(&[0, 1], &[true, true])?; // go in lane 0, stay in lane 1
    /// assert!(lanes.is_terminal(0)? && !lanes.is_terminal(1)?);
    /// assert!(lanes.step_actions(&[0, 0], &[true, true]).is_err(), "go is not legal in b");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn step_actions(&mut self, actions: &[u32], moving: &[bool]) -> Result<(), LaneError> {
        let roles = self.game.roles().len();
        self.check_length("actions", self.lanes * roles, actions.len())?;
        let active = self.mask(moving)?;
        self.refresh();
        self.clear_inputs();
        if let Err(error) = self
            .set_actions(actions, &vec![active; roles])
            .and_then(|()| self.check_inputs())
        {
            self.clear_inputs();
            return Err(error);
        }
        self.evaluate(Part::Moves(active));
        self.fresh = false;
        Ok(())
    }
}

/// The word-wise queries and steps: lanes given and returned as [`LaneSet`]s.
impl LaneMachine {
    /// The lanes whose state is terminal.
    pub fn terminal_lanes(&mut self) -> LaneSet {
        self.refresh();
        and(
            &self.values[self.game.net().terminal_slot() as usize],
            &self.loaded(),
        )
    }

    /// The lanes where some role has no legal move.
    pub fn stuck_lanes(&mut self) -> LaneSet {
        self.refresh();
        let mut stuck = NO_LANES;
        for role in 0..self.game.roles().len() {
            stuck = or(&stuck, &not(&self.playable(role)));
        }
        and(&stuck, &self.loaded())
    }

    /// Whether action `action` (a number among `role`'s moves, as
    /// [`LaneMachine::step_actions`] takes it) is legal in lane `lane`'s
    /// state; false for a number past the role's moves.
    pub fn is_legal(&mut self, lane: usize, role: usize, action: usize) -> Result<bool, LaneError> {
        self.check_lane(lane)?;
        let roles = self.game.roles().len();
        let Some(moves) = self.game.role_moves().get(role) else {
            return Err(LaneError::NoSuchRole { role, roles });
        };
        let Some(m) = moves.get(action).copied() else {
            return Ok(false);
        };
        self.refresh();
        Ok(self.bit(self.game.net().legal_slots()[m.0 as usize], lane))
    }

    /// Every lane's legal moves as flags: lane `l`'s role `r`'s `a`-th move
    /// (in input order, as [`LaneMachine::legal_into`]) is
    /// `out[(l * roles + r) * stride + a]`, false past the role's moves.
    /// Written from the transposed words 64 flags a store where the CPU has
    /// AVX-512BW, as [`LaneMachine::observations_into`] writes bytes.
    pub fn legal_mask_into(&mut self, stride: usize, out: &mut [bool]) -> Result<(), LaneError> {
        let widest = self.game.role_moves().iter().map(Vec::len).max().unwrap_or(0);
        if stride < widest {
            return Err(LaneError::NarrowStride { stride, widest });
        }
        let row = self.game.roles().len().saturating_mul(stride);
        self.check_length("legal flags", self.lanes.saturating_mul(row), out.len())?;
        if self.lanes == 0 || row == 0 {
            return Ok(());
        }
        self.refresh();
        if self.legal_rows.0 != stride || self.legal_rows.1.is_empty() {
            self.legal_rows = (stride, self.legal_row_slots(stride));
        }
        let rows = &self.legal_rows.1;
        #[cfg(target_arch = "x86_64")]
        if self.wide_bytes {
            // SAFETY: `wide_bytes` is set only when the CPU has AVX-512F and AVX-512BW.
            unsafe { write_rows_avx512(&self.values, rows, self.lanes, &mut self.transposed, out) };
            return Ok(());
        }
        write_rows(
            &self.values,
            rows,
            self.lanes,
            &mut self.transposed,
            out,
            write_flags,
        );
        Ok(())
    }

    /// Steps the lanes of `moving`, role `r`'s move drawn at random in the
    /// lanes of `drawn[r]` (one set per role) and given by number in
    /// `actions[l * roles + r]` in the others, as
    /// [`LaneMachine::step_actions`] takes it; the other lanes keep their
    /// state. A drawn move is drawn as [`LaneMachine::draw_actions`] draws
    /// it, role after role, and its input set straight from the draw's words
    /// (no action numbers written and read back, no legality check: it is
    /// legal). Refused, before any lane moves or any stream draws, when a
    /// given action is past its role's moves or not legal, or a role to draw
    /// for has no legal move.
    ///
    /// ```
    /// use ggpnet_propnet::driver::{LaneMachine, LaneSet};
    /// use ggpnet_propnet::load;
    /// use ggpnet_propnet::random::{Stream, StreamGroup};
    /// use std::sync::Arc;
    ///
    /// let rules = "(role r) (init a)
    ///     (<= (legal r go) (true a)) (<= (legal r stay) (true a))
    ///     (<= (next b) (does r go)) (<= (next a) (does r stay))
    ///     (<= terminal (true b)) (goal r 0)";
    /// let game = load(rules, &Default::default())?.game;
    /// let mut lanes = LaneMachine::new(Arc::clone(&game));
    /// lanes.extend(2, game.initial())?;
    /// let mut streams = [StreamGroup::new(std::array::from_fn(|i| Stream::new(7, i as u64)))];
    /// let (both, lane_1): (LaneSet, LaneSet) = ([0b11, 0, 0, 0, 0, 0, 0, 0], [0b10, 0, 0, 0, 0, 0, 0, 0]);
    /// // Lane 0 goes (action 0), lane 1 draws.
    /// lanes.step_drawing(&[0, 0], &both, &[lane_1], &mut streams)?;
    /// let drew_go = Stream::new(7, 1).draw(2) == 0;
    /// assert_eq!(lanes.terminal_lanes()[0], 0b01 | u64::from(drew_go) << 1);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn step_drawing(
        &mut self,
        actions: &[u32],
        moving: &LaneSet,
        drawn: &[LaneSet],
        streams: &mut [StreamGroup],
    ) -> Result<(), LaneError> {
        let roles = self.game.roles().len();
        self.check_length("actions", self.lanes * roles, actions.len())?;
        self.check_length("drawn lane sets", roles, drawn.len())?;
        self.check_length("stream groups", self.lanes.div_ceil(8), streams.len())?;
        let moving = and(moving, &self.loaded());
        let given: Vec<Lane> = drawn.iter().map(|d| and(&moving, &not(d))).collect();
        self.refresh();
        self.clear_inputs();
        let checked = self
            .set_actions(actions, &given)
            .and_then(|()| self.check_inputs())
            .and_then(|()| self.check_drawable(&moving, drawn));
        if let Err(error) = checked {
            self.clear_inputs();
            return Err(error);
        }
        let game = Arc::clone(&self.game);
        let move_slots = game.net().move_slots();
        let drawing: Vec<Lane> = drawn.iter().map(|d| and(&moving, d)).collect();
        self.draw_joint(&drawing, streams);
        let taken = std::mem::take(&mut self.taken_by_role);
        for (moves, taken) in game.role_moves().iter().zip(&taken) {
            for &(a, lanes) in taken {
                let m = moves[a as usize].0;
                let value = &mut self.values[move_slots[m as usize] as usize];
                if value.iter().all(|&w| w == 0) {
                    self.touched.push(m);
                }
                *value = or(value, &lanes);
            }
        }
        self.taken_by_role = taken;
        self.evaluate(Part::Moves(moving));
        self.fresh = false;
        Ok(())
    }
}

/// The request of a draw ([`LaneMachine::draw_actions`],
/// [`LaneMachine::step_drawing`]), checked.
#[derive(Clone, Copy)]
struct Draw {
    /// The lanes drawing.
    mask: Lane,
    vector: VectorWidth,
}

/// Adds one to the bit-sliced numbers in `planes` in the lanes of `bit`
/// (a ripple-carry increment).
#[inline(always)]
fn increment(planes: &mut [Lane], bit: &Lane) {
    let mut carry = *bit;
    for plane in planes {
        let next = and(plane, &carry);
        *plane = xor(plane, &carry);
        carry = next;
        if carry.iter().all(|&w| w == 0) {
            break;
        }
    }
}

impl LaneMachine {
    /// Draws `role`'s move in the lanes of `mask` (the state part
    /// evaluated) into `taken`, with as many bit planes as the count of the
    /// role's moves needs.
    fn draw(&mut self, role: usize, mask: Lane, streams: &mut [StreamGroup]) {
        let draw = Draw {
            mask,
            vector: self.vector,
        };
        match self.vector.bits() {
            // SAFETY: a `VectorWidth` is 512 only when the CPU has AVX-512F.
            #[cfg(target_arch = "x86_64")]
            512 => unsafe { self.draw_avx512(role, draw, streams) },
            // SAFETY: and 256 only when it has AVX2.
            #[cfg(target_arch = "x86_64")]
            256 => unsafe { self.draw_avx2(role, draw, streams) },
            _ => self.draw_planes(role, draw, streams),
        }
    }

    /// [`Self::draw_planes`] compiled for AVX-512F.
    ///
    /// # Safety
    /// The CPU must have AVX-512F.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx512f")]
    unsafe fn draw_avx512(&mut self, role: usize, draw: Draw, streams: &mut [StreamGroup]) {
        self.draw_planes(role, draw, streams)
    }

    /// [`Self::draw_planes`] compiled for AVX2.
    ///
    /// # Safety
    /// The CPU must have AVX2.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    unsafe fn draw_avx2(&mut self, role: usize, draw: Draw, streams: &mut [StreamGroup]) {
        self.draw_planes(role, draw, streams)
    }

    /// [`LaneMachine::draw`] with as many bit planes as the count of the
    /// role's moves needs.
    #[inline(always)]
    fn draw_planes(&mut self, role: usize, draw: Draw, streams: &mut [StreamGroup]) {
        let moves = self.game.role_moves()[role].len();
        match usize::BITS - moves.leading_zeros() {
            0..=4 => self.draw_in::<4>(role, draw, streams),
            5..=8 => self.draw_in::<8>(role, draw, streams),
            9..=16 => self.draw_in::<16>(role, draw, streams),
            _ => self.draw_in::<32>(role, draw, streams),
        }
    }

    /// [`LaneMachine::draw`] with `P` planes: `taken` lists each action
    /// legal in some drawing lane with the lanes that take it.
    #[inline(always)]
    fn draw_in<const P: usize>(&mut self, role: usize, draw: Draw, streams: &mut [StreamGroup]) {
        let game = Arc::clone(&self.game);
        let legal_slots = game.net().legal_slots();
        // The counts, over the moves legal in some drawing lane (those walked below).
        let mut planes = OnLines([NO_LANES; P]);
        let planes = &mut planes.0;
        let mut taken = std::mem::take(&mut self.taken);
        taken.clear();
        for (a, m) in game.role_moves()[role].iter().enumerate() {
            let legal = and(&self.values[legal_slots[m.0 as usize] as usize], &draw.mask);
            if legal.iter().any(|&w| w != 0) {
                increment(planes, &legal);
                taken.push((a as u32, legal));
            }
        }
        draw_ranks(planes, &draw, streams);
        // Each lane's rank counted down at every legal move: the lane takes the
        // move where it drops below zero, the borrow out of the top plane.
        for (_, lanes) in &mut taken {
            let mut borrow = *lanes;
            for plane in planes.iter_mut() {
                let next = and(&borrow, &not(plane));
                *plane = xor(plane, &borrow);
                borrow = next;
            }
            *lanes = borrow;
        }
        self.taken = taken;
    }
}

impl LaneMachine {
    /// Draws every role's move in its lanes of `drawing` (one set per role,
    /// the state part evaluated) into `taken_by_role`, as [`LaneMachine::draw`]
    /// draws them role after role, but in rounds: a lane draws from its
    /// stream only for the roles with a choice (two legal moves or more),
    /// role after role, so round `k` draws every lane's `k`-th such role, all
    /// roles' lanes in one pass over the streams. Each lane's stream gives the
    /// same draws in the same order as role after role; in a game of turns
    /// (one role with a choice in each state) there is one round, where role
    /// after role walked every stream group once per role, each with the
    /// lanes of that role's turn (`perf` of `VectorEnv` on connect four: the
    /// draws were 18% of a step).
    fn draw_joint(&mut self, drawing: &[Lane], streams: &mut [StreamGroup]) {
        let widest = self.game.role_moves().iter().map(Vec::len).max().unwrap_or(0);
        let vector = self.vector;
        match (vector.bits(), usize::BITS - widest.leading_zeros()) {
            // SAFETY: a `VectorWidth` is 512 only when the CPU has AVX-512F.
            #[cfg(target_arch = "x86_64")]
            (512, bits) => unsafe { self.draw_joint_avx512(bits, drawing, vector, streams) },
            // SAFETY: and 256 only when it has AVX2.
            #[cfg(target_arch = "x86_64")]
            (256, bits) => unsafe { self.draw_joint_avx2(bits, drawing, vector, streams) },
            (_, bits) => self.draw_joint_planes(bits, drawing, vector, streams),
        }
    }

    /// [`Self::draw_joint_planes`] compiled for AVX-512F.
    ///
    /// # Safety
    /// The CPU must have AVX-512F.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx512f")]
    unsafe fn draw_joint_avx512(
        &mut self,
        bits: u32,
        drawing: &[Lane],
        vector: VectorWidth,
        streams: &mut [StreamGroup],
    ) {
        self.draw_joint_planes(bits, drawing, vector, streams)
    }

    /// [`Self::draw_joint_planes`] compiled for AVX2.
    ///
    /// # Safety
    /// The CPU must have AVX2.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    unsafe fn draw_joint_avx2(
        &mut self,
        bits: u32,
        drawing: &[Lane],
        vector: VectorWidth,
        streams: &mut [StreamGroup],
    ) {
        self.draw_joint_planes(bits, drawing, vector, streams)
    }

    /// [`LaneMachine::draw_joint`] with as many bit planes as the count of
    /// the widest role's moves (`bits` bits) needs.
    #[inline(always)]
    fn draw_joint_planes(
        &mut self,
        bits: u32,
        drawing: &[Lane],
        vector: VectorWidth,
        streams: &mut [StreamGroup],
    ) {
        match bits {
            0..=4 => self.draw_joint_in::<4>(drawing, vector, streams),
            5..=8 => self.draw_joint_in::<8>(drawing, vector, streams),
            9..=16 => self.draw_joint_in::<16>(drawing, vector, streams),
            _ => self.draw_joint_in::<32>(drawing, vector, streams),
        }
    }

    /// [`LaneMachine::draw_joint`] with `P` planes.
    #[inline(always)]
    fn draw_joint_in<const P: usize>(
        &mut self,
        drawing: &[Lane],
        vector: VectorWidth,
        streams: &mut [StreamGroup],
    ) {
        let game = Arc::clone(&self.game);
        let legal_slots = game.net().legal_slots();
        let mut taken = std::mem::take(&mut self.taken_by_role);
        taken.resize_with(drawing.len(), Vec::new);
        // Per role, the counts of legal moves, then the ranks drawn below them.
        let mut planes = vec![OnLines([NO_LANES; P]); drawing.len()];
        for (role, moves) in game.role_moves().iter().enumerate() {
            taken[role].clear();
            for (a, m) in moves.iter().enumerate() {
                let legal = and(&self.values[legal_slots[m.0 as usize] as usize], &drawing[role]);
                if legal.iter().any(|&w| w != 0) {
                    increment(&mut planes[role].0, &legal);
                    taken[role].push((a as u32, legal));
                }
            }
        }
        let choosing: Vec<Lane> = planes.iter().map(|p| choice(&p.0)).collect();
        draw_rounds(&mut planes, &choosing, vector, streams);
        // Each lane's rank counted down at every legal move: the lane takes the
        // move where it drops below zero, the borrow out of the top plane.
        for (planes, taken) in planes.iter_mut().zip(&mut taken) {
            for (_, lanes) in taken.iter_mut() {
                let mut borrow = *lanes;
                for plane in planes.0.iter_mut() {
                    let next = and(&borrow, &not(plane));
                    *plane = xor(plane, &borrow);
                    borrow = next;
                }
                *lanes = borrow;
            }
        }
        self.taken_by_role = taken;
    }
}

/// The lanes whose bit-sliced count in `planes` is two or more.
#[inline(always)]
fn choice<const P: usize>(planes: &[Lane; P]) -> Lane {
    planes[1..].iter().fold(NO_LANES, |any, plane| or(&any, plane))
}

/// Replaces each role's counts in `planes` (one set per role) by the ranks
/// drawn below them in the lanes of `choosing` (the role's lanes counting
/// two or more) and by 0 elsewhere, in rounds ([`LaneMachine::draw_joint`]):
/// each round merges the counts of every lane's first role left into one
/// set of planes and draws them at once ([`draw_ranks`]).
#[inline(always)]
fn draw_rounds<const P: usize>(
    planes: &mut [OnLines<[Lane; P]>],
    choosing: &[Lane],
    vector: VectorWidth,
    streams: &mut [StreamGroup],
) {
    let mut left = choosing.to_vec();
    loop {
        let (mut merged, mut round) = (OnLines([NO_LANES; P]), NO_LANES);
        let mine: Vec<Lane> = left
            .iter_mut()
            .map(|left| {
                let mine = and(left, &not(&round));
                round = or(&round, &mine);
                *left = and(left, &not(&mine));
                mine
            })
            .collect();
        if round == NO_LANES {
            break;
        }
        for (planes, mine) in planes.iter().zip(&mine) {
            for (m, p) in merged.0.iter_mut().zip(&planes.0) {
                *m = or(m, &and(p, mine));
            }
        }
        draw_ranks(&mut merged.0, &Draw { mask: round, vector }, streams);
        for (planes, mine) in planes.iter_mut().zip(&mine) {
            for (p, m) in planes.0.iter_mut().zip(&merged.0) {
                *p = or(&and(p, &not(mine)), &and(m, mine));
            }
        }
    }
    for (planes, choosing) in planes.iter_mut().zip(choosing) {
        for p in planes.0.iter_mut() {
            *p = and(p, choosing);
        }
    }
}

/// Replaces the counts in `planes` by the ranks drawn below them, eight
/// lanes at a time: a lane counting one move takes rank 0 without a draw,
/// one counting none keeps 0 (it takes no move).
#[inline(always)]
fn draw_ranks<const P: usize>(planes: &mut [Lane; P], draw: &Draw, streams: &mut [StreamGroup]) {
    for w in 0..LANE_WORDS {
        let high = planes[1..].iter().fold(0, |acc, plane| acc | plane[w]);
        let drawing = draw.mask[w] & high;
        let mut ranks = [0u64; P];
        for (group, block) in streams.iter_mut().skip(w * 8).take(8).enumerate() {
            let lanes = (drawing >> (8 * group)) as u8;
            if lanes == 0 {
                continue;
            }
            let counts: [u8; P] = std::array::from_fn(|p| (planes[p][w] >> (8 * group)) as u8);
            let drawn = match draw.vector.bits() {
                // SAFETY: a `VectorWidth` is 512 only when the CPU has AVX-512F.
                #[cfg(target_arch = "x86_64")]
                512 => unsafe { block.draw_sliced_avx512(lanes, &counts) },
                // SAFETY: and 256 only when it has AVX2.
                #[cfg(target_arch = "x86_64")]
                256 => unsafe { block.draw_sliced_avx2(lanes, &counts) },
                _ => block.draw_sliced(lanes, &counts),
            };
            for (rank, bits) in ranks.iter_mut().zip(drawn) {
                *rank |= u64::from(bits) << (8 * group);
            }
        }
        for (plane, rank) in planes.iter_mut().zip(ranks) {
            plane[w] = rank;
        }
    }
}

/// What [`LaneMachine::evaluate`] evaluates.
#[derive(Clone, Copy)]
enum Part {
    /// The state part.
    State,
    /// The move part, then the next state of the lanes given.
    Moves(Lane),
}

impl LaneMachine {
    /// Evaluates the state part unless it holds the bases' values.
    fn refresh(&mut self) {
        if !self.fresh {
            self.evaluate(Part::State);
            self.fresh = true;
        }
    }

    /// Evaluates `part` in the widest vector registers the CPU has.
    fn evaluate(&mut self, part: Part) {
        match self.vector.bits() {
            // SAFETY: a `VectorWidth` is 512 only when the CPU has AVX-512F.
            #[cfg(target_arch = "x86_64")]
            512 => unsafe { self.evaluate_avx512(part) },
            // SAFETY: and 256 only when it has AVX2.
            #[cfg(target_arch = "x86_64")]
            256 => unsafe { self.evaluate_avx2(part) },
            _ => self.evaluate_part(part),
        }
    }

    /// [`Self::evaluate`] compiled for AVX-512F.
    ///
    /// # Safety
    /// The CPU must have AVX-512F.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx512f")]
    unsafe fn evaluate_avx512(&mut self, part: Part) {
        self.evaluate_part(part)
    }

    /// [`Self::evaluate`] compiled for AVX2.
    ///
    /// # Safety
    /// The CPU must have AVX2.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    unsafe fn evaluate_avx2(&mut self, part: Part) {
        self.evaluate_part(part)
    }

    #[inline(always)]
    fn evaluate_part(&mut self, part: Part) {
        match part {
            Part::State => self.evaluator.load_states(&mut self.values),
            Part::Moves(active) => {
                self.evaluator.load_moves(&mut self.values);
                self.take_next(&active);
            }
        }
    }

    /// Writes the next state of the lanes of `active` into the bases (the
    /// other lanes keep theirs), every next value read before any base is
    /// written: a next value may be a base.
    #[inline(always)]
    fn take_next(&mut self, active: &Lane) {
        let net = self.game.net();
        let keep = not(active);
        for (b, (&next, &base)) in net.next_slots().iter().zip(net.base_slots()).enumerate() {
            let moved = and(&self.values[next as usize], active);
            self.next[b] = or(&moved, &and(&self.values[base as usize], &keep));
        }
        for (&slot, next) in net.base_slots().iter().zip(self.next.iter()) {
            self.values[slot as usize] = *next;
        }
    }

    /// Refuses the first move of `joints` (in the lanes of `moving`) that is
    /// of no role, of another role, or not legal in its lane (the state part
    /// evaluated).
    fn check_joints(&self, joints: &[Move], moving: &[bool]) -> Result<(), LaneError> {
        let game = &self.game;
        let roles = game.roles().len();
        let legal = game.net().legal_slots();
        for (lane, joint) in joints.chunks_exact(roles.max(1)).enumerate() {
            if !moving[lane] {
                continue;
            }
            for (role, m) in joint.iter().enumerate() {
                let refused = |error| Err(LaneError::Move { lane, error });
                let Some(&owner) = game.move_roles().get(m.0 as usize) else {
                    return refused(MachineError::NoSuchMove { index: m.0 });
                };
                if owner != role {
                    return refused(MachineError::WrongRole {
                        text: game.moves()[m.0 as usize].clone(),
                        owner: game.roles()[owner].clone(),
                        role: game.roles()[role].clone(),
                    });
                }
                if !self.bit(legal[m.0 as usize], lane) {
                    return refused(MachineError::IllegalMove {
                        role: game.roles()[role].clone(),
                        text: game.moves()[m.0 as usize].clone(),
                    });
                }
            }
        }
        Ok(())
    }

    /// Clears the inputs the last step set.
    fn clear_inputs(&mut self) {
        let move_slots = self.game.net().move_slots();
        for m in self.touched.drain(..) {
            self.values[move_slots[m as usize] as usize] = NO_LANES;
        }
    }

    /// Sets the input of each action of [`LaneMachine::step_actions`] of
    /// role `r` in the lanes of `given[r]`, lane after lane; refuses an
    /// action number past its role's moves.
    fn set_actions(&mut self, actions: &[u32], given: &[Lane]) -> Result<(), LaneError> {
        let game = Arc::clone(&self.game);
        let move_slots = game.net().move_slots();
        let roles = game.roles().len();
        let any = given.iter().fold(NO_LANES, |any, lanes| or(&any, lanes));
        let mut refused = None;
        for_each_lane(&any, |lane| {
            let (word, bit) = (lane / 64, 1 << (lane % 64));
            for (role, moves) in game.role_moves().iter().enumerate() {
                if given[role][word] & bit == 0 || refused.is_some() {
                    continue;
                }
                let action = actions[lane * roles + role] as usize;
                let Some(m) = moves.get(action) else {
                    let actions = moves.len();
                    refused = Some(LaneError::NoSuchAction {
                        lane,
                        role,
                        action,
                        actions,
                    });
                    continue;
                };
                let value = &mut self.values[move_slots[m.0 as usize] as usize][word];
                if *value == 0 {
                    // Listed once per word of lanes at most: a few repeats, no search.
                    self.touched.push(m.0);
                }
                *value |= bit;
            }
        });
        refused.map_or(Ok(()), Err)
    }

    /// Refuses a lane of `moving` where a role to draw for (in `drawn`,
    /// one set per role) has no legal move (the state part evaluated).
    fn check_drawable(&self, moving: &Lane, drawn: &[Lane]) -> Result<(), LaneError> {
        for (role, drawn) in drawn.iter().enumerate() {
            let stuck = and(&and(moving, drawn), &not(&self.playable(role)));
            if let Some(w) = stuck.iter().position(|&word| word != 0) {
                let lane = w * 64 + stuck[w].trailing_zeros() as usize;
                return Err(LaneError::NoLegalMove { lane, role });
            }
        }
        Ok(())
    }

    /// The lanes where `role` has a legal move (the state part evaluated).
    fn playable(&self, role: usize) -> Lane {
        let legal = self.game.net().legal_slots();
        self.game.role_moves()[role].iter().fold(NO_LANES, |any, m| {
            or(&any, &self.values[legal[m.0 as usize] as usize])
        })
    }

    /// The lanes loaded.
    fn loaded(&self) -> Lane {
        std::array::from_fn(|w| match self.lanes.saturating_sub(64 * w) {
            0 => 0,
            n if n >= 64 => !0,
            n => !0 >> (64 - n),
        })
    }

    /// Refuses the inputs set where their moves are not legal (the state
    /// part evaluated): 512 lanes per move at once; the lowest such lane of
    /// the first such move is named.
    fn check_inputs(&self) -> Result<(), LaneError> {
        let game = &self.game;
        let (move_slots, legal_slots) = (game.net().move_slots(), game.net().legal_slots());
        for &m in &self.touched {
            let played = &self.values[move_slots[m as usize] as usize];
            let illegal = and(played, &not(&self.values[legal_slots[m as usize] as usize]));
            if let Some(w) = illegal.iter().position(|&word| word != 0) {
                let role = game.move_roles()[m as usize];
                return Err(LaneError::Move {
                    lane: w * 64 + illegal[w].trailing_zeros() as usize,
                    error: MachineError::IllegalMove {
                        role: game.roles()[role].clone(),
                        text: game.moves()[m as usize].clone(),
                    },
                });
            }
        }
        Ok(())
    }

    /// The legal slot of each row of legal bits at `stride`.
    fn legal_row_slots(&self, stride: usize) -> Vec<u32> {
        let legal = self.game.net().legal_slots();
        let mut rows = vec![NO_ROW; self.game.roles().len() * stride];
        for (role, moves) in self.game.role_moves().iter().enumerate() {
            for (a, m) in moves.iter().enumerate() {
                rows[role * stride + a] = legal[m.0 as usize];
            }
        }
        rows
    }

    /// The lanes of `flags` (one per lane loaded) that are set.
    fn mask(&self, flags: &[bool]) -> Result<Lane, LaneError> {
        self.check_length("lane flags", self.lanes, flags.len())?;
        let mut mask = NO_LANES;
        for (word, flags) in mask.iter_mut().zip(flags.chunks(64)) {
            // Without a branch per lane: the flags are often mixed.
            *word = flags
                .iter()
                .enumerate()
                .fold(0, |bits, (i, &set)| bits | u64::from(set) << i);
        }
        Ok(mask)
    }

    /// Slot `slot`'s value in lane `lane`.
    fn bit(&self, slot: u32, lane: usize) -> bool {
        (self.values[slot as usize][lane / 64] >> (lane % 64)) & 1 != 0
    }

    /// Writes `state` into the bases of the lanes of `lanes` (below [`LANES`]).
    fn write_bases(&mut self, lanes: Range<usize>, state: &State) {
        let words = lanes.start / 64..lanes.end.div_ceil(64);
        let mut mask = NO_LANES;
        for lane in lanes {
            mask[lane / 64] |= 1 << (lane % 64);
        }
        let bases = self.game.net().base_slots().iter();
        for (&slot, holds) in bases.zip(state.0.iter().by_vals()) {
            let value = &mut self.values[slot as usize];
            for w in words.clone() {
                value[w] = if holds {
                    value[w] | mask[w]
                } else {
                    value[w] & !mask[w]
                };
            }
        }
    }

    fn check_lane(&self, lane: usize) -> Result<(), LaneError> {
        if lane >= self.lanes {
            return Err(LaneError::NoSuchLane {
                lane,
                lanes: self.lanes,
            });
        }
        Ok(())
    }

    fn check_state(&self, state: &State) -> Result<(), LaneError> {
        let expected = self.game.net().base_slots().len();
        if state.0.len() != expected {
            return Err(LaneError::ForeignState {
                bases: state.0.len(),
                expected,
            });
        }
        Ok(())
    }

    fn check_length(&self, what: &'static str, expected: usize, found: usize) -> Result<(), LaneError> {
        if expected != found {
            return Err(LaneError::WrongLength {
                what,
                expected,
                found,
            });
        }
        Ok(())
    }
}

impl Start {
    /// `state` (of `game`) and its state part's values.
    fn of(game: &Game, state: &State) -> Start {
        Start {
            values: game.net().evaluate(state.0.as_raw_slice(), &[]),
            state: state.clone(),
        }
    }
}

impl fmt::Debug for LaneMachine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LaneMachine")
            .field("lanes", &self.lanes)
            .field("bases", &self.game.net().base_slots().len())
            .field("start", &self.start.state)
            .finish_non_exhaustive()
    }
}

/// The goals of `game` (indexes into [`Game::goals`]) by ascending value.
fn goal_order(game: &Game) -> Vec<u32> {
    let mut order: Vec<u32> = (0..game.goals().len() as u32).collect();
    order.sort_by_key(|&g| game.goals()[g as usize].1);
    order
}

/// Whether the CPU has AVX-512F and AVX-512BW.
fn wide_bytes() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("avx512f") && std::arch::is_x86_feature_detected!("avx512bw")
    }
    #[cfg(not(target_arch = "x86_64"))]
    false
}

/// A one-byte type a row of lane values is written as: `u8` (0 or 1) for
/// observations, `bool` for legal flags; both hold exactly the bytes 0 and 1
/// for false and true, which the 512-bit writer relies on.
trait Flag: Copy {
    /// Each byte value's bits as eight flags, lowest bit first.
    const OF_BYTE: [[Self; 8]; 256];
    /// The flag of `bit`.
    fn of(bit: bool) -> Self;
}

impl Flag for u8 {
    const OF_BYTE: [[u8; 8]; 256] = BYTES_OF;
    fn of(bit: bool) -> u8 {
        u8::from(bit)
    }
}

impl Flag for bool {
    const OF_BYTE: [[bool; 8]; 256] = FLAGS_OF;
    fn of(bit: bool) -> bool {
        bit
    }
}

/// Writes every lane's value of `rows` into `out`, lane after lane, a flag
/// per row, by `write(bits, flags)` for each 64 rows of a lane (bit `i` of
/// `bits` the flag of row `64 * chunk + i`, `flags` at most 64 long).
/// Lanes of one word are transposed one word a row, more all of them (see
/// [`transpose_into`]), into `scratch`.
#[inline(always)]
fn write_rows<T: Flag>(
    values: &[Lane],
    rows: &[u32],
    lanes: usize,
    scratch: &mut Transposed,
    out: &mut [T],
    write: impl Fn(u64, &mut [T]),
) {
    if lanes <= 64 {
        let blocks = transpose_into(values, rows, &mut scratch.narrow);
        write_rows_of::<T, 1>(blocks, rows.len(), lanes, out, write)
    } else {
        let blocks = transpose_into(values, rows, &mut scratch.wide);
        write_rows_of::<T, LANE_WORDS>(blocks, rows.len(), lanes, out, write)
    }
}

/// [`write_rows`] of lanes in the first `W` words, from their `width`
/// transposed rows.
#[inline(always)]
fn write_rows_of<T: Flag, const W: usize>(
    blocks: &[RowBlock<W>],
    width: usize,
    lanes: usize,
    out: &mut [T],
    write: impl Fn(u64, &mut [T]),
) {
    if width == 0 {
        return;
    }
    for (lane, row) in out.chunks_exact_mut(width).take(lanes).enumerate() {
        let (word, l) = (lane / 64, lane % 64);
        for (flags, block) in row.chunks_mut(64).zip(blocks) {
            write(block.0[l][word], flags);
        }
    }
}

/// [`write_rows`] in 512-bit registers: 64 flags expanded from a word of
/// bits in one instruction (`vmovdqu8` of ones under the word as a mask) and
/// stored whole, the row's last chunk under a mask of its width, in a loop
/// with no bounds check nor closure per lane (it had about 17 instructions
/// a lane and chunk: a third of `VectorEnv`'s step on connect four). Rows
/// narrower than 64 flags whose width divides 64 (a mask of 16 flags: two
/// roles of eight actions) are packed, `64 / width` lanes' bits shifted
/// into one word and stored as one 64-byte line, where a store a lane
/// would straddle lines.
///
/// # Safety
/// The CPU must have AVX-512F and AVX-512BW.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw")]
unsafe fn write_rows_avx512<T: Flag>(
    values: &[Lane],
    rows: &[u32],
    lanes: usize,
    scratch: &mut Transposed,
    out: &mut [T],
) {
    const { assert!(std::mem::size_of::<T>() == 1) };
    let width = rows.len();
    assert!(out.len() >= lanes * width, "a row of flags for every lane");
    if width == 0 || lanes == 0 {
        return;
    }
    // SAFETY (both): the CPU has AVX-512F and AVX-512BW, the caller's
    // contract; `out` holds `lanes` rows of `width` one-byte flags, checked above.
    if lanes <= 64 {
        let blocks = transpose_into(values, rows, &mut scratch.narrow);
        unsafe { store_rows_avx512::<T, 1>(blocks, width, lanes, out) }
    } else {
        let blocks = transpose_into(values, rows, &mut scratch.wide);
        unsafe { store_rows_avx512::<T, LANE_WORDS>(blocks, width, lanes, out) }
    }
}

/// The stores of [`write_rows_avx512`]: lane `l`'s row of `width` flags
/// from `blocks` ([`transpose_into`]) into `out[l * width..(l + 1) * width]`.
///
/// # Safety
/// The CPU must have AVX-512F and AVX-512BW; `T` is one byte; `out` holds
/// at least `lanes * width` flags; `lanes <= 64 * W`; `blocks` holds
/// `width.div_ceil(64)` blocks.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw")]
unsafe fn store_rows_avx512<T: Flag, const W: usize>(
    blocks: &[RowBlock<W>],
    width: usize,
    lanes: usize,
    out: &mut [T],
) {
    use std::arch::x86_64::{
        _mm512_mask_storeu_epi8, _mm512_maskz_mov_epi8, _mm512_set1_epi8, _mm512_storeu_si512,
    };
    let ones = _mm512_set1_epi8(1);
    let base = out.as_mut_ptr().cast::<i8>();
    let bits = |lane: usize, chunk: usize| blocks[chunk].0[lane % 64][lane / 64];
    if width < 64 && 64 % width == 0 {
        let per_line = 64 / width;
        for first in (0..lanes).step_by(per_line) {
            let group = per_line.min(lanes - first);
            let word = (0..group).fold(0, |word, i| word | bits(first + i, 0) << (i * width));
            let within = u64::MAX >> (64 - group * width);
            // SAFETY: `group * width` bytes from flag `first * width`, of the
            // `lanes * width` of `out`; each byte 0 or 1, a `Flag`'s false and true.
            unsafe {
                _mm512_mask_storeu_epi8(base.add(first * width), within, _mm512_maskz_mov_epi8(word, ones))
            };
        }
        return;
    }
    let (full, tail) = (width / 64, width % 64);
    let tail_mask = (1u64 << tail).wrapping_sub(1);
    for lane in 0..lanes {
        // SAFETY: within `out`: the row of lane `lane < lanes`.
        let row = unsafe { base.add(lane * width) };
        for chunk in 0..full {
            let flags = _mm512_maskz_mov_epi8(bits(lane, chunk), ones);
            // SAFETY: flags `64 * chunk..64 * chunk + 64` of the row, within it
            // (`chunk < width / 64`); each byte 0 or 1.
            unsafe { _mm512_storeu_si512(row.add(64 * chunk).cast(), flags) };
        }
        if tail != 0 {
            let flags = _mm512_maskz_mov_epi8(bits(lane, full), ones);
            // SAFETY: the row's last `tail` flags (the mask), within it.
            unsafe { _mm512_mask_storeu_epi8(row.add(64 * full), tail_mask, flags) };
        }
    }
}

/// Calls `emit(lane, chunk, bits)` for every lane below `lanes` and every
/// 64 rows of `rows` (slots of `values`, or [`NO_ROW`]), lane after lane and
/// chunk after chunk: bit `i` of `bits` is row `64 * chunk + i`'s value in
/// the lane. Every chunk is transposed ([`transpose_into`]) before any lane is
/// emitted, so that a lane's row is written in one run (chunk by chunk, wide
/// rows were written in pieces 64 lanes apart, and the memory went back and
/// forth: a 60% loss on chess at 4096 lanes).
#[inline(always)]
fn for_each_lane_row(
    values: &[Lane],
    rows: &[u32],
    lanes: usize,
    scratch: &mut Transposed,
    emit: impl FnMut(usize, usize, u64),
) {
    if lanes <= 64 {
        for_each_lane_row_of::<1>(transpose_into(values, rows, &mut scratch.narrow), lanes, emit)
    } else {
        let blocks = transpose_into(values, rows, &mut scratch.wide);
        for_each_lane_row_of::<LANE_WORDS>(blocks, lanes, emit)
    }
}

/// [`for_each_lane_row`] of lanes in the first `W` words.
#[inline(always)]
fn for_each_lane_row_of<const W: usize>(
    blocks: &[RowBlock<W>],
    lanes: usize,
    mut emit: impl FnMut(usize, usize, u64),
) {
    for lane in 0..lanes {
        let (word, l) = (lane / 64, lane % 64);
        for (chunk, block) in blocks.iter().enumerate() {
            emit(lane, chunk, block.0[l][word]);
        }
    }
}

/// The first `W` words of the values of `rows` (slots of `values`, or
/// [`NO_ROW`]: zero) 64 rows a block, each block transposed: word `w` of row
/// `l` of block `c` holds lane `64 * w + l`'s values of rows `64 * c` to
/// `64 * c + 63`, row by bit, zero past the rows. With `W` the lane words,
/// each row is read whole, 512 lanes a 64-byte load, and the eight 64 x 64
/// bit matrices of a block are transposed at once ([`transpose64`]).
/// Reading a row's eight words one by one into the matrix of each 64 lanes,
/// as this did before, stored 8 bytes that the vectorised transposition read
/// back 64 at a time, which the CPU cannot forward from its store buffer
/// (`perf` of `VectorEnv` on connect four at 4096 lanes: the writers took 43%
/// of a step, 34% now). A block of at most 64 lanes takes `W = 1`: eight
/// words would be eight times its work. The blocks go into `blocks`, which
/// the machine keeps from call to call (an allocation and a zeroing of the
/// blocks a call before, a few percent of `VectorEnv`'s step); the blocks
/// are returned.
#[inline(always)]
fn transpose_into<'a, const W: usize>(
    values: &[Lane],
    rows: &[u32],
    blocks: &'a mut Vec<RowBlock<W>>,
) -> &'a [RowBlock<W>] {
    blocks.resize(rows.len().div_ceil(64), RowBlock([[0; W]; 64]));
    for (block, slots) in blocks.iter_mut().zip(rows.chunks(64)) {
        for (i, row) in block.0.iter_mut().enumerate() {
            *row = match slots.get(i) {
                Some(&slot) if slot != NO_ROW => {
                    let lanes = &values[slot as usize];
                    std::array::from_fn(|w| lanes[w])
                }
                _ => [0; W],
            };
        }
        transpose64(&mut block.0);
    }
    blocks
}

/// The blocks of transposed rows of [`transpose_into`], kept by a machine
/// from call to call: of one lane word (at most 64 lanes), and of all.
#[derive(Default)]
struct Transposed {
    narrow: Vec<RowBlock<1>>,
    wide: Vec<RowBlock<LANE_WORDS>>,
}

/// 64 rows of `W` lane words on cache lines of their own (64-byte aligned,
/// as the evaluator's values), so that the transposition's 512-bit loads and
/// stores never straddle two lines.
#[derive(Clone, Copy)]
#[repr(C, align(64))]
struct RowBlock<const W: usize>([[u64; W]; 64]);

/// Transposes, word by word, `W` 64 x 64 bit matrices in place: bit `j` of
/// word `w` of row `i` becomes bit `i` of word `w` of row `j`. Six rounds
/// swap ever smaller blocks across the diagonal (Hacker's Delight, 7-3), 32
/// row pairs a round, each operation on whole rows of `W` words. Inlined, so
/// that its rounds run in 512-bit registers in the callers compiled for
/// AVX-512 (a row of eight words a register), and in narrower ones elsewhere.
#[inline(always)]
fn transpose64<const W: usize>(m: &mut [[u64; W]; 64]) {
    let mut width = 32;
    let mut mask: u64 = 0x0000_0000_FFFF_FFFF;
    while width != 0 {
        let mut k = 0;
        while k < 64 {
            for i in k..k + width {
                let (a, b) = (m[i], m[i + width]);
                let t: [u64; W] = std::array::from_fn(|w| ((a[w] >> width) ^ b[w]) & mask);
                m[i] = std::array::from_fn(|w| a[w] ^ (t[w] << width));
                m[i + width] = std::array::from_fn(|w| b[w] ^ t[w]);
            }
            k += 2 * width;
        }
        width >>= 1;
        mask ^= mask << width;
    }
}

/// Each byte value's bits as eight bytes, 0 or 1, lowest bit first.
const BYTES_OF: [[u8; 8]; 256] = {
    let mut table = [[0u8; 8]; 256];
    let mut value = 0;
    while value < 256 {
        let mut bit = 0;
        while bit < 8 {
            table[value][bit] = ((value >> bit) & 1) as u8;
            bit += 1;
        }
        value += 1;
    }
    table
};

/// Writes lane `i`'s membership of `set` into `out[i]` for the lanes `i` of
/// `chosen` (at most `out.len()`); the other flags keep their value. Words
/// whose 64 lanes are all chosen are written eight flags a store.
///
/// ```
/// use ggpnet_propnet::driver::{write_lane_flags, LaneSet};
/// let mut chosen: LaneSet = [0; ggpnet_propnet::evaluator::LANE_WORDS];
/// let mut set = chosen;
/// chosen[0] = 0b0111; // lanes 0, 1 and 2
/// set[0] = 0b1010; // lanes 1 and 3
/// let mut flags = [true; 4];
/// write_lane_flags(&chosen, &set, &mut flags);
/// assert_eq!(flags, [false, true, false, true]); // lane 3 not chosen: kept
/// ```
pub fn write_lane_flags(chosen: &LaneSet, set: &LaneSet, out: &mut [bool]) {
    for (w, flags) in out.chunks_mut(64).enumerate() {
        let (chosen, set) = (chosen[w], set[w]);
        if chosen == !0 && flags.len() == 64 {
            for (k, eight) in flags.chunks_exact_mut(8).enumerate() {
                eight.copy_from_slice(&FLAGS_OF[(set >> (8 * k)) as u8 as usize]);
            }
            continue;
        }
        for (i, flag) in flags.iter_mut().enumerate() {
            let bit = 1 << i;
            *flag = if chosen & bit != 0 { set & bit != 0 } else { *flag };
        }
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

/// Writes the low bits of `bits` into `out` (at most 64 flags), one each,
/// lowest first: eight at a time (a copy of a constant size is one store),
/// the rest one by one.
#[inline]
fn write_flags<T: Flag>(bits: u64, out: &mut [T]) {
    for (k, flags) in out.chunks_exact_mut(8).enumerate() {
        let byte = (bits >> (8 * k)) as u8;
        flags.copy_from_slice(&T::OF_BYTE[byte as usize]);
    }
    let done = 8 * (out.len() / 8);
    for (i, flag) in out[done..].iter_mut().enumerate() {
        *flag = T::of((bits >> (done + i)) & 1 == 1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::evaluator::TURNS;
    use crate::random::{Stream, StreamGroup};
    use crate::StateMachine;

    /// A machine of `game` with `lanes` lanes in its initial state, and one
    /// stream group of seed `seed` for every 8 lanes (lane `l` on stream `l`).
    fn machine_and_groups(game: &Arc<Game>, lanes: usize, seed: u64) -> (LaneMachine, Vec<StreamGroup>) {
        let mut machine = LaneMachine::new(Arc::clone(game));
        machine.extend(lanes, game.initial()).expect("the lanes fit");
        let groups = (0..lanes.div_ceil(8))
            .map(|g| StreamGroup::new(std::array::from_fn(|k| Stream::new(seed, (8 * g + k) as u64))))
            .collect();
        (machine, groups)
    }

    /// The lanes of the set for which `lane` holds, below 512.
    fn lane_set(lane: impl Fn(usize) -> bool) -> LaneSet {
        std::array::from_fn(|w| (0..64).fold(0, |bits, i| bits | u64::from(lane(w * 64 + i)) << i))
    }

    /// 300 lanes (five words, the last part full) drawing every role's move
    /// on the machine and stepping by action numbers stay equal, state by
    /// state, to each lane drawing alone from its stream on a scalar machine
    /// (the rank below the count of legal moves, the move of that rank in
    /// input order), lanes restarting as they end.
    #[test]
    fn drawn_actions_are_the_streams_own_draws() {
        let game = crate::load(TURNS, &Default::default())
            .expect("the game loads")
            .game;
        let (lanes, roles) = (300, game.roles().len());
        let (mut machine, mut groups) = machine_and_groups(&game, lanes, 3);
        let mut streams: Vec<Stream> = (0..lanes).map(|l| Stream::new(3, l as u64)).collect();
        let mut states = vec![game.initial().clone(); lanes];
        let mut scalar = StateMachine::new(Arc::clone(&game));
        let (everyone, mut actions) = (vec![true; lanes], vec![0u32; lanes * roles]);
        for step in 0..12 {
            for role in 0..roles {
                machine
                    .draw_actions(role, &everyone, &mut groups, &mut actions)
                    .expect("draws");
            }
            machine.step_actions(&actions, &everyone).expect("legal actions");
            let words = game.initial().0.as_raw_slice().len();
            let mut packed = vec![0; lanes * words];
            machine.states_into(&mut packed).expect("words for every lane");
            let mut ended = vec![false; lanes];
            for (l, state) in states.iter_mut().enumerate() {
                let joint: Vec<Move> = (0..roles)
                    .map(|r| {
                        let legal = scalar.legal_moves(state, r);
                        let m = legal[streams[l].draw(legal.len())];
                        assert_eq!(
                            game.role_moves()[r][actions[l * roles + r] as usize],
                            m,
                            "step {step}, lane {l}"
                        );
                        m
                    })
                    .collect();
                *state = scalar.next_state(state, &joint).expect("a legal joint move");
                assert_eq!(machine.state(l).expect("a lane"), *state, "step {step}, lane {l}");
                let lane_words = &packed[l * words..(l + 1) * words];
                assert_eq!(lane_words, state.0.as_raw_slice(), "step {step}, lane {l}");
                ended[l] = scalar.is_terminal(state);
                if ended[l] {
                    *state = game.initial().clone();
                }
            }
            machine.restart(&ended).expect("one flag per lane");
        }
    }

    /// A game of simultaneous moves: both roles choose in state `(s 0)`,
    /// only `a` in `(s 1)`, and the game ends in `(s 2)`.
    const SIMULTANEOUS: &str = "(role a) (role b) (init (s 0)) (num 0) (num 1) (num 2)
        (<= (legal a (pa ?n)) (num ?n))
        (<= (legal b (pb ?n)) (num ?n) (true (s 0)) (distinct ?n 0))
        (<= (legal b wait) (true (s 1)))
        (<= (next (s ?n)) (does a (pa ?n)))
        (<= terminal (true (s 2))) (goal a 50) (goal b 50)";

    /// Stepping with drawn moves (role 0 given in odd lanes, drawn in even
    /// ones, role 1 drawn everywhere) gives the states and streams of
    /// drawing the action numbers role after role and stepping by them,
    /// restarts and terminal lanes as words included, in a game of turns
    /// (one round of draws) and one of simultaneous moves (two rounds where
    /// both roles choose); a refused step draws nothing.
    #[test]
    fn drawn_steps_are_draws_then_steps() {
        drawn_steps_are_draws_then_steps_in(TURNS);
        drawn_steps_are_draws_then_steps_in(SIMULTANEOUS);
    }

    fn drawn_steps_are_draws_then_steps_in(rules: &str) {
        let game = crate::load(rules, &Default::default())
            .expect("the game loads")
            .game;
        let (lanes, roles) = (300, game.roles().len());
        let (mut drawing, mut drawing_groups) = machine_and_groups(&game, lanes, 4);
        let (mut numbered, mut numbered_groups) = machine_and_groups(&game, lanes, 4);
        let (all, even) = (lane_set(|l| l < lanes), lane_set(|l| l < lanes && l % 2 == 0));
        let even_flags: Vec<bool> = (0..lanes).map(|l| l % 2 == 0).collect();
        for step in 0..12 {
            let mut actions = vec![0u32; lanes * roles];
            for lane in (1..lanes).step_by(2) {
                let first = (0..).find(|&a| drawing.is_legal(lane, 0, a).expect("a lane and role"));
                actions[lane * roles] = first.expect("a legal action") as u32;
            }
            drawing
                .step_drawing(&actions, &all, &[even, all], &mut drawing_groups)
                .expect("legal actions");
            numbered
                .draw_actions(0, &even_flags, &mut numbered_groups, &mut actions)
                .expect("draws");
            numbered
                .draw_actions(1, &vec![true; lanes], &mut numbered_groups, &mut actions)
                .expect("draws");
            numbered
                .step_actions(&actions, &vec![true; lanes])
                .expect("legal actions");
            assert_eq!(drawing_groups, numbered_groups, "step {step}");
            for lane in 0..lanes {
                assert_eq!(
                    drawing.state(lane),
                    numbered.state(lane),
                    "step {step}, lane {lane}"
                );
            }
            let terminal = drawing.terminal_lanes();
            let flags: Vec<bool> = (0..lanes)
                .map(|l| terminal[l / 64] >> (l % 64) & 1 == 1)
                .collect();
            let mut expected = vec![false; lanes];
            numbered.terminal_into(&mut expected).expect("one flag per lane");
            assert_eq!(flags, expected, "step {step}");
            drawing.restart_lanes(&terminal);
            numbered.restart(&flags).expect("one flag per lane");
        }
        let before = drawing_groups.clone();
        let mut actions = vec![0u32; lanes * roles];
        actions[roles] = game.role_moves()[0].len() as u32;
        let refused = drawing.step_drawing(&actions, &all, &[even, all], &mut drawing_groups);
        assert!(
            matches!(refused, Err(LaneError::NoSuchAction { lane: 1, role: 0, .. })),
            "{refused:?}"
        );
        assert_eq!(drawing_groups, before, "a refused step draws nothing");
    }

    /// The goals read word-wise are each lane's best goals, lane by lane,
    /// over 300 lanes playing random games (restarting as they end), for the
    /// lanes asked for only.
    #[test]
    fn goal_lanes_are_each_lanes_best_goals() {
        let game = crate::load(TURNS, &Default::default())
            .expect("the game loads")
            .game;
        let (lanes, roles) = (300, game.roles().len());
        let (mut machine, mut groups) = machine_and_groups(&game, lanes, 5);
        let (all, odd) = (lane_set(|l| l < lanes), lane_set(|l| l < lanes && l % 2 == 1));
        let (mut best, mut seen) = (Vec::new(), 0);
        for step in 0..12 {
            let mut got = vec![None; lanes * roles];
            machine.goal_lanes(&odd, |lane, role, value| got[lane * roles + role] = Some(value));
            seen += got.iter().flatten().count();
            for lane in 0..lanes {
                machine.best_goals_into(lane, &mut best).expect("a lane");
                let expected = if lane % 2 == 1 {
                    best.clone()
                } else {
                    vec![None; roles]
                };
                assert_eq!(
                    got[lane * roles..(lane + 1) * roles],
                    expected,
                    "step {step}, lane {lane}"
                );
            }
            machine
                .step_drawing(&vec![0; lanes * roles], &all, &vec![all; roles], &mut groups)
                .expect("legal draws");
            let ended = or(&machine.terminal_lanes(), &machine.stuck_lanes());
            machine.restart_lanes(&ended);
        }
        assert!(seen > 0, "some goals were read");
    }

    /// A role to draw for without a legal move is refused, naming the lane.
    #[test]
    fn drawing_without_a_legal_move_is_refused() {
        let rules = "(role r) (init a)
            (<= (legal r go) (true a)) (<= (next b) (does r go))
            (<= terminal (true b)) (goal r 0)";
        let game = crate::load(rules, &Default::default())
            .expect("the game loads")
            .game;
        let mut machine = LaneMachine::new(Arc::clone(&game));
        machine.extend(2, game.initial()).expect("2 lanes");
        machine
            .step_actions(&[0, 0], &[false, true])
            .expect("go in lane 1");
        assert_eq!(machine.stuck_lanes()[0], 0b10);
        let mut streams = [StreamGroup::new(std::array::from_fn(|i| {
            Stream::new(1, i as u64)
        }))];
        let both = [0b11, 0, 0, 0, 0, 0, 0, 0];
        let refused = machine.step_drawing(&[0, 0], &both, &[both], &mut streams);
        assert_eq!(refused, Err(LaneError::NoLegalMove { lane: 1, role: 0 }));
    }

    /// Action numbers past a role's moves and illegal moves are refused with
    /// the lane, and no lane moves.
    #[test]
    fn refused_actions_move_no_lane() {
        let game = crate::load(TURNS, &Default::default())
            .expect("the game loads")
            .game;
        let roles = game.roles().len();
        let mut machine = LaneMachine::new(Arc::clone(&game));
        machine.extend(70, game.initial()).expect("70 lanes");
        let everyone = vec![true; 70];
        let mut scalar = StateMachine::new(Arc::clone(&game));
        let legal: Vec<Vec<u32>> = (0..roles)
            .map(|r| {
                let moves = scalar.legal_moves(game.initial(), r);
                let dense = &game.role_moves()[r];
                moves
                    .iter()
                    .map(|m| dense.iter().position(|d| d == m).expect("a move of the role") as u32)
                    .collect()
            })
            .collect();
        let mut actions: Vec<u32> = (0..70 * roles).map(|i| legal[i % roles][0]).collect();
        actions[66 * roles] = game.role_moves()[0].len() as u32;
        let refused = machine.step_actions(&actions, &everyone);
        assert!(
            matches!(
                refused,
                Err(LaneError::NoSuchAction {
                    lane: 66,
                    role: 0,
                    ..
                })
            ),
            "{refused:?}"
        );
        let illegal = (0..game.role_moves()[1].len() as u32).find(|a| !legal[1].contains(a));
        let illegal = illegal.expect("a move of role 1 not legal at the start");
        actions[66 * roles] = legal[0][0];
        actions[65 * roles + 1] = illegal;
        let refused = machine.step_actions(&actions, &everyone);
        assert!(
            matches!(refused, Err(LaneError::Move { lane: 65, .. })),
            "{refused:?}"
        );
        assert!((0..70).all(|l| machine.state(l).expect("a lane") == *game.initial()));
        actions[65 * roles + 1] = legal[1][0];
        machine.step_actions(&actions, &everyone).expect("legal actions");
        assert!(
            machine.state(0).expect("a lane") != *game.initial(),
            "the lanes moved"
        );
    }

    #[test]
    fn transposition_moves_each_bit_across_the_diagonal() {
        let mut rng = crate::random::Stream::new(5, 0);
        let original: [Lane; 64] = std::array::from_fn(|_| std::array::from_fn(|_| rng.next_u64()));
        let mut m = original;
        transpose64(&mut m);
        for w in 0..LANE_WORDS {
            for (i, word) in original.iter().enumerate() {
                for (j, transposed) in m.iter().enumerate() {
                    let (from, to) = ((word[w] >> j) & 1, (transposed[w] >> i) & 1);
                    assert_eq!(to, from, "bit {j} of word {w} of row {i}");
                }
            }
        }
    }

    /// Rows of widths around the 64-flag chunks, with missing rows, for
    /// some lanes (whole words of 64 and parts), on buffers at offsets from a
    /// 64-byte line, written by both writers, are the lanes' bits, flag by
    /// flag.
    #[test]
    fn rows_written_are_each_lanes_bits() {
        let mut rng = crate::random::Stream::new(9, 0);
        let values: Vec<Lane> = (0..300)
            .map(|_| std::array::from_fn(|_| rng.next_u64()))
            .collect();
        let mut buffer = vec![0u8; 512 * 200 + 128];
        let mut scratch = Transposed::default();
        for width in [1, 2, 7, 8, 14, 16, 32, 63, 64, 65, 128, 200] {
            let rows: Vec<u32> = (0..width)
                .map(|r| if r % 5 == 3 { NO_ROW } else { (r * 7 % 300) as u32 })
                .collect();
            for (lanes, offset) in [(512, 0), (100, 1), (3, 17), (64, 5), (512, 48), (65, 63)] {
                let expected: Vec<u8> = (0..lanes * width)
                    .map(|k| match rows[k % width] {
                        NO_ROW => 0,
                        slot => (values[slot as usize][k / width / 64] >> (k / width % 64)) as u8 & 1,
                    })
                    .collect();
                let start = offset + (64 - buffer.as_ptr() as usize % 64) % 64;
                let out = &mut buffer[start..start + lanes * width];
                out.fill(9);
                write_rows(&values, &rows, lanes, &mut scratch, out, write_flags);
                assert!(
                    out == expected.as_slice(),
                    "width {width}, {lanes} lanes, offset {offset}"
                );
                #[cfg(target_arch = "x86_64")]
                if wide_bytes() {
                    out.fill(9);
                    // SAFETY: the CPU has AVX-512F and AVX-512BW (`wide_bytes`).
                    unsafe { write_rows_avx512(&values, &rows, lanes, &mut scratch, out) };
                    assert!(
                        out == expected.as_slice(),
                        "width {width}, {lanes} lanes, offset {offset}, AVX-512"
                    );
                }
            }
        }
    }

    #[test]
    fn bytes_are_written_lowest_bit_first_and_cut_at_the_end() {
        let mut out = [9u8; 11];
        write_flags(0b101 | (1 << 10) | (1 << 12), &mut out);
        assert_eq!(out, [1, 0, 1, 0, 0, 0, 0, 0, 0, 0, 1]);
    }
}
