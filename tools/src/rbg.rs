//! Regular Boardgames (`.rbg`) files: every command reads them through their
//! GDL translation ([`read_rbg`], `ggpnet_rbg::to_gdl`: one GDL step per
//! modifier of a move), `ggpnet perft` counts RBG moves on it (a path ends
//! a move at a player's `(s T X)` step; [`perft_translation`]) and `ggpnet mc`
//! draws per RBG move on it (`rbg_mc`). With `--direct`, `perft` and `mc` run
//! the direct engine of `ggpnet_rbg` instead.

use crate::failure::{Classify, Failure, Kind};
use crate::{emit, game_name, McArgs, PerftArgs};
use ggpnet::propnet::driver::choose;
use ggpnet::propnet::evaluator::{EvaluatorConfig, EvaluatorKind};
use ggpnet_rbg::{ErrorKind, Game, Rng};
use ggpnet_tools::report;
use std::collections::HashMap;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

/// The most GDL steps of one RBG move, or of the keeper's steps between two
/// player moves, on the translation (`perft` and `mc`); a longer one is an
/// error (the rules do not end a move).
pub const MAX_MOVE_STEPS: usize = 1000;

/// Whether `path` names a Regular Boardgames file.
pub fn is_rbg(path: Option<&Path>) -> bool {
    path.is_some_and(|p| p.extension().is_some_and(|e| e == "rbg"))
}

/// The refusal of `--direct` on a game that is not a `.rbg` file.
pub fn direct_needs_rbg() -> Failure {
    Failure::input("error: --direct applies to Regular Boardgames (.rbg) games only")
}

/// The GDL translation of the Regular Boardgames file `path`; a failure
/// names the file, line and column.
pub fn read_rbg(path: &Path) -> Result<String, Failure> {
    let game = load(path)?;
    ggpnet_rbg::to_gdl(&game).map_err(|e| Failure::worded(&e, format!("error: {}:{e}", path.display())))
}

impl Classify for ggpnet_rbg::RbgError {
    /// A description beyond a size limit is a limit; one outside the
    /// well-formed class an invalid game; the rest malformed input.
    fn kind(&self) -> Kind {
        match self.kind() {
            ErrorKind::MacroTooLarge | ErrorKind::RulesTooLarge | ErrorKind::NestingTooDeep => Kind::Limit,
            ErrorKind::IllFormed | ErrorKind::Untranslatable => Kind::Invalid,
            _ => Kind::Input,
        }
    }
}

/// Reads and compiles the game at `path`; the failure names the file, line and column.
fn load(path: &Path) -> Result<Game, Failure> {
    let text = crate::read_input(path)?;
    Game::parse(&text).map_err(|e| Failure::worded(&e, format!("error: {}:{e}", path.display())))
}

/// `ggpnet perft GAME.rbg --direct`: the counts at every depth up to `--depth`.
pub(crate) fn perft(args: &PerftArgs, path: &Path) -> Result<(), Failure> {
    let game = load(path)?;
    let start = game.initial_state();
    let timer = Instant::now();
    let counts: Vec<u64> = (1..=args.depth).map(|d| game.perft(&start, d)).collect();
    let seconds = timer.elapsed().as_secs_f64();
    // States expanded for the deepest count (the shallower ones come along).
    let nodes = 1 + counts[..args.depth - 1].iter().sum::<u64>();
    let nodes_per_sec = nodes as f64 / seconds.max(1e-9);
    let value = report::Perft {
        game: game_name(Some(path)),
        depth: args.depth,
        engine: "rbg".to_owned(),
        evaluator: "direct".to_owned(),
        scalar: "direct".to_owned(),
        counts: counts.iter().enumerate().map(|(d, &n)| (d + 1, n)).collect(),
        nodes,
        seconds,
        nodes_per_sec,
    };
    emit(args.game.json, &value, || {
        let mut out = String::new();
        for (d, n) in counts.iter().enumerate() {
            out.push_str(&format!("perft({}) = {n}\n", d + 1));
        }
        out.push_str(&format!(
            "{nodes} states expanded in {seconds:.3} s ({nodes_per_sec:.0} nodes/s, every depth counted separately)\n"
        ));
        out
    });
    Ok(())
}

/// Totals of the playouts of one thread.
#[derive(Default)]
struct Totals {
    playouts: u64,
    moves: u64,
    finished_moves: u64,
    abandoned: u64,
    scores: Vec<i64>,
}

/// Runs playouts on one thread: playout `i` (numbers handed out by `next`)
/// draws from its own generator (seed and `i`), so a fixed number of
/// playouts gives the same totals on any number of threads.
fn worker(game: &Game, args: &McArgs, next: &AtomicU64, deadline: Option<Instant>) -> Totals {
    let start = game.initial_state();
    let mut totals = Totals {
        scores: vec![0; game.players().len()],
        ..Totals::default()
    };
    let max_moves = usize::try_from(args.max_depth).unwrap_or(usize::MAX);
    loop {
        let i = next.fetch_add(1, Ordering::Relaxed);
        if args.playouts.is_some_and(|n| i >= n) || deadline.is_some_and(|d| Instant::now() >= d) {
            return totals;
        }
        let mut rng = Rng::new(args.seed ^ i.wrapping_mul(0x9e37_79b9_7f4a_7c15));
        let end = game.random_playout(&start, &mut rng, max_moves);
        totals.moves += end.moves as u64;
        if end.ended {
            totals.playouts += 1;
            totals.finished_moves += end.moves as u64;
            for (sum, score) in totals.scores.iter_mut().zip(&end.scores) {
                *sum += score;
            }
        } else {
            totals.abandoned += 1;
        }
    }
}

/// `ggpnet mc GAME.rbg --direct`: flat Monte-Carlo from the initial state.
pub(crate) fn mc(args: &McArgs, path: &Path) -> Result<(), Failure> {
    if args.time_model.is_some() {
        return Err(Failure::input(
            "error: --time-model applies to rtGDL (real-time GDL) games only",
        ));
    }
    let game = load(path)?;
    let (threads, _) = crate::mc_threads_and_budget(args);
    let timer = Instant::now();
    let deadline = match args.playouts {
        Some(_) => None,
        None => Some(timer + std::time::Duration::from_secs_f64(args.seconds.unwrap_or(5.0))),
    };
    let next = AtomicU64::new(0);
    let parts: Vec<Totals> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads)
            .map(|_| scope.spawn(|| worker(&game, args, &next, deadline)))
            .collect();
        handles.into_iter().filter_map(|h| h.join().ok()).collect()
    });
    let seconds = timer.elapsed().as_secs_f64().max(1e-9);
    let mut totals = Totals {
        scores: vec![0; game.players().len()],
        ..Totals::default()
    };
    for part in parts {
        totals.playouts += part.playouts;
        totals.moves += part.moves;
        totals.finished_moves += part.finished_moves;
        totals.abandoned += part.abandoned;
        for (sum, s) in totals.scores.iter_mut().zip(&part.scores) {
            *sum += s;
        }
    }
    let value = mc_report(args, path, &game, &totals, threads, seconds);
    emit(args.game.json, &value, || {
        let mut out = format!(
            "game: {}\nengine: rbg (direct), threads: {threads}, seconds: {seconds:.2}\nmoves: {} ({:.0} moves/s)\nplayouts: {} ({:.0} playouts/s)\naverage length: {:.2} player moves\n",
            value.mc.game, totals.moves, value.mc.transitions_per_sec, totals.playouts, value.mc.run.playouts_per_sec, value.mc.avg_depth
        );
        if totals.abandoned > 0 {
            out.push_str(&format!(
                "abandoned playouts: {} (at the depth limit of {} moves)\n",
                totals.abandoned, args.max_depth
            ));
        }
        let averages = average_scores(&totals);
        let missing = vec![0; averages.len()];
        crate::average_goal_lines(&mut out, game.players(), &averages, &missing);
        out
    });
    Ok(())
}

/// Each player's mean score over the finished playouts (`None` when none finished).
fn average_scores(totals: &Totals) -> Vec<Option<f64>> {
    let n = totals.playouts as f64;
    totals
        .scores
        .iter()
        .map(|&s| (totals.playouts > 0).then(|| s as f64 / n))
        .collect()
}

/// The report of `ggpnet mc GAME.rbg --direct --json`.
fn mc_report(
    args: &McArgs,
    path: &Path,
    game: &Game,
    totals: &Totals,
    threads: usize,
    seconds: f64,
) -> report::RbgMc {
    let run = report::PlayoutRun {
        threads,
        seconds,
        playouts: totals.playouts,
        playouts_per_sec: totals.playouts as f64 / seconds,
        avg_goals: report::per_role(game.players(), &average_scores(totals)),
        missing_goals: report::per_role(game.players(), &vec![0; game.players().len()]),
        seed: args.seed,
    };
    let counts = MoveCounts {
        abandoned: totals.abandoned,
        moves: totals.moves,
        finished_moves: totals.finished_moves,
    };
    rbg_mc_report(args, path, ("rbg", "direct"), run, &counts, None)
}

/// What flat Monte-Carlo on an RBG game counts besides its playouts, in RBG
/// player moves (keeper moves not counted), on either engine.
pub(crate) struct MoveCounts {
    /// Playouts abandoned at the depth limit.
    pub(crate) abandoned: u64,
    /// Moves of every playout.
    pub(crate) moves: u64,
    /// Moves of the finished playouts.
    pub(crate) finished_moves: u64,
}

/// The report of `ggpnet mc GAME.rbg --json` on the engine and evaluator
/// `used`: `run`'s playouts, `counts`, and the GDL steps of a run on the
/// translation.
pub(crate) fn rbg_mc_report(
    args: &McArgs,
    path: &Path,
    used: (&str, &str),
    run: report::PlayoutRun,
    counts: &MoveCounts,
    gdl_steps: Option<u64>,
) -> report::RbgMc {
    let (seconds, playouts) = (run.seconds, run.playouts);
    let ended = playouts + counts.abandoned;
    let mc = report::Mc {
        game: game_name(Some(path)),
        engine: report::EngineUsed {
            engine: used.0.to_owned(),
            fallback_reason: None,
        },
        evaluator: used.1.to_owned(),
        run,
        transitions: counts.moves,
        states: counts.moves + ended,
        abandoned: counts.abandoned,
        at_depth_limit: counts.abandoned,
        max_depth: args.max_depth,
        transitions_per_sec: counts.moves as f64 / seconds,
        states_per_sec: (counts.moves + ended) as f64 / seconds,
        avg_depth: match playouts {
            0 => 0.0,
            n => counts.finished_moves as f64 / n as f64,
        },
    };
    report::RbgMc {
        mc,
        transition_unit: report::RBG_PLAYER_MOVE.to_owned(),
        gdl_steps,
    }
}

/// Counts RBG moves on the translation: a GDL path is one RBG move longer at
/// each step where a player plays `(s T X)`; keeper steps (every role
/// `noop`) and the other steps of a move do not count.
struct MoveCounter<'a> {
    /// The file, named by every error.
    path: &'a Path,
    game: &'a ggpnet::Game,
    machine: ggpnet::Machine,
    /// Whether a move is a switch step, by move.
    switch: HashMap<ggpnet::Move, bool>,
}

impl MoveCounter<'_> {
    fn is_switch(&mut self, m: &ggpnet::Move) -> Result<bool, ggpnet::Error> {
        if let Some(&known) = self.switch.get(m) {
            return Ok(known);
        }
        let known = self.game.move_to_kif(m)?.starts_with("(s ");
        self.switch.insert(m.clone(), known);
        Ok(known)
    }

    /// Sequences of `depth` RBG moves from `state`, `steps` GDL steps into the current one.
    fn count(&mut self, state: &ggpnet::State, depth: usize, steps: usize) -> Result<u64, Failure> {
        if depth == 0 {
            return Ok(1);
        }
        if steps > MAX_MOVE_STEPS {
            return Err(Failure::limit(format!(
                "error: {}: a move (with the keeper's moves after it) of more than {MAX_MOVE_STEPS} GDL steps",
                self.path.display()
            )));
        }
        let path = self.path;
        let refused = |e: ggpnet::Error| Failure::invalid(format!("error: {}: {e}", path.display()));
        if self.machine.is_terminal(state).map_err(refused)? {
            return Ok(0);
        }
        let mut total = 0;
        for joint in self.machine.legal_joint_moves(state).map_err(refused)? {
            let mut ends = false;
            for m in &joint {
                ends |= self.is_switch(m).map_err(refused)?;
            }
            if ends && depth == 1 {
                total += 1;
                continue;
            }
            let next = self.machine.next_state(state, &joint).map_err(refused)?;
            total += match ends {
                true => self.count(&next, depth - 1, 0)?,
                false => self.count(&next, depth, steps + 1)?,
            };
        }
        Ok(total)
    }
}

/// The RBG moves of every depth from 1 to `depth` from the initial state of
/// `game`, the translation of the file `path`, counted on the machine of the
/// scalar evaluator `kind` (the interpreter's when `None`), each depth
/// separately: `ggpnet perft GAME.rbg`, and perft in `ggpnet bench` on a `.rbg` file.
pub(crate) fn count_moves(
    path: &Path,
    game: &ggpnet::Game,
    kind: Option<EvaluatorKind>,
    depth: usize,
) -> Result<Vec<u64>, Failure> {
    let mut counter = MoveCounter {
        path,
        game,
        machine: kind.map_or_else(|| game.machine(), |k| game.machine_with_evaluator(k)),
        switch: HashMap::new(),
    };
    let start = game.initial_state();
    (1..=depth).map(|d| counter.count(&start, d, 0)).collect()
}

/// `ggpnet perft GAME.rbg`: RBG moves counted on the propnet of the translation.
pub(crate) fn perft_translation(args: &PerftArgs, path: &Path) -> Result<(), Failure> {
    let game = crate::load_any(Some(path), &crate::game_config())?;
    // The scalar evaluator `--evaluator` asks for (auto: the faster on this game), as for GDL perft.
    let kind = game.propnet().map(|loaded| {
        let config = EvaluatorConfig::new(args.evaluator).native(args.native);
        choose::evaluator(
            &loaded.game,
            config,
            &[EvaluatorKind::Sweep, EvaluatorKind::Differential],
        )
    });
    let timer = Instant::now();
    let counts = count_moves(path, &game, kind, args.depth)?;
    let seconds = timer.elapsed().as_secs_f64();
    let nodes = 1 + counts[..args.depth - 1].iter().sum::<u64>();
    let evaluator = kind.map_or("interpreter", |k| k.name());
    let value = report::Perft {
        game: game_name(Some(path)),
        depth: args.depth,
        engine: game.engine().name().to_owned(),
        evaluator: evaluator.to_owned(),
        scalar: evaluator.to_owned(),
        counts: counts.iter().enumerate().map(|(d, &n)| (d + 1, n)).collect(),
        nodes,
        seconds,
        nodes_per_sec: nodes as f64 / seconds.max(1e-9),
    };
    emit(args.game.json, &value, || {
        let mut out = String::new();
        for (d, n) in counts.iter().enumerate() {
            out.push_str(&format!("perft({}) = {n}\n", d + 1));
        }
        out.push_str(&format!(
            "{nodes} RBG states expanded in {seconds:.3} s ({:.0} nodes/s, RBG moves counted on the {} of the GDL translation, every depth separately)\n",
            value.nodes_per_sec,
            game.engine().name()
        ));
        out
    });
    Ok(())
}
