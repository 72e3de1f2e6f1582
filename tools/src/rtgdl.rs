//! `ggpnet check`, `stats` and `mc` on real-time GDL (rtGDL) games
//! ([`ggpnet::realtime`]: the propnet, or the interpreter when the game is
//! outside the fragment the propnet compiles; `--engine` chooses); `ggpnet
//! match` and `ggpnet play` play them (`matches.rs`, `ggpnet::player`); the
//! other subcommands refuse them with a clear message.

use crate::failure::Failure;
use crate::{emit, game_name, peak_rss_bytes, GameArgs, McArgs};
use ggpnet::realtime::{EngineChoice, RtGame, TimeModel, DEFAULT_TIME_MODEL};
use ggpnet_tools::report::{self, Language};
use std::path::Path;

/// Whether `source` (the text of the game at `path`) is an rtGDL description.
pub fn is_rtgdl(path: Option<&Path>, source: &str) -> bool {
    let kif = path.is_some_and(|p| !p.extension().is_some_and(|e| e == "sbg" || e == "json"));
    kif && ggpnet::realtime::is_rtgdl(source)
}

/// The refusal of a subcommand that does not run rtGDL games.
pub fn unsupported() -> Failure {
    Failure::invalid(
        "error: this is a real-time GDL (rtGDL) game: only `ggpnet check`, `ggpnet stats` and `ggpnet mc` run rtGDL games (and `ggpnet match` and `ggpnet play` play them)",
    )
}

/// Loads the rtGDL game `source` (exit 2 when it does not parse, 1 when invalid).
pub(crate) fn load(path: Option<&Path>, source: &str) -> Result<RtGame, Failure> {
    let name = path.map_or_else(String::new, |p| p.display().to_string());
    ggpnet::kif::parse(source).map_err(|e| Failure::of(&e).at(&name))?;
    let engine = crate::engine_given().unwrap_or(EngineChoice::Auto);
    let game = RtGame::load_limited(source, engine, crate::load_config().get_ground())
        .map_err(|e| Failure::of(&e).at(&name))?;
    if let Some(why) = game.fallback_reason() {
        eprintln!("note: {name} runs on the interpreter, as the propnet does not compile it: {why}");
    }
    Ok(game)
}

/// The engine's name and, on the interpreter, why the propnet does not run the game.
fn engine_text(game: &RtGame) -> String {
    match game.fallback_reason() {
        Some(why) => format!("interpreter (the propnet does not compile it: {why})"),
        None => game.engine().name().to_owned(),
    }
}

/// `ggpnet check` of an rtGDL game.
pub fn check(args: &GameArgs, source: &str) -> Result<bool, Failure> {
    let path = args.game.as_deref();
    let name = game_name(path);
    let (game, failure) = match load(path, source) {
        Ok(game) => (Some(game), None),
        Err(f) => (None, Some(f)),
    };
    let error = failure.as_ref().map(Failure::message);
    let mut warnings = crate::parse_warnings(source);
    if let Ok(description) = ggpnet::kif::parse(source) {
        let rtgdl = ggpnet::realtime::syntax::warnings(&description);
        warnings.extend(rtgdl.iter().map(|w| w.to_string()));
    }
    let used = game.as_ref().map(report::EngineUsed::of_realtime);
    let value = report::Check {
        game: name.clone(),
        valid: failure.is_none(),
        error: error.map(str::to_owned),
        warnings: warnings.clone(),
        language: Some(Language::Rtgdl),
        engine: used.as_ref().map(|u| u.engine.clone()),
        fallback_reason: used.and_then(|u| u.fallback_reason),
    };
    emit(args.json, &value, || {
        let shown: String = warnings.iter().map(|w| format!("{w}\n")).collect();
        let verdict = match (error, &game) {
            (Some(e), _) => format!("{name}: invalid (rtGDL)\n{e}\n"),
            (None, Some(game)) => format!(
                "{name}: valid (rtGDL, real-time GDL; {} warning(s); engine: {})\n",
                warnings.len(),
                engine_text(game)
            ),
            (None, None) => unreachable!("a game or a failure"),
        };
        shown + &verdict
    });
    failure.map_or(Ok(true), |f| Err(f.printed()))
}

/// `ggpnet stats` of an rtGDL game: the roles and the initial state.
pub fn stats(args: &GameArgs, source: &str) -> Result<bool, Failure> {
    let start = std::time::Instant::now();
    let game = load(args.game.as_deref(), source)?;
    let seconds = start.elapsed().as_secs_f64();
    let initial = game.initial_state();
    let expiry = game.next_expiry(&initial).map_err(|e| Failure::of(&e))?;
    let facts = game.pairs(&initial).map_err(|e| Failure::of(&e))?.len();
    let components = game.propnet().map(|l| l.report.components.clone());
    let value = report::Stats::Rtgdl(report::RtStats {
        game: game_name(args.game.as_deref()),
        language: Language::Rtgdl,
        engine: report::EngineUsed::of_realtime(&game),
        components: components
            .as_ref()
            .map(|c| c.iter().map(|(k, n)| (k.to_string(), *n)).collect()),
        total_seconds: seconds,
        peak_rss_bytes: peak_rss_bytes(),
        roles: game.roles().to_vec(),
        initial_facts: facts,
        initial_next_expiry: expiry.map(|t| t.to_string()),
    });
    emit(args.json, &value, || {
        format!(
            "game: {}\nlanguage: rtGDL (real-time GDL)\nengine: {}\n{}roles: {}\ninitial state: {} facts, first expiry {}\nload time: {:.3} ms\npeak memory: {:.1} MiB\n",
            value.game(),
            engine_text(&game),
            components.as_ref().map_or(String::new(), |c| {
                let parts: Vec<String> = c.iter().map(|(k, n)| format!("{k} {n}")).collect();
                format!("components: {}\n", parts.join(", "))
            }),
            game.roles().join(" "),
            facts,
            expiry.map_or("never".to_owned(), |t| format!("after {t}")),
            seconds * 1e3,
            peak_rss_bytes() as f64 / 1048576.0
        )
    });
    Ok(true)
}

/// `ggpnet mc` of an rtGDL game: random timed playouts.
pub fn mc(args: &McArgs, source: &str) -> Result<(), Failure> {
    let game = load(args.game.game.as_deref(), source)?;
    let model = match args.time_model {
        Some(model) => model,
        None => DEFAULT_TIME_MODEL.parse::<TimeModel>().map_err(Failure::input)?,
    };
    let (threads, budget) = crate::mc_threads_and_budget(args);
    let run = game
        .playouts(
            &game.initial_state(),
            model,
            args.max_depth,
            budget,
            threads,
            args.seed,
        )
        .map_err(|e| Failure::of(&e))?;
    let t = &run.totals;
    let per_playout = |x: f64| x / (t.playouts.max(1) as f64);
    let value = report::RtMc {
        game: game_name(args.game.game.as_deref()),
        language: Language::Rtgdl,
        engine: report::EngineUsed::of_realtime(&game),
        time_model: model.to_string(),
        run: report::PlayoutRun {
            threads: run.threads,
            seconds: run.seconds,
            playouts: t.playouts,
            playouts_per_sec: run.playouts_per_sec(),
            avg_goals: report::per_role(game.roles(), &run.avg_goals()),
            missing_goals: report::per_role(game.roles(), &t.missing_goals),
            seed: args.seed,
        },
        terminal: t.terminal,
        at_event_limit: t.at_event_limit,
        stalled: t.stalled,
        max_events: args.max_depth,
        events: t.events,
        moves: t.moves,
        ignored_moves: t.ignored_moves,
        events_per_sec: run.events_per_sec(),
        avg_events: per_playout(t.events as f64),
        avg_game_time: per_playout(t.game_time),
    };
    emit(args.game.json, &value, || {
        let mut out = format!(
            "game: {} (rtGDL)\nengine: {}, time model: {model}, threads: {}, seconds: {:.2}\nevents: {} ({:.0} events/s), moves: {}, ignored moves: {}\nplayouts: {} ({:.0} playouts/s): {} terminal, {} at the event limit of {}, {} where nothing could happen any more\naverage events: {:.2}, average game time: {:.3} units\n",
            value.game,
            game.engine(),
            run.threads,
            run.seconds,
            t.events,
            run.events_per_sec(),
            t.moves,
            t.ignored_moves,
            t.playouts,
            run.playouts_per_sec(),
            t.terminal,
            t.at_event_limit,
            args.max_depth,
            t.stalled,
            per_playout(t.events as f64),
            per_playout(t.game_time),
        );
        crate::average_goal_lines(&mut out, game.roles(), &run.avg_goals(), &t.missing_goals);
        out
    });
    Ok(())
}
