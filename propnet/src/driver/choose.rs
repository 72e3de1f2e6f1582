//! The one chooser of evaluators, by measurement where a cost model does not
//! decide reliably; both of its choices run the one playout loop
//! ([`Playout`]) and are made here only:
//!
//! - which of an evaluator's candidate plans a game gets (whether a scalar
//!   evaluator runs its move part as the cones of the moves played once their
//!   code outgrows the cache, see [`Sweep::candidates`] and
//!   [`Differential::candidates`]): the candidates race on random playouts
//!   and the faster is kept, once per game and native setting (the evaluators
//!   are kept in the [`Game`]);
//! - which evaluator a run uses when its [`EvaluatorConfig`] says `Auto`: a
//!   short calibration of flat Monte-Carlo with each candidate;
//! - whether (state, joint move) pairs are expanded one by one on a scalar
//!   evaluator or in batches on the lanes ([`batch_costs`]): a batch pays one
//!   evaluation of the whole net for up to [`LANES`] pairs, so whether it wins
//!   depends on the net's size against the scalar evaluator's work per pair
//!   (a differential evaluator re-evaluates only what a move changes), and on
//!   how many pairs a batch gets. Perft races the two on its last ply's own
//!   work and keeps the faster.
//!
//! A race plays the same random playouts on both evaluators (the same seed, and
//! exact evaluators make the same moves legal), in alternating slices of the
//! same playouts, so each pair of slices times the same work; the median of
//! the pairs' ratios discards slices that another process disturbed.

use super::{monte_carlo, Budget, McConfig, Playout, PlayoutTotals, DEFAULT_MAX_DEPTH};
use crate::evaluator::{
    Choice, Differential, Evaluator, EvaluatorConfig, EvaluatorKind, Scalar, ScalarEvaluator, Sweep, LANES,
};
use crate::game::Game;
use crate::layout::CompiledNet;
use crate::random::Stream;
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

/// About how long a slice runs (the first evaluator's warm-up sets its
/// playouts). Measured on speedChess (a gap of about 6%), the ratios of races
/// with 2 ms slices spread from 0.93 to 1.01, with 5 ms slices from 0.93 to 0.98.
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

/// Seconds of flat Monte-Carlo each candidate runs when `Auto` calibrates.
const CALIBRATION_SECONDS: f64 = 0.2;

/// The scalar evaluator of `kind` of `game` (in native code where the platform
/// allows if `native`), with a fresh cache; `Lanes` has no scalar form and
/// gives the sweep.
pub fn scalar(game: &Game, kind: EvaluatorKind, native: bool) -> Scalar {
    match kind {
        EvaluatorKind::Differential => {
            let evaluator = chosen(game, game.differential_evaluator(native), |net| {
                Differential::candidates(net, native)
            });
            let cache = Box::new(evaluator.cache());
            Scalar::Differential(evaluator, cache)
        }
        EvaluatorKind::Sweep | EvaluatorKind::Lanes => {
            let evaluator = chosen(game, game.sweep_evaluator(native), |net| {
                Sweep::candidates(net, native)
            });
            let cache = evaluator.cache();
            Scalar::Sweep(evaluator, cache)
        }
    }
}

/// The evaluator kept in `slot` of `game`, made by the first call: the fastest
/// of the `candidates` of its net.
fn chosen<E: ScalarEvaluator>(
    game: &Game,
    slot: &OnceLock<Arc<E>>,
    candidates: impl FnOnce(&Arc<CompiledNet>) -> Vec<E>,
) -> Arc<E> {
    let evaluator = slot.get_or_init(|| {
        let mut candidates = candidates(game.net()).into_iter();
        let first = candidates.next().expect("at least one candidate");
        Arc::new(candidates.fold(first, |a, b| faster(game, a, b)))
    });
    Arc::clone(evaluator)
}

/// The evaluator `config` names, or, for `Auto`, the one of `candidates`
/// that runs flat Monte-Carlo on `game` fastest in transitions per second, each
/// run for `CALIBRATION_SECONDS` (0.2 s) on one thread.
pub fn evaluator(game: &Arc<Game>, config: EvaluatorConfig, candidates: &[EvaluatorKind]) -> EvaluatorKind {
    if let Choice::Fixed(kind) = config.get_choice() {
        return kind;
    }
    let calibration = McConfig::new(Budget::Seconds(CALIBRATION_SECONDS)).expect("a valid time budget");
    let rate = |&kind: &EvaluatorKind| {
        let run = calibration.evaluator(config.choice(Choice::Fixed(kind)));
        monte_carlo(game, &run).map_or(0.0, |report| report.transitions_per_sec())
    };
    let rates: Vec<f64> = candidates.iter().map(rate).collect();
    let best = (0..candidates.len())
        .max_by(|&a, &b| rates[a].total_cmp(&rates[b]))
        .expect("at least one candidate");
    candidates[best]
}

/// Of evaluators `a` and `b` of `game`, the one that runs random playouts
/// faster: `a` unless `b` takes [`MARGIN`] less time.
fn faster<E: ScalarEvaluator>(game: &Game, a: E, b: E) -> E {
    if time_ratio(game, &a, &b) < 1.0 - MARGIN {
        b
    } else {
        a
    }
}

/// Random playouts of one evaluator, continued slice by slice on the one
/// playout loop.
struct Runner<'a, E: ScalarEvaluator> {
    evaluator: &'a E,
    cache: E::Cache,
    playout: Playout,
    rng: Stream,
    totals: PlayoutTotals,
}

impl<'a, E: ScalarEvaluator> Runner<'a, E> {
    /// Playouts of `game` on `evaluator`, from the initial state.
    fn new(game: &Game, evaluator: &'a E) -> Runner<'a, E> {
        Runner {
            evaluator,
            cache: evaluator.cache(),
            playout: Playout::for_game(game, DEFAULT_MAX_DEPTH),
            rng: Stream::new(SEED, 0),
            totals: PlayoutTotals::new(game.roles().len()),
        }
    }

    /// Plays `playouts` more playouts and returns how long that took.
    fn timed(&mut self, game: &Game, playouts: u64) -> Duration {
        let start = Instant::now();
        for _ in 0..playouts {
            self.play(game);
        }
        start.elapsed()
    }

    /// Plays one playout.
    fn play(&mut self, game: &Game) {
        let Runner {
            evaluator,
            cache,
            playout,
            rng,
            totals,
        } = self;
        playout.run_on(*evaluator, cache, game, rng, totals, |_, _| {});
    }
}

/// How long `b` takes for what `a` does in one unit of time: below 1 when `b`
/// is faster, on random playouts of `game` (about `2 (PAIRS + 1) SLICE` in
/// all, or a warm-up only if one is faster by [`CLEAR_GAP`]).
fn time_ratio<E: ScalarEvaluator>(game: &Game, a: &E, b: &E) -> f64 {
    let (mut a, mut b) = (Runner::new(game, a), Runner::new(game, b));
    // Warm-up, which also sizes the slices: `a` until a slice has passed.
    let start = Instant::now();
    let mut playouts = 0u64;
    while start.elapsed() < SLICE {
        a.play(game);
        playouts += 1;
    }
    let of_a = start.elapsed().as_secs_f64();
    let warm_up = b.timed(game, playouts).as_secs_f64() / of_a;
    if !(1.0 / CLEAR_GAP..=CLEAR_GAP).contains(&warm_up) {
        return warm_up;
    }
    let mut ratios: Vec<f64> = (0..PAIRS)
        .map(|_| {
            let of_a = a.timed(game, playouts).as_secs_f64();
            let of_b = b.timed(game, playouts).as_secs_f64();
            of_b / of_a.max(f64::MIN_POSITIVE)
        })
        .collect();
    ratios.sort_unstable_by(f64::total_cmp);
    ratios[PAIRS / 2]
}

/// Timed rounds of a batch race ([`batch_costs`]), at most: the median of each
/// timing is kept.
const BATCH_ROUNDS: usize = 5;

/// A batch race stops after the round that takes it past this many seconds
/// (on a net so large that one batch takes longer, after one round).
const BATCH_RACE_SECONDS: f64 = 0.05;

/// The small batch of a race: with a full one ([`LANES`] pairs) it separates a
/// batch's fixed cost from its pairs'.
const SMALL_BATCH: usize = 32;

/// What expanding (state, joint move) pairs costs, measured by
/// [`batch_costs`]: `n` pairs take `n * scalar` seconds one by one on a scalar
/// evaluator, and `batch + n * lane` seconds as one batch (at most [`LANES`])
/// on the lanes evaluator.
///
/// ```
/// use ggpnet_propnet::driver::choose::BatchCosts;
/// // in milliseconds: 50 + 101 * 0.25 < 101 * 0.75, and not so with 100 pairs
/// let costs = BatchCosts { scalar: 0.75, batch: 50.0, lane: 0.25 };
/// assert_eq!(costs.lanes_from(), Some(101));
/// assert_eq!(BatchCosts { batch: 500.0, ..costs }.lanes_from(), None); // not even at 512
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BatchCosts {
    /// Seconds per pair on the scalar evaluator.
    pub scalar: f64,
    /// Seconds per batch on the lanes evaluator, whatever its size (the
    /// evaluations of the net).
    pub batch: f64,
    /// Seconds per pair of a batch on the lanes evaluator beyond the batch's.
    pub lane: f64,
}

impl BatchCosts {
    /// The fewest pairs that one batch on the lanes expands faster than the
    /// scalar evaluator expands them one by one; `None` when not even a full
    /// batch ([`LANES`] pairs) is faster.
    pub fn lanes_from(&self) -> Option<usize> {
        let gain = self.scalar - self.lane;
        if gain <= 0.0 || !self.batch.is_finite() {
            return None;
        }
        // batch + n lane < n scalar  <=>  n > batch / gain
        let from = (self.batch / gain).floor() + 1.0;
        (from <= LANES as f64).then_some(from as usize)
    }
}

/// Races the scalar evaluator and the lanes evaluator at expanding pairs:
/// `scalar(n)` expands about `n` pairs one by one, `lanes(n)` exactly `n` as
/// one batch, each returning how many it expanded. After a warm-up of each,
/// rounds of a full scalar run, a full batch and a small batch (32 pairs)
/// alternate, so that each round times all three under the same load; the
/// medians give the costs, the two batch sizes the fixed and the per-pair cost
/// of a batch. At most 5 rounds, fewer past 0.05 s.
pub fn batch_costs(
    mut scalar: impl FnMut(usize) -> usize,
    mut lanes: impl FnMut(usize) -> usize,
) -> BatchCosts {
    let timed = |run: &mut dyn FnMut(usize) -> usize, n: usize| {
        let start = Instant::now();
        let done = run(n).max(1);
        (start.elapsed().as_secs_f64(), done as f64)
    };
    scalar(LANES);
    lanes(LANES);
    let start = Instant::now();
    let (mut per_pair, mut full, mut small) = (Vec::new(), Vec::new(), Vec::new());
    while per_pair.len() < BATCH_ROUNDS
        && (per_pair.is_empty() || start.elapsed().as_secs_f64() < BATCH_RACE_SECONDS)
    {
        let (seconds, pairs) = timed(&mut scalar, LANES);
        per_pair.push(seconds / pairs);
        full.push(timed(&mut lanes, LANES));
        small.push(timed(&mut lanes, SMALL_BATCH));
    }
    let (full, small) = (median_by_time(full), median_by_time(small));
    let lane = ((full.0 - small.0) / (full.1 - small.1).max(1.0)).max(0.0);
    BatchCosts {
        scalar: median(per_pair),
        batch: (small.0 - lane * small.1).max(0.0),
        lane,
    }
}

/// The median of `values` (not empty).
fn median(mut values: Vec<f64>) -> f64 {
    values.sort_unstable_by(f64::total_cmp);
    values[values.len() / 2]
}

/// The median of (seconds, pairs) timings (not empty), by seconds.
fn median_by_time(mut timings: Vec<(f64, f64)>) -> (f64, f64) {
    timings.sort_unstable_by(|a, b| a.0.total_cmp(&b.0));
    timings[timings.len() / 2]
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Both evaluators of a race play the same playouts: they visit the same
    /// states.
    #[test]
    fn a_race_plays_the_same_playouts_on_both_evaluators() {
        let loaded = crate::load(crate::evaluator::TURNS, &crate::LoadConfig::default()).unwrap();
        let game = &loaded.game;
        let sweep = Sweep::candidates(game.net(), true).remove(0);
        let interpreted = Sweep::candidates(game.net(), false).remove(0);
        let (mut a, mut b) = (Runner::new(game, &sweep), Runner::new(game, &interpreted));
        a.timed(game, 50);
        b.timed(game, 50);
        assert_eq!(a.totals, b.totals);
        assert!(a.totals.transitions > 50);
    }

    /// A race returns a positive, finite ratio (its value is a timing, not
    /// asserted).
    #[test]
    fn a_race_measures_both_evaluators() {
        let loaded = crate::load(crate::evaluator::TURNS, &crate::LoadConfig::default()).unwrap();
        let game = &loaded.game;
        let native = Sweep::candidates(game.net(), true).remove(0);
        let interpreted = Sweep::candidates(game.net(), false).remove(0);
        let ratio = time_ratio(game, &native, &interpreted);
        assert!(ratio.is_finite() && ratio > 0.0, "ratio {ratio}");
    }
}
