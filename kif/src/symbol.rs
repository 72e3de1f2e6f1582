//! Interned symbols: every name in a game description becomes a [`SymbolId`].
//!
//! The GDL keywords are interned first, at fixed ids, so the grounder can match
//! them with constants such as [`SymbolId::TRUE`] instead of string compares.

use std::collections::HashMap;
use std::fmt;

/// A name interned in a [`SymbolTable`]: a relation, a function, a constant or a variable.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Debug)]
pub struct SymbolId(u32);

/// The keywords of GDL (and GDL-II), in the order of their fixed ids.
///
/// They are matched case-insensitively and always printed in lower case.
pub const KEYWORDS: [&str; 15] = [
    "role", "init", "true", "does", "next", "legal", "goal", "terminal", "distinct", "not", "or", "base",
    "input", "random", "sees",
];

impl SymbolId {
    /// `role`
    pub const ROLE: SymbolId = SymbolId(0);
    /// `init`
    pub const INIT: SymbolId = SymbolId(1);
    /// `true`
    pub const TRUE: SymbolId = SymbolId(2);
    /// `does`
    pub const DOES: SymbolId = SymbolId(3);
    /// `next`
    pub const NEXT: SymbolId = SymbolId(4);
    /// `legal`
    pub const LEGAL: SymbolId = SymbolId(5);
    /// `goal`
    pub const GOAL: SymbolId = SymbolId(6);
    /// `terminal`
    pub const TERMINAL: SymbolId = SymbolId(7);
    /// `distinct`
    pub const DISTINCT: SymbolId = SymbolId(8);
    /// `not`
    pub const NOT: SymbolId = SymbolId(9);
    /// `or`
    pub const OR: SymbolId = SymbolId(10);
    /// `base`
    pub const BASE: SymbolId = SymbolId(11);
    /// `input`
    pub const INPUT: SymbolId = SymbolId(12);
    /// `random` (GDL-II)
    pub const RANDOM: SymbolId = SymbolId(13);
    /// `sees` (GDL-II)
    pub const SEES: SymbolId = SymbolId(14);

    /// The id as an index into dense tables.
    pub fn index(self) -> usize {
        self.0 as usize
    }

    /// True for the GDL keywords.
    pub fn is_keyword(self) -> bool {
        self.index() < KEYWORDS.len()
    }
}

/// Owns the text of every interned symbol and hands out ids.
#[derive(Clone, Debug)]
pub struct SymbolTable {
    names: Vec<Box<str>>,
    ids: HashMap<Box<str>, SymbolId>,
}

impl Default for SymbolTable {
    fn default() -> Self {
        Self::new()
    }
}

impl SymbolTable {
    /// A table holding the keywords at their fixed ids.
    pub fn new() -> Self {
        let mut table = SymbolTable {
            names: Vec::new(),
            ids: HashMap::new(),
        };
        for keyword in KEYWORDS {
            table.intern(keyword);
        }
        table
    }

    /// The id of `name`, interning it if new. Keywords are recognized in any case.
    ///
    /// ```
    /// use ggpnet_kif::{SymbolId, SymbolTable};
    /// let mut symbols = SymbolTable::new();
    /// assert_eq!(symbols.intern("TRUE"), SymbolId::TRUE);
    /// let cell = symbols.intern("cellHolds");
    /// assert_eq!(symbols.name(cell), "cellHolds");
    /// ```
    pub fn intern(&mut self, name: &str) -> SymbolId {
        if let Some(&id) = self.ids.get(name) {
            return id;
        }
        if let Some(position) = KEYWORDS.iter().position(|k| k.eq_ignore_ascii_case(name)) {
            if self.names.len() > position {
                return SymbolId(position as u32);
            }
        }
        let id = SymbolId(u32::try_from(self.names.len()).expect("fewer than 2^32 symbols"));
        self.names.push(name.into());
        self.ids.insert(name.into(), id);
        id
    }

    /// A symbol printed as `base` is, but distinct from it: `base` used with
    /// `arity` arguments where it is also used with another number (GDL-II
    /// games overload names by arity). The same for the same pair, every time;
    /// no parsed name ever gives it.
    pub fn overload(&mut self, base: SymbolId, arity: usize) -> SymbolId {
        // A space never occurs in a parsed name, so the key is no name's.
        let key = format!("{} /{arity}", self.names[base.index()]);
        if let Some(&id) = self.ids.get(key.as_str()) {
            return id;
        }
        let id = SymbolId(u32::try_from(self.names.len()).expect("fewer than 2^32 symbols"));
        let name = self.names[base.index()].clone();
        self.names.push(name);
        self.ids.insert(key.into(), id);
        id
    }

    /// The id of `name` if it was interned (keywords in any case).
    pub fn get(&self, name: &str) -> Option<SymbolId> {
        self.ids.get(name).copied().or_else(|| {
            KEYWORDS
                .iter()
                .position(|k| k.eq_ignore_ascii_case(name))
                .map(|p| SymbolId(p as u32))
        })
    }

    /// The text of a symbol, as written in the game (keywords in lower case).
    pub fn name(&self, id: SymbolId) -> &str {
        &self.names[id.index()]
    }

    /// Number of interned symbols.
    pub fn len(&self) -> usize {
        self.names.len()
    }

    /// Never true: the keywords are always present.
    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }
}

impl fmt::Display for SymbolId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "#{}", self.0)
    }
}
