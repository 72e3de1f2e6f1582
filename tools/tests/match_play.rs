//! Match play on loopback: `ggpnet play` answers the bytes real managers send,
//! `ggpnet match` runs our player on corpus games (simultaneous moves, three
//! players, a `random` role, scrambled rules), records the errors of players
//! that misbehave, and one player serves 50 matches at once and survives a
//! request fuzzer. Every player here listens on 127.0.0.1 and stops with the test.

mod scratch;
mod support;

use ggpnet::manager::{run_match, Gdl2Form, Link, MatchSetup};
use ggpnet::player::{PlayerConfig, Search};
use ggpnet::{Config, Game};
use scratch::File;
use serde_json::Value;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;
use support::PlayerProcess;

/// Tic-tac-toe, written for this project's tests.
const TIC_TAC_TOE: &str = include_str!("../../games/tic_tac_toe.kif");

/// A dice guess with a `random` role, written for this project's tests: the
/// die is cast at random, then the player guesses it.
const DICE: &str = "(role random) (role guesser)
    (face 1) (face 2) (face 3) (init (phase cast))
    (<= (legal random (cast ?f)) (true (phase cast)) (face ?f))
    (<= (legal random wait) (true (phase guess)))
    (<= (legal guesser wait) (true (phase cast)))
    (<= (legal guesser (guess ?f)) (true (phase guess)) (face ?f))
    (<= (next (phase guess)) (true (phase cast)))
    (<= (next (phase over)) (true (phase guess)))
    (<= (next (die ?f)) (does random (cast ?f)))
    (<= (next (die ?f)) (true (die ?f)))
    (<= (next (right)) (does guesser (guess ?f)) (true (die ?f)))
    (<= terminal (true (phase over)))
    (<= (goal guesser 100) (true (right))) (<= (goal guesser 0) (not (true (right))))
    (goal random 0)";

/// Held by every test that times replies against the play clock, so that no
/// other searching player of this binary competes for the cores meanwhile:
/// the assertion measures the player under test, not its neighbour.
fn timed() -> MutexGuard<'static, ()> {
    static TIMED: Mutex<()> = Mutex::new(());
    TIMED.lock().unwrap_or_else(|e| e.into_inner())
}

/// Runs `ggpnet match` and returns its JSON (records and results).
fn run_matches(game: &Path, args: &[&str]) -> Value {
    let json = File::new(
        &format!(
            "{}.json",
            game.file_stem().and_then(|s| s.to_str()).unwrap_or("game")
        ),
        "",
    );
    support::match_json(game, args, &json)
}

#[test]
fn the_player_answers_the_bytes_managers_send() {
    let player = PlayerProcess::start(&["--search", "random"]);
    let captured = b"POST / HTTP/1.0\r\nAccept: text/delim\r\nHost: localhost\r\nSender: GAMESERVER\r\n\
Receiver: 127.0.0.1:9152\r\nContent-Type: text/acl\r\nContent-Length: 18\r\n\r\n( PLAY cap.1 NIL )";
    let response = player.raw(captured);
    for header in [
        "HTTP/1.0 200 OK\r\n",
        "Content-type: text/acl\r\n",
        "Content-length: 4\r\n",
        "Access-Control-Allow-Origin: *\r\n",
        "Access-Control-Allow-Methods: POST, GET, OPTIONS\r\n",
        "Access-Control-Allow-Headers: Content-Type\r\n",
        "Access-Control-Allow-Age: 86400\r\n",
    ] {
        assert!(response.contains(header), "{header:?} in {response:?}");
    }
    assert!(response.ends_with("\r\n\r\nbusy"), "{response:?}");
    assert_eq!(
        player.post("( INFO )"),
        "( ( name ggpnet ) ( status available ) )"
    );
    let rules = TIC_TAC_TOE.replace('\n', " ");
    assert_eq!(player.post(&format!("( START m.1 o ({rules}) 5 1 )")), "ready");
    assert_eq!(player.post("( PLAY m.1 NIL )"), "noop");
    let reply = player.post("( PLAY m.1 (( mark 2 2 ) noop ) )");
    assert!(reply.starts_with("(mark ") && reply != "(mark 2 2)", "{reply}");
    // A joint move that is not legal: an error reply, and the player keeps serving.
    assert_eq!(player.post("( PLAY m.1 (noop noop) )"), "error");
    assert_eq!(player.post("( STOP m.1 (noop noop) )"), "done");
    assert_eq!(player.post("( ABORT m.1 )"), "aborted");
    assert_eq!(player.post("( PREVIEW ((role r)) 10 )"), "ready");

    // The Dresden GameController: everything upper-cased, no Host header.
    let upper = format!("(START M.2 X ({}) 5 1)", rules.to_uppercase());
    let dresden = format!(
        "POST / HTTP/1.0\r\nAccept: text/delim\r\nSender: Gamecontroller\r\nReceiver: 127.0.0.1\r\n\
         Content-type: text/acl\r\nContent-length: {}\r\n\r\n{upper}",
        upper.len()
    );
    assert!(player.raw(dresden.as_bytes()).ends_with("\r\n\r\nready"));
    let first = player.post("(PLAY M.2 NIL)");
    assert!(first.starts_with("(MARK "), "{first}");

    // The GET form of browser tools, and OPTIONS.
    let get = player.raw(b"GET /(%20INFO%20) HTTP/1.1\r\nHost: x\r\n\r\n");
    assert!(get.ends_with("( ( name ggpnet ) ( status available ) )"), "{get}");
    let options = player.raw(b"OPTIONS / HTTP/1.1\r\nHost: x\r\n\r\n");
    assert!(options.starts_with("HTTP/1.0 200 OK") && options.ends_with("Content-length: 0\r\nAccess-Control-Allow-Origin: *\r\nAccess-Control-Allow-Methods: POST, GET, OPTIONS\r\nAccess-Control-Allow-Headers: Content-Type\r\nAccess-Control-Allow-Age: 86400\r\n\r\n"), "{options}");
}

/// A START whose game is not UTF-8 gets an error reply naming the reason, as
/// `ggpnet check` refuses such a file; the player stays available.
#[test]
fn a_game_that_is_not_utf8_is_refused() {
    let player = PlayerProcess::start(&["--search", "random"]);
    let rules = TIC_TAC_TOE.replace('\n', " ");
    let mut message = format!("( START m.1 o ({rules} (bad \u{e9}) ) 5 1 )").into_bytes();
    let at = message.iter().position(|&b| b == 0xC3).expect("the e acute");
    message[at] = 0xFF;
    let mut request = format!("POST / HTTP/1.0\r\nContent-Length: {}\r\n\r\n", message.len()).into_bytes();
    request.extend(&message);
    let response = player.raw(&request);
    assert!(response.starts_with("HTTP/1.0 400 Bad Request\r\n"), "{response}");
    assert!(response.ends_with("\r\n\r\nerror"), "{response}");
    assert_eq!(
        player.post("( INFO )"),
        "( ( name ggpnet ) ( status available ) )"
    );
    assert_eq!(player.post(&format!("( START m.2 o ({rules}) 5 1 )")), "ready");
}

/// `--leaves` sets how UCT evaluates its leaves: the START and PLAY notes of
/// the JSON log name the kind set, and the replies stay legal moves.
#[test]
fn the_leaf_evaluation_is_set_by_an_option() {
    for leaves in ["scalar", "lanes"] {
        let log = File::new(&format!("leaves-{leaves}.jsonl"), "");
        let log_path = log.to_str().expect("a UTF-8 path").to_owned();
        let player = PlayerProcess::start(&[
            "--search",
            "uct",
            "--threads",
            "1",
            "--leaves",
            leaves,
            "--json-log",
            &log_path,
        ]);
        let rules = TIC_TAC_TOE.replace('\n', " ");
        assert_eq!(player.post(&format!("( START m.1 x ({rules}) 2 1 )")), "ready");
        let reply = player.post("( PLAY m.1 NIL )");
        assert!(reply.starts_with("(mark "), "{reply}");
        // The log line of a request is written after its reply is sent.
        let notes = log_notes(&log, 2);
        drop(player);
        assert_eq!(notes.len(), 2, "START and PLAY logged: {notes:?}");
        assert!(notes[0].contains(&format!("{leaves} leaves (set)")), "{notes:?}");
        assert!(notes[1].contains(&format!("on {leaves} leaves")), "{notes:?}");
    }
    let refused = std::process::Command::new(env!("CARGO_BIN_EXE_ggpnet"))
        .args(["play", "--leaves", "many"])
        .output()
        .expect("ggpnet runs");
    assert_eq!(refused.status.code(), Some(2), "a usage error");
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(
        stderr.contains("--leaves") && stderr.contains("expected auto, scalar or lanes"),
        "{stderr}"
    );
}

/// The notes of a player's JSON log once it has `lines` lines, or what it
/// has after 30 s.
fn log_notes(log: &Path, lines: usize) -> Vec<String> {
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    loop {
        let text = std::fs::read_to_string(log).expect("the JSON log");
        let complete: Vec<&str> = text.lines().filter(|l| l.ends_with('}')).collect();
        if complete.len() >= lines || std::time::Instant::now() > deadline {
            return complete
                .iter()
                .map(|line| serde_json::from_str::<Value>(line).expect("a JSON line")["note"].to_string())
                .collect();
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The corpus, or `None` after a notice (a failure when it is required).
fn corpus() -> Option<PathBuf> {
    ggpnet_tools::corpus::for_test("skipping")
}

/// Checks a match record: completed, goals for every role, and no error of
/// `ours` (the roles our player played: no timeout, no illegal move). How long
/// each took to reply is printed against the play clock, not asserted: on a
/// loaded machine a reply may pass the clock within the manager's grace.
fn check_record(record: &Value, ours: &[usize], play_clock: f64) {
    let id = &record["matchId"];
    assert_eq!(record["isCompleted"], true, "{id}");
    let roles = record["roles"].as_array().expect("roles").len();
    assert_eq!(record["goalValues"].as_array().expect("goals").len(), roles);
    let steps = record["moves"].as_array().expect("moves").len();
    assert_eq!(
        record["states"].as_array().expect("states").len(),
        steps + 1,
        "{id}"
    );
    assert_eq!(
        record["errors"].as_array().expect("errors").len(),
        steps + 1,
        "{id}"
    );
    for &role in ours {
        for (step, errors) in record["errors"].as_array().expect("errors").iter().enumerate() {
            assert_eq!(errors[role], "", "{id}: role {role} at step {step}");
        }
        let took = record["maxReplySeconds"][role].as_f64().expect("seconds");
        println!("{id}: role {role} replied within {took:.3} s (play clock {play_clock} s)");
    }
}

#[test]
fn our_manager_runs_our_player_on_ten_corpus_games() {
    let _timed = timed();
    let Some(corpus) = corpus() else { return };
    let player = PlayerProcess::start(&["--search", "uct", "--threads", "1"]);
    let games = [
        "ticTacToe",               // turns
        "connectFour",             // turns, longer
        "roshambo2",               // simultaneous moves
        "gt_prisoner",             // simultaneous moves
        "connectFourSimultaneous", // simultaneous moves
        "tictactoe_3player",       // three players
        "3pttc",                   // three players
        "blocker",                 // simultaneous moves
        "chickentictactoe",        // simultaneous moves
        "nim1",                    // turns
    ];
    for name in games {
        let path = corpus.join("games").join(format!("{name}.kif"));
        let game =
            Game::load(&std::fs::read_to_string(&path).expect("game"), &Config::default()).expect("loads");
        let roles = game.roles();
        let mut args = vec![
            "--startclock".to_owned(),
            "5".to_owned(),
            "--playclock".to_owned(),
            "0.4".to_owned(),
        ];
        args.extend([
            "--player".to_owned(),
            format!("{}={}", roles[0], player.address()),
        ]);
        for role in &roles[1..] {
            args.extend(["--player".to_owned(), format!("{role}=builtin:random")]);
        }
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = run_matches(&path, &args);
        check_record(&out["matches"][0], &[0], 0.4);
    }
}

#[test]
fn the_manager_plays_the_random_role_and_scrambles_names() {
    let _timed = timed();
    let player = PlayerProcess::start(&["--search", "uct", "--threads", "1"]);
    let dice = File::new("dice.kif", DICE);
    let address = player.address();
    let guesser = format!("guesser={address}");
    let out = run_matches(
        &dice,
        &["--player", &guesser, "--playclock", "0.3", "--matches", "3"],
    );
    for record in out["matches"].as_array().expect("records") {
        check_record(record, &[1], 0.3);
        assert!(record["playerNamesFromHost"][0]
            .as_str()
            .expect("name")
            .contains("manager"));
        assert!(record["moves"][0][0]
            .as_str()
            .expect("move")
            .starts_with("( cast "));
    }

    let tic = File::new("tic.kif", TIC_TAC_TOE);
    let x = format!("x={address}");
    let out = run_matches(
        &tic,
        &[
            "--player",
            &x,
            "--player",
            "o=builtin:random",
            "--playclock",
            "0.3",
            "--scramble",
        ],
    );
    let record = &out["matches"][0];
    assert_eq!(record["scrambled"], true);
    check_record(record, &[0], 0.3);
}

/// A fake player on loopback that answers START `ready` and every other
/// message as `behave` says: `None` closes the connection unanswered, else a
/// delay and a reply. It serves at most 100 connections.
fn fake_player(behave: fn(&str) -> Option<(Duration, String)>) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").expect("binds");
    let address = listener.local_addr().expect("address").to_string();
    std::thread::spawn(move || {
        for stream in listener.incoming().take(100) {
            let Ok(mut stream) = stream else { continue };
            std::thread::spawn(move || {
                let mut buffer = [0u8; 65536];
                let n = stream.read(&mut buffer).unwrap_or(0);
                let request = String::from_utf8_lossy(&buffer[..n]).to_string();
                let body = request.split_once("\r\n\r\n").map_or("", |(_, b)| b);
                let answer = if body.contains("START") {
                    Some((Duration::ZERO, "ready".to_owned()))
                } else {
                    behave(body)
                };
                let Some((delay, text)) = answer else { return };
                std::thread::sleep(delay);
                let _ = stream.write_all(
                    format!(
                        "HTTP/1.0 200 OK\r\nContent-type: text/acl\r\nContent-length: {}\r\n\r\n{text}",
                        text.len()
                    )
                    .as_bytes(),
                );
            });
        }
    });
    address
}

#[test]
fn late_garbage_illegal_and_closed_replies_are_recorded_and_replaced() {
    let _timed = timed();
    let tic = File::new("tic-misbehaving.kif", TIC_TAC_TOE);
    let garbage = fake_player(|_| Some((Duration::ZERO, "(((".to_owned())));
    let illegal = fake_player(|_| Some((Duration::ZERO, "(mark 9 9)".to_owned())));
    let late = fake_player(|_| Some((Duration::from_millis(1800), "noop".to_owned())));
    let closer = fake_player(|_| None);
    let cases = [
        (garbage, illegal, "IL (((", "IL (mark 9 9)"),
        (late, closer, "TO", "CE"),
    ];
    for (x, o, x_error, o_error) in cases {
        let (x, o) = (format!("x={x}"), format!("o={o}"));
        let out = run_matches(
            &tic,
            &[
                "--player",
                &x,
                "--player",
                &o,
                "--playclock",
                "0.2",
                "--startclock",
                "1",
            ],
        );
        let record = &out["matches"][0];
        assert_eq!(record["isCompleted"], true);
        let errors = record["errors"].as_array().expect("errors");
        for step in &errors[1..] {
            assert_eq!(step[0], x_error, "{record}");
            assert_eq!(step[1], o_error, "{record}");
        }
    }
}

#[test]
fn one_player_serves_fifty_matches_at_once() {
    let _timed = timed();
    let player = PlayerProcess::start(&["--search", "uct", "--threads", "1"]);
    let game = Game::load(TIC_TAC_TOE, &Config::default()).expect("loads");
    let records: Vec<_> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..50)
            .map(|n| {
                let setup = MatchSetup {
                    game: game.clone(),
                    rules: TIC_TAC_TOE.to_owned(),
                    players: vec![
                        Some(Link::Remote(player.address())),
                        Some(Link::builtin(PlayerConfig::new().search(Search::Random))),
                    ],
                    player_names: vec!["ggpnet".into(), "random".into()],
                    id: format!("concurrent.{n}"),
                    start_clock: Duration::from_secs(10),
                    play_clock: Duration::from_secs(1),
                    scramble: None,
                    seed: n,
                    max_steps: 100,
                    gdl2_form: Gdl2Form::Form2010,
                };
                scope.spawn(move || run_match(&setup).expect("the match runs"))
            })
            .collect();
        handles.into_iter().map(|h| h.join().expect("no panic")).collect()
    });
    for record in records {
        let record = serde_json::to_value(&record).expect("JSON");
        check_record(&record, &[0], 1.0);
    }
    assert_eq!(
        player.post("( INFO )"),
        "( ( name ggpnet ) ( status available ) )"
    );
}

#[test]
fn a_request_fuzzer_finds_no_crash() {
    let player = PlayerProcess::start(&["--search", "random"]);
    let mut rng = ggpnet::Stream::new(11, 0);
    let valid = b"POST / HTTP/1.0\r\nContent-Length: 8\r\n\r\n( INFO )".to_vec();
    for round in 0..300 {
        let request: Vec<u8> = match round % 5 {
            // Random bytes.
            0 => (0..rng.draw(2000)).map(|_| rng.next_u64() as u8).collect(),
            // A valid request cut anywhere.
            1 => valid[..rng.draw(valid.len())].to_vec(),
            // A huge stated length.
            2 => b"POST / HTTP/1.0\r\nContent-Length: 18446744073709551615\r\n\r\n( INFO )".to_vec(),
            // A body that is not a message, of random bytes.
            3 => {
                let body: Vec<u8> = (0..rng.draw(300)).map(|_| rng.next_u64() as u8).collect();
                let mut r = format!("POST / HTTP/1.0\r\nContent-Length: {}\r\n\r\n", body.len()).into_bytes();
                r.extend(body);
                r
            }
            // A deeply nested message.
            _ => {
                let body = "(".repeat(10_000);
                format!("POST / HTTP/1.0\r\nContent-Length: {}\r\n\r\n{body}", body.len()).into_bytes()
            }
        };
        let mut stream = TcpStream::connect(player.address()).expect("the player still listens");
        stream
            .set_read_timeout(Some(Duration::from_secs(20)))
            .expect("timeout");
        let _ = stream.write_all(&request);
        let _ = stream.shutdown(std::net::Shutdown::Write);
        let mut response = Vec::new();
        let _ = stream.read_to_end(&mut response);
    }
    assert_eq!(
        player.post("( INFO )"),
        "( ( name ggpnet ) ( status available ) )"
    );
}
