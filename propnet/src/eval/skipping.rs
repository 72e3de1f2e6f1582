//! Which gates the sweep's native code skips while nothing they depend on
//! changes. A guarded gate is evaluated only when its flag is set; the flag is
//! set whenever a base or input of its support (the sources it depends on)
//! changes, and cleared when the gate is evaluated. Guarding pays for a gate
//! whose expression reads many values and whose support seldom changes: a
//! random walk measures, per candidate, how often its flag would be found set
//! and how many marks it would take, and keeps the candidates whose expected
//! saving exceeds the test, the marks and the mispredicted jumps.

use super::activity::{random_walk, Transition};
use super::compiled::CompiledNet;
use std::collections::HashMap;

/// The fewest values a stored gate's expression must read to be a candidate.
const MIN_GUARDED_OPERANDS: usize = 16;

/// The most slots walked to find one gate's support; a gate that depends on
/// more is not guarded.
const MAX_SUPPORT_WALK: usize = 1 << 14;

/// Gate evaluations spent measuring the candidates (see [`random_walk`]).
const MEASURE_BUDGET: usize = 10_000_000;

/// Costs in instructions, against one value read: testing the flag and
/// clearing it, setting it once, and a mispredicted jump (about 20 cycles at
/// 2.5 instructions per cycle).
const TEST_COST: f64 = 3.0;
const MARK_COST: f64 = 6.0;
const MISPREDICT_COST: f64 = 50.0;

/// A stored gate that native code could guard.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Candidate {
    pub gate: u32,
    /// Values its expression reads.
    pub operands: usize,
    /// Whether it belongs to the part that depends on moves (evaluated after
    /// each joint move; otherwise after each state).
    pub moves: bool,
}

/// The candidates worth guarding, each with its support (source slots).
pub(crate) fn choose(net: &CompiledNet, candidates: &[Candidate]) -> HashMap<u32, Vec<u32>> {
    let mut walker = SupportWalker::new(net);
    let measured: Vec<(Candidate, Vec<u32>)> = candidates
        .iter()
        .filter(|c| c.operands >= MIN_GUARDED_OPERANDS)
        .filter_map(|&c| Some((c, walker.support(c.gate)?)))
        .collect();
    if measured.is_empty() {
        return HashMap::new();
    }
    // Marks of the candidates' indices.
    let per_source = Marks::new(
        net,
        measured
            .iter()
            .enumerate()
            .map(|(k, (_, support))| (k as u32, support.as_slice())),
    );
    // Per candidate: whether its flag is set, runs that found it set, marks.
    let mut pending = vec![true; measured.len()];
    let mut found_set = vec![0u32; measured.len()];
    let mut marked = vec![0u32; measured.len()];
    let mut runs = [0u32; 2];
    random_walk(net, MEASURE_BUDGET, |transition, before, after| {
        for source in 0..net.first_gate as usize {
            if before[source] != after[source] {
                for &k in per_source.of(source as u32) {
                    pending[k as usize] = true;
                    marked[k as usize] += 1;
                }
            }
        }
        let moves = transition == Transition::Moves;
        runs[usize::from(moves)] += 1;
        for (k, (candidate, _)) in measured.iter().enumerate() {
            if candidate.moves == moves && std::mem::take(&mut pending[k]) {
                found_set[k] += 1;
            }
        }
    });
    measured
        .into_iter()
        .enumerate()
        .filter(|(k, (candidate, _))| {
            let runs = f64::from(runs[usize::from(candidate.moves)].max(1));
            let set = f64::from(found_set[*k]) / runs;
            let marks = f64::from(marked[*k]) / runs;
            let saving = candidate.operands as f64 * (1.0 - set);
            saving > TEST_COST + MARK_COST * marks + MISPREDICT_COST * set.min(1.0 - set)
        })
        .map(|(_, (candidate, support))| (candidate.gate, support))
        .collect()
}

/// Finds supports by walking fan-ins, marking the slots each walk reached.
struct SupportWalker<'a> {
    net: &'a CompiledNet,
    /// Per slot, the last walk that reached it (walks are numbered from 1).
    reached: Vec<u32>,
    walks: u32,
}

impl<'a> SupportWalker<'a> {
    fn new(net: &'a CompiledNet) -> SupportWalker<'a> {
        SupportWalker {
            net,
            reached: vec![0; net.slots],
            walks: 0,
        }
    }

    /// The sources `gate` depends on, or `None` past [`MAX_SUPPORT_WALK`] slots.
    fn support(&mut self, gate: u32) -> Option<Vec<u32>> {
        self.walks += 1;
        let mut sources = Vec::new();
        let mut stack = vec![gate];
        let mut walked = 0;
        while let Some(slot) = stack.pop() {
            if std::mem::replace(&mut self.reached[slot as usize], self.walks) == self.walks {
                continue;
            }
            walked += 1;
            if walked > MAX_SUPPORT_WALK {
                return None;
            }
            if slot < self.net.first_gate {
                sources.push(slot);
            } else {
                stack.extend(self.net.inputs(slot));
            }
        }
        Some(sources)
    }
}

/// Which flags each base and input sets when it changes.
#[derive(Debug)]
pub(crate) struct Marks {
    /// The flags of source slot `s`: `flags[offsets[s]..offsets[s + 1]]`.
    offsets: Vec<u32>,
    flags: Vec<u32>,
}

impl Marks {
    /// The marks of `flags`: each flag slot with the support of its gate.
    pub(crate) fn new<'a>(net: &CompiledNet, flags: impl IntoIterator<Item = (u32, &'a [u32])>) -> Marks {
        let mut per_source: Vec<Vec<u32>> = vec![Vec::new(); net.first_gate as usize];
        for (flag, support) in flags {
            for &source in support {
                per_source[source as usize].push(flag);
            }
        }
        let mut marks = Marks {
            offsets: vec![0],
            flags: Vec::new(),
        };
        for flags in per_source {
            marks.flags.extend(flags);
            marks.offsets.push(marks.flags.len() as u32);
        }
        marks
    }

    /// The flags that a change of source `slot` sets.
    #[inline]
    pub(crate) fn of(&self, slot: u32) -> &[u32] {
        &self.flags[self.offsets[slot as usize] as usize..self.offsets[slot as usize + 1] as usize]
    }
}
