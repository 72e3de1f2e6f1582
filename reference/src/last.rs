//! A one-entry cache: the outputs of the state queried last, so that a
//! state's legal moves, goals and terminal flag are computed together, once.
//! Clones start empty (one per thread). Public for the interpreters built on
//! this one (rtGDL's keeps its own states' outputs in one).

use std::sync::{Arc, Mutex};

/// The outputs `O` of the state `S` queried last.
#[derive(Debug)]
pub struct LastQuery<S, O> {
    last: Mutex<Option<(S, Arc<O>)>>,
}

impl<S: PartialEq + Clone, O> LastQuery<S, O> {
    /// An empty cache.
    pub fn new() -> LastQuery<S, O> {
        LastQuery {
            last: Mutex::new(None),
        }
    }

    /// The outputs of `state`: the cached ones if it was queried last, else
    /// `compute(state)`, which then become the cached ones (a failure is
    /// returned and not cached).
    pub fn get<E>(&self, state: &S, compute: impl FnOnce(&S) -> Result<O, E>) -> Result<Arc<O>, E> {
        if let Ok(last) = self.last.lock() {
            if let Some((cached, outputs)) = last.as_ref() {
                if cached == state {
                    return Ok(Arc::clone(outputs));
                }
            }
        }
        let outputs = Arc::new(compute(state)?);
        if let Ok(mut last) = self.last.lock() {
            *last = Some((state.clone(), Arc::clone(&outputs)));
        }
        Ok(outputs)
    }
}

impl<S: PartialEq + Clone, O> Default for LastQuery<S, O> {
    /// An empty cache.
    fn default() -> LastQuery<S, O> {
        LastQuery::new()
    }
}

impl<S, O> Clone for LastQuery<S, O> {
    /// An empty cache: clones do not share what they queried.
    fn clone(&self) -> LastQuery<S, O> {
        LastQuery {
            last: Mutex::new(None),
        }
    }
}
