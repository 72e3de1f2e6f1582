//! Which leaf evaluation a match's UCT uses: one scalar playout a leaf, or a
//! batch of lane playouts a leaf (`uct.rs`). With [`Leaves::Auto`] the player
//! measures both once, at the start of the match and within its start clock:
//! UCT from the initial state for the same time with each (at most
//! [`MEASURE`] each, a third of the time left), counting iterations and
//! playouts per second, and says what it measured and chose in the START
//! reply's log line.
//!
//! Iterations per second decide, not playouts per second. A batch runs
//! hundreds of playouts at a fraction of their scalar cost each, so the lanes
//! always win on playouts per second; but its playouts all start from one leaf:
//! they pin that leaf's value down, and tell nothing of any other node. The
//! tree grows by one node an iteration, UCB1 spreads the search over moves by
//! iterations, and the move played is the one most visited: so a search with
//! more iterations a second sees more of the game, while a search with fewer,
//! better-valued leaves sees less of it, more precisely. The matches measured
//! (docs/PLAYING.md) say which pays on connect four and breakthrough; the
//! rule takes the lanes wherever they give at least as many iterations, so
//! their better leaves come at no cost in tree.

use super::cpu::Cpu;
use super::uct::{LeafEvaluator, Tree};
use super::Leaves;
use crate::{Engine, Error, Game, Stream};
use std::time::{Duration, Instant};

/// The longest each kind of leaves is measured.
const MEASURE: Duration = Duration::from_millis(250);

/// With less time than this for each kind, nothing is measured (scalar leaves).
const LEAST: Duration = Duration::from_millis(20);

/// What leaves a match's searches evaluate, and a note saying why.
#[derive(Debug)]
pub(crate) struct LeafChoice {
    lanes: bool,
    note: String,
}

impl LeafChoice {
    fn new(lanes: bool, note: impl Into<String>) -> LeafChoice {
        LeafChoice {
            lanes,
            note: note.into(),
        }
    }

    /// A search thread's evaluator of this choice for `game`.
    pub(crate) fn evaluator(&self, game: &Game) -> LeafEvaluator {
        match self.lanes.then(|| game.lane_leaves()).flatten() {
            Some(lanes) => LeafEvaluator::lanes(lanes),
            None => LeafEvaluator::scalar(),
        }
    }

    /// What was chosen and why, for the log.
    pub(crate) fn note(&self) -> &str {
        &self.note
    }
}

/// UCT's rates with one kind of leaves.
struct Rates {
    iterations: f64,
    playouts: f64,
}

/// The leaves `setting` asks for in `game`: with [`Leaves::Auto`], measured
/// on `measure`'s cores by its deadline (nothing measured without it: scalar
/// leaves), on trees of `max_nodes` nodes at most.
pub(crate) fn choose(
    game: &Game,
    setting: Leaves,
    measure: Option<(Instant, &Cpu)>,
    max_nodes: usize,
) -> LeafChoice {
    if game.engine() == Engine::Interpreter {
        return LeafChoice::new(false, "scalar leaves (the interpreter has no lanes)");
    }
    let budget = measure.map_or(Duration::ZERO, |(by, _)| {
        (by.saturating_duration_since(Instant::now()) / 3).min(MEASURE)
    });
    match (setting, measure) {
        (Leaves::Scalar, _) => LeafChoice::new(false, "scalar leaves (set)"),
        (Leaves::Lanes, _) => LeafChoice::new(true, "lanes leaves (set)"),
        (Leaves::Auto, Some((_, cpu))) if budget >= LEAST => {
            let scalar = LeafChoice::new(false, "").evaluator(game);
            let lanes = LeafChoice::new(true, "").evaluator(game);
            let measured = rates(game, scalar, budget, max_nodes, cpu)
                .and_then(|s| Ok((s, rates(game, lanes, budget, max_nodes, cpu)?)));
            match measured {
                Ok((scalar, lanes)) => decide(&scalar, &lanes, budget),
                Err(e) => LeafChoice::new(false, format!("scalar leaves (not measured: {e})")),
            }
        }
        (Leaves::Auto, _) => LeafChoice::new(false, "scalar leaves (no time to measure)"),
    }
}

/// The choice between the rates measured (iterations per second decide),
/// with its note.
fn decide(scalar: &Rates, lanes: &Rates, budget: Duration) -> LeafChoice {
    let on_lanes = lanes.iterations >= scalar.iterations;
    let note = format!(
        "{} leaves (measured {} ms each: lanes {:.0} iterations/s, {:.0} playouts/s; \
         scalar {:.0} iterations/s, {:.0} playouts/s)",
        if on_lanes { "lanes" } else { "scalar" },
        budget.as_millis(),
        lanes.iterations,
        lanes.playouts,
        scalar.iterations,
        scalar.playouts,
    );
    LeafChoice::new(on_lanes, note)
}

/// UCT's rates from `game`'s initial state with `leaves`, searching for `budget`.
fn rates(
    game: &Game,
    mut leaves: LeafEvaluator,
    budget: Duration,
    max_nodes: usize,
    cpu: &Cpu,
) -> Result<Rates, Error> {
    let mut machine = game.machine();
    let mut rng = Stream::new(0x6c65_6176_6573, 0);
    let mut tree = Tree::new(&mut machine, game.initial_state(), max_nodes)?;
    let start = Instant::now();
    let iterations = tree.search(&mut machine, &mut rng, &mut leaves, start + budget, cpu)?;
    let seconds = start.elapsed().as_secs_f64().max(1e-9);
    Ok(Rates {
        iterations: iterations as f64 / seconds,
        playouts: leaves.playouts() as f64 / seconds,
    })
}
