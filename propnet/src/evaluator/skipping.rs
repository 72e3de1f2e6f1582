//! Which gates the sweep's native code skips while nothing they depend on
//! changes. Consecutive stored gates form a flagged block, evaluated only when
//! its flag is set; the flag is set whenever a base or input of the block's
//! support (the sources its gates depend on) changes, and cleared when the
//! block is evaluated. A random walk measures, per source, the runs of each
//! part whose flags it would set. A block's expected cost is the values its
//! gates read times how often its flag is set, plus the test, the marks and
//! the mispredicted jumps; the code is cut into blocks and unflagged gates
//! at the least expected cost.

use crate::layout::{CompiledNet, FaninWalk, Visit};
use crate::profile::skips::Changes;
use std::collections::HashMap;

/// The most slots walked to find one gate's support; a gate that depends on
/// more is not flagged.
const MAX_SUPPORT_WALK: usize = 1 << 14;

/// The most gates in a block, and the most sources (counted per gate).
const MAX_BLOCK_GATES: usize = 256;
const MAX_BLOCK_SOURCES: usize = 8192;

/// A stored gate that native code could flag, in code order.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Candidate {
    pub gate: u32,
    /// Values its expression reads.
    pub operands: usize,
    /// Whether it belongs to the part that depends on moves (evaluated after
    /// each joint move; otherwise after each state).
    pub moves: bool,
}

/// The flagged blocks chosen.
#[derive(Debug, Default)]
pub(crate) struct Blocks {
    /// The block of each flagged gate.
    pub of_gate: HashMap<u32, u32>,
    /// The support of each block (source slots).
    pub supports: Vec<Vec<u32>>,
    /// The first block of the move part (the state part's come before).
    first_of_moves: usize,
    /// Per part, the expected cost of a run with these blocks, in values read.
    pub expected_cost: [f64; 2],
}

impl Blocks {
    /// These blocks without the move part's (which then runs unflagged).
    pub(crate) fn without_moves(mut self) -> Blocks {
        let first = self.first_of_moves;
        self.supports.truncate(first);
        self.of_gate.retain(|_, block| (*block as usize) < first);
        self.expected_cost[1] = 0.0;
        self
    }
}

/// Groups `candidates` (the stored gates of the state part, then of the move
/// part, each in code order) into flagged blocks where that pays: per part,
/// the cuts of the code into unflagged gates and blocks of consecutive gates
/// with the least expected cost (dynamic programming over blocks of at most
/// [`MAX_BLOCK_GATES`] gates depending on [`MAX_BLOCK_SOURCES`] sources).
pub(crate) fn choose(net: &CompiledNet, candidates: &[Candidate], changes: &Changes) -> Blocks {
    let mut walker = SupportWalker::new(net);
    let mut blocks = Blocks::default();
    for part in 0..2 {
        if part == 1 {
            blocks.first_of_moves = blocks.supports.len();
        }
        let gates: Vec<&Candidate> = candidates
            .iter()
            .filter(|c| usize::from(c.moves) == part)
            .collect();
        if changes.runs(part) == 0 || gates.is_empty() {
            blocks.expected_cost[part] = gates.iter().map(|c| c.operands as f64).sum();
            continue;
        }
        let supports: Vec<Option<Vec<u32>>> = gates.iter().map(|c| walker.support(c.gate)).collect();
        // Per gate, the runs that would find its flag set.
        let sets: Vec<Vec<u64>> = supports
            .iter()
            .map(|support| {
                let mut set = vec![0; changes.words(part)];
                for &source in support.iter().flatten() {
                    for (set, &runs) in set.iter_mut().zip(changes.runs_of(part, source)) {
                        *set |= runs;
                    }
                }
                set
            })
            .collect();
        // best[j]: the least cost of the first j gates; start[j]: where the
        // block ending at gate j - 1 starts in that cut (None: unflagged).
        let mut best = vec![0.0; gates.len() + 1];
        let mut start: Vec<Option<usize>> = vec![None; gates.len() + 1];
        let mut seen = vec![usize::MAX; net.first_gate() as usize];
        let mut union = vec![0u64; changes.words(part)];
        for end in 1..=gates.len() {
            best[end] = best[end - 1] + gates[end - 1].operands as f64;
            union.fill(0);
            let (mut operands, mut marks, mut sources) = (0, 0u64, 0);
            for first in (end.saturating_sub(MAX_BLOCK_GATES)..end).rev() {
                let Some(support) = &supports[first] else { break };
                sources += support.len();
                if sources > MAX_BLOCK_SOURCES {
                    break;
                }
                operands += gates[first].operands;
                for &source in support {
                    if std::mem::replace(&mut seen[source as usize], end) != end {
                        marks += u64::from(changes.count(source));
                    }
                }
                for (union, &set) in union.iter_mut().zip(&sets[first]) {
                    *union |= set;
                }
                let cost = best[first] + changes.flagged_cost(part, &union, operands, marks);
                if cost < best[end] {
                    best[end] = cost;
                    start[end] = Some(first);
                }
            }
        }
        blocks.expected_cost[part] = best[gates.len()];
        let mut end = gates.len();
        while end > 0 {
            let Some(first) = start[end] else {
                end -= 1;
                continue;
            };
            let block = blocks.supports.len() as u32;
            let mut support: Vec<u32> = (first..end)
                .flat_map(|g| supports[g].iter().flatten().copied())
                .collect();
            support.sort_unstable();
            support.dedup();
            blocks.supports.push(support);
            blocks
                .of_gate
                .extend(gates[first..end].iter().map(|c| (c.gate, block)));
            end = first;
        }
    }
    blocks
}

/// Per slot, the lowest source slot it depends on (itself for a source): a
/// key that puts gates next to others depending on the same sources, so that
/// blocks of them can form. (The highest source, which groups gates by the
/// move they read, formed more blocks but ran slower: connect four 6.2M nodes
/// per second against 8.4M, with fewer instructions.)
pub(crate) fn lowest_sources(net: &CompiledNet) -> Vec<u32> {
    let mut lowest: Vec<u32> = (0..net.slots() as u32).collect();
    for slot in net.first_gate()..net.slots() as u32 {
        lowest[slot as usize] = net
            .fanin(slot)
            .iter()
            .map(|&i| lowest[i as usize])
            .min()
            .unwrap_or(slot);
    }
    lowest
}

/// Finds supports by walking fan-ins.
struct SupportWalker<'a> {
    net: &'a CompiledNet,
    walk: FaninWalk<'a>,
}

impl<'a> SupportWalker<'a> {
    fn new(net: &'a CompiledNet) -> SupportWalker<'a> {
        SupportWalker {
            net,
            walk: FaninWalk::new(net),
        }
    }

    /// The sources `gate` depends on, or `None` past [`MAX_SUPPORT_WALK`] slots.
    fn support(&mut self, gate: u32) -> Option<Vec<u32>> {
        let mut sources = Vec::new();
        let mut walked = 0;
        let first_gate = self.net.first_gate();
        let whole = self.walk.walk(gate, |slot| {
            walked += 1;
            if walked > MAX_SUPPORT_WALK {
                Visit::Stop
            } else if slot < first_gate {
                sources.push(slot);
                Visit::Skip
            } else {
                Visit::Up
            }
        });
        whole.then_some(sources)
    }
}

/// What each base and input stores when it changes: its own value, the
/// values of the `or`s of moves it is read by (see the `decoded` module),
/// and the flags of the flagged blocks that depend on it, which it sets.
#[derive(Debug)]
pub(crate) struct Marks {
    /// Per source slot `s`, where its stores start in `stores` and where its
    /// flags start; its stores end where those of `s + 1` start (a last
    /// entry closes them).
    starts: Vec<(u32, u32)>,
    /// The slots that take each source's value (besides itself), then the
    /// flags it sets.
    stores: Vec<u32>,
    /// One past the highest slot stored, sources included.
    extent: usize,
}

impl Marks {
    /// The stores of each source: itself, `copies(source)` (slots that take
    /// its value), and the `flags` of blocks (each flag slot with the support
    /// of its block) that depend on it.
    pub(crate) fn new<'a>(
        net: &CompiledNet,
        copies: impl Fn(u32) -> &'a [u32],
        flags: impl IntoIterator<Item = (u32, &'a [u32])>,
    ) -> Marks {
        let mut flags_of: Vec<Vec<u32>> = vec![Vec::new(); net.first_gate() as usize];
        for (flag, support) in flags {
            for &source in support {
                flags_of[source as usize].push(flag);
            }
        }
        let mut marks = Marks {
            starts: Vec::new(),
            stores: Vec::new(),
            extent: 0,
        };
        for (source, flags) in (0..net.first_gate()).zip(flags_of) {
            let start = marks.stores.len() as u32;
            marks.stores.extend_from_slice(copies(source));
            marks.starts.push((start, marks.stores.len() as u32));
            marks.stores.extend(flags);
        }
        marks
            .starts
            .push((marks.stores.len() as u32, marks.stores.len() as u32));
        marks.extent = marks
            .stores
            .iter()
            .map(|&s| s as usize + 1)
            .fold(net.first_gate() as usize, usize::max);
        marks
    }

    /// Sets source `slot` to `value` in `values`, the slots that take its
    /// value with it, and its flags.
    #[inline(always)]
    pub(crate) fn set(&self, values: &mut [bool], slot: u32, value: bool) {
        assert!(
            values.len() >= self.extent && (slot as usize) + 1 < self.starts.len(),
            "values or source of another net"
        );
        // SAFETY: `slot + 1` indexes `starts` (asserted), so `slot` is a
        // source, below `extent`; the ranges `starts` gives are within
        // `stores`, and every store names a slot below `extent` (see `new`),
        // within `values` (asserted).
        unsafe {
            let (start, flags) = *self.starts.get_unchecked(slot as usize);
            let end = self.starts.get_unchecked(slot as usize + 1).0;
            // The source itself out of the loop: a loop of one store for
            // most sources cost connect four 9% of its speed.
            *values.get_unchecked_mut(slot as usize) = value;
            for &store in self.stores.get_unchecked(start as usize..flags as usize) {
                *values.get_unchecked_mut(store as usize) = value;
            }
            for &flag in self.stores.get_unchecked(flags as usize..end as usize) {
                *values.get_unchecked_mut(flag as usize) = true;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every gate of the test game a candidate: blocks cost at most the
    /// parts unflagged, and dropping the move part's leaves the state part's.
    #[test]
    fn blocks_of_the_move_part_can_be_dropped() {
        let loaded = crate::load(super::super::TURNS, &crate::LoadConfig::default()).unwrap();
        let net: &CompiledNet = loaded.game.net();
        let in_moves = net.in_move_part();
        let candidates: Vec<Candidate> = (net.first_gate()..net.slots() as u32)
            .map(|gate| Candidate {
                gate,
                operands: net.fanin(gate).len(),
                moves: in_moves[gate as usize],
            })
            .collect();
        let changes = Changes::measure(net, |_, _| {});
        let blocks = choose(net, &candidates, &changes);
        for part in 0..2 {
            let unflagged: usize = candidates
                .iter()
                .filter(|c| usize::from(c.moves) == part)
                .map(|c| c.operands)
                .sum();
            assert!(blocks.expected_cost[part] <= unflagged as f64, "part {part}");
        }
        let state_blocks: Vec<(u32, u32)> = blocks
            .of_gate
            .iter()
            .filter(|(&gate, _)| !in_moves[gate as usize])
            .map(|(&gate, &block)| (gate, block))
            .collect();
        let supports = blocks.supports.len();
        let without = blocks.without_moves();
        assert_eq!(without.of_gate.len(), state_blocks.len());
        assert!(state_blocks
            .iter()
            .all(|(gate, block)| without.of_gate[gate] == *block));
        assert!(without.supports.len() <= supports);
        assert!(without
            .of_gate
            .values()
            .all(|&b| (b as usize) < without.supports.len()));
        assert_eq!(without.expected_cost[1], 0.0);
    }
}
