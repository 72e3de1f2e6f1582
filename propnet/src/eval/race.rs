//! Which of two evaluators of one net runs random playouts faster, by timing
//! them on the same playouts: for choices that a cost model does not make
//! reliably (whether a scalar evaluator runs its move part as the cones of
//! the moves played once their code outgrows the cache, see `differential.rs`
//! and `sweep.rs`).
//!
//! Both evaluators play the same random playouts (the same seed, and exact
//! evaluators make the same moves legal), in alternating slices of the same
//! nodes, so each pair of slices times the same work; the median of the
//! pairs' ratios discards slices that another process disturbed.

use super::{CompiledNet, Evaluator};
use crate::playout::random_input;
use crate::random::Stream;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// About how long a slice runs (the first evaluator's warm-up sets its nodes).
/// Measured on speedChess (a gap of about 6%), the ratios of races with 2 ms
/// slices spread from 0.93 to 1.01, with 5 ms slices from 0.93 to 0.98.
const SLICE: Duration = Duration::from_millis(4);

/// Timed pairs of slices.
const PAIRS: usize = 5;

/// How much less time the second plan must take than the first to be chosen.
const MARGIN: f64 = 0.01;

/// A warm-up in which one evaluator takes this many times as long as the
/// other ends the race: the other is clearly faster.
const CLEAR_GAP: f64 = 1.25;

/// The seed of the playouts raced.
const SEED: u64 = 0x5eed;

/// Random playouts on one evaluator, continued slice by slice: from the
/// initial state, each role in turn takes a uniformly random legal move
/// ([`random_input`]); a terminal state, or one where a role has no legal
/// move, restarts from the initial state.
struct Runner<E> {
    eval: E,
    rng: Stream,
    state: Vec<u64>,
    next: Vec<u64>,
    inputs: Vec<u32>,
}

impl<E: Evaluator> Runner<E> {
    /// Playouts of `net` on `eval`, from the initial state.
    fn new(net: &CompiledNet, eval: E) -> Runner<E> {
        Runner {
            eval,
            rng: Stream::new(SEED, 0),
            state: net.initial().to_vec(),
            next: vec![0; net.initial().len()],
            inputs: Vec::new(),
        }
    }

    /// Visits `nodes` more states (a terminal one reads its goals).
    fn play(&mut self, net: &CompiledNet, nodes: u64) {
        for _ in 0..nodes {
            self.eval.load_state(&self.state);
            if self.eval.value(net.terminal_slot()) {
                self.eval.refresh_goals();
                self.state.clear();
                self.state.extend_from_slice(net.initial());
                continue;
            }
            self.inputs.clear();
            for role in 0..net.role_inputs().len() {
                match random_input(&self.eval, net, role, &mut self.rng) {
                    Some(m) => self.inputs.push(m),
                    None => break,
                }
            }
            if self.inputs.len() < net.role_inputs().len() {
                self.state.clear();
                self.state.extend_from_slice(net.initial());
                continue;
            }
            self.eval.load_moves(&self.inputs);
            self.eval.next_state(net, &mut self.next);
            std::mem::swap(&mut self.state, &mut self.next);
        }
    }

    /// The state the next node visits.
    #[cfg(test)]
    fn state(&self) -> &[u64] {
        &self.state
    }

    /// Plays `nodes` and returns how long that took.
    fn timed(&mut self, net: &CompiledNet, nodes: u64) -> Duration {
        let start = Instant::now();
        self.play(net, nodes);
        start.elapsed()
    }
}

/// Of plans `a` and `b` of `net`, the one whose evaluators (`evaluator` makes
/// one from a plan) run random playouts faster: `a` unless `b` takes [`MARGIN`]
/// less time.
pub(crate) fn faster<P, E: Evaluator>(
    net: &CompiledNet,
    a: Arc<P>,
    b: Arc<P>,
    evaluator: impl Fn(Arc<P>) -> E,
) -> Arc<P> {
    if time_ratio(net, evaluator(Arc::clone(&a)), evaluator(Arc::clone(&b))) < 1.0 - MARGIN {
        b
    } else {
        a
    }
}

/// How long `b` takes for what `a` does in one unit of time: below 1 when `b`
/// is faster, on random playouts of `net` (about `2 (PAIRS + 1) SLICE` in all,
/// or a warm-up only if one is faster by [`CLEAR_GAP`]).
fn time_ratio(net: &CompiledNet, a: impl Evaluator, b: impl Evaluator) -> f64 {
    let (mut a, mut b) = (Runner::new(net, a), Runner::new(net, b));
    // Warm-up, which also sizes the slices: `a` until a slice has passed.
    let start = Instant::now();
    let mut nodes = 0u64;
    while start.elapsed() < SLICE {
        a.play(net, 1);
        nodes += 1;
    }
    let of_a = start.elapsed().as_secs_f64();
    let warm_up = b.timed(net, nodes).as_secs_f64() / of_a;
    if !(1.0 / CLEAR_GAP..=CLEAR_GAP).contains(&warm_up) {
        return warm_up;
    }
    let mut ratios: Vec<f64> = (0..PAIRS)
        .map(|_| {
            let of_a = a.timed(net, nodes).as_secs_f64();
            let of_b = b.timed(net, nodes).as_secs_f64();
            of_b / of_a.max(f64::MIN_POSITIVE)
        })
        .collect();
    ratios.sort_unstable_by(f64::total_cmp);
    ratios[PAIRS / 2]
}

#[cfg(test)]
mod tests {
    use super::super::{Differential, Sweep};
    use super::*;
    use crate::eval::EvaluatorKind;
    use crate::machine::StateMachine;
    use crate::playout::{Playout, PlayoutTotals};

    /// The race's playouts are the random playouts of flat Monte-Carlo: the
    /// same states, in the same order, for the same stream.
    #[test]
    fn runners_play_the_playouts_of_monte_carlo() {
        let loaded = crate::load(super::super::TURNS, &crate::LoadConfig::default()).unwrap();
        let game = &loaded.game;
        let net = game.net();
        let mut machine = StateMachine::with_evaluator(Arc::clone(game), EvaluatorKind::Sweep);
        let mut rng = Stream::new(SEED, 0);
        let mut totals = PlayoutTotals::new(game.roles().len());
        let mut playout = Playout::new(&machine, crate::playout::DEFAULT_MAX_DEPTH);
        let mut visited: Vec<Vec<u64>> = Vec::new();
        while visited.len() < 200 {
            playout.run(&mut machine, &mut rng, &mut totals, |state, _| {
                visited.push(state.0.as_raw_slice().to_vec())
            });
            visited.push(playout.last_state().0.as_raw_slice().to_vec());
        }
        let mut runner = Runner::new(net, Differential::new(Arc::clone(game.net())));
        for (node, state) in visited.iter().enumerate() {
            assert_eq!(runner.state(), &state[..], "state of node {node}");
            runner.play(net, 1);
        }
    }

    /// A race returns a positive, finite ratio (its value is a timing, not
    /// asserted).
    #[test]
    fn a_race_measures_both_evaluators() {
        let loaded = crate::load(super::super::TURNS, &crate::LoadConfig::default()).unwrap();
        let net = loaded.game.net();
        let ratio = time_ratio(
            net,
            Sweep::new(Arc::clone(net)),
            Differential::new(Arc::clone(net)),
        );
        assert!(ratio.is_finite() && ratio > 0.0, "ratio {ratio}");
    }
}
