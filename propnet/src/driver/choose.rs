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
//!   short calibration of flat Monte-Carlo with each candidate.
//!
//! A race plays the same random playouts on both evaluators (the same seed, and
//! exact evaluators make the same moves legal), in alternating slices of the
//! same playouts, so each pair of slices times the same work; the median of
//! the pairs' ratios discards slices that another process disturbed.

use super::{monte_carlo, Budget, McConfig, Playout, PlayoutTotals, DEFAULT_MAX_DEPTH};
use crate::evaluator::{
    Choice, Differential, Evaluator, EvaluatorConfig, EvaluatorKind, Scalar, ScalarEvaluator, Sweep,
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
