//! Random playouts from any state, on one thread or many, for flat Monte-Carlo
//! and tree search: the propnet runs them on its fastest evaluator (lanes
//! included: all lanes start from the given state), the interpreter on its own
//! loop.

use crate::game::{Backend, Engine, Game};
use crate::machine::{interpreter_playout, Error, PlayoutEnd, State, StateRepr};
use crate::propnet::driver::{
    monte_carlo_from, perft_from, LaneBatch, McConfig, PlayoutTotals, MAX_PERFT_DEPTH,
};
use crate::propnet::evaluator::{EvaluatorConfig, EvaluatorKind};
use crate::propnet::random::Stream;
use ggpnet_grounder::SettingError;
use ggpnet_reference::Reference;
use std::sync::Arc;
use std::time::{Duration, Instant};

pub use crate::propnet::driver::{Budget, MAX_THREADS};

/// How many playouts to run, on how many threads, with which seed.
///
/// ```
/// use ggpnet::{Budget, Config, Game, Playouts};
/// let game = Game::load(ggpnet::DEFAULT_GAME, &Config::default())?;
/// let start = game.initial_state();
/// let report = game.playouts(&start, &Playouts::new(Budget::Playouts(200)).threads(2))?;
/// // The lanes evaluator finishes the step in which the count is reached.
/// assert!(report.totals.playouts + report.totals.abandoned >= 200);
/// assert_eq!(report.avg_goals().len(), 2);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Playouts {
    budget: Budget,
    threads: usize,
    seed: u64,
}

impl Playouts {
    /// Playouts until `budget` is spent, on every core (as many threads as
    /// [`std::thread::available_parallelism`] says, 1 if it cannot tell, at
    /// most [`MAX_THREADS`]), with seed 0.
    ///
    /// ```
    /// use ggpnet::{Budget, Playouts};
    /// let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    /// let how = Playouts::new(Budget::Playouts(100));
    /// assert_eq!(how, Playouts::new(Budget::Playouts(100)).threads(cores.min(ggpnet::MAX_THREADS)));
    /// ```
    pub fn new(budget: Budget) -> Playouts {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        Playouts {
            budget,
            threads: cores.min(MAX_THREADS),
            seed: 0,
        }
    }

    /// The same on `threads` threads (1 to [`MAX_THREADS`]).
    pub fn threads(self, threads: usize) -> Playouts {
        Playouts { threads, ..self }
    }

    /// The same with random choices drawn from `seed` (the same seed, budget of
    /// playouts and threads give the same totals: fix the threads too for
    /// totals that do not depend on the machine's cores).
    pub fn seed(self, seed: u64) -> Playouts {
        Playouts { seed, ..self }
    }

    /// The run these settings ask for, on playouts `max_depth` deep, checked
    /// by the driver's setters (the one place its limits are checked; a
    /// refusal is [`Error::InvalidSetting`]).
    fn run(&self, max_depth: u64) -> Result<McConfig, Error> {
        Ok(McConfig::new(self.budget)?
            .threads(self.threads)?
            .seed(self.seed)
            .max_depth(max_depth)?)
    }
}

/// What a run of playouts added up to.
#[derive(Clone, Debug)]
pub struct PlayoutReport {
    /// The engine that ran them.
    pub engine: Engine,
    /// The propnet evaluator that ran them (`None` on the interpreter).
    pub evaluator: Option<EvaluatorKind>,
    /// Threads used.
    pub threads: usize,
    /// Wall seconds spent.
    pub seconds: f64,
    /// Playouts, depths, goal sums.
    pub totals: PlayoutTotals,
}

impl PlayoutReport {
    /// Per role, its average goal over the finished playouts that gave it one
    /// (`None` when none did).
    pub fn avg_goals(&self) -> Vec<Option<f64>> {
        self.totals.avg_goals()
    }
}

impl Game {
    /// Random playouts from `from` (every playout starts there) until the budget
    /// is spent; see [`Playouts`].
    pub fn playouts(&self, from: &State, how: &Playouts) -> Result<PlayoutReport, Error> {
        let run = how.run(self.config().get_max_playout_depth().max(1))?;
        match (self.backend(), self.repr(from)?) {
            (Backend::Propnet(loaded), StateRepr::Bits(state)) => {
                let evaluator = self.evaluator().expect("a propnet game has an evaluator");
                let config =
                    run.evaluator(EvaluatorConfig::from(evaluator).native(self.config().get_native()));
                let report = monte_carlo_from(&loaded.game, state, &config).map_err(Error::Playouts)?;
                Ok(PlayoutReport {
                    engine: Engine::Propnet,
                    evaluator: Some(evaluator),
                    threads: report.threads,
                    seconds: report.seconds,
                    totals: report.totals,
                })
            }
            (Backend::Interpreter(reference, _), StateRepr::Facts(state)) => {
                interpreter_playouts(reference, state, &run)
            }
            _ => unreachable!("a game's states are of its engine"),
        }
    }
}

impl Game {
    /// Perft: `counts[d - 1]` is the number of joint-move paths of length `d` from
    /// the initial state (terminal states are not expanded), for `d` in
    /// `1..=depth` (at most [`MAX_PERFT_DEPTH`]). The propnet counts with the
    /// scalar evaluator `kind` (`Lanes`: the sweep, and the last ply 512
    /// states at a time on the lanes evaluator).
    pub fn perft(&self, depth: usize, kind: EvaluatorKind) -> Result<Vec<u128>, Error> {
        self.perft_from(&self.initial_state(), depth, kind)
    }

    /// [`Game::perft`] from `from` instead of the initial state: split over
    /// the first joint moves, the counts from their states add up to the
    /// counts one deeper from the initial state.
    ///
    /// ```
    /// use ggpnet::{Config, Game};
    /// use ggpnet::propnet::evaluator::EvaluatorKind::Differential;
    /// let game = Game::load(ggpnet::DEFAULT_GAME, &Config::default())?;
    /// let start = game.initial_state();
    /// let mut sums = vec![0; 2];
    /// for (_, after) in game.machine().successors(&start)? {
    ///     let counts = game.perft_from(&after, 2, Differential)?;
    ///     sums.iter_mut().zip(counts).for_each(|(sum, n)| *sum += n);
    /// }
    /// assert_eq!(sums, game.perft(3, Differential)?[1..]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn perft_from(&self, from: &State, depth: usize, kind: EvaluatorKind) -> Result<Vec<u128>, Error> {
        if !(1..=MAX_PERFT_DEPTH).contains(&depth) {
            let max = MAX_PERFT_DEPTH;
            return Err(Error::InvalidSetting(SettingError::PerftDepth { depth, max }));
        }
        match (self.backend(), self.repr(from)?) {
            (Backend::Propnet(loaded), StateRepr::Bits(state)) => {
                Ok(perft_from(&loaded.game, state, depth, kind).counts)
            }
            (Backend::Interpreter(..), _) => self.interpreter_perft(from, depth),
            _ => unreachable!("a game's states are of its engine"),
        }
    }

    /// Perft on the interpreter from `from`: depth first, on an explicit stack.
    fn interpreter_perft(&self, from: &State, depth: usize) -> Result<Vec<u128>, Error> {
        let mut machine = self.machine();
        let mut counts = vec![0u128; depth];
        let mut stack = vec![(from.clone(), 0)];
        while let Some((state, d)) = stack.pop() {
            if machine.is_terminal(&state)? {
                continue;
            }
            let joints = machine.legal_joint_moves(&state)?;
            counts[d] += joints.len() as u128;
            if d + 1 < depth {
                for joint in joints {
                    stack.push((machine.next_state(&state, &joint)?, d + 1));
                }
            }
        }
        Ok(counts)
    }
}

/// Batches of lane playouts from the leaves of a tree search, one playout per
/// lane (see [`LaneBatch`]), on buffers kept between batches: the propnet's
/// lanes evaluator made once per search, not once per leaf.
pub(crate) struct LaneLeaves(LaneBatch);

impl Game {
    /// Lane batches for this game's states, `None` on the interpreter (it has
    /// no lanes).
    pub(crate) fn lane_leaves(&self) -> Option<LaneLeaves> {
        match self.backend() {
            Backend::Propnet(loaded) => {
                let max_depth = self.config().get_max_playout_depth().max(1);
                Some(LaneLeaves(LaneBatch::new(Arc::clone(&loaded.game), max_depth)))
            }
            Backend::Interpreter(..) => None,
        }
    }
}

impl LaneLeaves {
    /// One playout per lane from `from`, a state of `game`, lane `l` drawing
    /// from `Stream::new(seed, l)`: what they add up to, or `None` if
    /// `deadline` passed before the last one ended.
    pub(crate) fn run(
        &mut self,
        game: &Game,
        from: &State,
        seed: u64,
        deadline: Instant,
    ) -> Result<Option<PlayoutTotals>, Error> {
        match game.repr(from)? {
            StateRepr::Bits(bits) => self
                .0
                .run(bits, (seed, 0), Some(deadline))
                .map_err(Error::Playouts),
            StateRepr::Facts(_) => unreachable!("lane leaves are made for propnet games only"),
        }
    }
}

/// [`Game::playouts`] on the interpreter: each thread its own stream and share
/// of the budget, as the propnet's drivers split it; the first error a
/// thread meets (a state past the interpreter's work limit) ends the run.
fn interpreter_playouts(
    reference: &Reference,
    from: &ggpnet_reference::RefState,
    how: &McConfig,
) -> Result<PlayoutReport, Error> {
    let start = Instant::now();
    let threads = how.get_threads() as u64;
    let max_depth = how.get_max_depth();
    let roles = reference.roles().len();
    let run = |t: u64| {
        let reference = reference.clone();
        let (deadline, count) = match how.get_budget() {
            Budget::Seconds(s) => (Some(start + Duration::from_secs_f64(s)), u64::MAX),
            Budget::Playouts(n) => (None, n / threads + u64::from(t < n % threads)),
        };
        let mut rng = Stream::new(how.get_seed(), t);
        let mut totals = PlayoutTotals::new(roles);
        while totals.playouts + totals.abandoned < count {
            match interpreter_playout(&reference, from.clone(), &mut rng, max_depth, deadline)? {
                None => break,
                Some((PlayoutEnd::Terminal { depth, goals }, _)) => {
                    totals.transitions += depth;
                    totals.states += depth + 1;
                    totals.finish_with(depth, goals);
                }
                Some((PlayoutEnd::Abandoned { depth }, _)) => {
                    totals.transitions += depth;
                    totals.states += depth + 1;
                    totals.abandoned += 1;
                    totals.at_depth_limit += u64::from(depth >= max_depth);
                }
            }
        }
        Ok::<_, Error>(totals)
    };
    let totals = std::thread::scope(|scope| {
        let workers: Vec<_> = (1..threads).map(|t| scope.spawn(move || run(t))).collect();
        let mut all = vec![run(0)];
        all.extend(
            workers
                .into_iter()
                .map(|w| w.join().expect("a playout thread panicked")),
        );
        all
    });
    let totals = totals.into_iter().collect::<Result<Vec<_>, _>>()?;
    Ok(PlayoutReport {
        engine: Engine::Interpreter,
        evaluator: None,
        threads: how.get_threads(),
        seconds: start.elapsed().as_secs_f64(),
        totals: totals
            .into_iter()
            .fold(PlayoutTotals::new(roles), PlayoutTotals::merge),
    })
}
