//! GDL-II match play: the manager tells each player only its percepts, in the
//! Dresden GameController's 2010 and 2013 forms, and plays `random` itself;
//! the player understands both forms (upper-cased too), keeps the states its
//! percepts allow, and switches doors in Monty Hall. Players here are in this
//! process or on 127.0.0.1, and stop with the test.

use ggpnet::manager::{run_match, Gdl2Form, Link, MatchSetup};
use ggpnet::player::{Player, PlayerConfig, Search};
use ggpnet::{Config, Game};
use std::io::{Read, Write};
use std::net::TcpListener;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

const MONTY_HALL: &str = include_str!("../games/montyhall.kif");

/// Held by every test whose players search against a clock, so that they do
/// not compete for the cores with another such test of this binary.
fn timed() -> MutexGuard<'static, ()> {
    static TIMED: Mutex<()> = Mutex::new(());
    TIMED.lock().unwrap_or_else(|e| e.into_inner())
}

/// A player on loopback that records every message it gets and answers START
/// `ready` and each PLAY with the next of `moves`. It serves `connections`
/// connections, then stops.
fn recording_player(moves: &'static [&'static str], connections: usize) -> (String, Arc<Mutex<Vec<String>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").expect("binds");
    let address = listener.local_addr().expect("address").to_string();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = Arc::clone(&seen);
    std::thread::spawn(move || {
        let mut plays = 0;
        for stream in listener.incoming().take(connections) {
            let Ok(mut stream) = stream else { continue };
            let mut buffer = [0u8; 65536];
            let n = stream.read(&mut buffer).unwrap_or(0);
            let request = String::from_utf8_lossy(&buffer[..n]).to_string();
            let body = request.split_once("\r\n\r\n").map_or("", |(_, b)| b).to_owned();
            let reply = match body.contains("PLAY") {
                true => {
                    plays += 1;
                    moves.get(plays - 1).copied().unwrap_or("wait")
                }
                false => "ready",
            };
            log.lock().unwrap().push(body);
            let _ = stream.write_all(
                format!(
                    "HTTP/1.0 200 OK\r\nContent-type: text/acl\r\nContent-length: {}\r\n\r\n{reply}",
                    reply.len()
                )
                .as_bytes(),
            );
        }
    });
    (address, seen)
}

fn setup(game: &Game, players: Vec<Option<Link>>, form: Gdl2Form, id: &str) -> MatchSetup {
    MatchSetup {
        game: game.clone(),
        rules: MONTY_HALL.to_owned(),
        player_names: players.iter().map(|_| "p".to_owned()).collect(),
        players,
        id: id.to_owned(),
        start_clock: Duration::from_secs(5),
        play_clock: Duration::from_secs(2),
        scramble: None,
        seed: 7,
        max_steps: 20,
        gdl2_form: form,
    }
}

/// The door of a move or percept such as `(open 2)`.
fn door(text: &str) -> &str {
    text.trim_end_matches(" )")
        .trim_end_matches(')')
        .rsplit(' ')
        .next()
        .expect("a door")
}

#[test]
fn the_manager_sends_percepts_in_both_dresden_forms() {
    let game = Game::load(MONTY_HALL, &Config::default()).expect("loads");
    assert!(game.is_gdl2());
    const MOVES: &[&str] = &["wait", "(choose 1)", "wait", "switch"];
    for (form, id) in [(Gdl2Form::Form2010, "mh.2010"), (Gdl2Form::Form2013, "mh.2013")] {
        let (address, seen) = recording_player(MOVES, 6);
        let players = vec![Some(Link::Remote(address)), None];
        let record = run_match(&setup(&game, players, form, id)).expect("the match runs");
        assert!(record.is_completed);
        assert!(
            record.errors.iter().all(|e| e[0].is_empty()),
            "{:?}",
            record.errors
        );
        let hidden = door(&record.moves[0][1]).to_owned();
        let opened = door(&record.moves[2][1]).to_owned();
        let seen = seen.lock().unwrap().clone();
        assert!(seen[0].starts_with(&format!("( START {id} candidate ((role candidate) ")));
        let expected: Vec<String> = match form {
            Gdl2Form::Form2010 => vec![
                format!("(PLAY {id} NIL)"),
                format!("(PLAY {id} ((does candidate wait) ))"),
                format!("(PLAY {id} ((does candidate (choose 1)) ))"),
                format!("(PLAY {id} ((does candidate wait) (opened {opened}) ))"),
                format!("(STOP {id} ((car {hidden}) (does candidate switch) ))"),
            ],
            Gdl2Form::Form2013 => vec![
                format!("(PLAY {id} 0 NIL NIL)"),
                format!("(PLAY {id} 1 wait ((does candidate wait) ))"),
                format!("(PLAY {id} 2 (choose 1) ((does candidate (choose 1)) ))"),
                format!("(PLAY {id} 3 wait ((does candidate wait) (opened {opened}) ))"),
                format!("(STOP {id} 4 switch ((car {hidden}) (does candidate switch) ))"),
            ],
        };
        assert_eq!(seen[1..], expected[..]);
        // The record holds every role's percepts at every step.
        let percepts = record.percepts.as_ref().expect("percepts in a GDL-II record");
        assert_eq!(percepts.len(), 4);
        assert_eq!(
            percepts[3][0],
            vec![format!("(car {hidden})"), "(does candidate switch)".to_owned()]
        );
        assert!(percepts[..3].iter().all(|step| step[1].is_empty()));
        assert_eq!(percepts[3][1], vec![format!("(car {hidden})")]);
    }
}

/// Plays one Monty Hall match against `player` by hand, in the 2010 or 2013
/// form, with everything upper-cased as the GameController sends it; returns
/// the player's last move.
fn monty_hall_by_hand(player: &Player, form: Gdl2Form, id: &str) -> String {
    let rules: String = MONTY_HALL
        .lines()
        .filter(|l| !l.starts_with(';'))
        .collect::<Vec<_>>()
        .join(" ")
        .to_uppercase();
    let start = format!("(START {id} CANDIDATE ({rules}) 10 1)");
    assert_eq!(player.handle(&start, Instant::now()).text, "ready");
    let play = |text: String| {
        let reply = player.handle(&text, Instant::now());
        assert_ne!(reply.text, "error", "{text}: {}", reply.note);
        reply.text
    };
    let forms = |turn: u64, own: &str, percepts: &str| match form {
        Gdl2Form::Form2010 if turn == 0 => format!("(PLAY {id} NIL)"),
        Gdl2Form::Form2010 => format!("(PLAY {id} ({percepts}))"),
        Gdl2Form::Form2013 if turn == 0 => format!("(PLAY {id} 0 NIL NIL)"),
        Gdl2Form::Form2013 => format!("(PLAY {id} {turn} {own} ({percepts}))"),
    };
    assert_eq!(play(forms(0, "", "")), "WAIT");
    let choice = play(forms(1, "WAIT", "(DOES CANDIDATE WAIT) "));
    assert!(choice.starts_with("(CHOOSE "), "{choice}");
    // The host opens a door the candidate did not choose.
    let chosen = door(&choice);
    let opened = ["1", "2", "3"]
        .into_iter()
        .find(|d| *d != chosen)
        .expect("a door");
    let percepts = format!("(DOES CANDIDATE {choice}) ");
    assert_eq!(play(forms(2, &choice, &percepts)), "WAIT");
    let percepts = format!("(DOES CANDIDATE WAIT) (OPENED {opened}) ");
    let decision = play(forms(3, "WAIT", &percepts));
    let stop = player.handle(
        &format!("(STOP {id} ((CAR 1) (DOES CANDIDATE {decision}) ))"),
        Instant::now(),
    );
    assert_eq!(stop.text, "done");
    decision
}

#[test]
fn the_player_understands_both_forms_and_switches() {
    let _timed = timed();
    for search in [Search::Mc, Search::Uct] {
        let player = Player::new(
            PlayerConfig::new()
                .search(search)
                .margin(Duration::from_millis(700)),
        );
        assert_eq!(
            monty_hall_by_hand(&player, Gdl2Form::Form2010, "h.2010"),
            "SWITCH"
        );
        assert_eq!(
            monty_hall_by_hand(&player, Gdl2Form::Form2013, "h.2013"),
            "SWITCH"
        );
        assert_eq!(player.matches(), 0);
    }
}

#[test]
fn percepts_no_state_allows_still_get_a_legal_move() {
    let _timed = timed();
    let player = Player::new(
        PlayerConfig::new()
            .search(Search::Mc)
            .margin(Duration::from_millis(800)),
    );
    let rules = MONTY_HALL
        .lines()
        .filter(|l| !l.starts_with(';'))
        .collect::<Vec<_>>()
        .join(" ");
    let start = format!("(START x candidate ({rules}) 10 1)");
    assert_eq!(player.handle(&start, Instant::now()).text, "ready");
    assert_eq!(player.handle("(PLAY x NIL)", Instant::now()).text, "wait");
    // A percept no rule can give: the player says so in its note and still moves legally.
    let reply = player.handle("(PLAY x ((does candidate wait) (opened 9) ))", Instant::now());
    assert!(reply.text.starts_with("(choose "), "{reply:?}");
    assert!(reply.note.contains("no state fits the percepts"), "{reply:?}");
}

#[test]
fn our_player_against_random_makes_no_error_in_either_form() {
    let _timed = timed();
    let game = Game::load(MONTY_HALL, &Config::default()).expect("loads");
    for (n, form) in [Gdl2Form::Form2010, Gdl2Form::Form2013].into_iter().enumerate() {
        for m in 0..3 {
            let ours = Link::builtin(PlayerConfig::new().search(Search::Mc));
            let mut match_setup = setup(&game, vec![Some(ours), None], form, &format!("r.{n}.{m}"));
            match_setup.play_clock = Duration::from_millis(300);
            match_setup.seed = m;
            let record = run_match(&match_setup).expect("the match runs");
            assert!(record.is_completed);
            for (step, errors) in record.errors.iter().enumerate() {
                assert_eq!(errors[0], "", "form {form:?}, match {m}, step {step}");
            }
            assert_eq!(record.moves[3][0], "switch", "{:?}", record.moves);
        }
    }
}
