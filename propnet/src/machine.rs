//! The state machine: the contract every user codes against, over a
//! [`Game`]'s scalar evaluator. States are packed bit sets of base
//! propositions; moves are indexes of move propositions; both convert to and
//! from canonical KIF strings.

use crate::driver::{best_goals, choose, random_move, Playout, PlayoutTotals};
use crate::evaluator::{EvaluatorKind, Scalar};
use crate::game::{Game, MachineError, Move, State};
use crate::random::Stream;
use bitvec::vec::BitVec;
use std::sync::Arc;

/// A state machine over a compiled game, with its own evaluation scratch space.
/// Clone one per thread: clones share the compiled game.
#[derive(Clone, Debug)]
pub struct StateMachine {
    game: Arc<Game>,
    eval: Scalar,
    /// The state the evaluator holds, if any.
    loaded: Option<State>,
    joint: Vec<u32>,
    moves: Vec<u32>,
    /// Whether the evaluator was asked for in native code.
    native: bool,
}

impl StateMachine {
    /// A machine for `game` with the differential evaluator.
    pub fn new(game: Arc<Game>) -> StateMachine {
        StateMachine::with_evaluator(game, EvaluatorKind::Differential)
    }

    /// A machine for `game` with a scalar evaluator of `kind` in native code
    /// where the platform allows (`Lanes` has no scalar form and gives the
    /// sweep evaluator).
    pub fn with_evaluator(game: Arc<Game>, kind: EvaluatorKind) -> StateMachine {
        StateMachine::with_evaluator_native(game, kind, true)
    }

    /// A machine for `game` with a scalar evaluator of `kind`, in native code
    /// where the platform allows if `native`, else interpreted (`Lanes` gives
    /// the sweep evaluator).
    pub fn with_evaluator_native(game: Arc<Game>, kind: EvaluatorKind, native: bool) -> StateMachine {
        let eval = choose::scalar(&game, kind, native);
        StateMachine {
            game,
            eval,
            loaded: None,
            joint: Vec::new(),
            moves: Vec::new(),
            native,
        }
    }

    /// Whether its evaluator was made in native code (where the platform
    /// allows) rather than interpreted.
    pub fn native(&self) -> bool {
        self.native
    }

    /// The kind of evaluator in use.
    pub fn evaluator(&self) -> EvaluatorKind {
        self.eval.kind()
    }

    /// The shared game.
    pub fn game(&self) -> &Arc<Game> {
        &self.game
    }

    /// Role names in the order of the `role` facts.
    pub fn roles(&self) -> &[String] {
        self.game.roles()
    }

    /// The index of a role by name.
    pub fn role_index(&self, name: &str) -> Result<usize, MachineError> {
        match self.game.roles().iter().position(|r| r == name) {
            Some(i) => Ok(i),
            None => Err(MachineError::UnknownRole {
                name: name.to_owned(),
                roles: self.game.roles().to_vec(),
            }),
        }
    }

    /// The initial state.
    pub fn initial_state(&self) -> State {
        self.game.initial().clone()
    }

    fn load(&mut self, state: &State) {
        match &mut self.loaded {
            // Word by word, inline: a call to `memcmp` costs more for a few words.
            Some(loaded)
                if loaded.0.len() == state.0.len()
                    && loaded
                        .0
                        .as_raw_slice()
                        .iter()
                        .zip(state.0.as_raw_slice())
                        .all(|(a, b)| a == b) => {}
            Some(loaded) => {
                loaded.clone_from(state);
                self.eval.load_state(state.0.as_raw_slice());
            }
            None => {
                self.eval.load_state(state.0.as_raw_slice());
                self.loaded = Some(state.clone());
            }
        }
    }

    /// The legal moves of `role` in `state`, in input order.
    pub fn legal_moves(&mut self, state: &State, role: usize) -> Vec<Move> {
        self.load(state);
        let mut legal = Vec::new();
        self.legal_moves_into(state, role, &mut legal);
        legal
    }

    /// Like [`StateMachine::legal_moves`], into a reused buffer.
    pub fn legal_moves_into(&mut self, state: &State, role: usize, out: &mut Vec<Move>) {
        self.load(state);
        self.eval.legal_moves(role, &mut self.moves);
        out.clear();
        out.extend(self.moves.iter().map(|&m| Move(m)));
    }

    /// A uniformly random legal move of `role` in `state`: [`Stream::draw`] over its legal
    /// moves in input order, as if taken from [`StateMachine::legal_moves`];
    /// `None` when it has none.
    pub fn random_legal_move(&mut self, state: &State, role: usize, rng: &mut Stream) -> Option<Move> {
        self.load(state);
        random_move(self.game.net(), self.eval.legal_words(role), role, rng).map(Move)
    }

    /// Whether `state` is terminal.
    pub fn is_terminal(&mut self, state: &State) -> bool {
        self.load(state);
        self.eval.value(self.game.net().terminal_slot())
    }

    /// Every goal value derivable for each role in `state`, ascending.
    pub fn goals(&mut self, state: &State) -> Vec<Vec<i64>> {
        self.load(state);
        self.eval.refresh_goals();
        let mut goals = vec![Vec::new(); self.game.roles().len()];
        for (g, &(role, value)) in self.game.goals().iter().enumerate() {
            if self.eval.value(self.game.net().goal_slots()[g]) {
                goals[role].push(value);
            }
        }
        goals
    }

    /// Per role, the highest goal value derivable in `state` (`None` if none is), into `out`.
    pub fn best_goals_into(&mut self, state: &State, out: &mut Vec<Option<i64>>) {
        self.load(state);
        match &mut self.eval {
            Scalar::Sweep(evaluator, cache) => best_goals(&self.game, &**evaluator, cache, out),
            Scalar::Differential(evaluator, cache) => best_goals(&self.game, &**evaluator, &mut **cache, out),
        }
    }

    /// The state after every role plays its move of `joint` (in role order).
    /// Refuses a joint move of the wrong length, a move of another role, or an
    /// illegal move, naming the role and the move.
    pub fn next_state(&mut self, state: &State, joint: &[Move]) -> Result<State, MachineError> {
        self.check_joint(state, joint)?;
        Ok(self.next_unchecked(joint))
    }

    /// Refuses a joint move of the wrong length, a move of another role, or
    /// an illegal move in `state`, naming the role and the move.
    fn check_joint(&mut self, state: &State, joint: &[Move]) -> Result<(), MachineError> {
        if joint.len() != self.game.roles().len() {
            return Err(MachineError::WrongJointLength {
                expected: self.game.roles().len(),
                found: joint.len(),
            });
        }
        self.load(state);
        for (role, m) in joint.iter().enumerate() {
            let Some(&owner) = self.game.move_roles().get(m.0 as usize) else {
                return Err(MachineError::NoSuchMove { index: m.0 });
            };
            if owner != role {
                return Err(MachineError::WrongRole {
                    text: self.game.moves()[m.0 as usize].clone(),
                    owner: self.game.roles()[owner].clone(),
                    role: self.game.roles()[role].clone(),
                });
            }
            if !self.eval.value(self.game.net().legal_slots()[m.0 as usize]) {
                return Err(MachineError::IllegalMove {
                    role: self.game.roles()[role].clone(),
                    text: self.game.moves()[m.0 as usize].clone(),
                });
            }
        }
        Ok(())
    }

    /// Per role (in role order), the percepts `p` of GDL-II for which `(sees
    /// role p)` holds in `state` with the joint move `joint`, as canonical KIF,
    /// sorted by byte order, without duplicates. Refuses a joint move as
    /// [`StateMachine::next_state`] does. Whatever the evaluator, percepts come
    /// from the plain evaluation of the whole circuit ([`Game`]'s module doc).
    pub fn percepts(&mut self, state: &State, joint: &[Move]) -> Result<Vec<Vec<String>>, MachineError> {
        self.check_joint(state, joint)?;
        let joint: Vec<u32> = joint.iter().map(|m| m.0).collect();
        Ok(self.game.percepts_after(state, &joint))
    }

    /// The next state for a joint move known to be legal in the state last
    /// queried (through `legal_moves`, `is_terminal` or `goals`).
    pub fn next_unchecked(&mut self, joint: &[Move]) -> State {
        let mut next = State(BitVec::repeat(false, self.game.facts().len()));
        self.next_into(joint, &mut next);
        next
    }

    /// Like [`StateMachine::next_unchecked`], into a reused state of this game.
    pub fn next_into(&mut self, joint: &[Move], next: &mut State) {
        self.joint.clear();
        self.joint.extend(joint.iter().map(|m| m.0));
        self.eval.load_moves(&self.joint);
        self.eval.next_state(next.0.as_raw_mut_slice());
    }

    /// The canonical text of a move (see [`Game::move_to_kif`]).
    pub fn move_to_kif(&self, m: Move) -> &str {
        self.game.move_to_kif(m)
    }

    /// The move of `role` written as `text` (see [`Game::parse_move`]).
    pub fn parse_move(&self, role: usize, text: &str) -> Result<Move, MachineError> {
        self.game.parse_move(role, text)
    }

    /// The true facts of a state (see [`Game::state_to_kif`]).
    pub fn state_to_kif(&self, state: &State) -> Vec<String> {
        self.game.state_to_kif(state)
    }

    /// The state in which exactly `facts` hold (see [`Game::state_from_kif`]).
    pub fn state_from_kif(&self, facts: &[String]) -> Result<State, MachineError> {
        self.game.state_from_kif(facts)
    }
}

/// The playout loop on a state machine's evaluator (the loop itself is the
/// driver's, [`Playout::run_on`]; these sit here, above it, because they
/// take the machine).
impl Playout {
    /// Buffers for playouts on `machine`'s game that are abandoned after
    /// `max_depth` moves (at least 1) without ending.
    pub fn new(machine: &StateMachine, max_depth: u64) -> Playout {
        Playout::for_game(&machine.game, max_depth)
    }

    /// [`Playout::run_on`] the machine's evaluator (compiled for each kind: no
    /// per-query dispatch); the machine forgets which state it holds.
    pub fn run(
        &mut self,
        machine: &mut StateMachine,
        rng: &mut Stream,
        totals: &mut PlayoutTotals,
        on_move: impl FnMut(&State, &[Move]),
    ) {
        machine.loaded = None;
        let game = &machine.game;
        match &mut machine.eval {
            Scalar::Sweep(evaluator, cache) => self.run_on(&**evaluator, cache, game, rng, totals, on_move),
            Scalar::Differential(evaluator, cache) => {
                self.run_on(&**evaluator, &mut **cache, game, rng, totals, on_move)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_machine_without_native_code_takes_the_interpreted_evaluator() {
        let loaded = crate::load(crate::evaluator::TURNS, &crate::LoadConfig::default()).unwrap();
        let game = &loaded.game;
        assert!(game.differential_evaluator(false).get().is_none());
        let mut machine =
            StateMachine::with_evaluator_native(Arc::clone(game), EvaluatorKind::Differential, false);
        assert!(!machine.native());
        assert!(
            game.differential_evaluator(false).get().is_some(),
            "the interpreted evaluator made"
        );
        let start = machine.initial_state();
        let mut native =
            StateMachine::with_evaluator_native(Arc::clone(game), EvaluatorKind::Differential, true);
        assert!(native.native() && game.differential_evaluator(true).get().is_some());
        for role in 0..game.roles().len() {
            assert_eq!(
                machine.legal_moves(&start, role),
                native.legal_moves(&start, role)
            );
        }
    }
}
