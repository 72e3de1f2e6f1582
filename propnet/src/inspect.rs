//! Size breakdowns of a layered circuit: nodes by kind and by the relation
//! that produced them, fan-in and fan-out histograms, and layer widths.
//!
//! A node standing for a sentence belongs to that sentence's relation
//! (`true cell` for a base of `(cell ...)`, `does` for inputs); a gate made
//! for a rule instance or a negation belongs to the relation of the nearest
//! sentence that reads it, so `legal` counts every gate that only serves to
//! compute legality. Gates read by no sentence are `(unnamed)`.

use crate::ir::{Circuit, NodeKind, Readers};
use crate::layout::Layering;
use ggpnet_kif::SymbolId;
use rustc_hash::FxHashMap;
use serde::Serialize;
use std::collections::{BTreeMap, VecDeque};

/// A histogram bucket: how many nodes have a count in `min..=max`.
#[derive(Clone, PartialEq, Eq, Debug, Serialize)]
pub struct Bucket {
    /// Smallest count of the bucket.
    pub min: usize,
    /// Largest count of the bucket.
    pub max: usize,
    /// Number of nodes.
    pub nodes: usize,
}

/// Where a circuit's size comes from.
#[derive(Clone, PartialEq, Eq, Debug, Serialize)]
pub struct Breakdown {
    /// Nodes by kind.
    pub kinds: BTreeMap<&'static str, usize>,
    /// Nodes by relation, most first (ties by name).
    pub relations: Vec<(String, usize)>,
    /// Gates (and, or, not) by size of fan-in, in buckets 0, 1, 2, 3-4, 5-8, ...
    pub fan_in: Vec<Bucket>,
    /// Nodes by number of readers (gates reading them, plus each time it is an output), same buckets.
    pub fan_out: Vec<Bucket>,
    /// Nodes per layer, layer 0 first.
    pub layer_widths: Vec<usize>,
}

/// A node of no relation in [`breakdown`].
const UNNAMED: u32 = u32::MAX;

/// Bucket index of a count: 0, 1, 2, 3-4, 5-8, 9-16, ...
fn bucket(count: usize) -> usize {
    match count {
        0 => 0,
        c => 1 + (usize::BITS - (c - 1).leading_zeros()) as usize,
    }
}

fn histogram(counts: impl Iterator<Item = usize>) -> Vec<Bucket> {
    let mut nodes: Vec<usize> = Vec::new();
    for c in counts {
        let b = bucket(c);
        if nodes.len() <= b {
            nodes.resize(b + 1, 0);
        }
        nodes[b] += 1;
    }
    nodes
        .into_iter()
        .enumerate()
        .map(|(b, nodes)| {
            let (min, max) = match b {
                0 => (0, 0),
                1 => (1, 1),
                b => ((1 << (b - 2)) + 1, 1 << (b - 1)),
            };
            Bucket { min, max, nodes }
        })
        .filter(|b| b.nodes > 0)
        .collect()
}

/// The breakdown of `circuit`.
///
/// ```
/// let game = "(role r) (init a) (<= (legal r go) (true a)) (<= (next a) (true a) (does r go))
///     (<= terminal (not (true a))) (goal r 100)";
/// let loaded = ggpnet_propnet::load(game, &Default::default()).unwrap();
/// let b = ggpnet_propnet::inspect::breakdown(&loaded.circuit, &loaded.layering);
/// assert_eq!(b.kinds["base"], 1);
/// assert_eq!(b.layer_widths.iter().sum::<usize>(), loaded.circuit.nodes.len());
/// ```
pub fn breakdown(circuit: &Circuit, layering: &Layering) -> Breakdown {
    let n = circuit.nodes.len();
    let v = &circuit.vocabulary;
    let readers = Readers::of(circuit);
    // Relation of each labelled node, then spread to gates from their nearest
    // labelled readers: an index into `names` per node (a name per node took
    // a tenth of the full amazons' peak memory).
    let mut names: Vec<String> = Vec::new();
    let mut name_of: FxHashMap<(bool, SymbolId), u32> = FxHashMap::default();
    let mut relation: Vec<u32> = vec![UNNAMED; n];
    let mut queue = VecDeque::new();
    for (&id, &term) in &circuit.labels {
        let key = match v.terms.functor(term) {
            SymbolId::TRUE => (true, v.terms.functor(v.terms.args(term)[0])),
            f => (false, f),
        };
        relation[id.index()] = *name_of.entry(key).or_insert_with(|| {
            names.push(match key {
                (true, f) => format!("true {}", v.symbols.name(f)),
                (false, f) => v.symbols.name(f).to_owned(),
            });
            names.len() as u32 - 1
        });
        queue.push_back(id.index());
    }
    let mut ordered: Vec<usize> = queue.iter().copied().collect();
    ordered.sort_unstable();
    queue = ordered.into();
    while let Some(r) = queue.pop_front() {
        for k in 0..circuit.nodes[r].fanin.len() {
            let i = circuit.nodes[r].fanin[k].index();
            if relation[i] == UNNAMED {
                relation[i] = relation[r];
                queue.push_back(i);
            }
        }
    }
    let mut counts = vec![0usize; names.len() + 1];
    for r in relation {
        counts[(r as usize).min(names.len())] += 1;
    }
    names.push("(unnamed)".to_owned());
    let mut by_relation: BTreeMap<String, usize> = BTreeMap::new();
    for (name, count) in names.into_iter().zip(counts).filter(|&(_, c)| c > 0) {
        *by_relation.entry(name).or_insert(0) += count;
    }
    let mut relations: Vec<(String, usize)> = by_relation.into_iter().collect();
    relations.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));

    let mut fan_out: Vec<usize> = (0..n).map(|i| readers.of_node(i).len()).collect();
    for root in circuit.roots() {
        fan_out[root.index()] += 1;
    }
    let gates = circuit
        .nodes
        .iter()
        .filter(|node| matches!(node.kind, NodeKind::And | NodeKind::Or | NodeKind::Not));
    let mut layer_widths = vec![0; layering.layers];
    for &level in &layering.level {
        layer_widths[level as usize] += 1;
    }
    Breakdown {
        kinds: circuit.counts(),
        relations,
        fan_in: histogram(gates.map(|node| node.fanin.len())),
        fan_out: histogram(fan_out.into_iter()),
        layer_widths,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_double() {
        let h = histogram([0, 1, 2, 3, 4, 5, 8, 9, 100].into_iter());
        let spans: Vec<(usize, usize, usize)> = h.iter().map(|b| (b.min, b.max, b.nodes)).collect();
        assert_eq!(
            spans,
            [
                (0, 0, 1),
                (1, 1, 1),
                (2, 2, 1),
                (3, 4, 2),
                (5, 8, 2),
                (9, 16, 1),
                (65, 128, 1)
            ]
        );
    }

    #[test]
    fn gates_belong_to_the_sentence_they_serve() {
        let game = "(role r) (init a) (init b)
            (<= (legal r go) (true a) (true b)) (<= (next a) (true a) (does r go))
            (<= terminal (not (true a))) (goal r 100)";
        let loaded = crate::load(game, &crate::LoadConfig::default()).unwrap();
        let b = breakdown(&loaded.circuit, &loaded.layering);
        let count = |name: &str| b.relations.iter().find(|(r, _)| r == name).map_or(0, |r| r.1);
        assert_eq!(count("true a") + count("true b"), 2, "{:?}", b.relations);
        assert_eq!(count("does"), 1, "{:?}", b.relations);
        let total: usize = b.relations.iter().map(|r| r.1).sum();
        assert_eq!(total, loaded.circuit.nodes.len());
        let gates = ["and", "or", "not"].map(|k| b.kinds.get(k).copied().unwrap_or(0));
        assert_eq!(
            b.fan_in.iter().map(|x| x.nodes).sum::<usize>(),
            gates.iter().sum::<usize>()
        );
        assert_eq!(b.layer_widths.iter().sum::<usize>(), total);
    }
}
