//! A batch of lane playouts from one state, exactly one playout per lane: the
//! value of a leaf of a tree search, by [`LANES`](crate::evaluator::LANES) random playouts at once.
//!
//! [`LanePlayouts`] restarts a lane as soon as its playout ends, so a run that
//! stopped after some number of finished playouts would count more short
//! playouts than long ones (a lane with short playouts finishes several in the
//! time a long one takes). A batch instead counts each lane's first playout
//! only, and ends at the step in which the last lane's first playout ends: the
//! mean of its goals is the mean of [`LANES`](crate::evaluator::LANES) independent playouts, each as
//! the scalar loop would play it from the lane's stream. Lanes whose playout
//! has ended keep stepping (the lanes move together) but are not counted
//! again.
//!
//! A terminal or goal slot of the net may be a base slot, which a step
//! overwrites with the next state: such a slot is read before the step, every
//! other one after it (the state-only part keeps the values of the states the
//! step visited).
//!
//! The lanes and their buffers are made once and restarted from each new
//! state ([`LanePlayouts::restart_from`]): a search pays the set-up once, not
//! per leaf.

use super::lanes::{lane_count, GoalsByRole};
use super::{LanePlayouts, McError, PlayoutTotals};
use crate::evaluator::{and, not, or, Lane, Lanes, ALL_LANES, NO_LANES};
use crate::game::{Game, State};
use std::sync::Arc;
use std::time::Instant;

/// Batches of [`LANES`](crate::evaluator::LANES) random playouts from one state, one playout per
/// lane, on buffers kept between batches.
///
/// ```
/// use ggpnet_propnet::driver::{LaneBatch, DEFAULT_MAX_DEPTH};
/// use ggpnet_propnet::evaluator::LANES;
/// use std::sync::Arc;
/// // One move, heads (100) or tails (0).
/// let rules = "(role p) (init start) (<= (legal p heads) (true start))
///     (<= (legal p tails) (true start)) (<= (next won) (does p heads))
///     (<= (next lost) (does p tails)) (<= terminal (true won)) (<= terminal (true lost))
///     (<= (goal p 100) (true won)) (<= (goal p 0) (not (true won)))";
/// let game = ggpnet_propnet::load(rules, &Default::default())?.game;
/// let mut batch = LaneBatch::new(Arc::clone(&game), DEFAULT_MAX_DEPTH);
/// let totals = batch.run(game.initial(), (7, 0), None)?.expect("no deadline");
/// assert_eq!(totals.playouts, LANES as u64); // one playout per lane, each one move
/// assert_eq!(totals.depth_sum, LANES as u64);
/// let heads = totals.goal_sums[0] / 100.0;
/// assert!(heads > 0.0 && heads < LANES as f64);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct LaneBatch {
    lanes: LanePlayouts,
    /// The slots read for each lane's result: the terminal slot first, then
    /// the goal slots in the game's goal order.
    watched: Vec<u32>,
    /// Per watched slot, whether it is a base slot (read before the step).
    is_base: Vec<bool>,
    /// Per watched slot, its lanes in the states the last step visited.
    seen: Vec<Lane>,
    /// The game's goals (goal `g` watched at `g + 1`).
    goals: GoalsByRole,
    /// Moves after which a playout is abandoned.
    max_depth: u64,
    /// Bases of the game's states.
    bases: usize,
}

impl LaneBatch {
    /// Batches of playouts of `game` that are abandoned after `max_depth`
    /// moves (at least 1) without ending, on a lanes evaluator made now.
    pub fn new(game: Arc<Game>, max_depth: u64) -> LaneBatch {
        let evaluator = Arc::new(Lanes::new(game.net()));
        let net = Arc::clone(game.net());
        let watched: Vec<u32> = std::iter::once(net.terminal_slot())
            .chain(net.goal_slots().iter().copied())
            .collect();
        let is_base = watched.iter().map(|s| net.base_slots().contains(s)).collect();
        let goals = GoalsByRole::new(&game);
        let initial = game.initial().clone();
        LaneBatch {
            lanes: LanePlayouts::with_evaluator(evaluator, game, &initial, (0, 0), max_depth),
            seen: vec![NO_LANES; watched.len()],
            watched,
            is_base,
            goals,
            max_depth: max_depth.max(1),
            bases: net.base_slots().len(),
        }
    }

    /// One playout per lane from `from` (a state of the game), lane `l`
    /// drawing from `Stream::new(seed, first_stream + l)` with `streams` =
    /// `(seed, first_stream)`: what they add up to, or `None` if `deadline`
    /// passed before every lane's playout ended (the clock is read every step).
    pub fn run(
        &mut self,
        from: &State,
        streams: (u64, u64),
        deadline: Option<Instant>,
    ) -> Result<Option<PlayoutTotals>, McError> {
        let expected = self.bases;
        if from.0.len() != expected {
            return Err(McError::ForeignState {
                bases: from.0.len(),
                expected,
            });
        }
        self.lanes.restart_from(from, streams);
        let mut totals = PlayoutTotals::new(self.goals.roles());
        let mut ended = NO_LANES;
        for depth in 0.. {
            if deadline.is_some_and(|d| Instant::now() >= d) {
                return Ok(None);
            }
            self.step();
            let now = and(&not(self.lanes.moved()), &not(&ended));
            self.count(&now, depth, &mut totals);
            ended = or(&ended, &now);
            if ended == ALL_LANES {
                break;
            }
        }
        Ok(Some(totals))
    }

    /// Steps the lanes, keeping the watched slots' values in the states visited.
    fn step(&mut self) {
        let values = self.lanes.values();
        for ((seen, &slot), &base) in self.seen.iter_mut().zip(&self.watched).zip(&self.is_base) {
            if base {
                *seen = values[slot as usize];
            }
        }
        self.lanes.step();
        let values = self.lanes.values();
        for ((seen, &slot), &base) in self.seen.iter_mut().zip(&self.watched).zip(&self.is_base) {
            if !base {
                *seen = values[slot as usize];
            }
        }
    }

    /// Counts the playouts of the lanes `now` that ended at `depth` moves:
    /// finished in a terminal state (with each role's highest goal there) or
    /// abandoned.
    fn count(&self, now: &Lane, depth: u64, totals: &mut PlayoutTotals) {
        let finished = and(now, &self.seen[0]);
        let abandoned = and(now, &not(&self.seen[0]));
        let (finished_n, abandoned_n) = (lane_count(&finished), lane_count(&abandoned));
        totals.playouts += finished_n;
        totals.depth_sum += depth * finished_n;
        totals.abandoned += abandoned_n;
        if depth >= self.max_depth {
            totals.at_depth_limit += abandoned_n;
        }
        totals.transitions += depth * (finished_n + abandoned_n);
        totals.states += (depth + 1) * (finished_n + abandoned_n);
        self.goals.score(&finished, |g| &self.seen[g + 1], totals);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::driver::choose;
    use crate::driver::{Playout, DEFAULT_MAX_DEPTH};
    use crate::evaluator::{EvaluatorKind, Scalar, LANES};
    use crate::random::Stream;

    /// Tic-tac-toe, written for this project's tests: wins, losses and draws
    /// after playouts of different lengths.
    const TIC_TAC_TOE: &str = include_str!("../../../games/tic_tac_toe.kif");

    /// Each lane's playout replayed by the scalar loop from the same stream.
    fn scalar_replay(game: &Arc<Game>, from: &State, streams: (u64, u64), max_depth: u64) -> PlayoutTotals {
        let Scalar::Sweep(sweep, mut cache) = choose::scalar(game, EvaluatorKind::Sweep, false) else {
            unreachable!("the sweep was asked for");
        };
        let mut playout = Playout::for_game(game, max_depth);
        playout.start_from(from);
        let mut totals = PlayoutTotals::new(game.roles().len());
        for lane in 0..LANES as u64 {
            let mut rng = Stream::new(streams.0, streams.1 + lane);
            playout.run_on(&*sweep, &mut cache, game, &mut rng, &mut totals, |_, _| {});
        }
        totals
    }

    /// A batch adds up exactly what the scalar loop gives on the lanes'
    /// streams, one playout each, from the initial state and, after a
    /// restart on the same buffers, from a later state; at a depth limit
    /// too short to finish, every playout is abandoned there.
    #[test]
    fn a_batch_is_one_scalar_playout_per_lane_from_its_stream() {
        let game = crate::load(TIC_TAC_TOE, &crate::LoadConfig::default())
            .expect("the test game loads")
            .game;
        let mut batch = LaneBatch::new(Arc::clone(&game), DEFAULT_MAX_DEPTH);
        let first = batch.run(game.initial(), (7, 0), None).unwrap().unwrap();
        assert_eq!(
            first,
            scalar_replay(&game, game.initial(), (7, 0), DEFAULT_MAX_DEPTH)
        );
        assert_eq!(first.playouts, LANES as u64, "tic-tac-toe always ends");
        assert!(first.depth_sum > 5 * LANES as u64, "playouts of several lengths");
        assert!(first.goal_sums.iter().all(|&g| g > 0.0), "both roles win some");
        let mut lanes = LanePlayouts::new(Arc::clone(&game), game.initial(), (3, 0), DEFAULT_MAX_DEPTH);
        lanes.step();
        lanes.step();
        let later = lanes.state(5);
        let second = batch.run(&later, (9, 512), None).unwrap().unwrap();
        assert_eq!(second, scalar_replay(&game, &later, (9, 512), DEFAULT_MAX_DEPTH));
        let mut short = LaneBatch::new(Arc::clone(&game), 1);
        let cut = short.run(game.initial(), (7, 0), None).unwrap().unwrap();
        assert_eq!(cut, scalar_replay(&game, game.initial(), (7, 0), 1));
        assert_eq!(cut.at_depth_limit, LANES as u64);
    }

    #[test]
    fn a_passed_deadline_gives_nothing_and_a_foreign_state_an_error() {
        let game = crate::load(TIC_TAC_TOE, &crate::LoadConfig::default())
            .expect("the test game loads")
            .game;
        let mut batch = LaneBatch::new(Arc::clone(&game), DEFAULT_MAX_DEPTH);
        assert_eq!(batch.run(game.initial(), (1, 0), Some(Instant::now())), Ok(None));
        let foreign = State(bitvec::bitvec![u64, bitvec::order::Lsb0; 0; game.facts().len() + 1]);
        assert!(matches!(
            batch.run(&foreign, (1, 0), None),
            Err(McError::ForeignState { .. })
        ));
    }
}
