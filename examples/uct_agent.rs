//! A small UCT (Monte-Carlo tree search) agent playing whole games of connect
//! four against a player that moves uniformly at random, alternating sides.
//! Prints each game's result and the number of games won.
//!
//! `cargo run --release --example uct_agent [GAMES] [SECONDS_PER_MOVE]`
//! (100 games and 0.1 s per move by default).
//!
//! The search is decoupled UCT, so it works for simultaneous moves too: in each
//! node every role keeps its own statistics per legal move and picks its move
//! by UCB1 on them; the joint move leads to the child. A leaf is expanded once
//! and evaluated by one random playout from it (`Machine::playout`).

use ggpnet::{Config, Game, Machine, Move, PlayoutEnd, State, Stream};
use std::collections::HashMap;
use std::time::{Duration, Instant};

/// The exploration constant of UCB1, for rewards scaled to 0..1.
const EXPLORATION: f64 = 1.4;

/// One role's statistics for one of its legal moves in a node.
#[derive(Clone, Default)]
struct Arm {
    visits: u64,
    reward: f64,
}

/// A node of the search tree: a state, each role's legal moves and arms, and
/// the children reached so far, by joint move (indexes into the legal moves).
struct Node {
    state: State,
    terminal: bool,
    legal: Vec<Vec<Move>>,
    arms: Vec<Vec<Arm>>,
    visits: u64,
    children: HashMap<Vec<usize>, usize>,
}

/// The tree of one move's search.
struct Tree {
    nodes: Vec<Node>,
}

impl Tree {
    fn new(machine: &mut Machine, root: &State) -> Result<Tree, ggpnet::Error> {
        let mut tree = Tree { nodes: Vec::new() };
        tree.add(machine, root.clone())?;
        Ok(tree)
    }

    fn add(&mut self, machine: &mut Machine, state: State) -> Result<usize, ggpnet::Error> {
        let terminal = machine.is_terminal(&state)?;
        let roles = machine.game().roles().len();
        let mut legal = Vec::with_capacity(roles);
        if !terminal {
            for role in 0..roles {
                legal.push(machine.legal_moves(&state, role)?);
            }
        }
        let arms = legal
            .iter()
            .map(|moves| vec![Arm::default(); moves.len()])
            .collect();
        self.nodes.push(Node {
            state,
            terminal,
            legal,
            arms,
            visits: 0,
            children: HashMap::new(),
        });
        Ok(self.nodes.len() - 1)
    }

    /// One iteration: select down to a new or terminal node, evaluate it, back up.
    fn iterate(&mut self, machine: &mut Machine, rng: &mut Stream) -> Result<(), ggpnet::Error> {
        let mut path: Vec<(usize, Vec<usize>)> = Vec::new();
        let mut node = 0;
        let rewards = loop {
            if self.nodes[node].terminal {
                let goals = machine.goals(&self.nodes[node].state)?;
                break scaled(&goals);
            }
            let joint = self.select(node);
            path.push((node, joint.clone()));
            if let Some(&child) = self.nodes[node].children.get(&joint) {
                node = child;
                continue;
            }
            let moves: Vec<Move> = joint
                .iter()
                .enumerate()
                .map(|(role, &m)| self.nodes[node].legal[role][m].clone())
                .collect();
            let next = machine.next_state(&self.nodes[node].state, &moves)?;
            let child = self.add(machine, next)?;
            self.nodes[node].children.insert(joint, child);
            break match machine.playout(&self.nodes[child].state, rng)? {
                PlayoutEnd::Terminal { goals, .. } => scaled(&goals),
                PlayoutEnd::Abandoned { .. } => vec![0.5; moves.len()],
            };
        };
        for (node, joint) in path {
            let node = &mut self.nodes[node];
            node.visits += 1;
            for (role, &m) in joint.iter().enumerate() {
                let arm = &mut node.arms[role][m];
                arm.visits += 1;
                arm.reward += rewards[role];
            }
        }
        Ok(())
    }

    /// Each role's move by UCB1 (an untried move first).
    fn select(&self, node: usize) -> Vec<usize> {
        let node = &self.nodes[node];
        let log_visits = (node.visits.max(1) as f64).ln();
        node.arms
            .iter()
            .map(|arms| {
                let ucb = |arm: &Arm| match arm.visits {
                    0 => f64::INFINITY,
                    n => arm.reward / n as f64 + EXPLORATION * (log_visits / n as f64).sqrt(),
                };
                (0..arms.len())
                    .max_by(|&a, &b| ucb(&arms[a]).total_cmp(&ucb(&arms[b])))
                    .expect("a non-terminal node has a legal move for every role")
            })
            .collect()
    }

    /// `role`'s most visited move at the root.
    fn best_move(&self, role: usize) -> Move {
        let root = &self.nodes[0];
        let arms = &root.arms[role];
        let best = (0..arms.len())
            .max_by_key(|&m| arms[m].visits)
            .expect("the root is not terminal");
        root.legal[role][best].clone()
    }
}

/// Goals scaled to 0..1 (a missing goal counts as 0).
fn scaled(goals: &[Option<i64>]) -> Vec<f64> {
    goals.iter().map(|g| g.unwrap_or(0) as f64 / 100.0).collect()
}

/// UCT's move for `role` in `state`, searching until `budget` has passed.
fn uct_move(
    machine: &mut Machine,
    state: &State,
    role: usize,
    budget: Duration,
    rng: &mut Stream,
) -> Result<Move, ggpnet::Error> {
    let deadline = Instant::now() + budget;
    let mut tree = Tree::new(machine, state)?;
    while Instant::now() < deadline {
        tree.iterate(machine, rng)?;
    }
    Ok(tree.best_move(role))
}

/// Plays one game, UCT as `uct_role` and random moves for the other roles;
/// returns UCT's goal.
fn play(game: &Game, uct_role: usize, budget: Duration, seed: u64) -> Result<Option<i64>, ggpnet::Error> {
    let mut machine = game.machine();
    let mut rng = Stream::new(seed, 0);
    let mut state = game.initial_state();
    while !machine.is_terminal(&state)? {
        let mut joint = Vec::new();
        for role in 0..game.roles().len() {
            let m = if role == uct_role {
                uct_move(&mut machine, &state, role, budget, &mut rng)?
            } else {
                machine
                    .random_move(&state, role, &mut rng)?
                    .expect("a non-terminal connect four state has a move for every role")
            };
            joint.push(m);
        }
        state = machine.next_state(&state, &joint)?;
    }
    Ok(machine.goals(&state)?[uct_role])
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let games: u64 = args.next().map_or(Ok(100), |a| a.parse())?;
    let seconds: f64 = args.next().map_or(Ok(0.1), |a| a.parse())?;
    let budget = Duration::try_from_secs_f64(seconds)?;
    let game = Game::load(ggpnet::DEFAULT_GAME, &Config::default())?;
    let mut won = 0;
    for g in 0..games {
        let role = (g % 2) as usize;
        let goal = play(&game, role, budget, g)?;
        won += u64::from(goal == Some(100));
        println!(
            "game {:3}: UCT as {:6} scores {}",
            g + 1,
            game.roles()[role],
            goal.map_or("none".to_owned(), |v| v.to_string())
        );
    }
    println!("UCT won {won} of {games} games against random ({seconds} s per move)");
    Ok(())
}
