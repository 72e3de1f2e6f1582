//! Joint moves: random ones (some roles' moves given), every legal one, and
//! the successors of a state, on either engine.
//!
//! Every joint move of a state is one combination of the roles' legal moves,
//! listed by one odometer ([`for_each_joint`], the first role's move changing
//! slowest), the one perft walks children with. [`Machine::successors`] does
//! not step each joint move as [`Machine::next_state`] would: that checks the
//! joint move (its length, each move's game, role and legality) and packs
//! the state into a fresh buffer per call. The moves combined are the legal
//! moves just listed, so the state is loaded once (the scalar evaluator's
//! state part evaluated once) and each child costs the move part and the
//! packing of its state only.
//!
//! On the lanes ([`Expansion::Lanes`]) the children are made in batches of
//! up to 512 (state, joint move) pairs on a `LaneMachine`, as perft's last
//! ply makes its children: the state in a lane per joint move, one step, and
//! the next states taken out by one transposition
//! (`LaneMachine::states_into`). A batch evaluates the whole net for 512
//! lanes whatever its size, a child on the scalar evaluator only the move
//! part, so which is faster depends on the game and on the number of
//! children. Measured on six corpus games (docs/PLAYING.md), the lanes won
//! on breakthrough only (1.6 to 1.8 times faster from 9 children on) and
//! lost 2 to 16 times on connect four, chess_200, reversi, gomoku_15x15 (at
//! 129 to 256 children too) and amazons_10x10. No rule from the number of
//! children and the net's size fits that: breakthrough's net (925 gate
//! slots, 416 of them in the move part) is smaller than gomoku's (2,953,
//! 450) but connect four's (483, 192) is smaller still, and gomoku's scalar
//! child costs a third of breakthrough's. So [`Expansion::Auto`] measures:
//! at the first state with at least 8 children (fewer never paid), the
//! machine races the two on that state's children (the race perft's `Auto`
//! runs, `choose::batch_costs`: a few milliseconds, at most about 0.05 s)
//! and keeps the number of children from which a batch wins, or that it
//! never does; later states with at least that many run on the lanes.
//!
//! The machine keeps its `LaneMachine` (boxed in its propnet scratch space)
//! from the first expansion that runs or races on the lanes, for its life:
//! made in 0.1 ms (connect four) to 8 ms (chess_200), the time of its first
//! expansion on the lanes (the next ones take microseconds). Machines that never meet a
//! state with 8 children never make one.

use crate::machine::{Error, Machine, Move, State, MAX_JOINT_MOVES};
use crate::propnet::driver::for_each_joint;
use crate::propnet::random::Stream;
use crate::propnet::MachineError;

/// How [`Machine::successors_with`] makes a state's children (the same
/// children in the same order every way).
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub enum Expansion {
    /// On the lanes when the state has enough children for a batch to pay,
    /// as the machine measured at the first state with 8 children or more
    /// (the module doc says why), else as [`Expansion::Scalar`].
    #[default]
    Auto,
    /// One child after another on the machine's scalar evaluator.
    Scalar,
    /// On the lanes evaluator, up to [`LANES`](crate::propnet::evaluator::LANES)
    /// children a pass (on the interpreter, as [`Expansion::Scalar`]).
    Lanes,
}

impl Machine {
    /// A joint move of uniformly random legal moves, one per role drawn in
    /// role order (as [`Machine::random_move`] draws them); `None` when some
    /// role has no legal move.
    ///
    /// ```
    /// use ggpnet::{Config, Game, Stream};
    /// let game = Game::load(ggpnet::DEFAULT_GAME, &Config::default())?; // connect four
    /// let mut machine = game.machine();
    /// let start = game.initial_state();
    /// let joint = machine.random_joint_move(&start, &mut Stream::new(1, 0))?.unwrap();
    /// assert_eq!(joint.len(), 2);
    /// assert!(machine.next_state(&start, &joint).is_ok()); // legal
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn random_joint_move(&mut self, state: &State, rng: &mut Stream) -> Result<Option<Vec<Move>>, Error> {
        let none = vec![None; self.game().roles().len()];
        self.random_joint_move_with(state, &none, rng)
    }

    /// A joint move with the moves of `fixed` (one entry per role, in role
    /// order) where it has one, and a uniformly random legal move for each
    /// other role (drawn in role order; fixed roles draw nothing); `None`
    /// when one of those has no legal move. A fixed move of another game,
    /// of another role, or illegal in `state` is refused
    /// ([`Error::ForeignMove`], [`MachineError::WrongRole`],
    /// [`MachineError::IllegalMove`]), as is a `fixed` of the wrong length.
    ///
    /// ```
    /// use ggpnet::{Config, Game, Stream};
    /// let game = Game::load(ggpnet::DEFAULT_GAME, &Config::default())?; // connect four
    /// let mut machine = game.machine();
    /// let start = game.initial_state();
    /// let mine = game.parse_move(0, "(drop 4)")?;
    /// let joint = machine
    ///     .random_joint_move_with(&start, &[Some(mine.clone()), None], &mut Stream::new(1, 0))?
    ///     .unwrap();
    /// assert_eq!(joint[0], mine);
    /// assert_eq!(game.move_to_kif(&joint[1])?, "wait");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn random_joint_move_with(
        &mut self,
        state: &State,
        fixed: &[Option<Move>],
        rng: &mut Stream,
    ) -> Result<Option<Vec<Move>>, Error> {
        self.check_fixed(state, fixed)?;
        let mut joint = Vec::with_capacity(fixed.len());
        for (role, given) in fixed.iter().enumerate() {
            let m = match given {
                Some(m) => m.clone(),
                None => match self.random_move(state, role, rng)? {
                    Some(m) => m,
                    None => return Ok(None),
                },
            };
            joint.push(m);
        }
        Ok(Some(joint))
    }

    /// Refuses `fixed` of the wrong length, or with a move of another game
    /// or role, or illegal in `state`.
    fn check_fixed(&mut self, state: &State, fixed: &[Option<Move>]) -> Result<(), Error> {
        self.check_joint_length(fixed.len())?;
        let mut legal = Vec::new();
        for (role, m) in fixed.iter().enumerate() {
            let Some(m) = m else { continue };
            self.check_move_of(role, m)?;
            self.legal_moves_into(state, role, &mut legal)?;
            if !legal.contains(m) {
                return Err(Error::Refused(MachineError::IllegalMove {
                    role: self.game().roles()[role].clone(),
                    text: self.game().move_to_kif(m)?,
                }));
            }
        }
        Ok(())
    }

    /// Every joint move in `state`: each combination of the roles' legal
    /// moves, in the order of the roles' [`Machine::legal_moves`] with the
    /// first role's move changing slowest (empty when some role has no legal
    /// move). Terminal states are not special: ask [`Machine::is_terminal`]
    /// first. Refused with [`Error::TooManyJointMoves`] past
    /// [`MAX_JOINT_MOVES`].
    ///
    /// ```
    /// use ggpnet::{Config, Game};
    /// let game = Game::load(ggpnet::DEFAULT_GAME, &Config::default())?; // connect four
    /// let mut machine = game.machine();
    /// let joints = machine.legal_joint_moves(&game.initial_state())?;
    /// assert_eq!(joints.len(), 7); // seven columns for red, times yellow's wait
    /// assert_eq!(game.move_to_kif(&joints[0][0])?, "(drop 1)");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn legal_joint_moves(&mut self, state: &State) -> Result<Vec<Vec<Move>>, Error> {
        let legal = self.every_legal_move(state)?;
        let mut joints = Vec::with_capacity(joint_count(&legal)?);
        for_each_joint(&legal, |joint| joints.push(joint.to_vec()));
        Ok(joints)
    }

    /// Each of [`Machine::legal_joint_moves`] with the state it leads to, in
    /// the same order and with the same bound. On the propnet the state part
    /// of `state` is evaluated once, and each child costs the move part and
    /// the packing of its state (no check of moves known to be legal).
    ///
    /// ```
    /// use ggpnet::{Config, Game};
    /// let game = Game::load(ggpnet::DEFAULT_GAME, &Config::default())?; // connect four
    /// let mut machine = game.machine();
    /// let successors = machine.successors(&game.initial_state())?;
    /// assert_eq!(successors.len(), 7);
    /// for (joint, next) in &successors {
    ///     assert_eq!(machine.next_state(&game.initial_state(), joint)?, *next);
    /// }
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn successors(&mut self, state: &State) -> Result<Vec<(Vec<Move>, State)>, Error> {
        self.successors_with(state, Expansion::Auto)
    }

    /// [`Machine::successors`], the children made as `expansion` says: the
    /// same children in the same order every way, only the time differs.
    ///
    /// ```
    /// use ggpnet::{Config, Expansion, Game};
    /// let game = Game::load(ggpnet::DEFAULT_GAME, &Config::default())?; // connect four
    /// let mut machine = game.machine();
    /// let start = game.initial_state();
    /// let on_lanes = machine.successors_with(&start, Expansion::Lanes)?;
    /// assert_eq!(on_lanes, machine.successors_with(&start, Expansion::Scalar)?);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn successors_with(
        &mut self,
        state: &State,
        expansion: Expansion,
    ) -> Result<Vec<(Vec<Move>, State)>, Error> {
        let legal = self.every_legal_move(state)?;
        let count = joint_count(&legal)?;
        let on_lanes = match expansion {
            Expansion::Auto => self.lanes_pay(state, &legal, count)?,
            Expansion::Scalar => false,
            Expansion::Lanes => true,
        };
        let mut successors = Vec::with_capacity(count);
        self.children_into(state, &legal, on_lanes, &mut successors)?;
        Ok(successors)
    }

    /// Per role, its legal moves in `state`.
    fn every_legal_move(&mut self, state: &State) -> Result<Vec<Vec<Move>>, Error> {
        (0..self.game().roles().len())
            .map(|role| self.legal_moves(state, role))
            .collect()
    }
}

/// The number of joint moves of the roles' `legal` moves (the product of
/// their numbers), refused past [`MAX_JOINT_MOVES`].
fn joint_count(legal: &[Vec<Move>]) -> Result<usize, Error> {
    let count = legal
        .iter()
        .fold(1u128, |n, moves| n.saturating_mul(moves.len() as u128));
    if count > MAX_JOINT_MOVES as u128 {
        return Err(Error::TooManyJointMoves { count });
    }
    Ok(count as usize)
}
