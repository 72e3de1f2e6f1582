//! rtGDL match play on loopback (docs/LANGUAGES.md, "Match play"): two
//! `ggpnet play` players play games of games/rtgdl/ under `ggpnet match`, and
//! the record's events, replayed on the interpreter from the initial state,
//! give the recorded final state and goals; a scripted player's illegal move
//! is answered to it alone and changes nothing; the limits end a match whose
//! players never move, and a player that never answers does not keep the
//! match from ending. Every match has a small play clock (the wall time of a
//! lifetime unit) and limits; no assertion is on time.

mod scratch;

mod support;

use ggpnet::manager::{run_rt_match, Link, RtEventKind, RtMatchRecord, RtMatchSetup};
use ggpnet::realtime::{EngineChoice, RtGame, Time};
use serde_json::Value;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use support::PlayerProcess;

fn game_path(name: &str) -> PathBuf {
    ggpnet_tools::corpus::project_root().join(format!("games/rtgdl/{name}.kif"))
}

/// Runs `ggpnet match` on `game` with `args`; its JSON (records and results).
fn run_matches(game: &str, args: &[&str]) -> Value {
    let dir = scratch::dir("rtmatch");
    let json = dir.join(format!("{game}.json"));
    support::match_json(&game_path(game), args, &json)
}

/// Replays the updates of a recorded match of `game` (a name in
/// games/rtgdl/, or the rules) (its `move` and `expired`
/// events, at their game times) on the interpreter from the initial state,
/// and checks the final state and goals against the record.
fn check_replay(game: &str, record: &Value) {
    let text = std::fs::read_to_string(game_path(game)).unwrap_or_else(|_| game.to_owned());
    let oracle = RtGame::load_with(&text, EngineChoice::Interpreter).expect("loads");
    let roles: Vec<&str> = record["roles"]
        .as_array()
        .expect("roles")
        .iter()
        .map(|r| r.as_str().expect("a role"))
        .collect();
    assert_eq!(roles, oracle.roles());
    let mut state = oracle.initial_state();
    let mut now = Time::ZERO;
    let mut updates = 0;
    for event in record["events"].as_array().expect("events") {
        let time = Time::parse(event["time"].as_str().expect("a time")).expect("an exact time");
        let mut moves = vec![None; roles.len()];
        match event["kind"].as_str().expect("a kind") {
            "move" => {
                let role = roles
                    .iter()
                    .position(|r| Some(*r) == event["role"].as_str())
                    .expect("a role of the game");
                moves[role] = Some(event["text"].as_str().expect("a move").to_owned());
            }
            "expired" => {}
            "illegal" | "error" => continue,
            other => panic!("unknown event kind {other}"),
        }
        let elapsed = time.checked_sub(now).expect("events in time order");
        // The update checks its time against the next expiry: none was skipped.
        state = oracle
            .update(&state, elapsed, &moves)
            .unwrap_or_else(|e| panic!("{game}: {event}: {e}"));
        now = time;
        updates += 1;
    }
    assert_eq!(record["updates"], updates, "{game}");
    assert_eq!(record["gameTime"].as_str(), Some(now.to_string().as_str()));
    let pairs: Vec<(String, String)> = oracle
        .pairs(&state)
        .expect("pairs")
        .into_iter()
        .map(|(l, f)| (l.to_string(), f))
        .collect();
    let recorded: Vec<(String, String)> =
        serde_json::from_value(record["finalState"].clone()).expect("pairs");
    assert_eq!(pairs, recorded, "{game}: the final state");
    if record["isCompleted"] == true {
        assert!(oracle.is_terminal(&state).expect("terminal?"), "{game}");
        let goals: Vec<i64> = oracle
            .goals(&state)
            .expect("goals")
            .into_iter()
            .map(|g| g.unwrap_or(0))
            .collect();
        assert_eq!(record["goalValues"], serde_json::json!(goals), "{game}");
    } else {
        assert!(record["abortReason"].is_string(), "{game}: {record}");
    }
}

#[test]
fn two_players_play_to_the_end_and_the_oracle_agrees() {
    let (a, b) = (
        PlayerProcess::start(&["--search", "mc", "--threads", "1"]),
        PlayerProcess::start(&["--search", "mc", "--threads", "1"]),
    );
    for (game, roles, clock) in [
        ("tictactoe", ["xplayer", "oplayer"], "0.1"),
        ("respawn", ["blue", "green"], "0.05"),
        ("cheshire", ["alice", "hatter"], "0.05"),
        // Outside the propnet's fragment: the manager and players run it on the interpreter.
        ("chessclock", ["white", "black"], "0.1"),
    ] {
        let first = format!("{}={}", roles[0], a.address());
        let second = format!("{}={}", roles[1], b.address());
        let json = run_matches(
            game,
            &[
                "--player",
                &first,
                "--player",
                &second,
                "--playclock",
                clock,
                "--startclock",
                "5",
                "--max-game-time",
                "40",
                "--max-steps",
                "500",
                "--matches",
                "2",
                "--rotate",
            ],
        );
        let records = json["matches"].as_array().expect("records");
        assert_eq!(records.len(), 2);
        for record in records {
            assert_eq!(record["language"], "rtgdl");
            assert_eq!(record["isCompleted"], true, "{game}: {record}");
            check_replay(game, record);
            // Each role that moved took some time to send a move.
            let longest = record["maxReplySeconds"].as_array().expect("per role");
            for (role, name) in record["roles"].as_array().expect("roles").iter().enumerate() {
                let moved = record["events"]
                    .as_array()
                    .expect("events")
                    .iter()
                    .any(|e| e["kind"] == "move" && e["role"] == *name);
                let seconds = longest[role].as_f64().expect("seconds");
                assert!(seconds >= 0.0 && (seconds > 0.0 || !moved), "{game}: {record}");
            }
        }
    }
}

/// A scripted player on a port of its own: `answer` gives the reply to each
/// message; every message is kept, in arrival order.
struct Scripted {
    port: u16,
    heard: Arc<Mutex<Vec<String>>>,
}

impl Scripted {
    fn start(answer: fn(&str, usize) -> Option<String>) -> Scripted {
        let listener = TcpListener::bind("127.0.0.1:0").expect("binds");
        let port = listener.local_addr().expect("an address").port();
        let heard = Arc::new(Mutex::new(Vec::new()));
        let kept = Arc::clone(&heard);
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { continue };
                let kept = Arc::clone(&kept);
                std::thread::spawn(move || serve(stream, &kept, answer));
            }
        });
        Scripted { port, heard }
    }

    fn link(&self) -> Link {
        Link::Remote(format!("127.0.0.1:{}", self.port))
    }

    fn heard(&self) -> Vec<String> {
        self.heard.lock().expect("the log").clone()
    }
}

/// Reads one request, keeps its message and answers it (or holds the
/// connection until the manager gives up, when `answer` has no reply).
fn serve(mut stream: TcpStream, kept: &Mutex<Vec<String>>, answer: fn(&str, usize) -> Option<String>) {
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .expect("a timeout");
    let mut received = Vec::new();
    let mut chunk = [0u8; 4096];
    let message = loop {
        let Ok(n) = stream.read(&mut chunk) else { return };
        if n == 0 {
            return;
        }
        received.extend_from_slice(&chunk[..n]);
        let text = String::from_utf8_lossy(&received).to_string();
        if let Some((head, body)) = text.split_once("\r\n\r\n") {
            let length: usize = head
                .lines()
                .find_map(|l| l.strip_prefix("Content-Length: "))
                .and_then(|n| n.trim().parse().ok())
                .expect("a length");
            if body.len() >= length {
                break body.to_owned();
            }
        }
    };
    let number = {
        let mut kept = kept.lock().expect("the log");
        kept.push(message.clone());
        kept.len()
    };
    match answer(&message, number) {
        Some(reply) => {
            let response = format!(
                "HTTP/1.0 200 OK\r\nContent-type: text/acl\r\nContent-length: {}\r\n\r\n{reply}",
                reply.len()
            );
            let _ = stream.write_all(response.as_bytes());
        }
        // Never answers: the manager gives the request up when the match ends.
        None => {
            let _ = stream.read(&mut chunk);
        }
    }
}

/// The usual replies; `move` to the first PLAY.
fn replies(message: &str, first_play: &str) -> String {
    let verb = message
        .trim_start_matches(['(', ' '])
        .split(' ')
        .next()
        .unwrap_or("");
    match verb {
        "START" => "ready".to_owned(),
        "STOP" => "done".to_owned(),
        "ABORT" => "aborted".to_owned(),
        _ if message.contains("NIL 0 )") => first_play.to_owned(),
        _ => "NIL".to_owned(),
    }
}

fn setup(game: &str, players: Vec<Link>, clock: f64) -> RtMatchSetup {
    let rules = std::fs::read_to_string(game_path(game)).unwrap_or_else(|_| game.to_owned());
    let game = RtGame::load(&rules).expect("loads");
    RtMatchSetup {
        player_names: players.iter().map(|p| format!("{p:?}")).collect(),
        game,
        rules,
        players,
        id: "scripted.1".to_owned(),
        start_clock: Duration::from_secs(2),
        play_clock: Duration::from_secs_f64(clock),
        max_updates: 100,
        max_game_time: Time::parse("20").expect("a time"),
        max_open: 4,
    }
}

fn verbs(heard: &[String]) -> Vec<String> {
    heard
        .iter()
        .map(|m| {
            let words: Vec<&str> = m.split_whitespace().collect();
            match words.get(1) {
                Some(&"START") => "START".to_owned(),
                _ => m.clone(),
            }
        })
        .collect()
}

#[test]
fn an_illegal_move_is_answered_to_its_player_alone_and_changes_nothing() {
    let x = Scripted::start(|m, _| Some(replies(m, "( mark 9 9 )")));
    let o = Scripted::start(|m, _| Some(replies(m, "NIL")));
    // Half a second per unit: the illegal move comes long before control expires.
    let record = run_rt_match(&setup("tictactoe", vec![x.link(), o.link()], 0.5)).expect("runs");
    // The illegal move, then control expires at 1.0: xplayer timed out.
    let kinds: Vec<RtEventKind> = record.events.iter().map(|e| e.kind).collect();
    assert_eq!(kinds, [RtEventKind::Illegal, RtEventKind::Expired], "{record:?}");
    let illegal = &record.events[0];
    assert_eq!(illegal.role.as_deref(), Some("xplayer"));
    assert_eq!(illegal.text.as_deref(), Some("( mark 9 9 )"));
    assert_eq!(record.events[1].time, "1");
    assert_eq!(record.goal_values, [0, 100]);
    assert!(record.is_completed);
    check_replay("tictactoe", &serde_json::to_value(&record).expect("JSON"));
    let t = &illegal.time;
    assert_eq!(
        verbs(&x.heard()),
        [
            "START".to_owned(),
            "( PLAY scripted.1 NIL 0 )".to_owned(),
            format!("( PLAY scripted.1 NIL {t} )"),
            "( STOP scripted.1 NIL 1 )".to_owned(),
        ]
    );
    assert_eq!(
        verbs(&o.heard()),
        ["START", "( PLAY scripted.1 NIL 0 )", "( STOP scripted.1 NIL 1 )"]
    );
}

/// A game where nothing happens unless its player moves.
const WAITING: &str = "(role r) (init infinity waiting)
    (<= (legal r go) (true infinity waiting))
    (<= (next infinity gone) (does r go))
    (<= (next infinity waiting) (true infinity waiting) (not (does r go)))
    (<= terminal (true infinity gone)) (goal r 100)";

/// A game with an expiry every tenth of a unit, forever.
const TICKING: &str = "(role r) (init 0.1 tick)
    (<= (legal r go) (true ?t tick))
    (<= (next 0.1 tick) (expired tick))
    (<= (next ?t tick) (true ?t tick))
    (<= terminal (true ?t gone)) (<= (next infinity gone) (does r go)) (goal r 100)";

/// The reason an aborted match of `game` (its rules) gives, once its
/// record is checked against the oracle.
fn aborted<'a>(game: &str, record: &'a RtMatchRecord) -> &'a str {
    assert!(record.is_aborted && !record.is_completed, "{record:?}");
    check_replay(game, &serde_json::to_value(record).expect("JSON"));
    record.abort_reason.as_deref().expect("a reason")
}

#[test]
fn the_limits_end_a_match_whose_players_never_move() {
    // Nothing ever happens: the game time limit.
    let idle = Scripted::start(|m, _| Some(replies(m, "NIL")));
    let mut limited = setup(WAITING, vec![idle.link()], 0.05);
    limited.max_game_time = Time::parse("2").expect("a time");
    let record = run_rt_match(&limited).expect("runs");
    assert_eq!(aborted(WAITING, &record), "the limit of 2 units of game time");
    assert!(record.events.is_empty());
    assert!(idle.heard().last().is_some_and(|m| m.contains("ABORT")));

    // An expiry every 0.1 units: the update limit.
    let mut ticking = setup(TICKING, vec![idle.link()], 0.05);
    ticking.max_updates = 5;
    let record = run_rt_match(&ticking).expect("runs");
    assert_eq!(aborted(TICKING, &record), "the limit of 5 updates");
    let times: Vec<&str> = record.events.iter().map(|e| e.time.as_str()).collect();
    assert_eq!(times, ["0.1", "0.2", "0.3", "0.4", "0.5"]);

    // A player that never answers: its requests are given up at the end.
    let silent = Scripted::start(|m, _| m.contains("START").then(|| "ready".to_owned()));
    let mut limited = setup(WAITING, vec![silent.link()], 0.05);
    limited.max_game_time = Time::parse("1").expect("a time");
    let record = run_rt_match(&limited).expect("runs");
    assert_eq!(aborted(WAITING, &record), "the limit of 1 units of game time");
}

#[test]
fn a_player_that_answers_every_play_illegally_is_stopped_by_the_event_limit() {
    let wrong = Scripted::start(|m, _| {
        Some(match m.contains("PLAY") {
            true => "( dance )".to_owned(),
            false => replies(m, "NIL"),
        })
    });
    let mut limited = setup(WAITING, vec![wrong.link()], 0.05);
    limited.max_updates = 10;
    // The event limit comes first, however slow the machine.
    limited.max_game_time = Time::parse("100000").expect("a time");
    let record = run_rt_match(&limited).expect("runs");
    assert_eq!(
        aborted(WAITING, &record),
        "the limit of 40 events (4 times the update limit)"
    );
    assert!(record.events.iter().all(|e| e.kind == RtEventKind::Illegal));
}

#[test]
fn match_refuses_the_options_that_do_not_apply() {
    for (option, message) in [
        (&["--scramble"][..], "--scramble does not apply"),
        (&["--gdl2-form", "2013"][..], "--gdl2-form does not apply"),
        (&["--playclock", "86401"][..], "--playclock 86401: on a real-time GDL (rtGDL) game it is the seconds of one lifetime unit, at most 86400"),
        (&["--max-game-time", "0"][..], "a game time limit must be above 0"),
        (&["--max-game-time", "1.0000001"][..], "more than 6 fraction digits"),
        (&["--max-game-time=-1"][..], "'-1' is not a decimal number"),
        (&["--max-open", "65"][..], "65 is not in 1..=64"),
    ] {
        let output = Command::new(env!("CARGO_BIN_EXE_ggpnet"))
            .arg("match")
            .arg(game_path("tictactoe"))
            .args([
                "--player",
                "xplayer=127.0.0.1:9",
                "--player",
                "oplayer=127.0.0.1:9",
            ])
            .args(option)
            .output()
            .expect("runs");
        let err = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{option:?}: {err}");
        assert!(err.contains(message), "{option:?}: {err}");
    }
}

#[test]
fn the_player_replays_updates_told_out_of_order_and_answers_stale_plays_nil() {
    use ggpnet::player::{Player, PlayerConfig, Search};
    use std::time::Instant;
    // A random move at once; a long lifetime unit (100 s), so that no fact
    // expires by the player's clock while the test runs.
    let player = Arc::new(Player::new(
        PlayerConfig::new()
            .search(Search::Random)
            .idle_timeout(Duration::from_secs(20)),
    ));
    let rules = std::fs::read_to_string(game_path("tictactoe")).expect("the game");
    let ask = |text: &str| player.handle(text, Instant::now()).text;
    assert_eq!(ask(&format!("( START m oplayer ({rules}) 10 100 )")), "ready");
    // oplayer has no legal move at first: the first PLAY is held, or answered
    // NIL at once, whichever of these two comes first.
    let held = {
        let player = Arc::clone(&player);
        std::thread::spawn(move || player.handle("( PLAY m NIL 0 )", Instant::now()).text)
    };
    let answer = ask("( PLAY m ( ( mark 2 2 ) NIL ) 0.3 )");
    assert_eq!(held.join().expect("answers"), "NIL");
    assert!(answer.starts_with("(mark ") && answer != "(mark 2 2)", "{answer}");
    // xplayer's move at 1.2 comes before oplayer's at 0.9, which made it legal.
    ask("( PLAY m ( ( mark 3 3 ) NIL ) 1.2 )");
    assert_eq!(ask("( PLAY m ( NIL ( mark 1 1 ) ) 0.9 )"), "NIL", "a stale PLAY");
    // Replayed in order, oplayer has control again: a move on a blank cell.
    let answer = ask("( PLAY m NIL 1.25 )");
    assert!(answer.starts_with("(mark "), "{answer}");
    assert!(
        !["(mark 2 2)", "(mark 1 1)", "(mark 3 3)"].contains(&answer.as_str()),
        "{answer}"
    );
    assert_eq!(ask("( STOP m ( NIL ( mark 1 2 ) ) 1.4 )"), "done");
    assert_eq!(player.matches(), 0);
    // A late PLAY of the match, or of one it never played: no move.
    assert_eq!(ask("( PLAY m ( NIL ( mark 1 2 ) ) 1.4 )"), "NIL");
    assert_eq!(ask("( PLAY other NIL 0 )"), "NIL");
}

/// Its one role may move only once `wait` has expired (at 0.5), or never
/// with `(init infinity wait)`.
const LATER: &str = "(role r) (init 0.5 wait)
    (<= waiting (true ?t wait))
    (<= (legal r go) (not waiting))
    (<= (next ?t wait) (true ?t wait))
    (<= (next infinity gone) (does r go))
    (<= terminal (true ?t gone)) (goal r 100)";

#[test]
fn a_held_request_is_answered_when_an_expiry_allows_a_move_or_the_match_ends() {
    use ggpnet::player::{Player, PlayerConfig, Search};
    use std::time::Instant;
    let player = Arc::new(Player::new(
        PlayerConfig::new()
            .search(Search::Random)
            .idle_timeout(Duration::from_secs(20)),
    ));
    let ask = |text: &str| player.handle(text, Instant::now());
    // 0.2 s per unit: `wait` expires 0.1 s after the first PLAY.
    assert_eq!(ask(&format!("( START a r ({LATER}) 10 0.2 )")).text, "ready");
    let reply = ask("( PLAY a NIL 0 )");
    assert_eq!(reply.text, "go", "{}", reply.note);

    // Never a legal move: the request is held until the match ends.
    let never = LATER.replace("(init 0.5 wait)", "(init infinity wait)");
    assert_eq!(ask(&format!("( START b r ({never}) 10 0.2 )")).text, "ready");
    let held = {
        let player = Arc::clone(&player);
        std::thread::spawn(move || player.handle("( PLAY b NIL 0 )", Instant::now()))
    };
    assert_eq!(ask("( STOP b NIL 1 )").text, "done");
    let reply = held.join().expect("answers");
    assert_eq!(reply.text, "NIL");
    // Ended while held, or stopped before it came; not held past the end.
    assert!(
        reply.note.contains("the match ended") || reply.note.contains("no match"),
        "{}",
        reply.note
    );
}

#[test]
fn a_game_time_far_ahead_is_refused_in_bounded_work() {
    use ggpnet::player::{Player, PlayerConfig, Search};
    use std::time::Instant;
    let player = Player::new(
        PlayerConfig::new()
            .search(Search::Random)
            .idle_timeout(Duration::from_secs(20)),
    );
    let ask = |text: &str| player.handle(text, Instant::now());
    assert_eq!(ask(&format!("( START t r ({TICKING}) 10 100 )")).text, "ready");
    // Ten million expiries of `tick` before that update: refused after 100000.
    let reply = ask("( PLAY t ( go ) 1000000 )");
    assert!(reply.note.contains("more than 100000 expiries"), "{}", reply.note);
    // By that game time the match is past reach: every request says so, in bounded work.
    let reply = ask("( PLAY t NIL 1000001 )");
    assert_eq!(reply.text, "NIL");
    assert!(reply.note.contains("more than 100000 expiries"), "{}", reply.note);
    assert_eq!(ask("( STOP t NIL 1000001 )").text, "done");
    // The player goes on with other matches.
    assert_eq!(ask(&format!("( START u r ({TICKING}) 10 100 )")).text, "ready");
    assert_eq!(ask("( PLAY u NIL 0 )").text, "go");
}

/// Hostile PLAYs of an rtGDL match, sent at once over HTTP, each get an
/// answer while the match is under way, and the player stays available.
///
/// No answer waits for the STOP, so the STOP is sent once every request is
/// answered (the answers are how the test knows the player received them
/// all, in whatever order they came): a request is refused or answered at
/// once, or held until a newer PLAY of the match comes or an expiry gives
/// the role a move or ends the game, and in tic-tac-toe the control a role
/// holds expires within a lifetime unit, which ends the game. A request
/// held until the STOP is the test of
/// `a_held_request_is_answered_when_an_expiry_allows_a_move_or_the_match_ends`.
#[test]
fn hostile_rtgdl_plays_get_answers_and_the_player_stays_available() {
    let player = PlayerProcess::start(&["--search", "random", "--threads", "1"]);
    let rules = std::fs::read_to_string(game_path("tictactoe")).expect("the game");
    assert_eq!(
        player.post(&format!("( START h.1 xplayer ({rules}) 5 0.05 )")),
        "ready"
    );
    let nested = format!("( PLAY h.1 NIL {} )", "(".repeat(5000));
    let hostile = [
        "( PLAY h.1 NIL 99999999999999999999 )",
        "( PLAY h.1 NIL 1e308 )",
        "( PLAY h.1 NIL -1 )",
        "( PLAY h.1 NIL abc )",
        "( PLAY h.1 NIL 0.0000001 )",
        "( PLAY h.1 ( NIL ) 0.5 )",
        "( PLAY h.1 ( ( mark 9 9 ) NIL ) 0.5 )",
        "( PLAY h.1 ( NIL NIL NIL ) 0.5 )",
        "( PLAY h.1 ( NIL ( mark 1 1 ) ) 0.25 )",
        "( PLAY h.1 ( ( mark 1 1 ) NIL ) 0.75 )",
        "( PLAY h.1 NIL 1000000 )",
        "( PLAY h.1 NIL 0 extra )",
        "( PLAY h.2 NIL 0 )",
        nested.as_str(),
    ];
    let answers: Vec<String> = std::thread::scope(|scope| {
        let asked: Vec<_> = hostile
            .iter()
            .map(|message| scope.spawn(|| player.post(message)))
            .collect();
        asked.into_iter().map(|a| a.join().expect("a reply")).collect()
    });
    for (message, answer) in hostile.iter().zip(&answers) {
        assert!(!answer.is_empty(), "no answer to {message}");
    }
    assert_eq!(player.post("( STOP h.1 NIL 1 )"), "done");
    // Game times that are no exact time, and malformed PLAYs, are refused.
    for refused in [0, 1, 2, 3, 11, 13] {
        assert_eq!(answers[refused], "error", "{}", hostile[refused]);
    }
    assert_eq!(
        player.post("( INFO )"),
        "( ( name ggpnet ) ( status available ) )"
    );
}
