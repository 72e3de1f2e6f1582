//! Flat Monte-Carlo on the GDL translation of a Regular Boardgames file,
//! drawing **per RBG move**: `ggpnet mc GAME.rbg`.
//!
//! The translation (`ggpnet_rbg::to_gdl`) takes one GDL step per modifier of
//! an RBG move, so drawing each GDL step uniformly (as the GDL playout loop
//! does) does not draw the moves uniformly: a move with many partial
//! continuations would be chosen less often than rbg2cpp's benchmark chooses
//! it. rbg2cpp's `random_simulation()` computes all legal moves of the player
//! to move, picks one uniformly, applies it, then applies keeper moves (one
//! legal keeper move each) while the keeper is to move; the playout ends
//! where the player to move, or the keeper, has no legal move. This module
//! does the same on the propnet:
//!
//! - A **macro move** is a sequence of GDL steps of one role (the others
//!   having only their one pass move) ending at a *turn boundary*: a step
//!   named `(s ...)`, the translation's closing switch of an RBG move. The
//!   complete macro moves of a state are enumerated by a depth-first search
//!   over the propnet's steps, bounded in depth ([`MAX_MOVE_STEPS`]) and in
//!   number ([`MAX_MOVES`]); a partial move that reaches a terminal state is
//!   no move. One is drawn uniformly by reservoir sampling during the search
//!   (the path is kept, not the states), then replayed.
//! - A state where no role has a move other than its pass move is the
//!   keeper's: its one joint move is applied and not counted, as rbg2cpp
//!   applies keeper moves without counting them.
//!
//! Counts are RBG player moves: `transitions` and the playout lengths are
//! in the unit of rbg2cpp's benchmark (one per player move, keeper moves not
//! counted), so the means are comparable with `traces-rbg/` (FORMAT.md).
//! The scalar evaluators run it; the lanes evaluator steps 64 playouts in
//! lock-step, one GDL step each, and has no per-lane search, so it is refused
//! here (`--direct` runs the direct engine).

use crate::failure::{Classify, Failure, Kind};
use crate::rbg::{rbg_mc_report, MoveCounts, MAX_MOVE_STEPS};
use crate::{emit, McArgs};
use ggpnet::propnet::driver::{choose, Budget};
use ggpnet::propnet::evaluator::{Choice, EvaluatorConfig, EvaluatorKind, Scalar};
use ggpnet::propnet::{Game, State};
use ggpnet::Stream;
use ggpnet_tools::report;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The most complete moves of one state the search enumerates; more is an error.
pub const MAX_MOVES: u64 = 1 << 22;

/// Why a playout on the translation stopped short of a result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TurnError {
    /// Two roles had a move other than their pass move in one state.
    Simultaneous,
    /// A role without any legal move in a non-terminal state.
    NoLegalMove,
    /// A move, or the keeper's steps, longer than [`MAX_MOVE_STEPS`].
    TooLong,
    /// A state with more than [`MAX_MOVES`] complete moves.
    TooManyMoves,
    /// A partial move reached a state where another role, or none, moves.
    Interrupted,
}

impl std::fmt::Display for TurnError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TurnError::Simultaneous => {
                write!(f, "two roles move in one step: not a turn-based RBG translation")
            }
            TurnError::NoLegalMove => write!(f, "a role without a legal step in a non-terminal state"),
            TurnError::TooLong => write!(
                f,
                "a move or the keeper's steps longer than {MAX_MOVE_STEPS} GDL steps"
            ),
            TurnError::TooManyMoves => write!(f, "a state with more than {MAX_MOVES} complete moves"),
            TurnError::Interrupted => write!(
                f,
                "a partial move reached a state where another role, or none, moves"
            ),
        }
    }
}

impl std::error::Error for TurnError {}

impl Classify for TurnError {
    /// A move or a state beyond the search's bounds is a limit; a
    /// translation that does not take turns as RBG does, an invalid game.
    fn kind(&self) -> Kind {
        match self {
            TurnError::TooLong | TurnError::TooManyMoves => Kind::Limit,
            TurnError::Simultaneous | TurnError::NoLegalMove | TurnError::Interrupted => Kind::Invalid,
        }
    }
}

/// Whose turn a state is: none (terminal), the keeper's (every role's only
/// legal step is its pass, `noop`), or a role's.
enum Turn {
    Terminal,
    Forced,
    Mover(usize),
}

/// A scalar evaluator walking macro moves of one game.
struct Walker {
    game: Arc<Game>,
    scalar: Scalar,
    /// The marks of the moves, by id.
    marks: Arc<Marks>,
    joint: Vec<u32>,
    legal: Vec<Vec<u32>>,
    /// Per depth of the search, the states still to expand.
    frames: Vec<Vec<State>>,
    /// The move drawn so far: the state after it and its GDL steps.
    chosen: Option<(State, u64)>,
    goals: Vec<Option<i64>>,
}

/// Per move id, whether it closes an RBG move (a turn boundary: its text
/// starts with `(s `) and whether it is a pass (`noop`).
struct Marks {
    boundary: Vec<bool>,
    pass: Vec<bool>,
}

impl Marks {
    fn of(game: &Game) -> Marks {
        Marks {
            boundary: game.moves().iter().map(|m| m.starts_with("(s ")).collect(),
            pass: game.moves().iter().map(|m| m == "noop").collect(),
        }
    }
}

impl Walker {
    fn new(game: Arc<Game>, kind: EvaluatorKind, native: bool, marks: Arc<Marks>) -> Walker {
        let roles = game.roles().len();
        Walker {
            scalar: choose::scalar(&game, kind, native),
            game,
            marks,
            joint: vec![0; roles],
            legal: vec![Vec::new(); roles],
            frames: Vec::new(),
            chosen: None,
            goals: Vec::new(),
        }
    }

    /// Loads `state` and says whose turn it is; the roles' legal steps are in `self.legal`.
    fn turn(&mut self, state: &State) -> Result<Turn, TurnError> {
        self.scalar.load_state(state.0.as_raw_slice());
        if self.scalar.value(self.game.net().terminal_slot()) {
            return Ok(Turn::Terminal);
        }
        let mut mover = None;
        for role in 0..self.legal.len() {
            self.scalar.legal_moves(role, &mut self.legal[role]);
            let Some(&first) = self.legal[role].first() else {
                return Err(TurnError::NoLegalMove);
            };
            let moves = self.legal[role].iter().any(|&m| !self.marks.pass[m as usize]);
            if moves && mover.replace(role).is_some() {
                return Err(TurnError::Simultaneous);
            }
            self.joint[role] = first;
        }
        Ok(mover.map_or(Turn::Forced, Turn::Mover))
    }

    /// The state after `role` plays `step` (the others their pass) in the state loaded.
    fn step(&mut self, role: usize, step: u32) -> State {
        self.joint[role] = step;
        self.scalar.load_moves(&self.joint);
        let mut next = self.game.initial().clone();
        self.scalar.next_state(next.0.as_raw_mut_slice());
        next
    }
}

/// How one playout ended: its RBG player moves and GDL steps, and the
/// players' goals when it reached a terminal state (`None` when abandoned at
/// the depth limit).
struct Playout {
    moves: u64,
    steps: u64,
    goals: Option<Vec<Option<i64>>>,
}

impl Walker {
    /// Draws one complete move of `mover` uniformly from `root` (loaded, its
    /// roles' steps in `self.legal`): the state after it and its GDL steps
    /// into `self.chosen`; how many complete moves there were.
    fn draw(&mut self, mover: usize, rng: &mut Stream) -> Result<u64, TurnError> {
        let mut count = 0;
        self.chosen = None;
        self.expand(0, mover, &mut count, rng)?;
        let mut depth = 1;
        while depth > 0 {
            let Some(child) = self.frames[depth - 1].pop() else {
                depth -= 1;
                continue;
            };
            if depth >= MAX_MOVE_STEPS {
                return Err(TurnError::TooLong);
            }
            match self.turn(&child)? {
                Turn::Terminal => continue,
                Turn::Mover(r) if r == mover => {}
                _ => return Err(TurnError::Interrupted),
            }
            self.expand(depth, mover, &mut count, rng)?;
            depth += 1;
        }
        Ok(count)
    }

    /// Makes the children of the state loaded, `depth` steps into a move of
    /// `mover` (its steps in `self.legal[mover]`), while it is loaded: the
    /// states after its steps that do not end the move go to the frame at
    /// `depth`; each that ends it is one more complete move (`count`), kept
    /// with the reservoir's chance.
    fn expand(
        &mut self,
        depth: usize,
        mover: usize,
        count: &mut u64,
        rng: &mut Stream,
    ) -> Result<(), TurnError> {
        if self.frames.len() <= depth {
            self.frames.push(Vec::new());
        }
        let mut children = std::mem::take(&mut self.frames[depth]);
        children.clear();
        let steps = std::mem::take(&mut self.legal[mover]);
        for &step in &steps {
            if !self.marks.boundary[step as usize] {
                children.push(self.step(mover, step));
                continue;
            }
            *count += 1;
            if *count > MAX_MOVES {
                return Err(TurnError::TooManyMoves);
            }
            if rng.draw(*count as usize) == 0 {
                self.chosen = Some((self.step(mover, step), depth as u64 + 1));
            }
        }
        self.legal[mover] = steps;
        self.frames[depth] = children;
        Ok(())
    }

    /// One playout from `from` of at most `max_moves` RBG player moves.
    fn playout(&mut self, from: &State, max_moves: u64, rng: &mut Stream) -> Result<Playout, TurnError> {
        let mut end = Playout {
            moves: 0,
            steps: 0,
            goals: None,
        };
        let mut state = from.clone();
        let mut forced = 0;
        loop {
            let mover = match self.turn(&state)? {
                Turn::Terminal => {
                    end.goals = Some(self.goals());
                    return Ok(end);
                }
                Turn::Forced => {
                    forced += 1;
                    if forced > MAX_MOVE_STEPS {
                        return Err(TurnError::TooLong);
                    }
                    state = self.step(0, self.joint[0]);
                    end.steps += 1;
                    continue;
                }
                Turn::Mover(role) => role,
            };
            if end.moves >= max_moves {
                return Ok(end);
            }
            self.draw(mover, rng)?;
            let Some((next, steps)) = self.chosen.take() else {
                return Err(TurnError::NoLegalMove);
            };
            state = next;
            end.moves += 1;
            end.steps += steps;
            forced = 0;
        }
    }

    /// Per role, the highest goal value of the state loaded.
    fn goals(&mut self) -> Vec<Option<i64>> {
        self.scalar.refresh_goals();
        self.goals.clear();
        self.goals.resize(self.game.roles().len(), None);
        for (g, &(role, value)) in self.game.goals().iter().enumerate() {
            if self.scalar.value(self.game.net().goal_slots()[g]) {
                self.goals[role] = Some(self.goals[role].map_or(value, |best| best.max(value)));
            }
        }
        self.goals.clone()
    }
}

/// Totals of the playouts of one thread, or of a run.
#[derive(Default)]
pub(crate) struct Totals {
    /// Playouts that reached a terminal state.
    pub(crate) playouts: u64,
    /// Playouts abandoned at the depth limit.
    abandoned: u64,
    /// RBG player moves of every playout.
    pub(crate) moves: u64,
    finished_moves: u64,
    steps: u64,
    goal_sums: Vec<f64>,
    missing: Vec<u64>,
}

impl Totals {
    fn add(&mut self, end: &Playout) {
        self.moves += end.moves;
        self.steps += end.steps;
        let Some(goals) = &end.goals else {
            self.abandoned += 1;
            return;
        };
        self.playouts += 1;
        self.finished_moves += end.moves;
        self.goal_sums.resize(goals.len(), 0.0);
        self.missing.resize(goals.len(), 0);
        for (role, goal) in goals.iter().enumerate() {
            match goal {
                Some(v) => self.goal_sums[role] += *v as f64,
                None => self.missing[role] += 1,
            }
        }
    }

    fn merge(&mut self, other: &Totals) {
        self.playouts += other.playouts;
        self.abandoned += other.abandoned;
        self.moves += other.moves;
        self.finished_moves += other.finished_moves;
        self.steps += other.steps;
        self.goal_sums
            .resize(other.goal_sums.len().max(self.goal_sums.len()), 0.0);
        self.missing
            .resize(other.missing.len().max(self.missing.len()), 0);
        for (sum, s) in self.goal_sums.iter_mut().zip(&other.goal_sums) {
            *sum += s;
        }
        for (sum, s) in self.missing.iter_mut().zip(&other.missing) {
            *sum += s;
        }
    }
}

/// How a run of per-move flat Monte-Carlo is made (`ggpnet mc GAME.rbg`,
/// and `ggpnet bench` on a `.rbg` file): the scalar evaluator, threads,
/// budget, seed and the RBG player moves at which a playout is abandoned.
pub(crate) struct Settings {
    pub(crate) kind: EvaluatorKind,
    pub(crate) native: bool,
    pub(crate) threads: usize,
    pub(crate) budget: Budget,
    pub(crate) seed: u64,
    pub(crate) max_moves: u64,
}

/// What every thread of a run shares.
struct Run<'a> {
    game: &'a Arc<Game>,
    marks: Arc<Marks>,
    settings: &'a Settings,
    next: AtomicU64,
    deadline: Option<Instant>,
    /// Set by a thread whose playout failed, so that the others stop.
    failed: AtomicBool,
}

/// Runs playouts on one thread: playout `i` (numbers handed out by `run.next`)
/// draws from its own stream (seed, `i`), so a fixed number of playouts gives
/// the same totals on any number of threads.
fn worker(run: &Run) -> Result<Totals, TurnError> {
    let settings = run.settings;
    let mut walker = Walker::new(
        Arc::clone(run.game),
        settings.kind,
        settings.native,
        Arc::clone(&run.marks),
    );
    let mut totals = Totals::default();
    let start = run.game.initial().clone();
    let limit = match settings.budget {
        Budget::Playouts(n) => Some(n),
        Budget::Seconds(_) => None,
    };
    loop {
        let i = run.next.fetch_add(1, Ordering::Relaxed);
        if limit.is_some_and(|n| i >= n)
            || run.deadline.is_some_and(|d| Instant::now() >= d)
            || run.failed.load(Ordering::Relaxed)
        {
            return Ok(totals);
        }
        let mut rng = Stream::new(settings.seed, i);
        let end = walker.playout(&start, settings.max_moves, &mut rng);
        totals.add(&end.inspect_err(|_| run.failed.store(true, Ordering::Relaxed))?);
    }
}

/// Flat Monte-Carlo per RBG move on `game`, the propnet of a translation, as
/// `settings` say: the totals of every thread and the wall seconds taken; the
/// first thread's error if a playout failed (the others stop at their next playout).
pub(crate) fn draw_playouts(game: &Arc<Game>, settings: &Settings) -> Result<(Totals, f64), TurnError> {
    let timer = Instant::now();
    let run = Run {
        game,
        marks: Arc::new(Marks::of(game)),
        settings,
        next: AtomicU64::new(0),
        deadline: match settings.budget {
            Budget::Seconds(s) => Some(timer + Duration::from_secs_f64(s)),
            Budget::Playouts(_) => None,
        },
        failed: AtomicBool::new(false),
    };
    let parts: Vec<Result<Totals, TurnError>> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..settings.threads)
            .map(|_| scope.spawn(|| worker(&run)))
            .collect();
        handles.into_iter().filter_map(|h| h.join().ok()).collect()
    });
    let seconds = timer.elapsed().as_secs_f64().max(1e-9);
    let mut totals = Totals::default();
    for part in parts {
        totals.merge(&part?);
    }
    Ok((totals, seconds))
}

/// The scalar evaluator `args` asks for on `game` (auto: the faster of
/// sweep and differential); the lanes are refused.
fn evaluator(args: &McArgs, game: &Arc<Game>) -> Result<EvaluatorKind, Failure> {
    match args.evaluator {
        Choice::Fixed(EvaluatorKind::Lanes) => Err(Failure::input(
            "error: --evaluator lanes: a .rbg game draws per RBG move, which needs a search per playout; use sweep, differential or auto (or --direct)",
        )),
        Choice::Fixed(kind) => Ok(kind),
        Choice::Auto => {
            let config = EvaluatorConfig::new(args.evaluator).native(args.native);
            Ok(choose::evaluator(game, config, &[EvaluatorKind::Sweep, EvaluatorKind::Differential]))
        }
    }
}

/// `ggpnet mc GAME.rbg`: flat Monte-Carlo on the propnet of the translation,
/// one uniform draw per RBG player move.
pub(crate) fn mc(args: &McArgs, path: &Path) -> Result<(), Failure> {
    if args.time_model.is_some() {
        return Err(Failure::input(
            "error: --time-model applies to rtGDL (real-time GDL) games only",
        ));
    }
    let loaded = crate::load_any(Some(path), &crate::game_config())?;
    let Some(net) = loaded.propnet() else {
        return Err(Failure::invalid(format!(
            "error: {}: the translation did not load onto the propnet",
            path.display()
        )));
    };
    let (threads, budget) = crate::mc_threads_and_budget(args);
    let settings = Settings {
        kind: evaluator(args, &net.game)?,
        native: args.native,
        threads,
        budget,
        seed: args.seed,
        max_moves: args.max_depth,
    };
    let (mut totals, seconds) = draw_playouts(&net.game, &settings)
        .map_err(|e| Failure::worded(&e, format!("error: {}: {e}", path.display())))?;
    let roles = loaded.roles();
    totals.goal_sums.resize(roles.len(), 0.0);
    totals.missing.resize(roles.len(), 0);
    let value = report(args, path, roles, settings.kind, &totals, threads, seconds);
    emit(args.game.json, &value, || {
        text(&value, &totals, roles, args.max_depth)
    });
    Ok(())
}

/// The report of `ggpnet mc GAME.rbg --json`.
fn report(
    args: &McArgs,
    path: &Path,
    roles: &[String],
    kind: EvaluatorKind,
    totals: &Totals,
    threads: usize,
    seconds: f64,
) -> report::RbgMc {
    let avg_goals =
        ggpnet::propnet::driver::average_goals(&totals.goal_sums, &totals.missing, totals.playouts);
    let run = report::PlayoutRun {
        threads,
        seconds,
        playouts: totals.playouts,
        playouts_per_sec: totals.playouts as f64 / seconds,
        avg_goals: report::per_role(roles, &avg_goals),
        missing_goals: report::per_role(roles, &totals.missing),
        seed: args.seed,
    };
    let counts = MoveCounts {
        abandoned: totals.abandoned,
        moves: totals.moves,
        finished_moves: totals.finished_moves,
    };
    rbg_mc_report(
        args,
        path,
        ("propnet", kind.name()),
        run,
        &counts,
        Some(totals.steps),
    )
}

/// The text of `ggpnet mc GAME.rbg`.
fn text(value: &report::RbgMc, totals: &Totals, roles: &[String], max_depth: u64) -> String {
    let mc = &value.mc;
    let mut out = format!(
        "game: {}\nevaluator: {} (one uniform draw per RBG move on the GDL translation), threads: {}, seconds: {:.2}\nRBG player moves: {} ({:.0} moves/s; keeper moves not counted), GDL steps: {}\nplayouts: {} ({:.0} playouts/s)\naverage length: {:.2} player moves\n",
        mc.game, mc.evaluator, mc.run.threads, mc.run.seconds, mc.transitions, mc.transitions_per_sec, totals.steps, mc.run.playouts, mc.run.playouts_per_sec, mc.avg_depth
    );
    if totals.abandoned > 0 {
        out.push_str(&format!(
            "abandoned playouts: {} (at the depth limit of {max_depth} moves)\n",
            totals.abandoned
        ));
    }
    let avg = ggpnet::propnet::driver::average_goals(&totals.goal_sums, &totals.missing, totals.playouts);
    crate::average_goal_lines(&mut out, roles, &avg, &totals.missing);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One playout on the propnet of the GDL `kif` (not a translation: these
    /// are the turns no translation of an RBG game makes, which the walker
    /// must refuse all the same).
    fn playout(kif: &str) -> Result<Playout, TurnError> {
        let loaded = ggpnet::propnet::load(kif, &ggpnet::propnet::LoadConfig::default()).unwrap();
        let marks = Arc::new(Marks::of(&loaded.game));
        let mut walker = Walker::new(Arc::clone(&loaded.game), EvaluatorKind::Sweep, false, marks);
        let start = loaded.game.initial().clone();
        walker.playout(&start, 100, &mut Stream::new(1, 0))
    }

    /// Two roles; from `(c 0)`, the `legal` rules given; `go` leads to `(c 1)`, `(s 1)` to `(c 2)`, which is terminal.
    fn game(legal: &str) -> String {
        format!(
            "(role a) (role b) (init (c 0))
             (<= (next (c 1)) (true (c 0))) (<= (next (c 2)) (true (c 1)))
             (<= terminal (true (c 2))) (goal a 50) (goal b 50)
             {legal}"
        )
    }

    #[test]
    fn turns_no_translation_makes_are_errors() {
        // A partial move of `a` that ends where `b` is to move.
        let interrupted = "(<= (legal a go) (true (c 0))) (<= (legal b noop) (true (c 0)))
            (<= (legal a noop) (true (c 1))) (<= (legal b go) (true (c 1)))";
        assert_eq!(playout(&game(interrupted)).err(), Some(TurnError::Interrupted));
        // Both roles move in one state.
        let both = "(<= (legal a go) (true (c 0))) (<= (legal b go) (true (c 0)))";
        assert_eq!(playout(&game(both)).err(), Some(TurnError::Simultaneous));
        // `b` has no legal step after `a`'s partial move, in a non-terminal state.
        let none = "(<= (legal a go) (true (c 0))) (<= (legal b noop) (true (c 0)))
            (<= (legal a noop) (true (c 1)))";
        assert_eq!(playout(&game(none)).err(), Some(TurnError::NoLegalMove));
        // A whole move `go (s 1)` is one RBG move; then the game ends.
        let whole = "(<= (legal a go) (true (c 0))) (<= (legal b noop) (true (c 0)))
            (<= (legal a (s 1)) (true (c 1))) (<= (legal b noop) (true (c 1)))";
        let end = playout(&game(whole)).unwrap();
        assert_eq!(
            (end.moves, end.steps, end.goals),
            (1, 2, Some(vec![Some(50), Some(50)]))
        );
    }
}
