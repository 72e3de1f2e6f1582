//! Graphviz DOT: one node per circuit node, shaped and coloured by kind,
//! labelled with its sentence in canonical KIF where it stands for one, and
//! ranked by layer (bases and inputs on the left, outputs on the right). Output
//! nodes have a double border and their output names; a base whose transition
//! is drawn gets a dashed edge from its `next` node.

use super::cone::Output;
use crate::ir::{Circuit, NodeKind};
use crate::layout::Layering;
use std::fmt::Write;

/// Text inside a DOT string: quotes and backslashes escaped.
fn quoted(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '"' | '\\' => {
                out.push('\\');
                out.push(c);
            }
            '\n' => out.push_str("\\n"),
            _ => out.push(c),
        }
    }
    out.push('"');
    out
}

/// Shape and fill colour of each kind.
fn style(kind: NodeKind) -> (&'static str, &'static str) {
    match kind {
        NodeKind::Base(_) => ("box", "lightblue"),
        NodeKind::Input(_) => ("box", "palegreen"),
        NodeKind::Constant(_) => ("plaintext", "white"),
        NodeKind::And => ("ellipse", "lightyellow"),
        NodeKind::Or => ("ellipse", "orange"),
        NodeKind::Not => ("invtriangle", "pink"),
    }
}

/// The DOT text of the nodes selected by `member` (every node when it is all
/// true), named `title`, with the nodes of `marked` outputs (every output for
/// a whole circuit, the requested ones for a cone) bordered twice and named.
pub fn write(
    circuit: &Circuit,
    layering: &Layering,
    member: &[bool],
    marked: &[Output],
    title: &str,
) -> String {
    let mut output_names: Vec<Vec<&str>> = vec![Vec::new(); circuit.nodes.len()];
    for o in marked {
        if member[o.node.index()] {
            output_names[o.node.index()].push(&o.name);
        }
    }
    let mut out = String::new();
    let _ = writeln!(out, "digraph {} {{", quoted(title));
    out.push_str("  rankdir=LR;\n  node [style=filled, fontname=\"Helvetica\", fontsize=10];\n");
    let mut by_level: Vec<Vec<usize>> = vec![Vec::new(); layering.layers.max(1)];
    for (n, node) in circuit.nodes.iter().enumerate() {
        if !member[n] {
            continue;
        }
        by_level[layering.level[n] as usize].push(n);
        let (shape, colour) = style(node.kind);
        let mut label = match (circuit.labels.get(&crate::NodeId::new(n)), node.kind) {
            (_, NodeKind::Constant(value)) => value.to_string(),
            (Some(&term), _) => circuit.vocabulary.kif(term),
            (None, kind) => kind.name().to_owned(),
        };
        for &name in &output_names[n] {
            if name != label {
                label.push('\n');
                label.push_str(name);
            }
        }
        let border = if output_names[n].is_empty() { 1 } else { 2 };
        let _ = writeln!(
            out,
            "  n{n} [label={}, shape={shape}, fillcolor={colour}, peripheries={border}];",
            quoted(&label)
        );
    }
    for (n, node) in circuit.nodes.iter().enumerate() {
        if !member[n] {
            continue;
        }
        for operand in &node.fanin {
            if member[operand.index()] {
                let _ = writeln!(out, "  n{} -> n{n};", operand.index());
            }
        }
    }
    let mut base_node = vec![None; circuit.bases.len()];
    for (n, node) in circuit.nodes.iter().enumerate() {
        if let NodeKind::Base(b) = node.kind {
            base_node[b as usize] = Some(n);
        }
    }
    for (base, node) in circuit.bases.iter().zip(base_node) {
        if let Some(node) = node.filter(|&n| member[n] && member[base.next.index()]) {
            let _ = writeln!(
                out,
                "  n{} -> n{node} [style=dashed, constraint=false, label=\"next\"];",
                base.next.index()
            );
        }
    }
    for (level, nodes) in by_level.iter().enumerate() {
        if nodes.is_empty() {
            continue;
        }
        let list: Vec<String> = nodes.iter().map(|n| format!("n{n}")).collect();
        let _ = writeln!(out, "  {{ rank=same; {}; }} // layer {level}", list.join("; "));
    }
    out.push_str("}\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::export::cone::{cone, resolve};
    use crate::pipeline::load;

    #[test]
    fn cone_picture_names_sentences_and_outputs() {
        let game = "(role r) (init a) (<= (legal r go) (true a)) (<= (next b) (does r go))
            (<= (line x) (true a) (true b)) (<= terminal (line x)) (goal r 100)";
        let loaded = load(game, &Default::default()).unwrap();
        let c = &loaded.circuit;
        let roots = resolve(c, &["terminal".to_owned()]).unwrap();
        let member = cone(c, &roots);
        let text = write(c, &loaded.layering, &member, &roots, "t\"1");
        assert!(text.starts_with("digraph \"t\\\"1\" {"), "{text}");
        assert!(text.contains("(true a)") && text.contains("(true b)"), "{text}");
        assert!(text.contains("peripheries=2"), "{text}");
        assert!(!text.contains("(does r go)"), "{text}");
        assert!(text.contains("rank=same"), "{text}");
        assert!(text.trim_end().ends_with('}'));
    }
}
