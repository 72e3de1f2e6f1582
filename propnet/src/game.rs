//! The compiled game every thread shares: the compiled net, the names of its
//! roles, facts and moves, its goals, and the evaluators made for it (kept here,
//! not in the net: evaluators sit above the net, and the chooser that makes them
//! above this).
//!
//! A GDL-II game's percepts (`sees`) are outputs of the circuit, but no
//! evaluator computes them: playouts need none. The evaluators get the net of the
//! circuit without them (their gates removed as dead), and the percepts are
//! read from a second net of the whole circuit by its plain evaluation
//! ([`CompiledNet::evaluate`]), once per query. Bases and inputs keep their
//! numbers in both nets.

use crate::evaluator::{Differential, Sweep};
use crate::ir::{Circuit, VerifyError};
use crate::layout::{CompiledNet, Layering};
use bitvec::field::BitField;
use bitvec::vec::BitVec;
use rustc_hash::FxHashMap;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::sync::{Arc, OnceLock};

/// A refused request of the state machine, by kind, so that a caller can
/// tell an illegal move from a malformed one; `Display` gives the message.
#[derive(Clone, PartialEq, Eq, Debug)]
#[non_exhaustive]
pub enum MachineError {
    /// Text that is not one KIF term.
    Unreadable {
        /// The text given.
        text: String,
        /// Why it cannot be read.
        reason: String,
    },
    /// A role name the game does not have.
    UnknownRole {
        /// The name given.
        name: String,
        /// The game's roles.
        roles: Vec<String>,
    },
    /// A move that is no move of the role in this game.
    UnknownMove {
        /// The role.
        role: String,
        /// The move, canonical.
        text: String,
    },
    /// A fact that can never hold in this game.
    UnknownFact {
        /// The fact as given.
        fact: String,
    },
    /// A joint move without exactly one move per role.
    WrongJointLength {
        /// The number of roles.
        expected: usize,
        /// The number of moves given.
        found: usize,
    },
    /// A move number past the game's moves.
    NoSuchMove {
        /// The number given.
        index: u32,
    },
    /// A move of one role played as another's.
    WrongRole {
        /// The move.
        text: String,
        /// The role whose move it is.
        owner: String,
        /// The role it was played as.
        role: String,
    },
    /// A move that is not legal for its role in the state.
    IllegalMove {
        /// The role.
        role: String,
        /// The move.
        text: String,
    },
}

impl fmt::Display for MachineError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("error: ")?;
        match self {
            MachineError::Unreadable { text, reason } => write!(f, "cannot read '{text}': {reason}"),
            MachineError::UnknownRole { name, roles } => {
                write!(f, "unknown role '{name}' (roles: {})", roles.join(", "))
            }
            MachineError::UnknownMove { role, text } => write!(f, "unknown move {text} for role {role}"),
            MachineError::UnknownFact { fact } => write!(f, "fact {fact} can never hold in this game"),
            MachineError::WrongJointLength { expected, found } => {
                write!(
                    f,
                    "a joint move needs one move per role ({expected}), got {found}"
                )
            }
            MachineError::NoSuchMove { index } => write!(f, "move #{index} does not exist"),
            MachineError::WrongRole { text, owner, role } => {
                write!(f, "move {text} belongs to role {owner}, not to role {role}")
            }
            MachineError::IllegalMove { role, text } => {
                write!(f, "illegal move {text} for role {role} in this state")
            }
        }
    }
}

impl std::error::Error for MachineError {}

/// A game state: the set of true base propositions.
#[derive(PartialEq, Eq, Debug)]
pub struct State(pub BitVec<u64>);

/// Hashes the length and the words of the bits (the bits past the length
/// masked off, so that equal states hash equally), not bit by bit as
/// `BitVec` does: several times faster on states of hundreds of bases.
impl Hash for State {
    fn hash<H: Hasher>(&self, h: &mut H) {
        let len = self.0.len();
        len.hash(h);
        let tail = len % 64;
        if self.0.as_bitptr().bit().into_inner() != 0 {
            // Bits not starting at a word's first bit (never made here): by chunks.
            self.0
                .chunks(64)
                .for_each(|chunk| h.write_u64(chunk.load_le::<u64>()));
            return;
        }
        let words = self.0.as_raw_slice();
        let full = len / 64;
        words[..full].iter().for_each(|&w| h.write_u64(w));
        if tail != 0 {
            h.write_u64(words[full] & ((1u64 << tail) - 1));
        }
    }
}

impl Clone for State {
    fn clone(&self) -> State {
        State(self.0.clone())
    }

    /// Copies the words in place when the lengths match (no allocation).
    fn clone_from(&mut self, source: &State) {
        if self.0.len() == source.0.len() {
            self.0.as_raw_mut_slice().copy_from_slice(source.0.as_raw_slice());
        } else {
            self.0.clone_from(&source.0);
        }
    }
}

/// A move of one role: the index of its input proposition.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Debug)]
pub struct Move(pub u32);

/// What every thread shares: the compiled circuit and the names of things.
/// Read-only after [`Game::new`]: its fields are read through accessors of the
/// same names, so the net, the names and the indexes always agree.
#[derive(Debug)]
pub struct Game {
    /// The compiled circuit.
    net: Arc<CompiledNet>,
    /// Role names, in order.
    roles: Vec<String>,
    /// Canonical text of each base's fact.
    facts: Vec<String>,
    /// Canonical text of each input's move.
    moves: Vec<String>,
    /// Role of each input.
    move_roles: Vec<usize>,
    /// Inputs of each role.
    role_moves: Vec<Vec<Move>>,
    /// Goal value of each goal output, and its role.
    goals: Vec<(usize, i64)>,
    /// Each percept output's role and canonical text.
    percepts: Vec<(usize, String)>,
    /// The net of the whole circuit, percepts included, when the game has any.
    percept_net: Option<Arc<CompiledNet>>,
    /// The initial state.
    initial: State,
    fact_index: FxHashMap<String, usize>,
    move_index: FxHashMap<(usize, String), Move>,
    /// The scalar evaluators, interpreted (0) and native (1), each made (by the
    /// chooser) when first asked for and shared by every machine and thread.
    sweep: [OnceLock<Arc<Sweep>>; 2],
    differential: [OnceLock<Arc<Differential>>; 2],
}

impl Game {
    /// The compiled circuit.
    #[inline]
    pub fn net(&self) -> &Arc<CompiledNet> {
        &self.net
    }

    /// Role names, in order.
    #[inline]
    pub fn roles(&self) -> &[String] {
        &self.roles
    }

    /// Canonical text of each base's fact.
    #[inline]
    pub fn facts(&self) -> &[String] {
        &self.facts
    }

    /// Canonical text of each input's move.
    #[inline]
    pub fn moves(&self) -> &[String] {
        &self.moves
    }

    /// Role of each input.
    #[inline]
    pub fn move_roles(&self) -> &[usize] {
        &self.move_roles
    }

    /// Inputs of each role.
    #[inline]
    pub fn role_moves(&self) -> &[Vec<Move>] {
        &self.role_moves
    }

    /// Goal value of each goal output, and its role.
    #[inline]
    pub fn goals(&self) -> &[(usize, i64)] {
        &self.goals
    }

    /// The initial state.
    #[inline]
    pub fn initial(&self) -> &State {
        &self.initial
    }

    /// Each percept output's role and canonical text (GDL-II), in the order
    /// of the circuit's percepts; empty for a game without `sees`.
    #[inline]
    pub fn percepts(&self) -> &[(usize, String)] {
        &self.percepts
    }

    /// Per role, the percepts seen after `joint` (move indexes, assumed legal)
    /// in `state`: sorted, without duplicates.
    pub(crate) fn percepts_after(&self, state: &State, joint: &[u32]) -> Vec<Vec<String>> {
        let mut seen = vec![Vec::new(); self.roles.len()];
        if let Some(net) = &self.percept_net {
            let values = net.evaluate(state.0.as_raw_slice(), joint);
            for (&slot, (role, text)) in net.percept_slots().iter().zip(&self.percepts) {
                if values[slot as usize] {
                    seen[*role].push(text.clone());
                }
            }
        }
        for percepts in &mut seen {
            percepts.sort_unstable();
            percepts.dedup();
        }
        seen
    }

    /// The canonical text of a move.
    pub fn move_to_kif(&self, m: Move) -> &str {
        &self.moves[m.0 as usize]
    }

    /// The move of `role` written as `text` (any spacing; canonical form is compared).
    pub fn parse_move(&self, role: usize, text: &str) -> Result<Move, MachineError> {
        let canonical = canonical(text)?;
        match self.move_index.get(&(role, canonical.clone())) {
            Some(&m) => Ok(m),
            None => Err(MachineError::UnknownMove {
                role: self.roles.get(role).map_or("?", |r| r.as_str()).to_owned(),
                text: canonical,
            }),
        }
    }

    /// The true facts of a state, canonical and sorted by byte order.
    pub fn state_to_kif(&self, state: &State) -> Vec<String> {
        let mut facts: Vec<String> = state.0.iter_ones().map(|b| self.facts[b].clone()).collect();
        facts.sort_unstable();
        facts
    }

    /// The state in which exactly `facts` hold. Refuses facts that can never hold.
    pub fn state_from_kif(&self, facts: &[String]) -> Result<State, MachineError> {
        let mut bits: BitVec<u64> = BitVec::repeat(false, self.facts.len());
        for fact in facts {
            match self.fact_index.get(&canonical(fact)?) {
                Some(&b) => bits.set(b, true),
                None => return Err(MachineError::UnknownFact { fact: fact.clone() }),
            }
        }
        Ok(State(bits))
    }

    /// Where the sweep evaluator in native code (if `native`) or not is kept.
    pub(crate) fn sweep_evaluator(&self, native: bool) -> &OnceLock<Arc<Sweep>> {
        &self.sweep[usize::from(native)]
    }

    /// Where the differential evaluator in native code (if `native`) or not is kept.
    pub(crate) fn differential_evaluator(&self, native: bool) -> &OnceLock<Arc<Differential>> {
        &self.differential[usize::from(native)]
    }

    /// Compiles a layered circuit, refusing one that breaks an invariant of
    /// the evaluators (see [`CompiledNet::new`]).
    pub fn new(circuit: &Circuit, layering: &Layering) -> Result<Game, VerifyError> {
        let (net, percept_net) = if circuit.percepts.is_empty() {
            (Arc::new(CompiledNet::new(circuit, layering)?), None)
        } else {
            let whole = Arc::new(CompiledNet::new(circuit, layering)?);
            let mut playing = circuit.clone();
            playing.percepts.clear();
            crate::opt::dead::remove_dead(&mut playing);
            // A part of a layered circuit has no cycle through negation.
            let layering = crate::layout::layer(&playing).map_err(|e| VerifyError {
                place: "the circuit without its percepts".into(),
                reason: e.to_string(),
            })?;
            (Arc::new(CompiledNet::new(&playing, &layering)?), Some(whole))
        };
        let v = &circuit.vocabulary;
        let roles: Vec<String> = circuit.roles.iter().map(|&r| v.kif(r)).collect();
        let facts: Vec<String> = circuit.bases.iter().map(|b| v.kif(b.fact)).collect();
        let moves: Vec<String> = circuit.inputs.iter().map(|i| v.kif(i.action)).collect();
        let move_roles: Vec<usize> = circuit.inputs.iter().map(|i| i.role).collect();
        let mut role_moves = vec![Vec::new(); roles.len()];
        for (m, &r) in move_roles.iter().enumerate() {
            role_moves[r].push(Move(m as u32));
        }
        let mut initial = BitVec::from_vec(net.initial().to_vec());
        initial.truncate(circuit.bases.len());
        let initial = State(initial);
        Ok(Game {
            net,
            fact_index: facts.iter().enumerate().map(|(i, f)| (f.clone(), i)).collect(),
            move_index: moves
                .iter()
                .enumerate()
                .map(|(m, s)| ((move_roles[m], s.clone()), Move(m as u32)))
                .collect(),
            roles,
            facts,
            moves,
            move_roles,
            role_moves,
            goals: circuit.goals.iter().map(|g| (g.role, g.value)).collect(),
            percepts: circuit
                .percepts
                .iter()
                .map(|p| (p.role, v.kif(p.percept)))
                .collect(),
            percept_net,
            initial,
            sweep: Default::default(),
            differential: Default::default(),
        })
    }
}

/// Re-prints a KIF term canonically.
fn canonical(text: &str) -> Result<String, MachineError> {
    let mut symbols = ggpnet_kif::SymbolTable::new();
    match ggpnet_kif::parse_term(text, &mut symbols) {
        Ok(term) => Ok(ggpnet_kif::term_to_string(&term, &symbols)),
        Err(e) => Err(MachineError::Unreadable {
            text: text.to_owned(),
            reason: e.to_string(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::hash::BuildHasher;

    fn hash(state: &State) -> u64 {
        std::collections::hash_map::RandomState::new().hash_one(state)
    }

    /// The hash of `state` under one fixed hasher.
    fn fixed_hash(state: &State) -> u64 {
        rustc_hash::FxBuildHasher.hash_one(state)
    }

    #[test]
    fn equal_states_hash_equally_whatever_lies_past_their_length() {
        for len in [0, 1, 63, 64, 65, 130] {
            let mut a: BitVec<u64> = BitVec::repeat(false, len);
            for i in (0..len).step_by(3) {
                a.set(i, true);
            }
            let mut b = a.clone();
            // Bits past the length, left behind by a longer vector.
            b.resize(len + 7, true);
            b.truncate(len);
            if len % 64 != 0 {
                assert_ne!(a.as_raw_slice(), b.as_raw_slice(), "len {len}: dead bits differ");
            }
            let (a, b) = (State(a), State(b));
            assert_eq!(a, b);
            assert_eq!(fixed_hash(&a), fixed_hash(&b), "len {len}");
        }
    }

    #[test]
    fn states_that_differ_in_one_bit_or_in_length_hash_apart() {
        let a = State(BitVec::repeat(false, 100));
        let mut b = a.clone();
        b.0.set(99, true);
        let c = State(BitVec::repeat(false, 101));
        assert_ne!(fixed_hash(&a), fixed_hash(&b));
        assert_ne!(fixed_hash(&a), fixed_hash(&c));
        assert_ne!(hash(&a), hash(&b));
    }

    #[test]
    fn bits_that_start_inside_a_word_hash_as_their_aligned_copy() {
        let mut long: BitVec<u64> = BitVec::repeat(false, 200);
        for i in (0..200).step_by(7) {
            long.set(i, true);
        }
        let shifted = State(BitVec::from_bitslice(&long[5..150]));
        assert_ne!(
            shifted.0.as_bitptr().bit().into_inner(),
            0,
            "the copy keeps the offset"
        );
        let aligned = State(long[5..150].iter().by_vals().collect());
        assert_eq!(shifted, aligned);
        assert_eq!(fixed_hash(&shifted), fixed_hash(&aligned));
    }
}
