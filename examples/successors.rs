//! Times `Machine::successors` over the states of seeded random walks,
//! against the naive expansion it replaced (main's code before issue 37's
//! item 2: `legal_joint_moves`, then one checked `next_state` per joint
//! move), the two alternating round by round on the same states. Prints per
//! game one JSON line: states, children, and per child the nanoseconds of
//! each (medians over the rounds) and their ratio.
//!
//! `cargo run --release --example successors GAME.kif... [--rounds N] [--walks N] [--evaluator sweep|differential]`
//! (5 rounds, 20 walks of at most 200 moves; the facade's default evaluator).

use ggpnet::{Config, EngineChoice, EvaluatorKind, Game, Machine, Move, State, Stream};
use std::time::Instant;

/// Moves a walk plays at most.
const WALK_MOVES: usize = 200;

/// The states of `walks` seeded random walks from the initial state, every
/// one with at least one joint move.
fn walk_states(game: &Game, machine: &mut Machine, walks: u64) -> Result<Vec<State>, ggpnet::Error> {
    let mut states = Vec::new();
    for seed in 1..=walks {
        let mut rng = Stream::new(seed, 0);
        let mut state = game.initial_state();
        for _ in 0..WALK_MOVES {
            if machine.is_terminal(&state)? {
                break;
            }
            let Some(joint) = machine.random_joint_move(&state, &mut rng)? else {
                break;
            };
            let next = machine.next_state(&state, &joint)?;
            states.push(std::mem::replace(&mut state, next));
        }
    }
    Ok(states)
}

/// Main's `successors`: the joint moves, then one checked step each.
fn naive(machine: &mut Machine, state: &State) -> Result<Vec<(Vec<Move>, State)>, ggpnet::Error> {
    let joints = machine.legal_joint_moves(state)?;
    joints
        .into_iter()
        .map(|joint| {
            let next = machine.next_state(state, &joint)?;
            Ok((joint, next))
        })
        .collect()
}

/// A state's successors, listed one way or another.
type Expand = fn(&mut Machine, &State) -> Result<Vec<(Vec<Move>, State)>, ggpnet::Error>;

/// Seconds to expand every one of `states` with `expand`, and the children.
fn time(machine: &mut Machine, states: &[State], expand: Expand) -> Result<(f64, usize), ggpnet::Error> {
    let start = Instant::now();
    let mut children = 0;
    for state in states {
        children += std::hint::black_box(expand(machine, state)?).len();
    }
    Ok((start.elapsed().as_secs_f64(), children))
}

fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(f64::total_cmp);
    xs[xs.len() / 2]
}

/// The value after `flag` in `args`, parsed, or `default`.
fn option<T: std::str::FromStr>(args: &[String], flag: &str, default: T) -> Result<T, String> {
    match args.iter().position(|a| a == flag) {
        None => Ok(default),
        Some(at) => args
            .get(at + 1)
            .and_then(|v| v.parse().ok())
            .ok_or_else(|| format!("{flag} needs a value")),
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let rounds: usize = option(&args, "--rounds", 5)?.max(1);
    let walks: u64 = option(&args, "--walks", 20)?;
    let evaluator: String = option(&args, "--evaluator", String::new())?;
    let paths = args
        .iter()
        .enumerate()
        .filter(|&(i, a)| !a.starts_with("--") && (i == 0 || !args[i - 1].starts_with("--")));
    for (_, path) in paths {
        let text = std::fs::read_to_string(path)?;
        let game = Game::load(&text, &Config::new().engine(EngineChoice::Propnet))?;
        let mut machine = match evaluator.as_str() {
            "sweep" => game.machine_with_evaluator(EvaluatorKind::Sweep),
            "differential" => game.machine_with_evaluator(EvaluatorKind::Differential),
            _ => game.machine(),
        };
        let states = walk_states(&game, &mut machine, walks)?;
        let (mut old, mut new, mut children) = (Vec::new(), Vec::new(), 0);
        for _ in 0..rounds {
            let (seconds, n) = time(&mut machine, &states, naive)?;
            old.push(seconds);
            let (seconds, m) = time(&mut machine, &states, Machine::successors)?;
            new.push(seconds);
            assert_eq!(n, m, "the same children");
            children = n;
        }
        let per_child = |s: f64| s * 1e9 / children.max(1) as f64;
        let (old, new) = (median(old), median(new));
        println!(
            "{{\"game\":{path:?},\"states\":{},\"children\":{children},\"old_ns_per_child\":{:.1},\"new_ns_per_child\":{:.1},\"speedup\":{:.2}}}",
            states.len(),
            per_child(old),
            per_child(new),
            old / new
        );
    }
    Ok(())
}
