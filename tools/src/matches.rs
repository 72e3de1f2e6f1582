//! `ggpnet match`: runs matches of a game between players (remote ones over
//! HTTP, built-in ones in this process) with the manager of
//! `ggpnet::manager`, writes the records, and sums up the results per player.
//! A real-time GDL game runs on the rtGDL manager ([`ggpnet::manager::run_rt_match`]).

use super::{Failure, MatchArgs};
use ggpnet::manager::{run_match, run_rt_match, Link, MatchRecord, MatchSetup, RtEventKind, RtMatchSetup};
use ggpnet::player::PlayerConfig;
use ggpnet_tools::report;
use std::time::Duration;

/// One `--player ROLE=SPEC` option.
#[derive(Clone, Debug)]
pub(crate) struct PlayerSpec {
    role: String,
    spec: String,
}

/// Parses `ROLE=HOST:PORT` or `ROLE=builtin:random|mc|uct`.
pub(crate) fn player_spec(text: &str) -> Result<PlayerSpec, String> {
    let (role, spec) = text
        .split_once('=')
        .ok_or_else(|| format!("'{text}' is not ROLE=HOST:PORT or ROLE=builtin:SEARCH"))?;
    if let Some(search) = spec.strip_prefix("builtin:") {
        super::options::search(search)?;
    } else if !spec
        .rsplit_once(':')
        .is_some_and(|(h, p)| !h.is_empty() && p.parse::<u16>().is_ok())
    {
        return Err(format!("'{spec}' is not HOST:PORT or builtin:SEARCH"));
    }
    Ok(PlayerSpec {
        role: role.to_owned(),
        spec: spec.to_owned(),
    })
}

/// The link to the player `spec` names; a built-in one with the match's
/// `--threads` and `--leaves`.
fn link(spec: &str, args: &MatchArgs) -> Link {
    match spec.strip_prefix("builtin:").map(super::options::search) {
        Some(Ok(search)) => Link::builtin(
            PlayerConfig::new()
                .name(format!("builtin-{}", search.name()))
                .search(search)
                .leaves(args.leaves)
                .threads(args.threads)
                .expect("clap checks --threads")
                .game(super::game_config()),
        ),
        _ => Link::Remote(spec.to_owned()),
    }
}

/// What one player did over the matches.
#[derive(Default)]
struct Tally {
    matches: u64,
    wins: u64,
    draws: u64,
    goal_sum: i64,
    errors: u64,
    max_reply: f64,
}

pub(crate) fn run(args: &MatchArgs) -> Result<bool, Failure> {
    let path = Some(args.game.as_path());
    let source = super::read_game(path)?;
    if super::rtgdl::is_rtgdl(path, &source) {
        return run_rt(args, &source);
    }
    let game = super::load_any_from(path, &source, &super::game_config())?;
    let roles = game.roles().to_vec();
    let specs = player_specs(args, &roles, "uct", |role| role.eq_ignore_ascii_case("random"))?;
    let links: Vec<Option<Link>> = specs.iter().map(|s| s.as_ref().map(|s| link(s, args))).collect();
    let mut tallies: Vec<Tally> = specs.iter().map(|_| Tally::default()).collect();
    let mut records = Vec::new();
    // With --rotate, players move round the roles other than `random`.
    let rotating: Vec<usize> = (0..roles.len())
        .filter(|&r| !roles[r].eq_ignore_ascii_case("random"))
        .collect();
    for n in 0..args.matches {
        let shift = match args.rotate && !rotating.is_empty() {
            true => n as usize % rotating.len(),
            false => 0,
        };
        let seat = |role: usize| match rotating.iter().position(|&r| r == role) {
            Some(i) => rotating[(i + rotating.len() - shift) % rotating.len()],
            None => role,
        };
        let setup = MatchSetup {
            game: game.clone(),
            rules: source.clone(),
            players: (0..roles.len()).map(|r| links[seat(r)].clone()).collect(),
            player_names: (0..roles.len())
                .map(|r| {
                    specs[seat(r)]
                        .clone()
                        .unwrap_or_else(|| "manager (random)".to_owned())
                })
                .collect(),
            id: format!("ggpnet.{}.{n}", super::game_name(path)),
            start_clock: Duration::from_secs_f64(args.startclock),
            play_clock: Duration::from_secs_f64(args.playclock),
            scramble: args.scramble.then_some(args.seed.wrapping_add(n)),
            seed: args.seed.wrapping_add(n),
            max_steps: args.max_steps,
            gdl2_form: args.gdl2_form.unwrap_or_default(),
        };
        let record = run_match(&setup).map_err(|e| Failure::of(&e))?;
        for role in 0..roles.len() {
            tally(&mut tallies[seat(role)], &record, role);
        }
        eprintln!(
            "match {}: goals {:?}, players {:?}",
            n + 1,
            record.goal_values,
            record.player_names_from_host
        );
        records.push(record);
    }
    sum_up(args, &roles, &specs, &tallies, &records)
}

/// The `--player` of each role, in role order (`None` for a role that may
/// lack one, as `random` in GDL); an error for a `--player` of no role, or a
/// role with none that needs one (`builtin` names the search to suggest).
fn player_specs(
    args: &MatchArgs,
    roles: &[String],
    builtin: &str,
    may_lack: impl Fn(&str) -> bool,
) -> Result<Vec<Option<String>>, Failure> {
    for p in &args.player {
        if !roles.iter().any(|r| r.eq_ignore_ascii_case(&p.role)) {
            return Err(Failure::input(format!(
                "--player {}: the game has no role {} (roles: {})",
                p.spec,
                p.role,
                roles.join(", ")
            )));
        }
    }
    let mut specs = Vec::with_capacity(roles.len());
    for role in roles {
        let spec = args.player.iter().find(|p| p.role.eq_ignore_ascii_case(role));
        if spec.is_none() && !may_lack(role) {
            return Err(Failure::input(format!(
                "role {role} has no player: add --player {role}=HOST:PORT or {role}=builtin:{builtin}"
            )));
        }
        specs.push(spec.map(|p| p.spec.clone()));
    }
    Ok(specs)
}

/// Prints the results per player and writes the records and results to `--json`.
fn sum_up(
    args: &MatchArgs,
    roles: &[String],
    specs: &[Option<String>],
    tallies: &[Tally],
    records: &[impl serde::Serialize],
) -> Result<bool, Failure> {
    let results: Vec<_> = specs
        .iter()
        .zip(tallies)
        .enumerate()
        .map(|(role, (spec, t))| report::PlayerResult {
            player: spec.clone().unwrap_or_else(|| "manager (random)".to_owned()),
            first_role: roles[role].clone(),
            matches: t.matches,
            wins: t.wins,
            draws: t.draws,
            average_goal: t.goal_sum as f64 / t.matches.max(1) as f64,
            errors: t.errors,
            max_reply_seconds: t.max_reply,
        })
        .collect();
    print!("{}", table(&results));
    if let Some(file) = &args.json {
        let value = report::MatchFile {
            matches: records,
            results: &results,
        };
        std::fs::write(file, format!("{}\n", report::to_json(&value)))
            .map_err(|e| Failure::of(&e).at(&format!("cannot write {}", file.display())))?;
    }
    Ok(true)
}

/// `ggpnet match` on an rtGDL game: every role needs a player, and the
/// options of GDL-II and scrambling are refused.
fn run_rt(args: &MatchArgs, source: &str) -> Result<bool, Failure> {
    if args.scramble {
        return Err(Failure::input(
            "error: --scramble does not apply to real-time GDL (rtGDL) games",
        ));
    }
    if args.gdl2_form.is_some() {
        return Err(Failure::input(
            "error: --gdl2-form does not apply to real-time GDL (rtGDL) games",
        ));
    }
    let longest = ggpnet::manager::MAX_PLAY_CLOCK.as_secs_f64();
    if args.playclock > longest {
        return Err(Failure::input(format!(
            "error: --playclock {}: on a real-time GDL (rtGDL) game it is the seconds of one lifetime unit, at most {longest} (a day)",
            args.playclock
        )));
    }
    let path = Some(args.game.as_path());
    let game = super::rtgdl::load(path, source)?;
    let roles = game.roles().to_vec();
    let specs = player_specs(args, &roles, "mc", |_| false)?;
    let links: Vec<Link> = specs
        .iter()
        .map(|s| link(s.as_deref().unwrap_or_default(), args))
        .collect();
    let mut tallies: Vec<Tally> = specs.iter().map(|_| Tally::default()).collect();
    let mut records = Vec::new();
    for n in 0..args.matches {
        let shift = match args.rotate {
            true => n as usize % roles.len(),
            false => 0,
        };
        let seat = |role: usize| (role + roles.len() - shift) % roles.len();
        let setup = RtMatchSetup {
            game: game.clone(),
            rules: source.to_owned(),
            players: (0..roles.len()).map(|r| links[seat(r)].clone()).collect(),
            player_names: (0..roles.len())
                .map(|r| specs[seat(r)].clone().unwrap_or_default())
                .collect(),
            id: format!("ggpnet.{}.{n}", super::game_name(path)),
            start_clock: Duration::from_secs_f64(args.startclock),
            play_clock: Duration::from_secs_f64(args.playclock),
            max_updates: args.max_steps,
            max_game_time: args.max_game_time,
            max_open: args.max_open,
        };
        let record = run_rt_match(&setup).map_err(|e| Failure::of(&e))?;
        for role in 0..roles.len() {
            let errors = record
                .events
                .iter()
                .filter(|e| matches!(e.kind, RtEventKind::Illegal | RtEventKind::Error))
                .filter(|e| e.role.as_deref() == Some(roles[role].as_str()))
                .count() as u64;
            let t = &mut tallies[seat(role)];
            outcome(t, &record.goal_values, &record.roles, role);
            t.errors += errors;
            t.max_reply = t.max_reply.max(record.max_reply_seconds[role]);
        }
        eprintln!(
            "match {}: {}, goals {:?}, {} updates in {} units, players {:?}",
            n + 1,
            match &record.abort_reason {
                Some(why) => format!("aborted at {why}"),
                None => "completed".to_owned(),
            },
            record.goal_values,
            record.updates,
            record.game_time,
            record.player_names_from_host
        );
        records.push(record);
    }
    sum_up(args, &roles, &specs, &tallies, &records)
}

/// Adds the match of `record` to the tally of the player of `role`: its
/// outcome ([`outcome`]), its errors and its longest reply.
fn tally(t: &mut Tally, record: &MatchRecord, role: usize) {
    outcome(t, &record.goal_values, &record.roles, role);
    t.errors += record
        .errors
        .iter()
        .skip(1)
        .filter(|e| !e[role].is_empty())
        .count() as u64;
    t.max_reply = t.max_reply.max(record.max_reply_seconds[role]);
}

/// Adds the outcome of a match with `goals` to the tally of the player of
/// `role`: a win when its goal is above every other player's (the `random`
/// role, nature, is no opponent), a draw when it is level with the best.
fn outcome(t: &mut Tally, goals: &[i64], roles: &[String], role: usize) {
    let mine = goals[role];
    let others = goals
        .iter()
        .enumerate()
        .filter(|&(r, _)| r != role && !roles[r].eq_ignore_ascii_case("random"))
        .map(|(_, &g)| g);
    let best_other = others.max().unwrap_or(i64::MIN);
    t.matches += 1;
    t.goal_sum += mine;
    t.wins += u64::from(mine > best_other);
    t.draws += u64::from(mine == best_other);
}

/// The results as a text table.
fn table(results: &[report::PlayerResult]) -> String {
    let mut out = format!(
        "{:<24} {:<12} {:>7} {:>5} {:>5} {:>8} {:>6} {:>9}\n",
        "player", "first role", "matches", "wins", "draws", "avg goal", "errors", "max reply"
    );
    for r in results {
        out.push_str(&format!(
            "{:<24} {:<12} {:>7} {:>5} {:>5} {:>8.1} {:>6} {:>8.2}s\n",
            r.player, r.first_role, r.matches, r.wins, r.draws, r.average_goal, r.errors, r.max_reply_seconds
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn player_specs_are_checked() {
        assert!(player_spec("white=127.0.0.1:9147").is_ok());
        assert!(player_spec("white=builtin:uct").is_ok());
        assert!(player_spec("white=builtin:chess")
            .unwrap_err()
            .contains("unknown search"));
        assert!(player_spec("white").unwrap_err().contains("ROLE="));
        assert!(player_spec("white=localhost").unwrap_err().contains("HOST:PORT"));
        assert_eq!(
            super::super::options::search("mc"),
            Ok(ggpnet::player::Search::Mc)
        );
    }
}
