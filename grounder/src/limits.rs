//! The limits of grounding: rule instances, ground atoms, term depth, an
//! estimate of the grounder's own memory, join steps and wall time. Passing one is a [`ErrorKind::TooLarge`]
//! error that names the relation being grounded and the command-line option that
//! raises the limit. Passing the instance limit also names the relations with the
//! most instances found so far (at most three, each with at least 1% of the
//! limit): the relation being grounded is where the limit was passed, not
//! always where the instances went, and the largest ones are what a rewrite of
//! the game or of the grounder has to make smaller.

use crate::error::{ErrorKind, GdlError, Limit};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// The error for passing `limit`, whose value is `max`, while grounding `relation`.
/// (The expansion bound is passed by one rule, and reported with the rule by
/// normalization; it is named here for completeness.)
pub(crate) fn too_large(limit: Limit, max: usize, relation: &str) -> GdlError {
    too_large_at(limit, max, &format!("at relation `{relation}`"))
}

/// Relations named in the breakdown of a passed instance limit ([`largest_relations`]).
const LARGEST_SHOWN: usize = 3;

/// A relation is named in the breakdown of a passed instance limit `max` only
/// when it has at least `max / LARGEST_SHARE` instances: small ones explain nothing.
const LARGEST_SHARE: usize = 100;

/// The error for passing the instance limit `max` while grounding `relation`,
/// naming the relations with the most instances found so far (`found`, in any
/// order; at most [`LARGEST_SHOWN`], each with at least 1% of `max`), the ones a
/// rewrite of the game or of the grounder would have to make smaller.
pub(crate) fn too_many_rules(max: usize, relation: &str, found: &[(&str, usize)]) -> GdlError {
    let mut place = format!("at relation `{relation}`");
    let largest = largest_relations(found, max);
    if !largest.is_empty() {
        place.push_str("; most instances so far: ");
        place.push_str(&largest);
    }
    too_large_at(Limit::Rules, max, &place)
}

/// The relations of `found` with the most instances, largest first (names
/// breaking ties), as `` `name` count `` separated by commas.
fn largest_relations(found: &[(&str, usize)], max: usize) -> String {
    let mut large: Vec<(&str, usize)> = found
        .iter()
        .copied()
        .filter(|&(_, n)| n > 0 && n >= max / LARGEST_SHARE)
        .collect();
    large.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
    let named: Vec<String> = large
        .iter()
        .take(LARGEST_SHOWN)
        .map(|(name, n)| format!("`{name}` {n}"))
        .collect();
    named.join(", ")
}

/// The error for passing `limit`, whose value is `max`, at `place`.
fn too_large_at(limit: Limit, max: usize, place: &str) -> GdlError {
    let (what, option) = match limit {
        Limit::Rules => (
            format!("more than {max} ground rules"),
            "; raise --max-ground-rules",
        ),
        Limit::Atoms => (
            format!("more than {max} ground atoms"),
            "; raise --max-ground-atoms",
        ),
        Limit::Depth => (
            format!("terms nested deeper than {max}"),
            "; raise --max-term-depth",
        ),
        Limit::Memory => (
            format!("more than {} MiB of memory (estimated)", max >> 20),
            "; raise --max-mem",
        ),
        Limit::Steps => (
            format!("more than {max} join steps (candidate facts tried)"),
            "; raise --max-join-steps",
        ),
        Limit::Time => (seconds_spent(max), "; raise --max-ground-time"),
        Limit::Expansion => (format!("`or`s expanding into more than {max} rules"), ""),
    };
    limit_error(limit, max, &what, place, option)
}

/// The error for passing the time limit `max` ([`crate::Config::max_time`]) after grounding, while the ground program is
/// compiled further (`place`, such as `in optimizer pass merge`): it counts
/// from the start of grounding, and is a limit passed as grounding's own.
pub fn time_limit_passed(max: Duration, place: &str) -> GdlError {
    let max_ms = usize::try_from(max.as_millis()).unwrap_or(usize::MAX);
    limit_error(
        Limit::Time,
        max_ms,
        &seconds_spent(max_ms),
        place,
        "; raise --max-ground-time",
    )
}

fn seconds_spent(max_ms: usize) -> String {
    format!("more than {:.1} s spent", max_ms as f64 / 1000.0)
}

/// The error for passing `limit` (value `max`): `what` was passed at `place`;
/// `raise` says how to raise the limit.
fn limit_error(limit: Limit, max: usize, what: &str, place: &str, raise: &str) -> GdlError {
    GdlError {
        kind: ErrorKind::TooLarge { limit, max },
        span: None,
        rule: None,
        message: format!("grounding too large: {what} ({place}){raise}"),
    }
}

/// What a join found and took: rule instances, estimated bytes, and candidate
/// facts tried.
#[derive(Clone, Copy, Default, PartialEq, Eq, Debug)]
pub(crate) struct Spent {
    pub(crate) instances: usize,
    pub(crate) bytes: usize,
    pub(crate) steps: usize,
}

impl Spent {
    /// What `self` has that `before` had not.
    pub(crate) fn since(self, before: Spent) -> Spent {
        Spent {
            instances: self.instances.saturating_sub(before.instances),
            bytes: self.bytes.saturating_sub(before.bytes),
            steps: self.steps.saturating_sub(before.steps),
        }
    }
}

/// The rule instances found so far, the estimated bytes in use and the join steps
/// taken, shared by the joins of a round (on however many threads), against their
/// limits, and the time grounding may end by.
#[derive(Debug)]
pub(crate) struct Budget {
    max_instances: usize,
    max_bytes: usize,
    max_steps: usize,
    /// The time limit, and when it passes.
    time: Option<(Duration, Instant)>,
    instances: AtomicUsize,
    bytes: AtomicUsize,
    steps: AtomicUsize,
}

impl Budget {
    /// Nothing spent yet, under these limits; `time`, if any, counts from now.
    pub(crate) fn new(
        max_instances: usize,
        max_bytes: usize,
        max_steps: usize,
        time: Option<Duration>,
    ) -> Self {
        Budget {
            max_instances,
            max_bytes,
            max_steps,
            time: time.map(|t| (t, Instant::now() + t)),
            instances: AtomicUsize::new(0),
            bytes: AtomicUsize::new(0),
            steps: AtomicUsize::new(0),
        }
    }

    /// The limit of `limit` (rule instances, bytes or steps).
    pub(crate) fn max(&self, limit: Limit) -> usize {
        match limit {
            Limit::Memory => self.max_bytes,
            Limit::Steps => self.max_steps,
            Limit::Time => self.time.map_or(0, |(t, _)| t.as_millis() as usize),
            _ => self.max_instances,
        }
    }

    /// Rule instances that may still be found.
    pub(crate) fn remaining_instances(&self) -> usize {
        self.max_instances
            .saturating_sub(self.instances.load(Ordering::Relaxed))
    }

    /// Starts a round with `bytes` in use (terms, facts and rules kept so far).
    pub(crate) fn set_bytes(&self, bytes: usize) {
        self.bytes.store(bytes, Ordering::Relaxed);
    }

    /// Adds what a join spent; the limit passed, if one is.
    pub(crate) fn charge(&self, new: Spent) -> Option<Limit> {
        let add = |counter: &AtomicUsize, n: usize| counter.fetch_add(n, Ordering::Relaxed) + n;
        let instances = add(&self.instances, new.instances);
        let bytes = add(&self.bytes, new.bytes);
        let steps = add(&self.steps, new.steps);
        if instances > self.max_instances {
            Some(Limit::Rules)
        } else if bytes > self.max_bytes {
            Some(Limit::Memory)
        } else if steps > self.max_steps {
            Some(Limit::Steps)
        } else if self.time.is_some_and(|(_, end)| Instant::now() >= end) {
            Some(Limit::Time)
        } else {
            None
        }
    }

    /// Takes back what a join charged when its results are dropped (to run it again).
    pub(crate) fn refund(&self, spent: Spent) {
        self.instances.fetch_sub(spent.instances, Ordering::Relaxed);
        self.bytes.fetch_sub(spent.bytes, Ordering::Relaxed);
        self.steps.fetch_sub(spent.steps, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spent(instances: usize, bytes: usize, steps: usize) -> Spent {
        Spent {
            instances,
            bytes,
            steps,
        }
    }

    #[test]
    fn charges_pass_each_limit_and_refunds_take_back() {
        let budget = Budget::new(10, 1000, 100, None);
        assert_eq!(budget.charge(spent(10, 1000, 100)), None);
        assert_eq!(budget.charge(spent(1, 0, 0)), Some(Limit::Rules));
        budget.refund(spent(1, 0, 0));
        assert_eq!(budget.charge(spent(0, 1, 0)), Some(Limit::Memory));
        budget.set_bytes(0);
        assert_eq!(budget.charge(spent(0, 1, 0)), None);
        assert_eq!(budget.charge(spent(0, 0, 1)), Some(Limit::Steps));
        assert_eq!(spent(5, 5, 5).since(spent(2, 6, 5)), spent(3, 0, 0));
    }

    #[test]
    fn a_charge_after_the_time_limit_passes_it() {
        let budget = Budget::new(10, 1000, 100, Some(Duration::ZERO));
        assert_eq!(budget.charge(spent(0, 0, 0)), Some(Limit::Time));
        assert_eq!(budget.max(Limit::Time), 0);
        assert_eq!(
            too_large(Limit::Time, 2500, "r").message,
            "grounding too large: more than 2.5 s spent (at relation `r`); raise --max-ground-time"
        );
        let later = time_limit_passed(Duration::from_millis(2500), "in optimizer pass merge");
        assert_eq!(
            later.kind,
            ErrorKind::TooLarge {
                limit: Limit::Time,
                max: 2500
            }
        );
        assert_eq!(
            later.message,
            "grounding too large: more than 2.5 s spent (in optimizer pass merge); raise --max-ground-time"
        );
    }

    #[test]
    fn the_largest_relations_are_named_largest_first() {
        let found = [
            ("a", 5),
            ("b", 700),
            ("c", 100),
            ("d", 900),
            ("e", 700),
            ("f", 99),
        ];
        assert_eq!(
            too_many_rules(10_000, "p", &found).message,
            "grounding too large: more than 10000 ground rules \
             (at relation `p`; most instances so far: `d` 900, `b` 700, `e` 700); raise --max-ground-rules"
        );
        let e = too_many_rules(10_000, "p", &[("a", 99)]);
        assert_eq!(e.message, too_large(Limit::Rules, 10_000, "p").message);
        assert_eq!(
            e.kind,
            ErrorKind::TooLarge {
                limit: Limit::Rules,
                max: 10_000
            }
        );
        assert_eq!(
            too_many_rules(10, "p", &[("a", 0)]).message,
            too_large(Limit::Rules, 10, "p").message
        );
    }

    #[test]
    fn errors_name_the_limit_the_relation_and_the_option() {
        let e = too_large(Limit::Rules, 5, "p");
        assert_eq!(
            e.kind,
            ErrorKind::TooLarge {
                limit: Limit::Rules,
                max: 5
            }
        );
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
