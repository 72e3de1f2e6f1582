//! Exclusive groups: sets of nodes of which exactly one is true whenever the
//! circuit is evaluated. Each role's inputs are one (every joint move plays exactly
//! one move per role), and so are the exactly-one groups of bases that
//! [`groups`](super::groups) proves (one piece per cell). An `or` over most of a
//! group is the negation of the `or` over the rest:
//! `does(m1) ∨ … ∨ does(m300)` becomes `¬(does(m301) ∨ … ∨ does(m306))`.
//! Frame rules ("every move that does not touch this cell") shrink from hundreds
//! of inputs to a handful. This relies on legal play (one move per role, reachable
//! states); it is not an equivalence over arbitrary input and state values.

use crate::ir::{Circuit, NodeId, NodeKind};

/// The inputs of each role: exactly one of them is played in every joint move.
pub fn role_groups(circuit: &Circuit) -> Vec<Vec<NodeId>> {
    let mut groups: Vec<Vec<NodeId>> = vec![Vec::new(); circuit.roles.len()];
    for (id, node) in circuit.nodes.iter().enumerate() {
        if let NodeKind::Input(m) = node.kind {
            groups[circuit.inputs[m as usize].role].push(NodeId::new(id));
        }
    }
    groups
}

/// Replaces, in every `or`, the members of each exactly-one group (sorted node
/// lists) by the negated `or` of the group's other members where that is shorter;
/// returns how many replacements were made.
pub fn complement_exclusive(circuit: &mut Circuit, groups: &[Vec<NodeId>]) -> usize {
    // (member, group) pairs sorted by member: a node may belong to several groups.
    let mut membership: Vec<(NodeId, usize)> = groups
        .iter()
        .enumerate()
        .flat_map(|(g, members)| members.iter().map(move |&m| (m, g)))
        .collect();
    membership.sort_unstable();
    let mut replaced = 0;
    for or in 0..circuit.nodes.len() {
        if circuit.nodes[or].kind != NodeKind::Or {
            continue;
        }
        let mut mine: Vec<(usize, NodeId)> = Vec::new();
        for &i in &circuit.nodes[or].fanin {
            let first = membership.partition_point(|&(m, _)| m < i);
            mine.extend(
                membership[first..]
                    .iter()
                    .take_while(|&&(m, _)| m == i)
                    .map(|&(_, g)| (g, i)),
            );
        }
        mine.sort_unstable();
        mine.dedup();
        let mut removed: Vec<NodeId> = Vec::new();
        for run in mine.chunk_by(|a, b| a.0 == b.0) {
            let all = &groups[run[0].0];
            let group: Vec<NodeId> = run
                .iter()
                .map(|&(_, i)| i)
                .filter(|i| !removed.contains(i))
                .collect();
            // Only a group of more than half the members (plus the two new gates) gains,
            // and only when the negated rest (one `not`, one `or`) is smaller. The rest
            // is listed only then: a role's inputs may number tens of thousands, and
            // most `or`s read a few of them.
            if group.len() < 4 || group.len() * 2 <= all.len() + 2 {
                continue;
            }
            let rest: Vec<NodeId> = all
                .iter()
                .copied()
                .filter(|i| group.binary_search(i).is_err())
                .collect();
            if rest.len() + 2 >= group.len() {
                continue;
            }
            let negated = if rest.is_empty() {
                circuit.add(NodeKind::Constant(true), vec![])
            } else {
                let any_rest = circuit.add(NodeKind::Or, rest);
                circuit.add(NodeKind::Not, vec![any_rest])
            };
            let fanin = &mut circuit.nodes[or].fanin;
            fanin.retain(|i| group.binary_search(i).is_err());
            fanin.push(negated);
            removed.extend(group);
            replaced += 1;
        }
    }
    replaced
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::Input;
    use crate::opt::tests::tiny;

    /// The value of `node` when role 0 plays input `played` (an index into its inputs).
    fn value(c: &Circuit, node: NodeId, played: NodeId) -> bool {
        let n = &c.nodes[node.index()];
        match n.kind {
            NodeKind::Input(_) => node == played,
            NodeKind::Constant(v) => v,
            NodeKind::And => n.fanin.iter().all(|&i| value(c, i, played)),
            NodeKind::Or => n.fanin.iter().any(|&i| value(c, i, played)),
            NodeKind::Not => !value(c, n.fanin[0], played),
            NodeKind::Base(_) => false,
        }
    }

    #[test]
    fn most_of_a_roles_inputs_become_the_negated_rest() {
        let (mut c, [b, _, _]) = tiny();
        c.roles.push(c.bases[0].fact);
        let inputs: Vec<NodeId> = (0..8)
            .map(|m| {
                let id = c.add(NodeKind::Input(m), vec![]);
                c.inputs.push(Input {
                    role: 0,
                    action: c.bases[0].fact,
                    legal: b,
                });
                id
            })
            .collect();
        let top = c.add(NodeKind::Or, inputs[..7].to_vec());
        c.terminal = top;
        let before: Vec<bool> = inputs.iter().map(|&p| value(&c, top, p)).collect();
        let groups = role_groups(&c);
        assert_eq!(complement_exclusive(&mut c, &groups), 1);
        assert_eq!(c.nodes[top.index()].fanin.len(), 1);
        let after: Vec<bool> = inputs.iter().map(|&p| value(&c, top, p)).collect();
        assert_eq!(before, after);
        assert_eq!(after, [true, true, true, true, true, true, true, false]);
    }

    #[test]
    fn small_groups_stay() {
        let (mut c, [b, _, _]) = tiny();
        c.roles.push(c.bases[0].fact);
        let inputs: Vec<NodeId> = (0..8)
            .map(|m| {
                c.inputs.push(Input {
                    role: 0,
                    action: c.bases[0].fact,
                    legal: b,
                });
                c.add(NodeKind::Input(m), vec![])
            })
            .collect();
        let top = c.add(NodeKind::Or, inputs[..4].to_vec());
        c.terminal = top;
        let groups = role_groups(&c);
        assert_eq!(complement_exclusive(&mut c, &groups), 0);
    }
}
