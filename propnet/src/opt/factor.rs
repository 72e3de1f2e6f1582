//! Factoring: in an `or` of `and` gates, an operand shared by several of the `and`s
//! is taken out once: `(a ∧ x) ∨ (a ∧ y) ∨ z` becomes `(a ∧ (x ∨ y)) ∨ z`. Frame
//! rules such as "a cell keeps its piece under every move that does not touch it"
//! ground to one `and` per cell and move; factored, they become one `and` per cell
//! over an `or` of moves. Exact: every node keeps its value.

use crate::ir::{Circuit, NodeId, NodeKind};

/// Factors shared operands out of `or`s of single-reader `and`s; returns how many
/// `and`s were rewritten. Each `or` is factored in one pass: its terms' operands
/// are taken in order of how many terms share them, and each shared operand takes
/// the terms that have it and are not taken yet; the new inner `or`s are factored
/// in turn.
pub fn factor(circuit: &mut Circuit) -> usize {
    let mut readers = circuit.reader_counts();
    let mut rewritten = 0;
    let mut work: Vec<NodeId> = (0..circuit.nodes.len())
        .map(NodeId::new)
        .filter(|id| circuit.nodes[id.index()].kind == NodeKind::Or)
        .collect();
    while let Some(or) = work.pop() {
        // The single-reader `and` operands of this `or` may be rewritten freely.
        let terms: Vec<NodeId> = circuit.nodes[or.index()]
            .fanin
            .iter()
            .copied()
            .filter(|t| circuit.nodes[t.index()].kind == NodeKind::And && readers[t.index()] == 1)
            .collect();
        let groups = shared_groups(circuit, &terms);
        if groups.is_empty() {
            continue;
        }
        let mut taken: Vec<NodeId> = Vec::new();
        let mut factored: Vec<NodeId> = Vec::new();
        for (shared, group) in groups {
            rewritten += group.len();
            taken.extend(&group);
            readers[shared.index()] += 1;
            // A term that was `shared` alone makes the whole group equal to `shared`.
            if group.iter().any(|t| circuit.nodes[t.index()].fanin == [shared]) {
                for t in &group {
                    readers[t.index()] -= 1;
                }
                factored.push(shared);
            } else {
                for t in &group {
                    circuit.nodes[t.index()].fanin.retain(|&i| i != shared);
                }
                let rest = circuit.add(NodeKind::Or, group);
                work.push(rest);
                factored.push(circuit.add(NodeKind::And, vec![shared, rest]));
                readers.extend([1, 1]);
            }
        }
        taken.sort_unstable();
        let fanin = &mut circuit.nodes[or.index()].fanin;
        fanin.retain(|i| taken.binary_search(i).is_err());
        fanin.extend(factored);
    }
    rewritten
}

/// Groups of at least two `terms` sharing an operand, each term in one group at
/// most: operands shared by more terms first, lower ids first on ties.
fn shared_groups(circuit: &Circuit, terms: &[NodeId]) -> Vec<(NodeId, Vec<NodeId>)> {
    let mut pairs: Vec<(NodeId, u32)> = Vec::new();
    let mut fanin: Vec<NodeId> = Vec::new();
    for (t, term) in terms.iter().enumerate() {
        fanin.clone_from(&circuit.nodes[term.index()].fanin);
        fanin.sort_unstable();
        fanin.dedup();
        pairs.extend(fanin.iter().map(|&i| (i, t as u32)));
    }
    pairs.sort_unstable();
    // Runs of equal operands, largest first.
    let mut runs: Vec<(usize, usize)> = Vec::new();
    let mut start = 0;
    for end in 1..=pairs.len() {
        if end == pairs.len() || pairs[end].0 != pairs[start].0 {
            if end - start >= 2 {
                runs.push((start, end));
            }
            start = end;
        }
    }
    runs.sort_by(|a, b| {
        (b.1 - b.0)
            .cmp(&(a.1 - a.0))
            .then(pairs[a.0].0.cmp(&pairs[b.0].0))
    });
    let mut taken = vec![false; terms.len()];
    let mut groups = Vec::new();
    for (start, end) in runs {
        let free: Vec<u32> = pairs[start..end]
            .iter()
            .map(|&(_, t)| t)
            .filter(|&t| !taken[t as usize])
            .collect();
        if free.len() >= 2 {
            for &t in &free {
                taken[t as usize] = true;
            }
            groups.push((pairs[start].0, free.iter().map(|&t| terms[t as usize]).collect()));
        }
    }
    groups
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::Base;
    use crate::opt::tests::{eval_all, tiny};

    #[test]
    fn shared_input_is_taken_out_once() {
        let (mut c, [b, t, f]) = tiny();
        // A second base, so the terms differ: (b ∧ b2) ∨ (b ∧ ¬b2) ∨ (b2 ∧ t) ∨ f.
        let b2 = c.add(NodeKind::Base(1), vec![]);
        c.bases.push(Base {
            fact: c.bases[0].fact,
            next: b2,
            initial: false,
        });
        let not_b2 = c.add(NodeKind::Not, vec![b2]);
        let x = c.add(NodeKind::And, vec![b, b2]);
        let y = c.add(NodeKind::And, vec![not_b2, b]);
        let z = c.add(NodeKind::And, vec![b2, t]);
        let top = c.add(NodeKind::Or, vec![x, y, z, f]);
        c.terminal = top;
        let before = eval_all(&c);
        assert_eq!(factor(&mut c), 2);
        let after = eval_all(&c);
        assert_eq!(after[top.index()], before[top.index()]);
        // `b` now feeds one new `and` instead of two terms.
        let readers_of_b = c.nodes.iter().filter(|n| n.fanin.contains(&b)).count();
        assert_eq!(readers_of_b, 1);
        assert_eq!(c.nodes[top.index()].fanin.len(), 3);
    }

    #[test]
    fn terms_read_elsewhere_are_left_alone() {
        let (mut c, [b, t, _]) = tiny();
        let x = c.add(NodeKind::And, vec![b, t]);
        let y = c.add(NodeKind::And, vec![b, t, t]);
        let top = c.add(NodeKind::Or, vec![x, y]);
        c.terminal = top;
        c.bases[0].next = x; // x has a second reader
        assert_eq!(factor(&mut c), 0);
    }

    #[test]
    fn a_lone_shared_input_absorbs_its_group() {
        let (mut c, [b, t, _]) = tiny();
        let x = c.add(NodeKind::And, vec![b]);
        let y = c.add(NodeKind::And, vec![b, t]);
        let top = c.add(NodeKind::Or, vec![x, y]);
        c.terminal = top;
        let before = eval_all(&c);
        factor(&mut c);
        assert_eq!(c.nodes[top.index()].fanin, vec![b]);
        assert_eq!(eval_all(&c)[top.index()], before[top.index()]);
    }
}
