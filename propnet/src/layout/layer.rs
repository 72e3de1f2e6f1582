//! Layering: the strongly connected components ([`components`]) in a
//! topological order, and level numbers. Cycles are legal in a propnet (recursion inside one
//! state) as long as no negation lies on one; each cycle is evaluated to its
//! least fixpoint.

use crate::ir::{components, Circuit, Components, NodeId, NodeKind, VerifyError};
use std::fmt;

/// A cycle through a negation: the game is not stratified once ground.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct CycleError {
    /// Sentences on the cycle, in canonical KIF.
    pub sentences: Vec<String>,
}

impl fmt::Display for CycleError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "error: unstratified negation: a cycle through 'not' links {}",
            self.sentences.join(", ")
        )
    }
}

impl std::error::Error for CycleError {}

/// Nodes in evaluation order, with the cyclic components marked.
#[derive(Clone, Debug)]
pub struct Layering {
    /// Components in topological order; a component of one node without a self-loop is acyclic.
    pub components: Components,
    /// Level of each node: 0 for bases, inputs and constants, else one more than its deepest operand
    /// outside its own component.
    pub level: Vec<u32>,
    /// Number of cyclic components.
    pub cycles: usize,
    /// Number of distinct levels.
    pub layers: usize,
}

fn is_cyclic(circuit: &Circuit, component: &[NodeId]) -> bool {
    component.len() > 1 || circuit.nodes[component[0].index()].fanin.contains(&component[0])
}

/// Layers `circuit`, refusing cycles through negation.
pub fn layer(circuit: &Circuit) -> Result<Layering, CycleError> {
    let components = components(circuit);
    let mut level = vec![0u32; circuit.nodes.len()];
    let mut cycles = 0;
    let mut component_of = vec![0usize; circuit.nodes.len()];
    for (c, component) in components.iter().enumerate() {
        for n in component {
            component_of[n.index()] = c;
        }
    }
    for (c, component) in components.iter().enumerate() {
        if is_cyclic(circuit, component) {
            cycles += 1;
            if component
                .iter()
                .any(|n| circuit.nodes[n.index()].kind == NodeKind::Not)
            {
                let vocabulary = &circuit.vocabulary;
                let mut sentences: Vec<String> = component
                    .iter()
                    .filter_map(|n| circuit.labels.get(n).map(|&t| vocabulary.kif(t)))
                    .collect();
                sentences.sort();
                sentences.truncate(8);
                return Err(CycleError { sentences });
            }
        }
        let depth = component
            .iter()
            .flat_map(|n| circuit.nodes[n.index()].fanin.iter())
            .filter(|i| component_of[i.index()] != c)
            .map(|i| level[i.index()] + 1)
            .max()
            .unwrap_or(0);
        for n in component {
            level[n.index()] = depth;
        }
    }
    let layers = level.iter().max().map_or(0, |&m| m as usize + 1);
    Ok(Layering {
        components,
        level,
        cycles,
        layers,
    })
}

impl Layering {
    /// Checks that this is a layering of `circuit` as [`layer`] makes them and
    /// the compiled net relies on: its components hold every node once, each
    /// node reads only nodes of its own or earlier components, a node of an
    /// earlier component sits on a lower level, every member of a component on
    /// the same, and no cyclic component holds a negation (its fixpoint might
    /// never settle).
    pub fn verify(&self, circuit: &Circuit) -> Result<(), VerifyError> {
        let refuse = |place: String, reason: String| Err(VerifyError { place, reason });
        let n = circuit.nodes.len();
        if self.level.len() != n {
            return refuse(
                "layering".to_owned(),
                format!("has {} levels for {n} nodes", self.level.len()),
            );
        }
        const NONE: usize = usize::MAX;
        let mut component_of = vec![NONE; n];
        for (c, component) in self.components.iter().enumerate() {
            if component.is_empty() {
                return refuse(format!("layering component {c}"), "is empty".to_owned());
            }
            for id in component {
                let Some(slot) = component_of.get_mut(id.index()) else {
                    return refuse(
                        format!("layering component {c}"),
                        format!("holds node {}, which does not exist ({n} nodes)", id.index()),
                    );
                };
                if *slot != NONE {
                    return refuse(
                        format!("layering component {c}"),
                        format!("holds node {}, which component {} holds too", id.index(), *slot),
                    );
                }
                *slot = c;
            }
        }
        if let Some(missing) = component_of.iter().position(|&c| c == NONE) {
            return refuse(
                "layering".to_owned(),
                format!("has no component holding node {missing}"),
            );
        }
        for (c, component) in self.components.iter().enumerate() {
            let level = self.level[component[0].index()];
            let cyclic = is_cyclic(circuit, component);
            for id in component {
                let node = &circuit.nodes[id.index()];
                let place = || format!("layering of node {}", id.index());
                if self.level[id.index()] != level {
                    return refuse(
                        place(),
                        format!("its level differs from the rest of component {c}"),
                    );
                }
                if cyclic && node.kind == NodeKind::Not {
                    return refuse(place(), format!("a negation in the cyclic component {c}"));
                }
                for operand in &node.fanin {
                    let from = component_of[operand.index()];
                    if from > c || (from < c && self.level[operand.index()] >= level) {
                        return refuse(
                            place(),
                            format!(
                                "reads node {} of component {from} (level {}) from component {c} (level {level})",
                                operand.index(),
                                self.level[operand.index()]
                            ),
                        );
                    }
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::Game;
    use crate::pipeline::{load, LoadConfig};

    /// A circuit with a cycle: `reach` holds from `(true a)`, and reaches itself.
    const GAME: &str = "(role r) (init a)
        (<= (legal r go) (true a)) (<= (next a) (does r go)) (<= (next b) (true a))
        (<= reach (true a)) (<= reach reach (true b))
        (<= terminal (not reach)) (goal r 100)";

    /// The error for the game's layering after `edit` changed its components
    /// (as lists of nodes) and levels.
    fn refused(edit: impl Fn(&mut Vec<Vec<NodeId>>, &mut Vec<u32>)) -> String {
        let loaded =
            load(GAME, &LoadConfig::new().optimize(crate::OptimizeConfig::none())).expect("the game loads");
        let mut layering = loaded.layering.clone();
        assert_eq!(layering.verify(&loaded.circuit), Ok(()));
        assert_eq!(layering.cycles, 1, "the game has a cycle");
        let mut lists: Vec<Vec<NodeId>> = layering.components.iter().map(<[NodeId]>::to_vec).collect();
        edit(&mut lists, &mut layering.level);
        layering.components = Components::from_lists(lists);
        let error = Game::new(&loaded.circuit, &layering).expect_err("a broken layering compiled");
        assert_eq!(layering.verify(&loaded.circuit), Err(error.clone()));
        format!("{}: {}", error.place, error.reason)
    }

    #[test]
    fn a_layering_of_another_circuit_is_refused() {
        let m = refused(|_, level| {
            level.pop();
        });
        assert!(m.starts_with("layering: has "), "{m}");
        let m = refused(|components, _| {
            components.pop();
        });
        assert!(m.starts_with("layering: has no component holding node "), "{m}");
        let m = refused(|components, _| {
            let node = components[0][0];
            components[1].push(node);
        });
        assert!(m.contains("which component 0 holds too"), "{m}");
        let m = refused(|components, _| components[0].push(NodeId::new(9999)));
        assert!(m.contains("holds node 9999, which does not exist"), "{m}");
        let m = refused(|components, _| components.reverse());
        assert!(m.contains("reads node") && m.contains("from component"), "{m}");
        let m = refused(|_, levels| levels.iter_mut().for_each(|level| *level = 0));
        assert!(
            m.contains("reads node") && m.contains("(level 0) from component"),
            "{m}"
        );
    }

    #[test]
    fn a_negation_in_a_cyclic_component_is_refused() {
        let m = refused(|components, levels| {
            // The cycle swallows every later component (a coarser but sound
            // order), the negation of terminal among them.
            let cyclic = components.iter().position(|c| c.len() > 1).expect("a cycle");
            let later: Vec<NodeId> = components.drain(cyclic + 1..).flatten().collect();
            let level = levels[components[cyclic][0].index()];
            for id in &later {
                levels[id.index()] = level;
            }
            components[cyclic].extend(later);
        });
        assert!(m.contains("a negation in the cyclic component"), "{m}");
    }
}
