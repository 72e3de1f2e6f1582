//! Tying a scalar evaluator's cache to the evaluator that made it.
//!
//! A cache's sizes and offsets are those of the plan of the evaluator that made
//! it, and the evaluators index it unchecked in their hot loops. So every
//! public entry point of [`ScalarEvaluator`] checks the cache's owner first,
//! and a cache handed to another evaluator (of another game, or another plan of
//! the same game) panics instead of being read out of bounds.
//!
//! A check per call is a compare and a branch, five or six times a transition,
//! plus the check of every state loaded: on connect four's differential
//! evaluator (a transition of about 2,000 instructions) they were 2.2% of a
//! playout's instructions (callgrind, 20,000 playouts). So the evaluators' work
//! sits behind [`Owned`], whose methods are `unsafe` and trust the owner, and
//! the playout loop runs on a [`Bound`]: an evaluator and its cache, checked
//! once when bound, the cache borrowed mutably for as long as the pair lives,
//! so that its owner cannot change. `Owned` is sealed: it is public only in
//! this private module, so no caller outside the crate can name it, call its
//! methods, or implement [`ScalarEvaluator`] without it.

use super::{check_state, Evaluator, ScalarEvaluator};
use std::sync::atomic::{AtomicU64, Ordering};

/// The identity of one evaluator, carried by every cache it makes.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct EvaluatorId(u64);

impl EvaluatorId {
    /// An identity no other evaluator of this process has.
    pub(crate) fn fresh() -> EvaluatorId {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        EvaluatorId(NEXT.fetch_add(1, Ordering::Relaxed))
    }
}

/// A scalar evaluator's work, for a cache it made: what [`ScalarEvaluator`]'s
/// methods run after checking the cache's owner (each method here is the one
/// of that name there, without the checks).
pub trait Owned: Evaluator {
    /// This evaluator's identity.
    fn id(&self) -> EvaluatorId;

    /// The identity of the evaluator that made `cache`.
    fn owner(cache: &Self::Cache) -> EvaluatorId;

    /// Panics unless `cache` was made by this evaluator.
    #[inline(always)]
    #[track_caller]
    fn check_owner(&self, cache: &Self::Cache) {
        assert!(
            self.id() == Self::owner(cache),
            "a cache used with an evaluator other than the one that made it"
        );
    }

    /// See [`ScalarEvaluator::load_state`]; `state` is not checked (any slice
    /// is memory-safe here; one of another length or with bits past the bases
    /// gives a wrong answer or a panic).
    ///
    /// # Safety
    /// `cache` was made by this evaluator.
    unsafe fn load_state_owned(&self, cache: &mut Self::Cache, state: &[u64]);

    /// See [`ScalarEvaluator::load_moves`].
    ///
    /// # Safety
    /// `cache` was made by this evaluator.
    unsafe fn load_moves_owned(&self, cache: &mut Self::Cache, moves: &[u32]);

    /// See [`ScalarEvaluator::value`].
    ///
    /// # Safety
    /// `cache` was made by this evaluator.
    unsafe fn value_owned(&self, cache: &Self::Cache, slot: u32) -> bool;

    /// See [`ScalarEvaluator::refresh_goals`].
    ///
    /// # Safety
    /// `cache` was made by this evaluator.
    unsafe fn refresh_goals_owned(&self, cache: &mut Self::Cache);

    /// See [`ScalarEvaluator::legal_words`].
    ///
    /// # Safety
    /// `cache` was made by this evaluator.
    unsafe fn legal_words_owned<'c>(&self, cache: &'c Self::Cache, role: usize) -> &'c [u64];

    /// See [`ScalarEvaluator::next_state`].
    ///
    /// # Safety
    /// `cache` was made by this evaluator.
    unsafe fn next_state_owned(&self, cache: &Self::Cache, out: &mut [u64]);
}

/// A scalar evaluator bound to a cache it made: the owner checked once, by
/// [`Bound::new`], for a loop that calls it many times.
pub(crate) struct Bound<'a, E: ScalarEvaluator + ?Sized> {
    evaluator: &'a E,
    /// Made by `evaluator` (checked by `new`), and borrowed mutably for `'a`.
    cache: &'a mut E::Cache,
}

impl<'a, E: ScalarEvaluator + ?Sized> Bound<'a, E> {
    /// Binds `cache` to `evaluator`; panics unless `evaluator` made it.
    #[inline]
    #[track_caller]
    pub(crate) fn new(evaluator: &'a E, cache: &'a mut E::Cache) -> Bound<'a, E> {
        evaluator.check_owner(cache);
        Bound { evaluator, cache }
    }

    /// Panics unless `state` has exactly the net's words of bases, with no
    /// bit set past them.
    #[inline]
    #[track_caller]
    pub(crate) fn check_state(&self, state: &[u64]) {
        check_state(self.evaluator.net(), state);
    }

    /// See [`ScalarEvaluator::load_state`], with `state` not checked (see
    /// [`Owned::load_state_owned`]): for the states a loop checked once
    /// ([`Bound::check_state`]) or the evaluator wrote itself.
    #[inline]
    pub(crate) fn load_state(&mut self, state: &[u64]) {
        // SAFETY: `new` checked that the evaluator made the cache.
        unsafe { self.evaluator.load_state_owned(self.cache, state) }
    }

    /// See [`ScalarEvaluator::load_moves`].
    #[inline]
    pub(crate) fn load_moves(&mut self, moves: &[u32]) {
        // SAFETY: `new` checked that the evaluator made the cache.
        unsafe { self.evaluator.load_moves_owned(self.cache, moves) }
    }

    /// See [`ScalarEvaluator::value`].
    #[inline]
    pub(crate) fn value(&self, slot: u32) -> bool {
        // SAFETY: `new` checked that the evaluator made the cache.
        unsafe { self.evaluator.value_owned(self.cache, slot) }
    }

    /// See [`ScalarEvaluator::refresh_goals`].
    #[inline]
    pub(crate) fn refresh_goals(&mut self) {
        // SAFETY: `new` checked that the evaluator made the cache.
        unsafe { self.evaluator.refresh_goals_owned(self.cache) }
    }

    /// See [`ScalarEvaluator::legal_words`].
    #[inline]
    pub(crate) fn legal_words(&self, role: usize) -> &[u64] {
        // SAFETY: `new` checked that the evaluator made the cache.
        unsafe { self.evaluator.legal_words_owned(self.cache, role) }
    }

    /// See [`ScalarEvaluator::next_state`].
    #[inline]
    pub(crate) fn next_state(&self, out: &mut [u64]) {
        // SAFETY: `new` checked that the evaluator made the cache.
        unsafe { self.evaluator.next_state_owned(self.cache, out) }
    }
}
