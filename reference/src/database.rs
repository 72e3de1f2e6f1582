//! Where a join finds the facts of each relation.
//!
//! While a [`crate::Reference`] is built, all relations live in one [`Database`].
//! Afterwards it is frozen: static relations keep their facts, dynamic ones stay
//! empty templates carrying their index layout. Evaluating a state uses a
//! [`StateDb`]: static relations are read from the frozen database, dynamic ones
//! from fresh copies of the templates that only this state fills.

use crate::program::PredId;
use crate::relation::Relation;

/// Access to the relations during evaluation.
pub(crate) trait Db {
    /// The facts of `pred`.
    fn relation(&self, pred: PredId) -> &Relation;
    /// The facts of `pred`, to add to; only relations being evaluated are written.
    fn relation_mut(&mut self, pred: PredId) -> &mut Relation;
}

/// One relation per predicate.
#[derive(Clone, Debug, Default)]
pub(crate) struct Database {
    /// Indexed by [`PredId`].
    pub(crate) relations: Vec<Relation>,
}

impl Db for Database {
    fn relation(&self, pred: PredId) -> &Relation {
        &self.relations[pred.index()]
    }

    fn relation_mut(&mut self, pred: PredId) -> &mut Relation {
        &mut self.relations[pred.index()]
    }
}

/// The relations of one state: static ones shared, dynamic ones owned.
#[derive(Debug)]
pub(crate) struct StateDb<'r> {
    frozen: &'r Database,
    dynamic: &'r [bool],
    own: Vec<Relation>,
}

impl<'r> StateDb<'r> {
    /// Empty dynamic relations over `frozen`; `dynamic[p]` tells which are dynamic.
    pub(crate) fn new(frozen: &'r Database, dynamic: &'r [bool]) -> Self {
        let own = frozen
            .relations
            .iter()
            .zip(dynamic)
            .map(|(template, &dynamic)| {
                if dynamic {
                    template.empty_like()
                } else {
                    Relation::default()
                }
            })
            .collect();
        StateDb { frozen, dynamic, own }
    }
}

impl Db for StateDb<'_> {
    fn relation(&self, pred: PredId) -> &Relation {
        if self.dynamic[pred.index()] {
            &self.own[pred.index()]
        } else {
            &self.frozen.relations[pred.index()]
        }
    }

    fn relation_mut(&mut self, pred: PredId) -> &mut Relation {
        &mut self.own[pred.index()]
    }
}
