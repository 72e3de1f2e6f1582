//! The limits of grounding: rule instances, ground atoms, term depth, and an
//! estimate of the grounder's own memory. Passing one is a [`ErrorKind::TooLarge`]
//! error that names the relation being grounded and the command-line option that
//! raises the limit.

use crate::error::{ErrorKind, GdlError};
use std::sync::atomic::{AtomicUsize, Ordering};

/// Which limit grounding passed.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Limit {
    /// Rule instances found (static and dynamic, duplicates included).
    Rules,
    /// Distinct ground sentences.
    Atoms,
    /// Nesting of a ground term.
    Depth,
    /// Estimated bytes of terms, facts, indexes and rules.
    Memory,
}

/// The error for passing `limit`, whose value is `max`, while grounding `relation`.
pub(crate) fn too_large(limit: Limit, max: usize, relation: &str) -> GdlError {
    let (what, option) = match limit {
        Limit::Rules => (format!("more than {max} ground rules"), "--max-ground-rules"),
        Limit::Atoms => (format!("more than {max} ground atoms"), "--max-ground-atoms"),
        Limit::Depth => (format!("terms nested deeper than {max}"), "--max-term-depth"),
        Limit::Memory => (
            format!("more than {} MiB of memory (estimated)", max >> 20),
            "--max-mem",
        ),
    };
    GdlError {
        kind: ErrorKind::TooLarge,
        span: None,
        rule: None,
        message: format!("grounding too large: {what} (at relation `{relation}`); raise {option}"),
    }
}

/// The rule instances found so far and the estimated bytes in use, shared by the
/// joins of a round (on however many threads), against their limits.
#[derive(Debug)]
pub(crate) struct Budget {
    max_instances: usize,
    max_bytes: usize,
    instances: AtomicUsize,
    bytes: AtomicUsize,
}

impl Budget {
    /// Nothing spent yet, under these limits.
    pub(crate) fn new(max_instances: usize, max_bytes: usize) -> Self {
        Budget {
            max_instances,
            max_bytes,
            instances: AtomicUsize::new(0),
            bytes: AtomicUsize::new(0),
        }
    }

    /// The limit of `limit`.
    pub(crate) fn max(&self, limit: Limit) -> usize {
        match limit {
            Limit::Memory => self.max_bytes,
            _ => self.max_instances,
        }
    }

    /// Starts a round with `bytes` in use (terms, facts and rules kept so far).
    pub(crate) fn set_bytes(&self, bytes: usize) {
        self.bytes.store(bytes, Ordering::Relaxed);
    }

    /// Adds instances and bytes; the limit passed, if one is.
    pub(crate) fn charge(&self, instances: usize, bytes: usize) -> Option<Limit> {
        let total = self.instances.fetch_add(instances, Ordering::Relaxed) + instances;
        let used = self.bytes.fetch_add(bytes, Ordering::Relaxed) + bytes;
        if total > self.max_instances {
            Some(Limit::Rules)
        } else if used > self.max_bytes {
            Some(Limit::Memory)
        } else {
            None
        }
    }

    /// Takes back what a join charged when its results are dropped (to run it again).
    pub(crate) fn refund(&self, instances: usize, bytes: usize) {
        self.instances.fetch_sub(instances, Ordering::Relaxed);
        self.bytes.fetch_sub(bytes, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn charges_pass_each_limit_and_refunds_take_back() {
        let budget = Budget::new(10, 1000);
        assert_eq!(budget.charge(10, 1000), None);
        assert_eq!(budget.charge(1, 0), Some(Limit::Rules));
        budget.refund(1, 0);
        assert_eq!(budget.charge(0, 1), Some(Limit::Memory));
        budget.set_bytes(0);
        assert_eq!(budget.charge(0, 1), None);
    }

    #[test]
    fn errors_name_the_limit_the_relation_and_the_option() {
        let e = too_large(Limit::Rules, 5, "p");
        assert_eq!(e.kind, ErrorKind::TooLarge);
        assert_eq!(
            e.message,
            "grounding too large: more than 5 ground rules (at relation `p`); raise --max-ground-rules"
        );
        assert_eq!(
            too_large(Limit::Memory, 3 << 20, "q").message,
            "grounding too large: more than 3 MiB of memory (estimated) (at relation `q`); raise --max-mem"
        );
    }
}
