//! TEMPORARY: stands in for the GDL-II API of the gdl2 branch until it merges. Never on main.
use crate::{Error, Game, Machine, Move, State};
impl Game {
    /// Whether the game uses `random` or `sees`.
    pub fn is_gdl2(&self) -> bool {
        false
    }
}
impl Machine {
    /// Percepts per role.
    pub fn percepts(&mut self, _state: &State, _joint: &[Move]) -> Result<Vec<Vec<String>>, Error> {
        Err(Error::new("no percepts yet"))
    }
}
