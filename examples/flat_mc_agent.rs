//! Flat Monte-Carlo: chooses a move for the first role in a game's initial
//! state within a time budget, on every core, and prints each candidate's
//! average goal.
//!
//! `cargo run --release --example flat_mc_agent [GAME.kif] [SECONDS]`
//! (the built-in connect four and 1 s by default).
//!
//! Each of the role's legal moves gets an equal share of the time. Within it,
//! the other roles' moves are drawn at random a few times (they may move at the
//! same time), and from each resulting state a batch of random playouts runs on
//! the game's fastest evaluator (`Game::playouts`, which starts every playout,
//! and every lane of the lanes evaluator, from the given state).

use ggpnet::{Budget, Config, Game, Playouts, Stream};
use std::time::Duration;

/// Opponent replies sampled per candidate move.
const REPLIES: u32 = 4;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let text = match args.next() {
        Some(path) => std::fs::read_to_string(path)?,
        None => ggpnet::DEFAULT_GAME.to_owned(),
    };
    let seconds: f64 = args.next().map_or(Ok(1.0), |a| a.parse())?;
    let budget = Duration::try_from_secs_f64(seconds)?;
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());

    let game = Game::load(&text, &Config::default())?;
    println!(
        "engine: {}{}",
        game.engine(),
        game.evaluator()
            .map_or(String::new(), |e| format!(" ({e} evaluator)"))
    );
    let mut machine = game.machine();
    let state = game.initial_state();
    if machine.is_terminal(&state)? {
        println!("the initial state is terminal: no move to choose");
        return Ok(());
    }
    let me = 0;
    let candidates = machine.legal_moves(&state, me)?;
    let share = budget / (candidates.len() as u32 * REPLIES);
    let mut rng = Stream::new(1, 0);
    let mut best = None;
    for candidate in &candidates {
        let (mut sum, mut count) = (0.0, 0u64);
        for reply in 0..REPLIES {
            let mut joint = Vec::new();
            for role in 0..game.roles().len() {
                joint.push(match role == me {
                    true => candidate.clone(),
                    false => machine
                        .random_move(&state, role, &mut rng)?
                        .ok_or("a role has no legal move")?,
                });
            }
            let next = machine.next_state(&state, &joint)?;
            let how = Playouts::new(Budget::Seconds(share.as_secs_f64()))
                .threads(threads)
                .seed(u64::from(reply));
            let report = game.playouts(&next, &how)?;
            let finished = report.totals.playouts - report.totals.missing_goals[me];
            sum += report.totals.goal_sums[me];
            count += finished;
        }
        let average = sum / count.max(1) as f64;
        println!(
            "{:>16}: average goal {average:6.2} over {count} playouts",
            game.move_to_kif(candidate)?
        );
        if best.as_ref().is_none_or(|(_, a)| average > *a) {
            best = Some((candidate.clone(), average));
        }
    }
    let (chosen, average) = best.expect("a non-terminal state has a legal move");
    println!(
        "{} plays {} (average goal {average:.2})",
        game.roles()[me],
        game.move_to_kif(&chosen)?
    );
    Ok(())
}
