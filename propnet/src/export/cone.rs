//! Named outputs and their cones. An output is named by its sentence in KIF,
//! with or without the outer parentheses: `terminal`, `legal white (mark 1 1)`,
//! `(goal white 100)`, `next (cell 1 1 x)`, `sees white (mark 1 1)`; any other sentence the circuit
//! still has a node for (`(line x)`) names that node. The cone of a set of
//! nodes is every node they read, directly or not, stopping at bases and inputs
//! (a transition is not followed: the cone is one state's computation).

use super::ExportError;
use crate::ir::{Circuit, NodeId};

/// An output of the state machine: its sentence and the node computing it.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct Output {
    /// The sentence in canonical KIF, e.g. `(legal white (mark 1 1))` or `terminal`.
    pub name: String,
    /// The node giving its value.
    pub node: NodeId,
}

/// Every output: legal per input, goal per goal, terminal, next per base, then
/// sees per percept (GDL-II).
pub fn outputs(circuit: &Circuit) -> Vec<Output> {
    let v = &circuit.vocabulary;
    let role = |r: usize| v.kif(circuit.roles[r]);
    let mut out: Vec<Output> = circuit
        .inputs
        .iter()
        .map(|i| Output {
            name: format!("(legal {} {})", role(i.role), v.kif(i.action)),
            node: i.legal,
        })
        .collect();
    out.extend(circuit.goals.iter().map(|g| Output {
        name: format!("(goal {} {})", role(g.role), g.value),
        node: g.node,
    }));
    out.push(Output {
        name: "terminal".to_owned(),
        node: circuit.terminal,
    });
    out.extend(circuit.bases.iter().map(|b| Output {
        name: format!("(next {})", v.kif(b.fact)),
        node: b.next,
    }));
    out.extend(circuit.percepts.iter().map(|p| Output {
        name: format!("(sees {} {})", role(p.role), v.kif(p.percept)),
        node: p.node,
    }));
    out
}

/// The canonical KIF of a sentence written with or without its outer parentheses.
///
/// ```
/// use ggpnet_propnet::export::cone::canonical_sentence;
/// assert_eq!(canonical_sentence("legal  white (mark 1 1)").unwrap(), "(legal white (mark 1 1))");
/// assert_eq!(canonical_sentence("TERMINAL").unwrap(), "terminal");
/// ```
pub fn canonical_sentence(text: &str) -> Result<String, ExportError> {
    let text = text.trim();
    let wrapped = if text.starts_with('(') || !text.contains(char::is_whitespace) {
        text.to_owned()
    } else {
        format!("({text})")
    };
    let mut symbols = ggpnet_kif::SymbolTable::new();
    let term = ggpnet_kif::parse_term(&wrapped, &mut symbols)
        .map_err(|e| ExportError::new(format!("cannot read output name '{text}': {e}")))?;
    Ok(ggpnet_kif::term_to_string(&term, &symbols))
}

/// The outputs named by `names` (see the module documentation), in order, with
/// their canonical names. Refuses a name that is neither an output nor a
/// sentence of the circuit, listing a few outputs of the same relation.
pub fn resolve(circuit: &Circuit, names: &[String]) -> Result<Vec<Output>, ExportError> {
    let outputs = outputs(circuit);
    let mut nodes = Vec::with_capacity(names.len());
    for name in names {
        let wanted = canonical_sentence(name)?;
        if let Some(o) = outputs.iter().find(|o| o.name == wanted) {
            nodes.push(o.clone());
            continue;
        }
        let labelled = circuit
            .labels
            .iter()
            .filter(|(_, &t)| circuit.vocabulary.kif(t) == wanted)
            .map(|(&n, _)| n)
            .min();
        if let Some(node) = labelled {
            nodes.push(Output { name: wanted, node });
            continue;
        }
        let relation = wanted
            .trim_start_matches('(')
            .split(' ')
            .next()
            .unwrap_or_default();
        let similar: Vec<&str> = outputs
            .iter()
            .filter(|o| o.name.trim_start_matches('(').split(' ').next() == Some(relation))
            .take(3)
            .map(|o| o.name.as_str())
            .collect();
        let hint = if similar.is_empty() {
            "outputs are named like 'terminal', 'legal ROLE MOVE', 'goal ROLE VALUE', 'next FACT'".to_owned()
        } else {
            format!("outputs of '{relation}' include {}", similar.join(", "))
        };
        return Err(ExportError::new(format!(
            "unknown output '{wanted}': the circuit has no such output or sentence ({hint})"
        )));
    }
    Ok(nodes)
}

/// Which nodes the `roots` read, themselves included: `cone[n]` is true for member `n`.
pub fn cone(circuit: &Circuit, roots: &[Output]) -> Vec<bool> {
    let mut member = vec![false; circuit.nodes.len()];
    let mut stack: Vec<NodeId> = roots.iter().map(|o| o.node).collect();
    while let Some(id) = stack.pop() {
        if !std::mem::replace(&mut member[id.index()], true) {
            stack.extend(circuit.nodes[id.index()].fanin.iter().copied());
        }
    }
    member
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pipeline::load;

    const GAME: &str = "(role r) (init a)
        (<= (legal r go) (true a)) (<= (legal r stay) (true b))
        (<= (next b) (does r go)) (<= (next a) (does r stay))
        (<= done (true b)) (<= terminal done) (<= (goal r 100) done) (<= (goal r 0) (not done))";

    #[test]
    fn names_resolve_with_or_without_parentheses() {
        let loaded = load(GAME, &Default::default()).unwrap();
        let c = &loaded.circuit;
        let [legal, terminal, next] = [0, 1, 2].map(|i| {
            let names = ["legal r go", "terminal", "(next b)"];
            resolve(c, &[names[i].to_owned()]).unwrap()[0].node
        });
        assert_eq!(legal, c.inputs[0].legal);
        assert_eq!(terminal, c.terminal);
        assert_eq!(
            next,
            c.bases
                .iter()
                .find(|b| c.vocabulary.kif(b.fact) == "b")
                .unwrap()
                .next
        );
    }

    #[test]
    fn unknown_names_are_refused_with_hints() {
        let loaded = load(GAME, &Default::default()).unwrap();
        let e = resolve(&loaded.circuit, &["legal r jump".to_owned()]).unwrap_err();
        assert!(e.message.contains("unknown output '(legal r jump)'"), "{e}");
        assert!(e.message.contains("(legal r go)"), "{e}");
        let e = resolve(&loaded.circuit, &["(legal r".to_owned()]).unwrap_err();
        assert!(e.message.contains("cannot read output name"), "{e}");
    }

    #[test]
    fn cone_stops_at_bases_and_inputs() {
        let loaded = load(GAME, &Default::default()).unwrap();
        let c = &loaded.circuit;
        let member = cone(c, &resolve(c, &["terminal".to_owned()]).unwrap());
        let bases: Vec<String> = (0..c.nodes.len())
            .filter(|&n| member[n] && c.labels.contains_key(&NodeId::new(n)))
            .map(|n| c.vocabulary.kif(c.labels[&NodeId::new(n)]))
            .collect();
        assert!(bases.iter().all(|s| !s.starts_with("(does")), "{bases:?}");
        assert!(bases.contains(&"(true b)".to_owned()), "{bases:?}");
        let a = c
            .bases
            .iter()
            .position(|b| c.vocabulary.kif(b.fact) == "a")
            .unwrap();
        assert!(!member[a], "base a (node {a}) does not feed terminal");
    }
}
