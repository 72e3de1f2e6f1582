//! AIGER and-inverter graphs (format 1.9, <https://fmv.jku.at/aiger/>): every
//! `does` input is a primary input, every base a latch (its `next` node feeds
//! the latch, its initial value is the reset value), and the outputs are the
//! legal, goal, terminal and (GDL-II) sees nodes, in that order; the symbol table names them
//! all in KIF. And/or gates become trees of two-operand ands with inverted
//! edges, with constant folding and structural hashing.
//!
//! AIGER has no combinational cycles. A cyclic strongly connected component of
//! the circuit (all ands and ors: layering refuses negation on a cycle) is
//! unrolled into rounds of its least-fixpoint iteration from all-false. Each
//! round evaluates the members in one order, each reading the current round's
//! value of the members before it and the previous round's value of itself and
//! the members after it (the final values of nodes outside the component). Any
//! member true in the fixpoint has a derivation whose chain of members has
//! distinct nodes, and the chain waits for a new round only where it reads a
//! member placed no earlier than its reader: such "late" members are distinct,
//! so `late + 1` rounds reach the fixpoint, and never more than the component's
//! size. The order is a depth-first order along the data flow, so that late
//! members are few (the sources of back edges). The file's comment section
//! says how many components were unrolled and into how many rounds.

use super::cone::outputs;
use super::ExportError;
use crate::ir::{Circuit, NodeKind};
use crate::layout::Layering;
use rustc_hash::FxHashMap;
use std::fmt::Write;

/// An and-inverter graph ready to be written. Literals are `2 * variable + negated`;
/// variables are numbered inputs first, then latches, then and gates.
#[derive(Clone, Debug)]
pub struct Aig {
    /// Names of the primary inputs.
    pub inputs: Vec<String>,
    /// Latches: next-state literal, reset value, name.
    pub latches: Vec<(u32, bool, String)>,
    /// Outputs: literal and name.
    pub outputs: Vec<(u32, String)>,
    /// And gates `(lhs, rhs0, rhs1)` in order, with `lhs > rhs0 >= rhs1`.
    pub ands: Vec<(u32, u32, u32)>,
    /// Lines of the comment section.
    pub comments: Vec<String>,
}

/// Builds and gates with constant folding and structural hashing.
struct Builder {
    first_and: u32,
    ands: Vec<(u32, u32, u32)>,
    table: FxHashMap<(u32, u32), u32>,
    limit: usize,
}

const FALSE: u32 = 0;
const TRUE: u32 = 1;

impl Builder {
    fn and2(&mut self, a: u32, b: u32) -> Result<u32, ExportError> {
        let (hi, lo) = if a >= b { (a, b) } else { (b, a) };
        if lo == FALSE || hi == lo ^ 1 {
            return Ok(FALSE);
        }
        if lo == TRUE || hi == lo {
            return Ok(hi);
        }
        if let Some(&lit) = self.table.get(&(hi, lo)) {
            return Ok(lit);
        }
        if self.ands.len() >= self.limit {
            return Err(ExportError::new(format!(
                "the and-inverter graph needs more than {} and gates (raise --max-nodes)",
                self.limit
            )));
        }
        let lhs = 2 * (self.first_and + self.ands.len() as u32);
        self.ands.push((lhs, hi, lo));
        self.table.insert((hi, lo), lhs);
        Ok(lhs)
    }

    /// A balanced tree of two-input ands (true for no operand).
    fn and(&mut self, mut lits: Vec<u32>) -> Result<u32, ExportError> {
        if lits.is_empty() {
            return Ok(TRUE);
        }
        while lits.len() > 1 {
            let mut next = Vec::with_capacity(lits.len().div_ceil(2));
            for pair in lits.chunks(2) {
                next.push(match pair {
                    [a, b] => self.and2(*a, *b)?,
                    [a] => *a,
                    _ => unreachable!("chunks of two"),
                });
            }
            lits = next;
        }
        Ok(lits[0])
    }

    fn gate(&mut self, kind: NodeKind, lits: Vec<u32>) -> Result<u32, ExportError> {
        match kind {
            NodeKind::And => self.and(lits),
            NodeKind::Or => Ok(self.and(lits.into_iter().map(|l| l ^ 1).collect())? ^ 1),
            NodeKind::Not => Ok(lits[0] ^ 1),
            NodeKind::Constant(value) => Ok(u32::from(value)),
            NodeKind::Base(_) | NodeKind::Input(_) => unreachable!("bases and inputs are not gates"),
        }
    }
}

/// Members of a cyclic component (node indexes) in depth-first order along the
/// data flow, and how many of them are read by a member placed no later.
fn flow_order(circuit: &Circuit, component: &[crate::NodeId]) -> (Vec<usize>, usize) {
    let local: FxHashMap<usize, usize> = component
        .iter()
        .enumerate()
        .map(|(k, id)| (id.index(), k))
        .collect();
    let mut readers: Vec<Vec<usize>> = vec![Vec::new(); component.len()];
    for (k, id) in component.iter().enumerate() {
        for operand in &circuit.nodes[id.index()].fanin {
            if let Some(&j) = local.get(&operand.index()) {
                readers[j].push(k);
            }
        }
    }
    // Iterative depth-first search; reverse postorder puts every operand before
    // its reader except along back edges.
    let mut seen = vec![false; component.len()];
    let mut postorder = Vec::with_capacity(component.len());
    for start in 0..component.len() {
        if std::mem::replace(&mut seen[start], true) {
            continue;
        }
        let mut stack = vec![(start, 0usize)];
        while let Some((k, next)) = stack.last_mut() {
            let k = *k;
            if let Some(&r) = readers[k].get(*next) {
                *next += 1;
                if !std::mem::replace(&mut seen[r], true) {
                    stack.push((r, 0));
                }
            } else {
                postorder.push(k);
                stack.pop();
            }
        }
    }
    postorder.reverse();
    let mut position = vec![0; component.len()];
    for (p, &k) in postorder.iter().enumerate() {
        position[k] = p;
    }
    let late = (0..component.len())
        .filter(|&j| readers[j].iter().any(|&k| position[k] <= position[j]))
        .count();
    (
        postorder.into_iter().map(|k| component[k].index()).collect(),
        late,
    )
}

/// The and-inverter graph of a layered circuit, refusing to exceed `max_ands` and gates.
pub fn build(circuit: &Circuit, layering: &Layering, max_ands: usize) -> Result<Aig, ExportError> {
    let v = &circuit.vocabulary;
    let (ni, nl) = (circuit.inputs.len() as u32, circuit.bases.len() as u32);
    let mut b = Builder {
        first_and: ni + nl + 1,
        ands: Vec::new(),
        table: FxHashMap::default(),
        limit: max_ands,
    };
    let mut lit = vec![FALSE; circuit.nodes.len()];
    let (mut unrolled, mut largest, mut most_rounds) = (0usize, 0usize, 0usize);
    for component in layering.components.iter() {
        let first = &circuit.nodes[component[0].index()];
        let cyclic = component.len() > 1 || first.fanin.contains(&component[0]);
        if !cyclic {
            let n = component[0].index();
            lit[n] = match first.kind {
                NodeKind::Input(i) => 2 * (1 + i),
                NodeKind::Base(l) => 2 * (1 + ni + l),
                kind => b.gate(kind, first.fanin.iter().map(|i| lit[i.index()]).collect())?,
            };
            continue;
        }
        let (order, late) = flow_order(circuit, component);
        unrolled += 1;
        largest = largest.max(component.len());
        most_rounds = most_rounds.max(late + 1);
        // Round 0: every member false; the values of other nodes are final.
        for id in component {
            lit[id.index()] = FALSE;
        }
        for _ in 0..=late {
            let mut changed = false;
            for &n in &order {
                let node = &circuit.nodes[n];
                let fanin = node.fanin.iter().map(|i| lit[i.index()]).collect();
                let value = b.gate(node.kind, fanin).map_err(|e| {
                    ExportError::new(format!(
                        "{} while unrolling a cyclic component of {} members into {} rounds",
                        e.message,
                        component.len(),
                        late + 1
                    ))
                })?;
                changed |= value != lit[n];
                lit[n] = value;
            }
            if !changed {
                break; // the same literals again: every later round is this one
            }
        }
    }
    let role = |r: usize| v.kif(circuit.roles[r]);
    let mut comments = vec![
        "ggpnet: bases are latches (next as latch input, initial value as reset value),".to_owned(),
        "does inputs are primary inputs; outputs are legal, goal, terminal, sees.".to_owned(),
    ];
    if unrolled > 0 {
        comments.push(format!(
            "{unrolled} cyclic strongly connected component(s) (largest: {largest} members) were unrolled \
             into at most {most_rounds} rounds of least-fixpoint iteration from all-false; a component \
             whose members read L members not yet computed in their round gets L + 1 rounds, which reach \
             its least fixpoint (L + 1 is at most its number of members)."
        ));
    }
    Ok(Aig {
        inputs: circuit
            .inputs
            .iter()
            .map(|i| format!("(does {} {})", role(i.role), v.kif(i.action)))
            .collect(),
        latches: circuit
            .bases
            .iter()
            .map(|base| {
                (
                    lit[base.next.index()],
                    base.initial,
                    format!("(true {})", v.kif(base.fact)),
                )
            })
            .collect(),
        outputs: {
            let all = outputs(circuit);
            let state_outputs = circuit.inputs.len() + circuit.goals.len() + 1;
            let percepts = all.len() - circuit.percepts.len();
            all.into_iter()
                .enumerate()
                .filter(|&(i, _)| i < state_outputs || i >= percepts)
                .map(|(_, o)| (lit[o.node.index()], o.name))
                .collect()
        },
        ands: b.ands,
        comments,
    })
}

impl Aig {
    fn header(&self, magic: &str) -> String {
        let (i, l, a) = (self.inputs.len(), self.latches.len(), self.ands.len());
        format!("{magic} {} {i} {l} {} {a}\n", i + l + a, self.outputs.len())
    }

    fn latch_line(&self, next: u32, initial: bool) -> String {
        if initial {
            format!("{next} 1\n")
        } else {
            format!("{next}\n")
        }
    }

    fn symbols_and_comments(&self, out: &mut String) {
        for (k, name) in self.inputs.iter().enumerate() {
            let _ = writeln!(out, "i{k} {name}");
        }
        for (k, (_, _, name)) in self.latches.iter().enumerate() {
            let _ = writeln!(out, "l{k} {name}");
        }
        for (k, (_, name)) in self.outputs.iter().enumerate() {
            let _ = writeln!(out, "o{k} {name}");
        }
        out.push_str("c\n");
        for line in &self.comments {
            let _ = writeln!(out, "{line}");
        }
    }

    /// The ASCII form (`.aag`).
    pub fn to_ascii(&self) -> String {
        let mut out = self.header("aag");
        for k in 0..self.inputs.len() {
            let _ = writeln!(out, "{}", 2 * (k + 1));
        }
        let first_latch = self.inputs.len() + 1;
        for (k, &(next, initial, _)) in self.latches.iter().enumerate() {
            out.push_str(&format!("{} ", 2 * (first_latch + k)));
            out.push_str(&self.latch_line(next, initial));
        }
        for (lit, _) in &self.outputs {
            let _ = writeln!(out, "{lit}");
        }
        for (lhs, rhs0, rhs1) in &self.ands {
            let _ = writeln!(out, "{lhs} {rhs0} {rhs1}");
        }
        self.symbols_and_comments(&mut out);
        out
    }

    /// The binary form (`.aig`): inputs and latch outputs implicit, and gates
    /// as two delta-encoded variable-length numbers each.
    pub fn to_binary(&self) -> Vec<u8> {
        let mut text = self.header("aig");
        for &(next, initial, _) in &self.latches {
            text.push_str(&self.latch_line(next, initial));
        }
        for (lit, _) in &self.outputs {
            let _ = writeln!(text, "{lit}");
        }
        let mut out = text.into_bytes();
        let put = |mut x: u32, out: &mut Vec<u8>| {
            while x >= 0x80 {
                out.push((x & 0x7f) as u8 | 0x80);
                x >>= 7;
            }
            out.push(x as u8);
        };
        for &(lhs, rhs0, rhs1) in &self.ands {
            put(lhs - rhs0, &mut out);
            put(rhs0 - rhs1, &mut out);
        }
        let mut tail = String::new();
        self.symbols_and_comments(&mut tail);
        out.extend_from_slice(tail.as_bytes());
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pipeline::load;

    /// Evaluates the graph: values of every variable for the given inputs and latch values.
    fn eval(aig: &Aig, inputs: &[bool], latches: &[bool]) -> Vec<bool> {
        let mut var = vec![false; 1 + inputs.len() + latches.len() + aig.ands.len()];
        var[1..=inputs.len()].copy_from_slice(inputs);
        var[1 + inputs.len()..1 + inputs.len() + latches.len()].copy_from_slice(latches);
        let value = |var: &[bool], l: u32| var[(l / 2) as usize] ^ (l % 2 == 1);
        for &(lhs, a, b) in &aig.ands {
            var[(lhs / 2) as usize] = value(&var, a) && value(&var, b);
        }
        var
    }

    #[test]
    fn reachability_cycle_unrolls_to_its_fixpoint() {
        // path(x) holds when a chain of edges links start to x; the edges come from the state.
        let game = "(role r) (init (e 1 2)) (init (e 2 3)) (init (e 3 1))
            (<= (legal r go) (true (e 1 2))) (<= (next (e ?x ?y)) (true (e ?x ?y)) (does r go))
            (node 1) (node 2) (node 3) (<= (path 1) (true (e 1 2)))
            (<= (path ?y) (path ?x) (true (e ?x ?y)))
            (<= terminal (path 3)) (goal r 100)";
        let loaded = load(game, &Default::default()).unwrap();
        assert!(loaded.layering.cycles > 0, "the game must have a cycle");
        let aig = build(&loaded.circuit, &loaded.layering, 1_000_000).unwrap();
        assert!(aig.comments.iter().any(|c| c.contains("unrolled")));
        let terminal = aig.outputs.iter().find(|(_, n)| n == "terminal").unwrap().0;
        let facts: Vec<&str> = aig.latches.iter().map(|(_, _, n)| n.as_str()).collect();
        for mask in 0..(1u32 << facts.len()) {
            let latches: Vec<bool> = (0..facts.len()).map(|k| mask >> k & 1 == 1).collect();
            let has = |f: &str| latches[facts.iter().position(|&x| x == f).unwrap()];
            let expected = has("(true (e 1 2))") && has("(true (e 2 3))");
            let var = eval(&aig, &[false], &latches);
            let got = var[(terminal / 2) as usize] ^ (terminal % 2 == 1);
            assert_eq!(got, expected, "latches {latches:?}");
        }
    }

    #[test]
    fn files_follow_the_format() {
        let game = "(role r) (init a) (<= (legal r go) (true a)) (<= (next b) (does r go))
            (<= (next a) (true a) (not (does r go))) (<= terminal (true b)) (goal r 100)";
        let loaded = load(game, &Default::default()).unwrap();
        let aig = build(&loaded.circuit, &loaded.layering, 1_000_000).unwrap();
        let ascii = aig.to_ascii();
        let (i, l, o, a) = (
            aig.inputs.len(),
            aig.latches.len(),
            aig.outputs.len(),
            aig.ands.len(),
        );
        assert!(
            ascii.starts_with(&format!("aag {} {i} {l} {o} {a}\n", i + l + a)),
            "{ascii}"
        );
        assert!(
            ascii.contains("i0 (does r go)\n") && ascii.contains("o0 (legal r go)\n"),
            "{ascii}"
        );
        assert!(aig
            .latches
            .iter()
            .any(|&(_, init, ref n)| init && n == "(true a)"));
        let binary = aig.to_binary();
        assert!(binary.starts_with(format!("aig {} {i} {l} {o} {a}\n", i + l + a).as_bytes()));
        for &(lhs, rhs0, rhs1) in &aig.ands {
            assert!(lhs > rhs0 && rhs0 >= rhs1);
        }
        let e = build(&loaded.circuit, &loaded.layering, 0);
        assert!(aig.ands.is_empty() || e.unwrap_err().message.contains("more than 0 and gates"));
    }
}
