//! Exclusive inputs: in every joint move each role plays exactly one of its
//! inputs, so an `or` over most of a role's inputs is the negation of the `or`
//! over the rest: `does(m1) ∨ … ∨ does(m300)` becomes `¬(does(m301) ∨ … ∨ does(m306))`.
//! Frame rules ("every move that does not touch this cell") shrink from hundreds
//! of inputs to a handful. Unlike the other passes this one relies on the
//! one-move-per-role invariant, which holds whenever the move part is evaluated;
//! it is not an equivalence over arbitrary input values.

use crate::circuit::{Circuit, NodeId, NodeKind};

/// Replaces, in every `or`, each role's inputs by the negated `or` of that role's
/// other inputs where that is shorter; returns how many groups were replaced.
pub fn complement_exclusive_inputs(circuit: &mut Circuit) -> usize {
    let roles = circuit.roles.len();
    let mut role_inputs: Vec<Vec<NodeId>> = vec![Vec::new(); roles];
    let mut role_of = vec![usize::MAX; circuit.nodes.len()];
    for (id, node) in circuit.nodes.iter().enumerate() {
        if let NodeKind::Input(m) = node.kind {
            let role = circuit.inputs[m as usize].role;
            role_inputs[role].push(NodeId::new(id));
            role_of[id] = role;
        }
    }
    let mut replaced = 0;
    for or in 0..circuit.nodes.len() {
        if circuit.nodes[or].kind != NodeKind::Or {
            continue;
        }
        let mut mine: Vec<Vec<NodeId>> = vec![Vec::new(); roles];
        for &i in &circuit.nodes[or].inputs {
            if role_of[i.index()] != usize::MAX {
                mine[role_of[i.index()]].push(i);
            }
        }
        for (role, mut group) in mine.into_iter().enumerate() {
            group.sort_unstable();
            group.dedup();
            let all = &role_inputs[role];
            // Only a group of more than half the role's inputs (plus the two new gates) gains.
            if group.len() < 4 || group.len() * 2 <= all.len() + 2 {
                continue;
            }
            let rest: Vec<NodeId> = all
                .iter()
                .copied()
                .filter(|i| group.binary_search(i).is_err())
                .collect();
            // Worth it when the negated rest (one `not`, one `or`) is smaller than the group.
            if group.len() < 4 || rest.len() + 2 >= group.len() {
                continue;
            }
            let negated = if rest.is_empty() {
                circuit.add(NodeKind::Constant(true), vec![])
            } else {
                let any_rest = circuit.add(NodeKind::Or, rest);
                circuit.add(NodeKind::Not, vec![any_rest])
            };
            role_of.resize(circuit.nodes.len(), usize::MAX);
            let inputs = &mut circuit.nodes[or].inputs;
            inputs.retain(|i| group.binary_search(i).is_err());
            inputs.push(negated);
            replaced += 1;
        }
    }
    replaced
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::circuit::Input;
    use crate::optimize::tests::tiny;

    /// The value of `node` when role 0 plays input `played` (an index into its inputs).
    fn value(c: &Circuit, node: NodeId, played: NodeId) -> bool {
        let n = &c.nodes[node.index()];
        match n.kind {
            NodeKind::Input(_) => node == played,
            NodeKind::Constant(v) => v,
            NodeKind::And => n.inputs.iter().all(|&i| value(c, i, played)),
            NodeKind::Or => n.inputs.iter().any(|&i| value(c, i, played)),
            NodeKind::Not => !value(c, n.inputs[0], played),
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
        assert_eq!(complement_exclusive_inputs(&mut c), 1);
        assert_eq!(c.nodes[top.index()].inputs.len(), 1);
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
        assert_eq!(complement_exclusive_inputs(&mut c), 0);
    }
}
