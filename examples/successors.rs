//! Times `Machine::successors` over the states of seeded random walks,
//! against the naive expansion it replaced (main's code before issue 37's
//! item 2: `legal_joint_moves`, then one checked `next_state` per joint
//! move), the two alternating round by round on the same states. Prints per
//! game one JSON line: states, children, and per child the nanoseconds of
//! each (medians over the rounds) and their ratio.
//!
//! With `--lanes`, the scalar expansion (`Expansion::Scalar`) against the
//! lanes (`Expansion::Lanes`) instead, state by state: per range of numbers
//! of children, the states in it and the nanoseconds per child of each
//! (sums over the states of each state's median over the rounds), which
//! place the number of children from which the lanes pay; and the seconds
//! the machine's first expansion on the lanes took (the lanes machine made).
//!
//! `cargo run --release --example successors GAME.kif... [--rounds N] [--walks N] [--evaluator sweep|differential] [--lanes]`
//! (5 rounds, 20 walks of at most 200 moves; the facade's default evaluator).

use ggpnet::propnet::layout::Step;
use ggpnet::{Config, EngineChoice, EvaluatorKind, Expansion, Game, Machine, Move, State, Stream};
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

/// The ranges of numbers of children the lanes mode reports on.
const RANGES: [(usize, usize); 7] = [
    (1, 8),
    (9, 32),
    (33, 64),
    (65, 128),
    (129, 256),
    (257, 512),
    (513, usize::MAX),
];

/// Each state's children and its median seconds per expansion with
/// `Expansion::Scalar`, `Expansion::Lanes` and `Expansion::Auto`, alternating.
fn per_state(
    machine: &mut Machine,
    states: &[State],
    rounds: usize,
) -> Result<Vec<(usize, f64, f64, f64)>, ggpnet::Error> {
    let mut times = vec![(0, Vec::new(), Vec::new(), Vec::new()); states.len()];
    let ways = [Expansion::Scalar, Expansion::Lanes, Expansion::Auto];
    for _ in 0..rounds {
        for (at, (state, time)) in states.iter().zip(&mut times).enumerate() {
            let seconds = [&mut time.1, &mut time.2, &mut time.3];
            for (expansion, seconds) in ways.into_iter().zip(seconds) {
                // Another state loaded first, as in a walk or a search.
                machine.is_terminal(&states[(at + 1) % states.len()])?;
                let start = Instant::now();
                time.0 = std::hint::black_box(machine.successors_with(state, expansion)?).len();
                seconds.push(start.elapsed().as_secs_f64());
            }
        }
    }
    let medians = |(n, s, l, a)| (n, median(s), median(l), median(a));
    Ok(times.into_iter().map(medians).collect())
}

/// The gate slots of the state part (which depends on the state only) and
/// of the move part of `game`'s net.
fn part_slots(game: &Game) -> (u32, u32) {
    let Some(loaded) = game.propnet() else {
        return (0, 0);
    };
    let net = loaded.game.net();
    let size = |steps: &[Step]| -> u32 {
        let range = |step: &Step| match *step {
            Step::Gates(start, end) | Step::Cycle(start, end) => end - start,
        };
        steps.iter().map(range).sum()
    };
    let (state, moves) = net.steps().split_at(net.state_steps());
    (size(state), size(moves))
}

/// The lanes mode's JSON line for a game.
fn lanes_report(
    path: &str,
    machine: &mut Machine,
    states: &[State],
    rounds: usize,
) -> Result<String, ggpnet::Error> {
    let (state_slots, move_slots) = part_slots(machine.game());
    let first = Instant::now();
    machine.successors_with(&states[0], Expansion::Lanes)?;
    let first = first.elapsed().as_secs_f64();
    let times = per_state(machine, states, rounds)?;
    let ranges: Vec<String> = RANGES
        .iter()
        .filter_map(|&(low, high)| {
            let inside: Vec<_> = times.iter().filter(|t| (low..=high).contains(&t.0)).collect();
            let children: usize = inside.iter().map(|t| t.0).sum();
            let ns = |s: f64| s * 1e9 / children as f64;
            let sum = |part: fn(&(usize, f64, f64, f64)) -> f64| inside.iter().map(|&t| part(t)).sum::<f64>();
            let (scalar, lanes, auto) = (sum(|t| t.1), sum(|t| t.2), sum(|t| t.3));
            (children > 0).then(|| {
                format!(
                    "{{\"children\":\"{low}-{high}\",\"states\":{},\"scalar_ns\":{:.1},\"lanes_ns\":{:.1},\"auto_ns\":{:.1},\"lanes_speedup\":{:.2}}}",
                    inside.len(),
                    ns(scalar),
                    ns(lanes),
                    ns(auto),
                    scalar / lanes
                )
            })
        })
        .collect();
    Ok(format!(
        "{{\"game\":{path:?},\"states\":{},\"state_slots\":{state_slots},\"move_slots\":{move_slots},\"first_lanes_seconds\":{first:.4},\"ranges\":[{}]}}",
        states.len(),
        ranges.join(",")
    ))
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
        if args.iter().any(|a| a == "--lanes") {
            if !states.is_empty() {
                println!("{}", lanes_report(path, &mut machine, &states, rounds)?);
            }
            continue;
        }
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
