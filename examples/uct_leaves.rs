//! The player's UCT with scalar leaves against the same UCT with lanes leaves
//! (`ggpnet::player::Leaves`), the same clock for both, sides alternating:
//! each is a `Player` sent the match protocol's messages, both at once as a
//! manager sends them (so each searches while the other moves). Prints the
//! wins of each and, from the log notes of their PLAY replies, the UCT
//! iterations and playouts per second of each.
//!
//! `cargo run --release --example uct_leaves GAME.kif [MATCHES] [PLAY_CLOCK]`
//! (10 matches, 1 s a move by default; one search thread a player).

use ggpnet::player::{Leaves, Player, PlayerConfig, Reply};
use ggpnet::{Config, Game};
use std::time::Instant;

/// Per kind of leaves: wins, draws, iterations, playouts and seconds searched.
#[derive(Default)]
struct Tally {
    wins: u64,
    iterations: u64,
    playouts: u64,
    seconds: f64,
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let path = args
        .get(1)
        .ok_or("usage: uct_leaves GAME.kif [MATCHES] [PLAY_CLOCK]")?;
    let matches: u64 = args.get(2).map_or(Ok(10), |a| a.parse())?;
    let clock: f64 = args.get(3).map_or(Ok(1.0), |a| a.parse())?;
    let rules = std::fs::read_to_string(path)?;
    let game = Game::load(&rules, &Config::default())?;
    let printed: Vec<String> = ggpnet::kif::sexprs(&rules)?
        .iter()
        .map(ToString::to_string)
        .collect();
    let kinds = [Leaves::Scalar, Leaves::Lanes];
    let mut tallies = [Tally::default(), Tally::default()];
    let mut draws = 0;
    for n in 0..matches {
        let players = kinds.map(|leaves| Player::new(PlayerConfig::new().leaves(leaves)));
        // Role r is played by kind (r + n) % 2.
        let seat = |role: usize| (role + n as usize) % 2;
        let goals = play(&game, &printed.join(" "), &players, &seat, clock, n, &mut tallies)?;
        let best = goals.iter().max().copied();
        let winners: Vec<usize> = (0..goals.len()).filter(|&r| Some(goals[r]) == best).collect();
        match winners.as_slice() {
            [role] => tallies[seat(*role)].wins += 1,
            _ => draws += 1,
        }
        println!("match {n}: goals {goals:?}, lanes played role {}", (n + 1) % 2);
    }
    for (kind, t) in kinds.iter().zip(&tallies) {
        println!(
            "{kind:?}: {} wins of {matches} ({draws} draws), {:.0} iterations/s, {:.0} playouts/s",
            t.wins,
            t.iterations as f64 / t.seconds.max(1e-9),
            t.playouts as f64 / t.seconds.max(1e-9)
        );
    }
    Ok(())
}

/// Plays match `n` to its end: the goals, per role.
fn play(
    game: &Game,
    rules: &str,
    players: &[Player; 2],
    seat: &dyn Fn(usize) -> usize,
    clock: f64,
    n: u64,
    tallies: &mut [Tally; 2],
) -> Result<Vec<i64>, Box<dyn std::error::Error>> {
    let roles = game.roles();
    let id = format!("leaves.{n}");
    let starts: Vec<String> = roles
        .iter()
        .map(|role| format!("( START {id} {role} ({rules}) 10 {clock} )"))
        .collect();
    for reply in ask(players, seat, &starts) {
        println!("  {}", reply.note);
    }
    let mut machine = game.machine();
    let mut state = game.initial_state();
    let mut last = "NIL".to_owned();
    while !machine.is_terminal(&state)? {
        let plays = vec![format!("( PLAY {id} {last} )"); roles.len()];
        let started = Instant::now();
        let replies = ask(players, seat, &plays);
        let seconds = started.elapsed().as_secs_f64();
        let mut joint = Vec::new();
        for (role, reply) in replies.iter().enumerate() {
            joint.push(game.parse_move(role, &reply.text)?);
            let tally = &mut tallies[seat(role)];
            tally.iterations += count_before(&reply.note, " iterations");
            tally.playouts += count_before(&reply.note, " playouts");
            tally.seconds += seconds;
        }
        last = format!(
            "({})",
            replies
                .iter()
                .map(|r| r.text.as_str())
                .collect::<Vec<_>>()
                .join(" ")
        );
        state = machine.next_state(&state, &joint)?;
    }
    ask(players, seat, &vec![format!("( STOP {id} {last} )"); roles.len()]);
    Ok(machine
        .goals(&state)?
        .into_iter()
        .map(|g| g.unwrap_or(0))
        .collect())
}

/// Sends role `r` its message `messages[r]` (to the player of its seat), all
/// at once: the replies, per role.
fn ask(players: &[Player; 2], seat: &dyn Fn(usize) -> usize, messages: &[String]) -> Vec<Reply> {
    std::thread::scope(|scope| {
        let asked: Vec<_> = messages
            .iter()
            .enumerate()
            .map(|(role, message)| {
                let player = &players[seat(role)];
                scope.spawn(move || player.handle(message, Instant::now()))
            })
            .collect();
        asked
            .into_iter()
            .map(|h| h.join().expect("a player panicked"))
            .collect()
    })
}

/// The number just before `word` in `note` (0 if none).
fn count_before(note: &str, word: &str) -> u64 {
    note.split(word)
        .next()
        .and_then(|head| head.rsplit([' ', ',']).next())
        .and_then(|n| n.parse().ok())
        .unwrap_or(0)
}
