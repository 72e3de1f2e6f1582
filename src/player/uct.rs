//! Decoupled UCT: in each node every role keeps statistics per legal move and
//! picks its move by UCB1 on them (so simultaneous moves work as turns do); the
//! joint move leads to the child. The tree is kept between moves: after the
//! joint move actually played, the child it reached becomes the root and the
//! rest is dropped.
//!
//! A new leaf is evaluated ([`LeafEvaluator`]) by one random playout from it,
//! or by a batch of lane playouts from it (every lane of the propnet's lanes
//! evaluator starts there, one playout each). A batch is backed up as one
//! visit with the mean of its playouts' rewards, not as one visit per
//! playout: its playouts all start from the same leaf, so they tell that
//! leaf's value precisely but nothing of its siblings; counted as hundreds of
//! visits, they would make UCB1 trust a node's whole subtree after one leaf,
//! and the move most visited would be the one whose leaves were drawn first.

use super::cpu::Cpu;
use crate::playouts::LaneLeaves;
use crate::{Error, Machine, Move, PlayoutEnd, State, Stream};
use rustc_hash::FxHashMap;
use std::time::Instant;

/// The exploration constant of UCB1, for rewards scaled to 0..1.
const EXPLORATION: f64 = 1.4;

/// One role's statistics for one of its legal moves in a node.
#[derive(Clone, Copy, Default, Debug)]
struct Arm {
    visits: u64,
    reward: f64,
}

#[derive(Debug)]
struct Node {
    state: State,
    terminal: bool,
    /// Not terminal, yet some role has no legal move: as a random playout
    /// abandons such a state, the search ends its iterations here.
    stuck: bool,
    /// Per role, its legal moves (empty in a terminal state).
    legal: Vec<Vec<Move>>,
    arms: Vec<Vec<Arm>>,
    visits: u64,
    /// Children by joint move (per role, the index of its move in `legal`).
    children: FxHashMap<Vec<u32>, usize>,
}

/// A search tree, bounded in nodes.
#[derive(Debug)]
pub(crate) struct Tree {
    nodes: Vec<Node>,
    max_nodes: usize,
}

impl Tree {
    /// A tree of the one node `root`, that grows to at most `max_nodes` nodes.
    pub(crate) fn new(machine: &mut Machine, root: State, max_nodes: usize) -> Result<Tree, Error> {
        let mut tree = Tree {
            nodes: Vec::new(),
            max_nodes: max_nodes.max(1),
        };
        tree.add(machine, root)?;
        Ok(tree)
    }

    /// The root's state.
    pub(crate) fn root(&self) -> &State {
        &self.nodes[0].state
    }

    fn add(&mut self, machine: &mut Machine, state: State) -> Result<usize, Error> {
        let terminal = machine.is_terminal(&state)?;
        let mut legal = Vec::new();
        if !terminal {
            for role in 0..machine.game().roles().len() {
                legal.push(machine.legal_moves(&state, role)?);
            }
        }
        let stuck = legal.iter().any(Vec::is_empty);
        let arms = legal.iter().map(|m| vec![Arm::default(); m.len()]).collect();
        self.nodes.push(Node {
            state,
            terminal,
            stuck,
            legal,
            arms,
            visits: 0,
            children: FxHashMap::default(),
        });
        Ok(self.nodes.len() - 1)
    }

    /// Searches until `deadline`, in slices of time on a core of `cpu`, new
    /// leaves evaluated by `leaves`: the iterations backed up.
    pub(crate) fn search(
        &mut self,
        machine: &mut Machine,
        rng: &mut Stream,
        leaves: &mut LeafEvaluator,
        deadline: Instant,
        cpu: &Cpu,
    ) -> Result<u64, Error> {
        let mut iterations = 0;
        while let Some(slice) = cpu.slice(deadline) {
            while Instant::now() < slice.end() {
                iterations += u64::from(self.iterate(machine, rng, leaves, deadline)?);
            }
        }
        Ok(iterations)
    }

    /// One iteration: select down to a new, terminal or stuck node, evaluate
    /// it, back up; nothing is backed up (`false`) if `deadline` cuts the
    /// evaluation short.
    fn iterate(
        &mut self,
        machine: &mut Machine,
        rng: &mut Stream,
        leaves: &mut LeafEvaluator,
        deadline: Instant,
    ) -> Result<bool, Error> {
        let mut path: Vec<(usize, Vec<u32>)> = Vec::new();
        let mut node = 0;
        let rewards = loop {
            if self.nodes[node].terminal {
                break scaled(&machine.goals(&self.nodes[node].state)?);
            }
            if self.nodes[node].stuck {
                break abandoned(self.nodes[node].legal.len());
            }
            let joint = self.select(node);
            path.push((node, joint.clone()));
            if let Some(&child) = self.nodes[node].children.get(&joint) {
                node = child;
                continue;
            }
            let moves = self.moves(node, &joint);
            let next = machine.next_state(&self.nodes[node].state, &moves)?;
            let Some(rewards) = leaves.evaluate(machine, &next, rng, deadline)? else {
                return Ok(false);
            };
            if self.nodes.len() < self.max_nodes {
                let child = self.add(machine, next)?;
                self.nodes[node].children.insert(joint, child);
            }
            break rewards;
        };
        for (node, joint) in path {
            let node = &mut self.nodes[node];
            node.visits += 1;
            for (role, &m) in joint.iter().enumerate() {
                let arm = &mut node.arms[role][m as usize];
                arm.visits += 1;
                arm.reward += rewards[role];
            }
        }
        Ok(true)
    }

    /// Each role's move by UCB1 (an untried move first).
    fn select(&self, node: usize) -> Vec<u32> {
        let node = &self.nodes[node];
        let log_visits = (node.visits.max(1) as f64).ln();
        let ucb = |arm: &Arm| match arm.visits {
            0 => f64::INFINITY,
            n => arm.reward / n as f64 + EXPLORATION * (log_visits / n as f64).sqrt(),
        };
        let best = |arms: &Vec<Arm>| {
            (0..arms.len())
                .max_by(|&a, &b| ucb(&arms[a]).total_cmp(&ucb(&arms[b])))
                .map_or(0, |m| m as u32)
        };
        node.arms.iter().map(best).collect()
    }

    fn moves(&self, node: usize, joint: &[u32]) -> Vec<Move> {
        let legal = &self.nodes[node].legal;
        joint
            .iter()
            .enumerate()
            .map(|(r, &m)| legal[r][m as usize].clone())
            .collect()
    }

    /// `role`'s moves at the root with their visit counts, in legal-move order.
    pub(crate) fn root_visits(&self, role: usize) -> Vec<(Move, u64)> {
        let root = &self.nodes[0];
        match root.legal.get(role) {
            Some(legal) => legal
                .iter()
                .cloned()
                .zip(root.arms[role].iter().map(|a| a.visits))
                .collect(),
            None => Vec::new(),
        }
    }

    /// Makes the child `joint` reached the root, keeping its subtree; a new tree
    /// of `state` (the state the joint move led to) if the child was never expanded.
    pub(crate) fn advance(
        &mut self,
        machine: &mut Machine,
        joint: &[Move],
        state: State,
    ) -> Result<(), Error> {
        let root = &self.nodes[0];
        let key: Option<Vec<u32>> = joint
            .iter()
            .zip(&root.legal)
            .map(|(m, legal)| legal.iter().position(|l| l == m).map(|i| i as u32))
            .collect();
        match key.and_then(|k| root.children.get(&k).copied()) {
            Some(child) => {
                self.keep_subtree(child);
                Ok(())
            }
            None => {
                *self = Tree::new(machine, state, self.max_nodes)?;
                Ok(())
            }
        }
    }

    /// Keeps only the subtree of `root`, renumbered from 0 (breadth first).
    fn keep_subtree(&mut self, root: usize) {
        let mut renumbered = FxHashMap::default();
        renumbered.insert(root, 0);
        let mut order = vec![root];
        let mut next = 0;
        while next < order.len() {
            let mut children: Vec<usize> = self.nodes[order[next]].children.values().copied().collect();
            children.sort_unstable();
            for child in children {
                renumbered.entry(child).or_insert_with(|| {
                    order.push(child);
                    order.len() - 1
                });
            }
            next += 1;
        }
        let mut old: Vec<Option<Node>> = std::mem::take(&mut self.nodes).into_iter().map(Some).collect();
        for index in order {
            let mut node = old[index].take().expect("a tree reaches each node once");
            for child in node.children.values_mut() {
                *child = renumbered[child];
            }
            self.nodes.push(node);
        }
    }
}

/// How new leaves are evaluated, and the playouts run for them so far.
pub(crate) struct LeafEvaluator {
    /// The lane batches, or `None` for one scalar playout a leaf.
    lanes: Option<LaneLeaves>,
    playouts: u64,
}

impl LeafEvaluator {
    /// One random playout a leaf, on the machine's evaluator.
    pub(crate) fn scalar() -> LeafEvaluator {
        LeafEvaluator {
            lanes: None,
            playouts: 0,
        }
    }

    /// A batch of lane playouts a leaf, one visit with their mean.
    pub(crate) fn lanes(lanes: LaneLeaves) -> LeafEvaluator {
        LeafEvaluator {
            lanes: Some(lanes),
            playouts: 0,
        }
    }

    /// Whether leaves are evaluated on the lanes.
    pub(crate) fn on_lanes(&self) -> bool {
        self.lanes.is_some()
    }

    /// Playouts run so far (finished or abandoned).
    pub(crate) fn playouts(&self) -> u64 {
        self.playouts
    }

    /// Per role, the reward of the leaf `state` (0..1; an abandoned playout
    /// counts 0.5): of one playout, or the mean of a batch's; `None` if
    /// `deadline` passed first.
    fn evaluate(
        &mut self,
        machine: &mut Machine,
        state: &State,
        rng: &mut Stream,
        deadline: Instant,
    ) -> Result<Option<Vec<f64>>, Error> {
        let roles = machine.game().roles().len();
        let Some(lanes) = &mut self.lanes else {
            let Some(end) = machine.playout_until(state, rng, deadline)? else {
                return Ok(None);
            };
            self.playouts += 1;
            return Ok(Some(match end {
                PlayoutEnd::Terminal { goals, .. } => scaled(&goals),
                PlayoutEnd::Abandoned { .. } => abandoned(roles),
            }));
        };
        let Some(totals) = lanes.run(machine.game(), state, rng.next_u64(), deadline)? else {
            return Ok(None);
        };
        let count = totals.playouts + totals.abandoned;
        self.playouts += count;
        let abandoned = ABANDONED * totals.abandoned as f64;
        let mean = |sum: &f64| (sum / 100.0 + abandoned) / count.max(1) as f64;
        Ok(Some(totals.goal_sums.iter().map(mean).collect()))
    }
}

/// Goals scaled to 0..1 (a missing goal counts as 0).
fn scaled(goals: &[Option<i64>]) -> Vec<f64> {
    goals.iter().map(|g| g.unwrap_or(0) as f64 / 100.0).collect()
}

/// The reward of an abandoned playout: neither a win nor a loss.
const ABANDONED: f64 = 0.5;

/// The rewards of an abandoned playout for each of `roles` roles.
fn abandoned(roles: usize) -> Vec<f64> {
    vec![ABANDONED; roles]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Config, Game};
    use std::time::Duration;

    const TIC_TAC_TOE: &str = include_str!("../../games/tic_tac_toe.kif");

    /// A lanes leaf is worth the mean reward of its batch's playouts (the
    /// batch itself is checked against scalar replays of its streams in the
    /// propnet's driver), and from a terminal state exactly its goals.
    #[test]
    fn a_lanes_leaf_is_worth_the_mean_of_its_batch() {
        let game = Game::load(TIC_TAC_TOE, &Config::default()).expect("the test game loads");
        let mut machine = game.machine();
        let far = Instant::now() + Duration::from_secs(3600);
        let start = game.initial_state();
        let mut rng = Stream::new(11, 0);
        let seed = rng.clone().next_u64();
        let mut batch = game.lane_leaves().expect("a propnet game");
        let totals = batch.run(&game, &start, seed, far).unwrap().unwrap();
        let mut leaves = LeafEvaluator::lanes(game.lane_leaves().expect("a propnet game"));
        let rewards = leaves
            .evaluate(&mut machine, &start, &mut rng, far)
            .unwrap()
            .unwrap();
        assert_eq!(leaves.playouts(), 512);
        assert_eq!(totals.playouts + totals.abandoned, 512);
        for (role, reward) in rewards.iter().enumerate() {
            let sum = totals.goal_sums[role] / 100.0 + ABANDONED * totals.abandoned as f64;
            assert!((reward - sum / 512.0).abs() < 1e-12, "role {role}: {reward}");
            assert!(*reward > 0.0 && *reward < 1.0, "wins and losses both: {reward}");
        }
        let (end, last) = machine.playout_to_end(&start, &mut rng).unwrap();
        let PlayoutEnd::Terminal { goals, .. } = end else {
            panic!("tic-tac-toe ends")
        };
        let rewards = leaves
            .evaluate(&mut machine, &last, &mut rng, far)
            .unwrap()
            .unwrap();
        assert_eq!(rewards, scaled(&goals));
        assert_eq!(leaves.playouts(), 1024);
    }

    /// A scalar leaf is worth its one playout's rewards.
    #[test]
    fn a_scalar_leaf_is_worth_its_playout() {
        let game = Game::load(TIC_TAC_TOE, &Config::default()).expect("the test game loads");
        let mut machine = game.machine();
        let far = Instant::now() + Duration::from_secs(3600);
        let start = game.initial_state();
        let mut rng = Stream::new(5, 0);
        let PlayoutEnd::Terminal { goals, .. } = machine.playout(&start, &mut rng.clone()).unwrap() else {
            panic!("tic-tac-toe ends")
        };
        let mut leaves = LeafEvaluator::scalar();
        let rewards = leaves
            .evaluate(&mut machine, &start, &mut rng, far)
            .unwrap()
            .unwrap();
        assert_eq!(rewards, scaled(&goals));
        assert_eq!(leaves.playouts(), 1);
    }
}
