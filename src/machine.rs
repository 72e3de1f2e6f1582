//! States, moves and the per-thread [`Machine`] that answers queries on them.
//!
//! A [`Machine`] holds evaluation scratch space (the propnet evaluator's values
//! and the state they are for); its queries take `&mut self` for that reason
//! only: every answer depends on the arguments alone, never on earlier queries.

use crate::game::{Backend, Game};
use crate::propnet::driver::{choose, for_each_joint, LaneMachine, Playout, PlayoutTotals};
use crate::propnet::evaluator::EvaluatorKind;
use crate::propnet::evaluator::LANES;
use crate::propnet::random::Stream;
use crate::propnet::{self, StateMachine};
use ggpnet_grounder::SettingError;
use ggpnet_reference::{RefState, Reference, ReferenceError};
use std::fmt;
use std::sync::Arc;
use std::time::Instant;

/// A game state. Hashable and comparable (for transposition tables); it belongs
/// to the [`Game`] that made it, and every other game refuses it.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub struct State {
    game: u64,
    repr: StateRepr,
}

#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub(crate) enum StateRepr {
    /// A propnet state: the set of true bases.
    Bits(propnet::State),
    /// An interpreter state: the set of true facts.
    Facts(RefState),
}

/// A move of one role. Hashable and comparable; it belongs to the [`Game`] that
/// made it, and every other game refuses it.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub struct Move {
    game: u64,
    role: usize,
    repr: MoveRepr,
}

#[derive(Clone, PartialEq, Eq, Hash, Debug)]
enum MoveRepr {
    /// A propnet input.
    Input(propnet::Move),
    /// The canonical text of a move (on the interpreter).
    Text(Arc<str>),
}

impl Move {
    /// The number of the role whose move it is.
    pub fn role(&self) -> usize {
        self.role
    }
}

/// The most joint moves [`Machine::legal_joint_moves`] and
/// [`Machine::successors`] list: a state with more (the product of the roles'
/// numbers of legal moves) is refused with [`Error::TooManyJointMoves`]
/// rather than filling memory.
pub const MAX_JOINT_MOVES: usize = 1 << 20;

/// A refused request of the agent API, by kind: an agent can tell a state of
/// another game from an illegal move without reading text. `Display` gives
/// the message, naming the role and move concerned.
#[derive(Clone, PartialEq, Debug)]
#[non_exhaustive]
pub enum Error {
    /// A state made by another game.
    ForeignState,
    /// A move made by another game.
    ForeignMove,
    /// A role number past the game's roles.
    NoSuchRole {
        /// The number given.
        role: usize,
        /// How many roles the game has.
        roles: usize,
    },
    /// A move, joint move, fact or text that the game refuses, by the kinds
    /// the propnet's state machine and the interpreter share (an illegal
    /// move, a joint move of the wrong length, ...).
    Refused(propnet::MachineError),
    /// A setting out of its range (playout threads or budget, perft depth).
    InvalidSetting(SettingError),
    /// More joint moves in a state than [`MAX_JOINT_MOVES`], the most that
    /// [`Machine::legal_joint_moves`] and [`Machine::successors`] list.
    TooManyJointMoves {
        /// The number of joint moves (the product of the roles' legal moves).
        count: u128,
    },
    /// Playouts that could not run (worker threads refused; the source).
    Playouts(propnet::driver::McError),
    /// A refusal or failure of the reference interpreter (its source).
    Interpreter(ggpnet_reference::ReferenceError),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::ForeignState => f.write_str("error: the state belongs to another game"),
            Error::ForeignMove => f.write_str("error: the move belongs to another game"),
            Error::NoSuchRole { role, roles } => {
                write!(f, "error: no role number {role}: the game has {roles} roles")
            }
            Error::Refused(e) => e.fmt(f),
            Error::InvalidSetting(e) => write!(f, "error: {e}"),
            Error::TooManyJointMoves { count } => write!(
                f,
                "error: {count} joint moves in this state, more than the {MAX_JOINT_MOVES} that are listed"
            ),
            Error::Playouts(e) => write!(f, "error: {e}"),
            Error::Interpreter(e) => write!(f, "error: {e}"),
        }
    }
}

/// A setting refused, as [`Error::InvalidSetting`].
impl From<SettingError> for Error {
    fn from(e: SettingError) -> Error {
        Error::InvalidSetting(e)
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Playouts(e) => Some(e),
            Error::Interpreter(e) => Some(e),
            _ => None,
        }
    }
}

impl From<propnet::MachineError> for Error {
    /// A move number past the game's is a move of another game.
    fn from(e: propnet::MachineError) -> Error {
        match e {
            propnet::MachineError::NoSuchMove { .. } => Error::ForeignMove,
            other => Error::Refused(other),
        }
    }
}

impl From<ggpnet_reference::ReferenceError> for Error {
    fn from(e: ggpnet_reference::ReferenceError) -> Error {
        use ggpnet_reference::ReferenceError as R;
        use propnet::MachineError as M;
        match e {
            R::IllegalMove { role, chosen } => Error::Refused(M::IllegalMove { role, text: chosen }),
            R::WrongJointLength { expected, found } => {
                Error::Refused(M::WrongJointLength { expected, found })
            }
            other => Error::Interpreter(other),
        }
    }
}

/// How a playout ended.
#[derive(Clone, PartialEq, Eq, Debug)]
pub enum PlayoutEnd {
    /// In a terminal state after `depth` moves, with each role's goal there (the
    /// highest value derivable; `None` for a role given none).
    Terminal {
        /// Joint moves played.
        depth: u64,
        /// Per role, its goal in the terminal state.
        goals: Vec<Option<i64>>,
    },
    /// In a non-terminal state after `depth` moves: at the depth limit, or where
    /// some role had no legal move.
    Abandoned {
        /// Joint moves played.
        depth: u64,
    },
}

impl Game {
    /// The initial state.
    pub fn initial_state(&self) -> State {
        let repr = match self.backend() {
            Backend::Propnet(loaded) => StateRepr::Bits(loaded.game.initial().clone()),
            Backend::Interpreter(reference, _) => StateRepr::Facts(reference.initial_state()),
        };
        self.state(repr)
    }

    /// A machine for queries on this thread (make one per thread; it is cheap
    /// next to the game, but not free: it holds one evaluator's values).
    pub fn machine(&self) -> Machine {
        let kind = match self.config().get_evaluator() {
            crate::EvaluatorChoice::Fixed(EvaluatorKind::Sweep) => EvaluatorKind::Sweep,
            _ => EvaluatorKind::Differential,
        };
        self.machine_with_evaluator(kind)
    }

    /// A machine whose propnet queries use the scalar evaluator `kind` (`Lanes`,
    /// which has no scalar form, gives the sweep), in native code unless
    /// [`Config::native`](crate::Config::native) is off; on the interpreter,
    /// the same as [`Game::machine`].
    pub fn machine_with_evaluator(&self, kind: EvaluatorKind) -> Machine {
        let engine = match self.backend() {
            Backend::Propnet(loaded) => {
                let native = self.config().get_native();
                let machine = StateMachine::with_evaluator_native(Arc::clone(&loaded.game), kind, native);
                let playout = Playout::new(&machine, self.config().get_max_playout_depth());
                let totals = PlayoutTotals::new(self.roles().len());
                MachineEngine::Propnet(Box::new(PropnetScratch {
                    machine,
                    playout,
                    totals,
                    legal: Vec::new(),
                    lanes: None,
                    lanes_from: None,
                }))
            }
            Backend::Interpreter(reference, _) => {
                MachineEngine::Interpreter(Box::new(Reference::clone(reference)))
            }
        };
        Machine {
            game: self.clone(),
            engine,
        }
    }

    /// The true facts of `state`, as canonical KIF, sorted by byte order.
    pub fn state_to_kif(&self, state: &State) -> Result<Vec<String>, Error> {
        Ok(match self.repr(state)? {
            StateRepr::Bits(bits) => self.propnet_game().state_to_kif(bits),
            StateRepr::Facts(facts) => facts.facts(),
        })
    }

    /// The state in which exactly `facts` (KIF, any spacing) hold. Refuses facts
    /// that can never hold in this game.
    pub fn state_from_kif(&self, facts: &[String]) -> Result<State, Error> {
        let repr = match self.backend() {
            Backend::Propnet(loaded) => StateRepr::Bits(loaded.game.state_from_kif(facts)?),
            Backend::Interpreter(reference, _) => StateRepr::Facts(reference.state_from_facts(facts)?),
        };
        Ok(self.state(repr))
    }

    /// The canonical KIF text of `m`.
    pub fn move_to_kif(&self, m: &Move) -> Result<String, Error> {
        self.check_move(m)?;
        Ok(match &m.repr {
            MoveRepr::Input(input) => self.propnet_game().move_to_kif(*input).to_owned(),
            MoveRepr::Text(text) => text.to_string(),
        })
    }

    /// `m` printed as its canonical KIF, or as `<move of another game>` if
    /// another game made it: printing never fails.
    ///
    /// ```
    /// use ggpnet::{Config, Game};
    /// let game = Game::load(ggpnet::DEFAULT_GAME, &Config::default())?;
    /// let other = Game::load(ggpnet::DEFAULT_GAME, &Config::default())?;
    /// let m = game.parse_move(0, "( drop  4 )")?;
    /// assert_eq!(format!("red plays {}", game.display_move(&m)), "red plays (drop 4)");
    /// assert_eq!(other.display_move(&m).to_string(), "<move of another game>");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn display_move<'a>(&'a self, m: &'a Move) -> impl fmt::Display + 'a {
        fmt::from_fn(move |f| match self.move_to_kif(m) {
            Ok(text) => f.write_str(&text),
            Err(_) => f.write_str("<move of another game>"),
        })
    }

    /// `state` printed as its true facts in canonical KIF, sorted by byte
    /// order and separated by spaces (as [`Game::state_to_kif`] lists them),
    /// or as `<state of another game>` if another game made it.
    ///
    /// ```
    /// use ggpnet::{Config, Game};
    /// let game = Game::load("(role r) (init (at 1)) (init lit) (<= (legal r wait) (true lit))
    ///     (<= (next (at 2)) (true (at 1))) (<= terminal (true (at 2))) (goal r 100)",
    ///     &Config::default())?;
    /// let other = Game::load(ggpnet::DEFAULT_GAME, &Config::default())?;
    /// assert_eq!(game.display_state(&game.initial_state()).to_string(), "(at 1) lit");
    /// assert_eq!(other.display_state(&game.initial_state()).to_string(), "<state of another game>");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn display_state<'a>(&'a self, state: &'a State) -> impl fmt::Display + 'a {
        fmt::from_fn(move |f| match self.state_to_kif(state) {
            Ok(facts) => f.write_str(&facts.join(" ")),
            Err(_) => f.write_str("<state of another game>"),
        })
    }

    /// The move of `role` written as `text` (KIF, any spacing). On the propnet,
    /// a move that is never legal is refused here; on the interpreter, only
    /// when it is played.
    pub fn parse_move(&self, role: usize, text: &str) -> Result<Move, Error> {
        self.check_role(role)?;
        let repr = match self.backend() {
            Backend::Propnet(loaded) => MoveRepr::Input(loaded.game.parse_move(role, text)?),
            Backend::Interpreter(..) => MoveRepr::Text(canonical(text)?.into()),
        };
        Ok(Move {
            game: self.id(),
            role,
            repr,
        })
    }

    fn state(&self, repr: StateRepr) -> State {
        State {
            game: self.id(),
            repr,
        }
    }

    pub(crate) fn repr<'s>(&self, state: &'s State) -> Result<&'s StateRepr, Error> {
        if state.game == self.id() {
            Ok(&state.repr)
        } else {
            Err(Error::ForeignState)
        }
    }

    fn check_move(&self, m: &Move) -> Result<(), Error> {
        if m.game == self.id() {
            Ok(())
        } else {
            Err(Error::ForeignMove)
        }
    }

    fn check_role(&self, role: usize) -> Result<(), Error> {
        if role < self.roles().len() {
            Ok(())
        } else {
            Err(Error::NoSuchRole {
                role,
                roles: self.roles().len(),
            })
        }
    }

    /// The compiled game; only called with a propnet state or move in hand.
    fn propnet_game(&self) -> &propnet::Game {
        match self.backend() {
            Backend::Propnet(loaded) => &loaded.game,
            Backend::Interpreter(..) => unreachable!("propnet states and moves come only from propnet games"),
        }
    }
}

/// Re-prints a KIF term canonically.
fn canonical(text: &str) -> Result<String, Error> {
    let mut symbols = ggpnet_kif::SymbolTable::new();
    let term = ggpnet_kif::parse_term(text, &mut symbols).map_err(|e| {
        Error::Refused(propnet::MachineError::Unreadable {
            text: text.to_owned(),
            reason: e.to_string(),
        })
    })?;
    Ok(ggpnet_kif::term_to_string(&term, &symbols))
}

/// Queries on the states of one [`Game`], with this thread's scratch space.
///
/// ```
/// use ggpnet::{Config, Game};
/// let game = Game::load(
///     "(role robot) (init off)
///      (<= (legal robot press) (true off)) (<= (next on) (does robot press))
///      (<= terminal (true on)) (<= (goal robot 100) (true on)) (<= (goal robot 0) (true off))",
///     &Config::default(),
/// )?;
/// let mut machine = game.machine();
/// let start = game.initial_state();
/// let press = machine.legal_moves(&start, 0)?;
/// assert_eq!(game.move_to_kif(&press[0])?, "press");
/// let end = machine.next_state(&start, &press)?;
/// assert!(machine.is_terminal(&end)?);
/// assert_eq!(machine.goals(&end)?, [Some(100)]);
/// assert_eq!(game.state_to_kif(&end)?, ["on"]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct Machine {
    game: Game,
    engine: MachineEngine,
}

#[derive(Debug)]
enum MachineEngine {
    Propnet(Box<PropnetScratch>),
    /// A clone of the game's interpreter, with its own cache.
    Interpreter(Box<Reference>),
}

/// A propnet machine's evaluator, and its playout buffers.
struct PropnetScratch {
    machine: StateMachine,
    playout: Playout,
    /// What the last playout added up to (reset before each).
    totals: PlayoutTotals,
    /// The legal moves of the last [`Machine::legal_moves_into`].
    legal: Vec<propnet::Move>,
    /// Successors on the lanes evaluator, made at the first expansion that
    /// runs there or races there.
    lanes: Option<Box<SuccessorLanes>>,
    /// From how many children successors run on the lanes (`None` inside:
    /// never), once raced.
    lanes_from: Option<Option<usize>>,
}

/// A lanes machine and its buffers, for successors in batches of [`LANES`]
/// (state, joint move) pairs.
struct SuccessorLanes {
    machine: LaneMachine,
    /// The batch's joint moves, lanes x roles, as the facade's moves and as inputs.
    joints: Vec<Move>,
    inputs: Vec<propnet::Move>,
    /// The batch's next states, lanes x words.
    words: Vec<u64>,
}

impl fmt::Debug for PropnetScratch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let code = if self.machine.native() {
            "native"
        } else {
            "interpreted"
        };
        write!(f, "PropnetScratch({}, {code})", self.machine.evaluator())
    }
}

impl Machine {
    /// The game this machine queries.
    pub fn game(&self) -> &Game {
        &self.game
    }

    /// The legal moves of `role` in `state` (propnet: in input order;
    /// interpreter: sorted by text).
    pub fn legal_moves(&mut self, state: &State, role: usize) -> Result<Vec<Move>, Error> {
        let mut moves = Vec::new();
        self.legal_moves_into(state, role, &mut moves)?;
        Ok(moves)
    }

    /// [`Machine::legal_moves`] into `out`, which is cleared first (and left
    /// as it was when the request is refused): a loop that asks for legal
    /// moves again and again reuses one buffer (on the propnet, no allocation
    /// once the buffers have grown).
    ///
    /// ```
    /// use ggpnet::{Config, Game};
    /// let game = Game::load(ggpnet::DEFAULT_GAME, &Config::default())?; // connect four
    /// let mut machine = game.machine();
    /// let mut moves = Vec::new();
    /// machine.legal_moves_into(&game.initial_state(), 0, &mut moves)?;
    /// assert_eq!(moves.len(), 7); // red drops into any of the seven columns
    /// machine.legal_moves_into(&game.initial_state(), 1, &mut moves)?;
    /// assert_eq!(moves.len(), 1); // yellow waits
    /// assert_eq!(game.move_to_kif(&moves[0])?, "wait");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn legal_moves_into(&mut self, state: &State, role: usize, out: &mut Vec<Move>) -> Result<(), Error> {
        self.game.check_role(role)?;
        let game = self.game.id();
        let moves = |repr: MoveRepr| Move { game, role, repr };
        match (&mut self.engine, self.game.repr(state)?) {
            (MachineEngine::Propnet(p), StateRepr::Bits(bits)) => {
                p.machine.legal_moves_into(bits, role, &mut p.legal);
                out.clear();
                out.extend(p.legal.iter().map(|&m| moves(MoveRepr::Input(m))));
            }
            (MachineEngine::Interpreter(r), StateRepr::Facts(facts)) => {
                let legal = r.legal_moves(facts, role)?;
                out.clear();
                out.extend(legal.into_iter().map(|m| moves(MoveRepr::Text(m.into()))));
            }
            _ => unreachable!("a game's states are of its engine"),
        }
        Ok(())
    }

    /// Whether `state` is terminal.
    pub fn is_terminal(&mut self, state: &State) -> Result<bool, Error> {
        Ok(match (&mut self.engine, self.game.repr(state)?) {
            (MachineEngine::Propnet(p), StateRepr::Bits(bits)) => p.machine.is_terminal(bits),
            (MachineEngine::Interpreter(r), StateRepr::Facts(facts)) => r.is_terminal(facts)?,
            _ => unreachable!("a game's states are of its engine"),
        })
    }

    /// Per role, every goal value derivable in `state`, ascending.
    pub fn goal_values(&mut self, state: &State) -> Result<Vec<Vec<i64>>, Error> {
        Ok(match (&mut self.engine, self.game.repr(state)?) {
            (MachineEngine::Propnet(p), StateRepr::Bits(bits)) => p.machine.goals(bits),
            (MachineEngine::Interpreter(r), StateRepr::Facts(facts)) => r.goals(facts)?,
            _ => unreachable!("a game's states are of its engine"),
        })
    }

    /// Per role, its goal in `state`: the highest value derivable, `None` if none is.
    pub fn goals(&mut self, state: &State) -> Result<Vec<Option<i64>>, Error> {
        let values = self.goal_values(state)?;
        Ok(values.into_iter().map(|v| v.last().copied()).collect())
    }

    /// The state after every role plays its move of `joint` (one per role, in
    /// role order) in `state`. Refuses a joint move of the wrong length, a move
    /// of another role or game, and an illegal move, naming the role and the move.
    pub fn next_state(&mut self, state: &State, joint: &[Move]) -> Result<State, Error> {
        self.check_joint(joint)?;
        let repr = match (&mut self.engine, self.game.repr(state)?) {
            (MachineEngine::Propnet(p), StateRepr::Bits(bits)) => {
                let inputs: Vec<propnet::Move> = joint.iter().map(input_of).collect();
                StateRepr::Bits(p.machine.next_state(bits, &inputs)?)
            }
            (MachineEngine::Interpreter(r), StateRepr::Facts(facts)) => {
                let texts: Vec<String> = joint.iter().map(text_of).collect();
                StateRepr::Facts(r.next_state(facts, &texts)?)
            }
            _ => unreachable!("a game's states are of its engine"),
        };
        Ok(self.game.state(repr))
    }

    /// Appends to `out` every joint move of the roles' `legal` moves in
    /// `state` (their legal moves there, in role order), with the state it
    /// leads to, in [`for_each_joint`]'s order. The moves are legal, so
    /// nothing is checked per child; on the propnet the state is loaded once
    /// and each child evaluates the move part only, or, `on_lanes`, the
    /// children are made in batches on the lanes evaluator.
    pub(crate) fn children_into(
        &mut self,
        state: &State,
        legal: &[Vec<Move>],
        on_lanes: bool,
        out: &mut Vec<(Vec<Move>, State)>,
    ) -> Result<(), Error> {
        let game = &self.game;
        let mut add = |joint: &[Move], next| out.push((joint.to_vec(), game.state(StateRepr::Bits(next))));
        match (&mut self.engine, game.repr(state)?) {
            (MachineEngine::Propnet(p), StateRepr::Bits(bits)) if on_lanes => {
                p.children_on_lanes(bits, legal, add)
            }
            (MachineEngine::Propnet(p), StateRepr::Bits(bits)) => p.children(bits, legal, &mut add),
            (MachineEngine::Interpreter(r), StateRepr::Facts(facts)) => {
                let mut joints = Vec::new();
                for_each_joint(legal, |joint| joints.push(joint.to_vec()));
                for joint in joints {
                    let texts: Vec<String> = joint.iter().map(text_of).collect();
                    let next = game.state(StateRepr::Facts(r.next_state(facts, &texts)?));
                    out.push((joint, next));
                }
            }
            _ => unreachable!("a game's states are of its engine"),
        }
        Ok(())
    }

    /// Whether the `children` children of `state` (by the roles' `legal`
    /// moves there) are made faster on the lanes than on the scalar
    /// evaluator: from [`RACE_FROM`] children, as the machine's race says
    /// (run at the first such state); never on the interpreter.
    pub(crate) fn lanes_pay(
        &mut self,
        state: &State,
        legal: &[Vec<Move>],
        children: usize,
    ) -> Result<bool, Error> {
        Ok(match (&mut self.engine, self.game.repr(state)?) {
            (MachineEngine::Propnet(p), StateRepr::Bits(bits)) => p.lanes_pay(bits, legal, children),
            _ => false,
        })
    }

    /// Per role (in role order), the percepts of GDL-II: every `P` such that
    /// `(sees ROLE P)` holds in `state` with the `does` facts of `joint`, as
    /// canonical KIF (the form of [`Game::move_to_kif`]: `(open_door 3)`,
    /// `(does candidate (choose 1))`, `oneblack`), sorted by byte order,
    /// without duplicates; empty lists for a game without `sees`. The joint
    /// move is refused as [`Machine::next_state`] refuses it.
    pub fn percepts(&mut self, state: &State, joint: &[Move]) -> Result<Vec<Vec<String>>, Error> {
        self.check_joint(joint)?;
        Ok(match (&mut self.engine, self.game.repr(state)?) {
            (MachineEngine::Propnet(p), StateRepr::Bits(bits)) => {
                let inputs: Vec<propnet::Move> = joint.iter().map(input_of).collect();
                p.machine.percepts(bits, &inputs)?
            }
            (MachineEngine::Interpreter(r), StateRepr::Facts(facts)) => {
                let texts: Vec<String> = joint.iter().map(text_of).collect();
                r.percepts(facts, &texts)?
            }
            _ => unreachable!("a game's states are of its engine"),
        })
    }

    /// Refuses a joint move of the wrong length, or with a move of another
    /// role or game, naming the role and the move.
    fn check_joint(&self, joint: &[Move]) -> Result<(), Error> {
        self.check_joint_length(joint.len())?;
        for (role, m) in joint.iter().enumerate() {
            self.check_move_of(role, m)?;
        }
        Ok(())
    }

    /// Refuses a joint move of `found` moves unless the game has as many roles.
    pub(crate) fn check_joint_length(&self, found: usize) -> Result<(), Error> {
        let expected = self.game.roles().len();
        if found == expected {
            Ok(())
        } else {
            Err(Error::Refused(propnet::MachineError::WrongJointLength {
                expected,
                found,
            }))
        }
    }

    /// Refuses `m` as the move of `role` if it is of another game or role.
    pub(crate) fn check_move_of(&self, role: usize, m: &Move) -> Result<(), Error> {
        self.game.check_move(m)?;
        if m.role == role {
            return Ok(());
        }
        Err(Error::Refused(propnet::MachineError::WrongRole {
            text: self.game.move_to_kif(m)?,
            owner: self.game.roles()[m.role].clone(),
            role: self.game.roles()[role].clone(),
        }))
    }

    /// A uniformly random legal move of `role` in `state` (`None` when it has none).
    pub fn random_move(
        &mut self,
        state: &State,
        role: usize,
        rng: &mut Stream,
    ) -> Result<Option<Move>, Error> {
        let mut legal = self.legal_moves(state, role)?;
        if legal.is_empty() {
            return Ok(None);
        }
        let at = rng.draw(legal.len());
        Ok(Some(legal.swap_remove(at)))
    }

    /// Plays one random playout from `state`: in every non-terminal state each
    /// role in turn plays a uniformly random legal move, until a terminal state,
    /// a state where some role has no legal move, or
    /// [`Config::max_playout_depth`](crate::Config::max_playout_depth) moves.
    pub fn playout(&mut self, state: &State, rng: &mut Stream) -> Result<PlayoutEnd, Error> {
        let end = self.playout_by(state, rng, None)?;
        Ok(end.expect("a playout with no deadline ends").0)
    }

    /// [`Machine::playout`], left unfinished (`None`) if `deadline` passes first
    /// (the clock is read every move on the interpreter, every 1,024 moves on the propnet).
    pub fn playout_until(
        &mut self,
        state: &State,
        rng: &mut Stream,
        deadline: Instant,
    ) -> Result<Option<PlayoutEnd>, Error> {
        Ok(self.playout_by(state, rng, Some(deadline))?.map(|(end, _)| end))
    }

    /// [`Machine::playout`], with the state it ended in (terminal, or where
    /// it was abandoned).
    ///
    /// ```
    /// use ggpnet::{Config, Game, PlayoutEnd, Stream};
    /// let game = Game::load(ggpnet::DEFAULT_GAME, &Config::default())?; // connect four
    /// let mut machine = game.machine();
    /// let mut rng = Stream::new(1, 0);
    /// let (end, last) = machine.playout_to_end(&game.initial_state(), &mut rng)?;
    /// let PlayoutEnd::Terminal { goals, .. } = end else { panic!("connect four ends") };
    /// assert!(machine.is_terminal(&last)?);
    /// assert_eq!(machine.goals(&last)?, goals);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn playout_to_end(&mut self, state: &State, rng: &mut Stream) -> Result<(PlayoutEnd, State), Error> {
        let (end, facts) = self
            .playout_by(state, rng, None)?
            .expect("a playout with no deadline ends");
        let repr = match (facts, &self.engine) {
            (Some(facts), _) => StateRepr::Facts(facts),
            (None, MachineEngine::Propnet(p)) => StateRepr::Bits(p.playout.last_state().clone()),
            (None, MachineEngine::Interpreter(_)) => unreachable!("the interpreter returns its last state"),
        };
        Ok((end, self.game.state(repr)))
    }

    /// A playout from `state`, `None` if `deadline` passed first; on the
    /// interpreter, with the state it ended in (the propnet's is in its
    /// playout buffers).
    fn playout_by(
        &mut self,
        state: &State,
        rng: &mut Stream,
        deadline: Option<Instant>,
    ) -> Result<Option<(PlayoutEnd, Option<RefState>)>, Error> {
        let max_depth = self.game.config().get_max_playout_depth().max(1);
        Ok(match (&mut self.engine, self.game.repr(state)?) {
            (MachineEngine::Propnet(p), StateRepr::Bits(bits)) => {
                p.playout(bits, rng, deadline).map(|end| (end, None))
            }
            (MachineEngine::Interpreter(r), StateRepr::Facts(facts)) => {
                interpreter_playout(r, facts.clone(), rng, max_depth, deadline)?
                    .map(|(end, last)| (end, Some(last)))
            }
            _ => unreachable!("a game's states are of its engine"),
        })
    }
}

impl PropnetScratch {
    /// Calls `f` with every joint move of `legal` (the roles' legal moves in
    /// `state`) and the state it leads to, in [`for_each_joint`]'s order, on
    /// the scalar evaluator ([`scalar_children`]).
    fn children(
        &mut self,
        state: &propnet::State,
        legal: &[Vec<Move>],
        f: impl FnMut(&[Move], propnet::State),
    ) {
        scalar_children(&mut self.machine, state, legal, f);
    }

    /// [`PropnetScratch::children`] on the lanes evaluator: `state` in up to
    /// [`LANES`] lanes, each stepped by one joint move, a batch at a time
    /// (the lanes machine made at the first call).
    fn children_on_lanes(
        &mut self,
        state: &propnet::State,
        legal: &[Vec<Move>],
        mut f: impl FnMut(&[Move], propnet::State),
    ) {
        let roles = legal.len();
        if roles == 0 {
            // The one joint move of no moves would move no lane.
            return self.children(state, legal, f);
        }
        let lanes = SuccessorLanes::made(&mut self.lanes, self.machine.game());
        for_each_joint(legal, |joint| {
            lanes.joints.extend_from_slice(joint);
            if lanes.joints.len() == LANES * roles {
                lanes.flush(state, roles, &mut f);
            }
        });
        lanes.flush(state, roles, &mut f);
    }

    /// Whether `children` children of `state` (by the roles' `legal` moves)
    /// are made faster on the lanes: from [`RACE_FROM`], as a race of the two
    /// on `state`'s children says, run at the first call that gets there and
    /// kept.
    fn lanes_pay(&mut self, state: &propnet::State, legal: &[Vec<Move>], children: usize) -> bool {
        if children < RACE_FROM || legal.is_empty() {
            return false;
        }
        let from = match self.lanes_from {
            Some(from) => from,
            None => {
                let from = self.race(state, legal);
                *self.lanes_from.insert(from)
            }
        };
        from.is_some_and(|from| children >= from)
    }

    /// The fewest children from which the lanes make them faster than the
    /// scalar evaluator, `None` if not even a full batch: the costs of
    /// [`choose::batch_costs`] racing the two on `state`'s children (cycled
    /// to fill a batch), a few milliseconds, at most about 0.05 s.
    fn race(&mut self, state: &propnet::State, legal: &[Vec<Move>]) -> Option<usize> {
        let mut joints: Vec<Vec<Move>> = Vec::new();
        for_each_joint(legal, |joint| joints.push(joint.to_vec()));
        let roles = legal.len();
        let pairs: Vec<Move> = joints.iter().cycle().take(LANES).flatten().cloned().collect();
        let scalar = &mut self.machine;
        let lanes = SuccessorLanes::made(&mut self.lanes, scalar.game());
        let costs = choose::batch_costs(
            |n| {
                let mut done = 0;
                while done < n {
                    scalar_children(scalar, state, legal, |_, next| drop(std::hint::black_box(next)));
                    done += joints.len();
                }
                done
            },
            |n| {
                lanes.joints.extend_from_slice(&pairs[..n.min(LANES) * roles]);
                lanes.flush(state, roles, &mut |_, next| drop(std::hint::black_box(next)));
                n.min(LANES)
            },
        );
        costs.lanes_from()
    }

    /// One playout from `from` on the propnet's scalar driver; `None` when
    /// `deadline` stopped it.
    fn playout(
        &mut self,
        from: &propnet::State,
        rng: &mut Stream,
        deadline: Option<Instant>,
    ) -> Option<PlayoutEnd> {
        self.totals = PlayoutTotals::new(self.totals.goal_sums.len());
        self.playout.start_from(from);
        self.playout.stop_at(deadline);
        self.playout
            .run(&mut self.machine, rng, &mut self.totals, |_, _| {});
        let t = &self.totals;
        if t.playouts == 1 {
            let goals = t.goal_sums.iter().zip(&t.missing_goals);
            Some(PlayoutEnd::Terminal {
                depth: t.depth_sum,
                goals: goals
                    .map(|(&sum, &missing)| (missing == 0).then_some(sum as i64))
                    .collect(),
            })
        } else if t.abandoned == 1 {
            Some(PlayoutEnd::Abandoned { depth: t.transitions })
        } else {
            None
        }
    }
}

/// Calls `f` with every joint move of `legal` (the roles' legal moves in
/// `state`) and the state it leads to, in [`for_each_joint`]'s order, on
/// `machine`: `state` loaded once (no evaluation when the legal moves were
/// just listed there), then per child the move part and the next state.
fn scalar_children(
    machine: &mut StateMachine,
    state: &propnet::State,
    legal: &[Vec<Move>],
    mut f: impl FnMut(&[Move], propnet::State),
) {
    // Loads `state`, which `next_into` steps from.
    machine.is_terminal(state);
    let mut inputs = Vec::with_capacity(legal.len());
    for_each_joint(legal, |joint| {
        inputs.clear();
        inputs.extend(joint.iter().map(input_of));
        let mut next = state.clone();
        machine.next_into(&inputs, &mut next);
        f(joint, next);
    });
}

impl SuccessorLanes {
    /// The lanes machine kept in `kept`, made for `game` if there is none yet.
    fn made<'a>(
        kept: &'a mut Option<Box<SuccessorLanes>>,
        game: &Arc<propnet::Game>,
    ) -> &'a mut SuccessorLanes {
        kept.get_or_insert_with(|| {
            Box::new(SuccessorLanes {
                machine: LaneMachine::new(Arc::clone(game)),
                joints: Vec::new(),
                inputs: Vec::new(),
                words: Vec::new(),
            })
        })
    }

    /// Steps a lane of `state` by each joint move of the batch (`roles`
    /// moves each, legal in `state`) and calls `f` with each joint move and
    /// its next state, in order; empties the batch.
    fn flush(&mut self, state: &propnet::State, roles: usize, f: &mut impl FnMut(&[Move], propnet::State)) {
        let lanes = self.joints.len() / roles;
        if lanes == 0 {
            return;
        }
        let invariant = "a state of the game in free lanes, stepped by joint moves legal there";
        self.inputs.clear();
        self.inputs.extend(self.joints.iter().map(input_of));
        self.machine.clear();
        self.machine.extend(lanes, state).expect(invariant);
        self.machine.step(&self.inputs).expect(invariant);
        let words = state.0.as_raw_slice().len();
        self.words.resize(lanes * words, 0);
        self.machine.states_into(&mut self.words).expect(invariant);
        let children = self
            .joints
            .chunks_exact(roles)
            .zip(self.words.chunks_exact(words));
        for (joint, next_words) in children {
            let mut next = state.clone();
            next.0.as_raw_mut_slice().copy_from_slice(next_words);
            f(joint, next);
        }
        self.joints.clear();
    }
}

/// The fewest children with which [`Expansion::Auto`](crate::Expansion)
/// races the lanes: below, a batch's evaluation of the whole net for 512
/// lanes never paid in the measurements (docs/PLAYING.md).
const RACE_FROM: usize = 8;

/// One random playout on the interpreter from `state`, and the state it ended
/// in; `None` when `deadline` passed first (the playout is left unfinished);
/// an error when a state needs more work than the interpreter's limit.
pub(crate) fn interpreter_playout(
    reference: &Reference,
    mut state: RefState,
    rng: &mut Stream,
    max_depth: u64,
    deadline: Option<Instant>,
) -> Result<Option<(PlayoutEnd, RefState)>, ReferenceError> {
    let roles = reference.roles().len();
    let mut depth = 0;
    let mut joint = Vec::with_capacity(roles);
    loop {
        if reference.is_terminal(&state)? {
            let goals = reference
                .goals(&state)?
                .into_iter()
                .map(|v| v.last().copied())
                .collect();
            return Ok(Some((PlayoutEnd::Terminal { depth, goals }, state)));
        }
        if depth >= max_depth {
            return Ok(Some((PlayoutEnd::Abandoned { depth }, state)));
        }
        if deadline.is_some_and(|d| Instant::now() >= d) {
            return Ok(None);
        }
        joint.clear();
        for role in 0..roles {
            let mut legal = reference.legal_moves(&state, role)?;
            if legal.is_empty() {
                return Ok(Some((PlayoutEnd::Abandoned { depth }, state)));
            }
            let at = rng.draw(legal.len());
            joint.push(legal.swap_remove(at));
        }
        state = reference.next_state(&state, &joint)?;
        depth += 1;
    }
}

fn input_of(m: &Move) -> propnet::Move {
    match &m.repr {
        MoveRepr::Input(input) => *input,
        MoveRepr::Text(_) => unreachable!("a propnet game's moves are inputs"),
    }
}

fn text_of(m: &Move) -> String {
    match &m.repr {
        MoveRepr::Text(text) => text.to_string(),
        MoveRepr::Input(_) => unreachable!("an interpreter game's moves are texts"),
    }
}
