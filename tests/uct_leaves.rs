//! The UCT player's leaves: the kind it evaluates them with (measured at
//! START, or set) is said in its log notes, START's and every PLAY's, and
//! with either kind it answers legal moves through whole games. Assertions
//! are on legality and log content, never on speed.

use ggpnet::player::{Leaves, Player, PlayerConfig, Reply};
use ggpnet::{Config, EngineChoice, Game};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

const TIC_TAC_TOE: &str = include_str!("../games/tic_tac_toe.kif");
const CONNECT_FOUR: &str = include_str!("../games/connect_four.kif");

/// Held by every test whose players search against a clock, so that they do
/// not compete for the cores with another such test of this binary.
fn timed() -> MutexGuard<'static, ()> {
    static TIMED: Mutex<()> = Mutex::new(());
    TIMED.lock().unwrap_or_else(|e| e.into_inner())
}

/// The rules on one line, without comments, as a manager sends them.
fn one_line(rules: &str) -> String {
    let printed = ggpnet::kif::sexprs(rules).expect("the test game parses");
    printed
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(" ")
}

/// Plays `rules` with one player of `config` per role, `moves` joint moves at
/// most (to the end if fewer), each reply checked legal: the START notes and
/// the PLAY notes.
fn play(rules: &str, config: &PlayerConfig, moves: usize, start_clock: u32) -> (Vec<String>, Vec<String>) {
    let game = Game::load(rules, &Config::default()).expect("the test game loads");
    let players: Vec<Player> = game.roles().iter().map(|_| Player::new(config.clone())).collect();
    let ask = |messages: &[String]| -> Vec<Reply> {
        players
            .iter()
            .zip(messages)
            .map(|(p, m)| p.handle(m, Instant::now()))
            .collect()
    };
    let line = one_line(rules);
    let starts: Vec<String> = game
        .roles()
        .iter()
        .map(|role| format!("(START m {role} ({line}) {start_clock} 1)"))
        .collect();
    let start_notes = ask(&starts).into_iter().map(|r| r.note).collect();
    let (mut machine, mut state) = (game.machine(), game.initial_state());
    let (mut last, mut notes) = ("NIL".to_owned(), Vec::new());
    for _ in 0..moves {
        if machine.is_terminal(&state).unwrap() {
            break;
        }
        let replies = ask(&vec![format!("(PLAY m {last})"); players.len()]);
        let mut joint = Vec::new();
        for (role, reply) in replies.iter().enumerate() {
            let m = game.parse_move(role, &reply.text).expect("a move of the role");
            assert!(
                machine.legal_moves(&state, role).unwrap().contains(&m),
                "{} is illegal ({})",
                reply.text,
                reply.note
            );
            joint.push(m);
            notes.push(reply.note.clone());
        }
        last = format!(
            "({})",
            replies
                .iter()
                .map(|r| r.text.as_str())
                .collect::<Vec<_>>()
                .join(" ")
        );
        state = machine.next_state(&state, &joint).unwrap();
    }
    (start_notes, notes)
}

fn config(leaves: Leaves) -> PlayerConfig {
    PlayerConfig::new()
        .leaves(leaves)
        .margin(Duration::from_millis(700))
}

#[test]
fn measured_leaves_are_logged_at_start_and_used_in_every_play() {
    let _timed = timed();
    let (starts, plays) = play(CONNECT_FOUR, &config(Leaves::Auto), 4, 10);
    eprintln!("{}", starts[0]);
    for note in &starts {
        assert!(note.contains("measured"), "{note}");
        assert!(
            note.contains("iterations/s") && note.contains("playouts/s"),
            "{note}"
        );
    }
    let kind = match starts[0].contains("propnet, lanes leaves") {
        true => "on lanes leaves",
        false => "on scalar leaves",
    };
    assert!(starts[0].contains("propnet, lanes leaves") || starts[0].contains("propnet, scalar leaves"));
    for note in &plays {
        assert!(
            note.contains("uct, ") && note.contains(kind),
            "{note}, expected {kind}"
        );
    }
}

#[test]
fn lanes_leaves_play_legal_moves_to_the_end() {
    let _timed = timed();
    let (starts, plays) = play(TIC_TAC_TOE, &config(Leaves::Lanes), 9, 5);
    assert!(
        starts.iter().all(|n| n.ends_with("lanes leaves (set)")),
        "{starts:?}"
    );
    assert!(!plays.is_empty());
    for note in &plays {
        // One turn in two a role has one legal move (noop): still searched.
        assert!(note.contains("on lanes leaves"), "{note}");
    }
    let playouts: u64 = plays
        .iter()
        .filter_map(|n| {
            n.split(" playouts")
                .next()?
                .rsplit(' ')
                .next()?
                .parse::<u64>()
                .ok()
        })
        .sum();
    assert!(playouts >= 512, "a batch is 512 playouts: {plays:?}");
}

#[test]
fn scalar_leaves_and_the_interpreter_are_logged() {
    let _timed = timed();
    let (starts, plays) = play(TIC_TAC_TOE, &config(Leaves::Scalar), 2, 5);
    assert!(
        starts.iter().all(|n| n.ends_with("scalar leaves (set)")),
        "{starts:?}"
    );
    assert!(plays.iter().all(|n| n.contains("on scalar leaves")), "{plays:?}");
    let interpreter = config(Leaves::Lanes).game(Config::new().engine(EngineChoice::Interpreter));
    let (starts, plays) = play(TIC_TAC_TOE, &interpreter, 2, 5);
    assert!(
        starts.iter().all(|n| n.contains("the interpreter has no lanes")),
        "{starts:?}"
    );
    assert!(plays.iter().all(|n| n.contains("on scalar leaves")), "{plays:?}");
}
