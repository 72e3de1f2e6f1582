//! Skip measurements, along the one random walk of [`random_walk`] that
//! serves every measurement at load: how the sources (bases and move
//! propositions) change, for the sweep's flagged blocks, and how often skip
//! conditions hold, for the gates they jump over.

use super::activity::{random_walk, Transition};
use super::costs::{MARK_COST, MEASURE_BUDGET, MISPREDICT_COST, TEST_COST};
use crate::jit::Condition;
use crate::layout::CompiledNet;
use std::collections::HashMap;

/// How sources change along a random walk: per part (0: state, 1: moves),
/// the runs of that part after which a source's flags would be set.
pub(crate) struct Changes {
    /// Runs of each part, and words of each part's bit sets.
    runs: [u32; 2],
    words: [usize; 2],
    /// Per source, the bit sets of the state part's runs, then the move part's.
    sets: Vec<u64>,
    /// Per source, the transitions that changed it.
    count: Vec<u32>,
}

impl Changes {
    /// Measures along a random walk, showing each transition and the values
    /// after it to `observe` too (one walk serves every measurement at load).
    pub(crate) fn measure(net: &CompiledNet, mut observe: impl FnMut(Transition, &[bool])) -> Changes {
        let sources = net.first_gate() as usize;
        // Changed sources per transition, and per part the run each transition ends.
        let mut transitions: Vec<(Transition, Vec<u32>)> = Vec::new();
        random_walk(net, MEASURE_BUDGET, |transition, before, after| {
            observe(transition, after);
            let changed = (0..sources as u32).filter(|&s| before[s as usize] != after[s as usize]);
            transitions.push((transition, changed.collect()));
        });
        let runs = [
            transitions
                .iter()
                .filter(|(t, _)| *t != Transition::Moves)
                .count() as u32,
            transitions
                .iter()
                .filter(|(t, _)| *t == Transition::Moves)
                .count() as u32,
        ];
        let words = runs.map(|r| (r as usize).div_ceil(64));
        let mut changes = Changes {
            runs,
            words,
            sets: vec![0; sources * (words[0] + words[1])],
            count: vec![0; sources],
        };
        // Sources changed since the move part last ran.
        let mut pending: Vec<u32> = Vec::new();
        let mut done = [0usize; 2];
        for (transition, changed) in transitions {
            for &source in &changed {
                changes.count[source as usize] += 1;
            }
            pending.extend(&changed);
            let part = usize::from(transition == Transition::Moves);
            let setting = if part == 0 {
                changed
            } else {
                std::mem::take(&mut pending)
            };
            let run = done[part];
            for source in setting {
                let offset = changes.offset(part, source) + run / 64;
                changes.sets[offset] |= 1 << (run % 64);
            }
            done[part] += 1;
        }
        changes
    }

    /// Runs of `part` measured.
    pub(crate) fn runs(&self, part: usize) -> u32 {
        self.runs[part]
    }

    /// Words of the bit sets of `part`'s runs.
    pub(crate) fn words(&self, part: usize) -> usize {
        self.words[part]
    }

    /// Transitions that changed `source`.
    pub(crate) fn count(&self, source: u32) -> u32 {
        self.count[source as usize]
    }

    /// Expected instructions per run of `part` of a flagged block whose flag
    /// the runs in `set` find set, whose gates read `operands` values and
    /// whose sources change `marks` times over the walk.
    pub(crate) fn flagged_cost(&self, part: usize, set: &[u64], operands: usize, marks: u64) -> f64 {
        let runs = f64::from(self.runs[part]);
        let set = f64::from(set.iter().map(|w| w.count_ones()).sum::<u32>()) / runs;
        TEST_COST
            + MARK_COST * marks as f64 / runs
            + MISPREDICT_COST * set.min(1.0 - set)
            + set * operands as f64
    }

    fn offset(&self, part: usize, source: u32) -> usize {
        source as usize * (self.words[0] + self.words[1]) + if part == 0 { 0 } else { self.words[0] }
    }

    /// The runs of `part` after which a change of `source` set its flags.
    pub(crate) fn runs_of(&self, part: usize, source: u32) -> &[u64] {
        let offset = self.offset(part, source);
        &self.sets[offset..offset + self.words[part]]
    }
}

/// How often each of the conditions used holds its skip value when the part
/// that evaluates its gates runs (`true`: the move part, after each joint
/// move; `false`: the state part, after each state), counted along a random
/// walk (the one [`Changes::measure`] takes).
pub(crate) struct SkipCounts {
    used: Vec<(Condition, bool)>,
    skipped: Vec<u32>,
    runs: [u32; 2],
}

impl SkipCounts {
    /// Counts for the `used` conditions, none seen yet.
    pub(crate) fn new(used: Vec<(Condition, bool)>) -> SkipCounts {
        SkipCounts {
            skipped: vec![0; used.len()],
            used,
            runs: [0; 2],
        }
    }

    /// Counts one transition of the walk, with the values `after` it.
    pub(crate) fn observe(&mut self, transition: Transition, after: &[bool]) {
        let moves = transition == Transition::Moves;
        self.runs[usize::from(moves)] += 1;
        for (count, (condition, _)) in self
            .skipped
            .iter_mut()
            .zip(&self.used)
            .filter(|(_, (_, m))| *m == moves)
        {
            *count += u32::from(after[condition.slot as usize] == condition.skip_when);
        }
    }

    /// The share of its part's runs in which each condition held its skip value.
    pub(crate) fn rates(&self) -> HashMap<(Condition, bool), f64> {
        self.used
            .iter()
            .zip(&self.skipped)
            .map(|(&(condition, moves), &count)| {
                let rate = f64::from(count) / f64::from(self.runs[usize::from(moves)].max(1));
                ((condition, moves), rate)
            })
            .collect()
    }
}
