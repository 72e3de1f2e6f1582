//! Reachable values: nodes whose value is the same in every reachable state and
//! under every legal joint move become constants. This catches base propositions
//! that never change (static facts kept in the state, and the many cell contents
//! the grounder's over-approximation admits but no move can produce), inputs that
//! are never legal, and everything those fix downstream.
//!
//! The analysis is an abstract interpretation over intervals `lo ≤ value ≤ hi`.
//! It assumes that a set of bases keeps its initial values and that a set of
//! inputs is never legal, evaluates every node under those assumptions (other
//! bases and inputs unknown), and drops any base whose `next` may differ from its
//! initial value and any input whose `legal` may hold, until the assumptions are
//! inductive: true in the initial state and kept by every legal transition. Each
//! node's interval only widens (`lo` falls, `hi` rises) and is kept with counts of
//! operands, so the whole analysis is linear in the circuit's edges. Inside a cycle
//! (recursion within one state) `lo` is taken as false, which is safe; `hi` is the
//! least fixpoint.
//!
//! Like [`exclusive`](super::exclusive) this pass is exact only for states reached
//! by legal play from the initial state, which is all a game ever evaluates; it is
//! not an equivalence over arbitrary states and inputs.

use crate::ir::{components, Readers};
use crate::ir::{Circuit, NodeId, NodeKind};

/// Intervals of every node, and the counts of operands they were computed from.
struct Intervals {
    lo: Vec<bool>,
    hi: Vec<bool>,
    /// Number of operands (with repetition) whose `lo` is true.
    operands_lo: Vec<u32>,
    /// Number of operands (with repetition) whose `hi` is true.
    operands_hi: Vec<u32>,
    /// Nodes inside a cycle: their `lo` stays false.
    cyclic: Vec<bool>,
    readers: Readers,
    queue: Vec<u32>,
}

impl Intervals {
    /// The interval node `n` takes from its operands' counts.
    fn evaluate(&self, circuit: &Circuit, n: usize) -> (bool, bool) {
        let node = &circuit.nodes[n];
        let arity = node.fanin.len() as u32;
        let (lo, hi) = match node.kind {
            NodeKind::And => (self.operands_lo[n] == arity, self.operands_hi[n] == arity),
            NodeKind::Or => (self.operands_lo[n] > 0, self.operands_hi[n] > 0),
            NodeKind::Not => {
                let operand = node.fanin[0].index();
                (!self.hi[operand], !self.lo[operand])
            }
            _ => return (self.lo[n], self.hi[n]),
        };
        (lo && !self.cyclic[n], hi)
    }

    /// Widens node `n` to `(lo, hi)` (each bound may only move outward) and queues its readers.
    fn widen(&mut self, n: usize, lo: bool, hi: bool) {
        if self.lo[n] && !lo {
            self.lo[n] = false;
            for &r in self.readers.of_node(n) {
                self.operands_lo[r as usize] -= 1;
                self.queue.push(r);
            }
        }
        if !self.hi[n] && hi {
            self.hi[n] = true;
            for &r in self.readers.of_node(n) {
                self.operands_hi[r as usize] += 1;
                self.queue.push(r);
            }
        }
    }

    /// Re-evaluates queued gates until nothing changes.
    fn settle(&mut self, circuit: &Circuit) {
        while let Some(n) = self.queue.pop() {
            let (lo, hi) = self.evaluate(circuit, n as usize);
            self.widen(n as usize, lo, hi);
        }
    }
}

/// Turns every node fixed in reachable play into a constant; returns how many
/// gates and references changed.
pub fn fix_reachable_constants(circuit: &mut Circuit) -> usize {
    let n = circuit.nodes.len();
    let readers = Readers::of(circuit);
    let cyclic = cyclic_nodes(circuit, &readers);
    // Start at the empty interval (lo true, hi false) for gates, at the assumptions for
    // bases (their initial value) and inputs (never played), then let the gates settle.
    let mut lo = vec![true; n];
    let mut hi = vec![false; n];
    for (i, node) in circuit.nodes.iter().enumerate() {
        let value = match node.kind {
            NodeKind::Base(b) => Some(circuit.bases[b as usize].initial),
            NodeKind::Input(_) => Some(false),
            NodeKind::Constant(v) => Some(v),
            NodeKind::And | NodeKind::Or | NodeKind::Not => None,
        };
        if let Some(v) = value {
            lo[i] = v;
            hi[i] = v;
        } else if cyclic[i] {
            lo[i] = false;
        }
    }
    let count = |of: &[bool]| -> Vec<u32> {
        circuit
            .nodes
            .iter()
            .map(|node| node.fanin.iter().filter(|i| of[i.index()]).count() as u32)
            .collect()
    };
    let mut intervals = Intervals {
        operands_lo: count(&lo),
        operands_hi: count(&hi),
        lo,
        hi,
        cyclic,
        readers,
        queue: (0..n as u32)
            .filter(|&i| {
                matches!(
                    circuit.nodes[i as usize].kind,
                    NodeKind::And | NodeKind::Or | NodeKind::Not
                )
            })
            .collect(),
    };
    let (base_nodes, input_nodes) = circuit.interface_nodes();
    loop {
        intervals.settle(circuit);
        let mut widened = false;
        for (b, base) in circuit.bases.iter().enumerate() {
            let (node, next) = (base_nodes[b].index(), base.next.index());
            let fixed = intervals.lo[node] == intervals.hi[node];
            if fixed && (intervals.lo[next] != base.initial || intervals.hi[next] != base.initial) {
                intervals.widen(node, false, true);
                widened = true;
            }
        }
        for (m, input) in circuit.inputs.iter().enumerate() {
            let node = input_nodes[m].index();
            if !intervals.hi[node] && intervals.hi[input.legal.index()] {
                intervals.widen(node, false, true);
                widened = true;
            }
        }
        if !widened {
            break;
        }
    }
    apply(circuit, &intervals.lo, &intervals.hi)
}

/// Per node, whether it lies on a cycle (in a strongly connected component
/// of several nodes, or reading itself). Most circuits have no cycle, which a
/// topological sort over the `readers` shows at a fraction of the cost of the
/// components, asked only when there is one.
fn cyclic_nodes(circuit: &Circuit, readers: &Readers) -> Vec<bool> {
    let mut cyclic = vec![false; circuit.nodes.len()];
    if is_acyclic(circuit, readers) {
        return cyclic;
    }
    for component in components(circuit).iter() {
        let first = component[0].index();
        if component.len() > 1 || circuit.nodes[first].fanin.contains(&component[0]) {
            for id in component {
                cyclic[id.index()] = true;
            }
        }
    }
    cyclic
}

/// Whether every node of `circuit` can be ordered after its operands (Kahn's
/// algorithm: a node is ready once each of its operand positions is).
fn is_acyclic(circuit: &Circuit, readers: &Readers) -> bool {
    let mut waiting: Vec<u32> = circuit.nodes.iter().map(|node| node.fanin.len() as u32).collect();
    let mut ready: Vec<u32> = (0..waiting.len() as u32)
        .filter(|&i| waiting[i as usize] == 0)
        .collect();
    let mut ordered = 0;
    while let Some(node) = ready.pop() {
        ordered += 1;
        for &reader in readers.of_node(node as usize) {
            let left = &mut waiting[reader as usize];
            *left -= 1;
            if *left == 0 {
                ready.push(reader);
            }
        }
    }
    ordered == circuit.nodes.len()
}

/// Makes fixed gates constants and points every reference to a fixed base or input
/// at a constant; returns how many gates and references changed.
fn apply(circuit: &mut Circuit, lo: &[bool], hi: &[bool]) -> usize {
    let fixed = |i: usize| (lo[i] == hi[i]).then_some(lo[i]);
    let mut changed = 0;
    for (i, node) in circuit.nodes.iter_mut().enumerate() {
        if let (Some(v), NodeKind::And | NodeKind::Or | NodeKind::Not) = (fixed(i), node.kind) {
            node.kind = NodeKind::Constant(v);
            node.fanin.clear();
            changed += 1;
        }
    }
    let interface = |kind: NodeKind| matches!(kind, NodeKind::Base(_) | NodeKind::Input(_));
    let pinned: Vec<(usize, bool)> = (0..circuit.nodes.len())
        .filter(|&i| interface(circuit.nodes[i].kind))
        .filter_map(|i| fixed(i).map(|v| (i, v)))
        .collect();
    if pinned.is_empty() {
        return changed;
    }
    let constants = [
        circuit.add(NodeKind::Constant(false), vec![]),
        circuit.add(NodeKind::Constant(true), vec![]),
    ];
    let mut map: Vec<NodeId> = (0..circuit.nodes.len()).map(NodeId::new).collect();
    for &(i, v) in &pinned {
        map[i] = constants[v as usize];
    }
    changed += circuit
        .nodes
        .iter()
        .flat_map(|node| &node.fanin)
        .filter(|input| map[input.index()] != **input)
        .count();
    circuit.substitute(&map);
    // The constants stand for no sentence, whatever the pinned nodes stood for.
    for constant in constants {
        circuit.labels.remove(&constant);
    }
    changed
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::{Base, Input};
    use crate::opt::tests::tiny;

    /// Adds a base with the given initial value; its `next` is set later.
    fn add_base(c: &mut Circuit, initial: bool) -> NodeId {
        let index = c.bases.len() as u32;
        let node = c.add(NodeKind::Base(index), vec![]);
        let fact = c.bases[0].fact;
        c.bases.push(Base {
            fact,
            next: node,
            initial,
        });
        node
    }

    /// The nodes on a cycle, a gate reading itself included, and no other
    /// (not those reading a cycle, nor a gate reading one operand twice).
    #[test]
    fn cyclic_nodes_are_those_on_a_cycle() {
        let (mut c, [b0, t, _]) = tiny();
        let twice = c.add(NodeKind::And, vec![b0, b0]);
        assert!(is_acyclic(&c, &Readers::of(&c)));
        assert_eq!(cyclic_nodes(&c, &Readers::of(&c)), vec![false; c.nodes.len()]);
        let x = c.add(NodeKind::Or, vec![t]);
        let y = c.add(NodeKind::And, vec![x, twice]);
        c.nodes[x.index()].fanin.push(y);
        let after = c.add(NodeKind::Not, vec![y]);
        let own = c.add(NodeKind::Or, vec![b0]);
        c.nodes[own.index()].fanin.push(own);
        let readers = Readers::of(&c);
        assert!(!is_acyclic(&c, &readers));
        let cyclic = cyclic_nodes(&c, &readers);
        let on_cycle: Vec<usize> = (0..c.nodes.len()).filter(|&i| cyclic[i]).collect();
        assert_eq!(on_cycle, vec![x.index(), y.index(), own.index()]);
        assert!(!cyclic[after.index()] && !cyclic[twice.index()]);
    }

    #[test]
    fn a_base_kept_by_its_frame_rule_is_constant() {
        let (mut c, [b0, _, _]) = tiny();
        // base 0 toggles; base 1 is initially true and only ever keeps itself.
        let toggle = c.add(NodeKind::Not, vec![b0]);
        c.bases[0].next = toggle;
        let kept = add_base(&mut c, true);
        let frame = c.add(NodeKind::Or, vec![kept]);
        c.bases[1].next = frame;
        let goal = c.add(NodeKind::And, vec![b0, kept]);
        c.terminal = goal;
        assert!(fix_reachable_constants(&mut c) > 0);
        // the frame rule is the constant true, and the goal reads base 0 and true
        assert_eq!(c.nodes[frame.index()].kind, NodeKind::Constant(true));
        let fanin = &c.nodes[goal.index()].fanin;
        assert_eq!(fanin[0], b0);
        assert_eq!(c.nodes[fanin[1].index()].kind, NodeKind::Constant(true));
        assert_eq!(c.nodes[toggle.index()].kind, NodeKind::Not);
    }

    #[test]
    fn a_base_set_by_a_legal_move_is_not_constant() {
        let (mut c, [b0, _, _]) = tiny();
        c.roles.push(c.bases[0].fact);
        let legal = c.add(NodeKind::Not, vec![b0]);
        let play = c.add(NodeKind::Input(0), vec![]);
        c.inputs.push(Input {
            role: 0,
            action: c.bases[0].fact,
            legal,
        });
        let next = c.add(NodeKind::Or, vec![b0, play]);
        c.bases[0].next = next;
        c.terminal = b0;
        fix_reachable_constants(&mut c);
        assert_eq!(c.nodes[next.index()].kind, NodeKind::Or);
        assert_eq!(c.nodes[next.index()].fanin, vec![b0, play]);
    }

    #[test]
    fn a_move_that_is_never_legal_is_never_played() {
        let (mut c, [b0, _, _]) = tiny();
        c.roles.push(c.bases[0].fact);
        // legal only when base 0 holds, which it never does: initially false and
        // set only by the move itself.
        let play = c.add(NodeKind::Input(0), vec![]);
        c.inputs.push(Input {
            role: 0,
            action: c.bases[0].fact,
            legal: b0,
        });
        let next = c.add(NodeKind::Or, vec![play]);
        c.bases[0].next = next;
        let term = c.add(NodeKind::Not, vec![b0]);
        c.terminal = term;
        fix_reachable_constants(&mut c);
        assert_eq!(c.nodes[next.index()].kind, NodeKind::Constant(false));
        assert_eq!(c.nodes[term.index()].kind, NodeKind::Constant(true));
        assert_eq!(c.nodes[c.inputs[0].legal.index()].kind, NodeKind::Constant(false));
    }

    #[test]
    fn recursion_keeps_lo_false_and_finds_hi() {
        let (mut c, [b0, _, f]) = tiny();
        // a = or(b0, b), b = and(a): a cycle fed by a base that stays false.
        let a = c.add(NodeKind::Or, vec![b0]);
        let b = c.add(NodeKind::And, vec![a]);
        c.nodes[a.index()].fanin.push(b);
        c.bases[0].next = f;
        c.terminal = b;
        fix_reachable_constants(&mut c);
        assert_eq!(c.nodes[a.index()].kind, NodeKind::Constant(false));
        assert_eq!(c.nodes[b.index()].kind, NodeKind::Constant(false));
    }
}
