//! The ground program: every rule instance that can ever fire, over interned
//! ground sentences. Static relations are already evaluated and gone.

use crate::terms::{TermId, TermStore};
use ggpnet_kif::SymbolTable;

/// One literal of a ground rule: a ground sentence that must hold (or not hold).
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Debug)]
pub struct GroundLiteral {
    /// The sentence, such as `(true (cell 1 1 b))`.
    pub atom: TermId,
    /// False for a negated literal.
    pub positive: bool,
}

/// A rule instance: `head` holds when every literal of `body` does.
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Debug)]
pub struct GroundRule {
    /// The derived sentence.
    pub head: TermId,
    /// The conditions; empty when the head always holds.
    pub body: Box<[GroundLiteral]>,
}

/// The result of grounding: what the circuit builder needs.
#[derive(Clone, Debug)]
pub struct GroundProgram {
    /// Every symbol of the game.
    pub symbols: SymbolTable,
    /// Every ground term of the game.
    pub terms: TermStore,
    /// The roles in the order of the `role` facts.
    pub roles: Vec<TermId>,
    /// The facts `f` of `(init f)`: the initial state.
    pub initial_state: Vec<TermId>,
    /// Every dynamic sentence that may hold in some state (including `true` and `does` sentences).
    pub atoms: Vec<TermId>,
    /// Rule instances over dynamic sentences.
    pub rules: Vec<GroundRule>,
    /// Things worth telling the user that do not make the game invalid.
    pub warnings: Vec<String>,
}

impl GroundProgram {
    /// The canonical KIF text of a ground term.
    pub fn kif(&self, id: TermId) -> String {
        self.terms.to_kif(id, &self.symbols)
    }
}
