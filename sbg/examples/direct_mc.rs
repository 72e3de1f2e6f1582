//! Flat Monte-Carlo speed of the direct SBG move generator, to set beside
//! `ggpnet mc GAME.sbg --threads 1 --json` (the translated propnet): random
//! playouts from the initial state to the end on one thread, each move drawn
//! uniformly from the legal moves, for a number of seconds; a transition is one
//! move applied, as in `ggpnet mc`.
//!
//! `cargo run --release -p ggpnet-sbg --example direct_mc -- games/sbg/gardner.sbg 5`

use ggpnet_sbg::board::Position;
use ggpnet_sbg::random::Rng;
use std::time::{Duration, Instant};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let (Some(path), seconds) = (args.get(1), args.get(2).map_or(Ok(5.0), |s| s.parse::<f64>())) else {
        eprintln!("usage: direct_mc GAME.sbg [SECONDS]");
        std::process::exit(2);
    };
    let seconds = match seconds {
        Ok(s) if s > 0.0 && s <= 3600.0 => s,
        _ => {
            eprintln!("error: SECONDS must be a number in (0, 3600]");
            std::process::exit(2);
        }
    };
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| {
        eprintln!("error: {path}: {e}");
        std::process::exit(2);
    });
    let rules = match ggpnet_sbg::parse(&text) {
        Ok(parsed) => parsed.rules,
        Err(e) => {
            eprintln!("error: {path}:{e}");
            std::process::exit(2);
        }
    };
    let mut rng = Rng::new(1);
    let (mut playouts, mut transitions, mut white) = (0u64, 0u64, 0u64);
    let initial = Position::initial(&rules);
    let budget = Duration::from_secs_f64(seconds);
    let started = Instant::now();
    while started.elapsed() < budget {
        let mut position = initial.clone();
        loop {
            let legal = position.legal_moves(&rules);
            if let Some(goals) = position.outcome_given(&rules, &legal) {
                white += u64::from(goals[0]);
                break;
            }
            let Some(next) = position.play(&rules, legal[rng.below(legal.len())]) else {
                unreachable!("a legal move is played");
            };
            position = next;
            transitions += 1;
        }
        playouts += 1;
    }
    let elapsed = started.elapsed().as_secs_f64();
    println!(
        "{{\"game\":{path:?},\"playouts\":{playouts},\"transitions\":{transitions},\"seconds\":{elapsed:.3},\"transitions_per_sec\":{:.0},\"avg_goal_white\":{:.2}}}",
        transitions as f64 / elapsed,
        white as f64 / playouts.max(1) as f64
    );
}
