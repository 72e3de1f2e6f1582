//! The `ggpnet` program on hostile input: unusual whitespace, games that cannot be
//! played, games whose grounding never ends, files that never end or never open.
//! Each case asserts the exit code and the message, and must end within seconds.

use std::io::Read;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Longest any case may run: the limits must stop every reproducer well before.
const DEADLINE: Duration = Duration::from_secs(30);

/// A file of this test with `contents`, removed when dropped.
struct TempFile(PathBuf);

impl TempFile {
    fn new(name: &str, contents: &[u8]) -> TempFile {
        let path = std::env::temp_dir().join(format!("ggpnet-hostile-{}-{name}", std::process::id()));
        std::fs::write(&path, contents).expect("temp file written");
        TempFile(path)
    }

    fn path(&self) -> &str {
        self.0.to_str().expect("UTF-8 temp path")
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// What one run printed and its exit code.
struct Run {
    code: Option<i32>,
    stdout: String,
    stderr: String,
    seconds: f64,
}

/// Runs `ggpnet` with `args`; fails the test when it runs past [`DEADLINE`].
fn ggpnet(args: &[&str]) -> Run {
    let start = Instant::now();
    let mut child = Command::new(env!("CARGO_BIN_EXE_ggpnet"))
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("ggpnet starts");
    let status = loop {
        if let Some(status) = child.try_wait().expect("ggpnet can be waited for") {
            break status;
        }
        if start.elapsed() > DEADLINE {
            let _ = child.kill();
            let _ = child.wait();
            panic!("ggpnet {args:?} ran past {DEADLINE:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let mut stdout = String::new();
    let mut stderr = String::new();
    child
        .stdout
        .take()
        .expect("piped")
        .read_to_string(&mut stdout)
        .expect("stdout");
    child
        .stderr
        .take()
        .expect("piped")
        .read_to_string(&mut stderr)
        .expect("stderr");
    Run {
        code: status.code(),
        stdout,
        stderr,
        seconds: start.elapsed().as_secs_f64(),
    }
}

/// `ggpnet check` on a game with `source`: its exit code and standard output.
fn check(name: &str, source: &str) -> (Option<i32>, String) {
    let file = TempFile::new(&format!("{name}.kif"), source.as_bytes());
    let run = ggpnet(&["check", file.path()]);
    (run.code, run.stdout)
}

/// The stem `ggpnet check` names a temp game by.
fn stem(name: &str) -> String {
    format!("ggpnet-hostile-{}-{name}", std::process::id())
}

#[test]
fn every_unicode_whitespace_separates_tokens() {
    for (i, space) in ["\u{0B}", "\u{0C}", "\u{85}", "\u{A0}", "\u{3000}"]
        .iter()
        .enumerate()
    {
        let name = format!("space{i}");
        let game = format!("(role r) (init s) (legal r go){space}(<= terminal (true t)){space}(goal r 100)");
        let (code, stdout) = check(&name, &game);
        assert_eq!(
            code,
            Some(0),
            "U+{:04X}: {stdout}",
            space.chars().next().unwrap() as u32
        );
        assert_eq!(
            stdout,
            format!("{}: valid (0 warning(s); engine: propnet)\n", stem(&name))
        );
    }
    let (code, stdout) = check("formfeed", "(role r)\u{0C}(((( garbage");
    assert_eq!(code, Some(2), "a parse error is bad input");
    assert_eq!(
        stdout,
        format!(
            "{}: invalid\nparse error at 1:13: expected ')' to close this '(' before the end of the file\n",
            stem("formfeed")
        )
    );
}

#[test]
fn games_that_cannot_be_played_are_invalid() {
    let cases = [
        ("empty", "", "error: the game description is empty (no rules)"),
        (
            "norole",
            "(init s) (<= terminal (true s)) (goal r 100)",
            "error: game has no role (no (role ...) fact)",
        ),
        (
            "noterminal",
            "(role r) (init s) (legal r go) (goal r 100)",
            "error: no rule defines terminal",
        ),
        (
            "nogoal",
            "(role r) (init s) (legal r go) (<= terminal (true s))",
            "error at 1:1: role r has no goal rule\n  in rule (role r)",
        ),
        (
            "nolegal",
            "(role r) (init s) (<= terminal (true t)) (goal r 100)",
            "error: role r has no legal move in the initial state",
        ),
    ];
    for (name, source, error) in cases {
        let (code, stdout) = check(name, source);
        assert_eq!(code, Some(1), "{name}: {stdout}");
        assert_eq!(stdout, format!("{}: invalid\n{error}\n", stem(name)), "{name}");
    }
}

#[test]
fn grounding_that_would_not_end_stops_at_a_limit() {
    let domain: String = (1..=30).map(|i| format!("(d {i}) ")).collect();
    let eight = format!(
        "(role r) {domain} (<= (p ?a ?b ?c ?d ?e ?f ?g ?h) (d ?a) (d ?b) (d ?c) (d ?d) (d ?e) (d ?f) \
         (d ?g) (d ?h)) (<= (legal r (m ?a)) (p ?a ?a ?a ?a ?a ?a ?a ?a)) (<= terminal (true x)) (goal r 0)"
    );
    let file = TempFile::new("eight.kif", eight.as_bytes());
    // 30^8 instances: known to be past the default limit before the join runs.
    let run = ggpnet(&["--engine", "propnet", "check", file.path()]);
    assert_eq!(run.code, Some(3));
    assert!(run.stdout.ends_with(
        "error: grounding too large: more than 20000000 ground rules (at relation `p`); raise --max-ground-rules\n"
    ));
    // With a filter that keeps every binding, no count is known before the join:
    // the limits are met inside it.
    let filtered = eight.replace("(d ?h))", "(d ?h) (distinct ?a 0))");
    let file = TempFile::new("eight-filtered.kif", filtered.as_bytes());
    let run = ggpnet(&[
        "--engine",
        "propnet",
        "--max-ground-rules",
        "1000",
        "check",
        file.path(),
    ]);
    assert_eq!(run.code, Some(3));
    assert!(run.stdout.ends_with(
        "error: grounding too large: more than 1000 ground rules (at relation `p`); raise --max-ground-rules\n"
    ));
    let run = ggpnet(&["--engine", "propnet", "stats", file.path(), "--max-mem", "16"]);
    assert_eq!(run.code, Some(3));
    assert!(run.stderr.ends_with(
        "error: grounding too large: more than 16 MiB of memory (estimated) (at relation `p`); raise --max-mem\n"
    ));

    let run = ggpnet(&[
        "--engine",
        "propnet",
        "--max-ground-time",
        "0.5",
        "--max-ground-rules",
        "1000000000",
        "check",
        file.path(),
    ]);
    assert_eq!(run.code, Some(3));
    assert!(run.stdout.ends_with(
        "error: grounding too large: more than 0.5 s spent (at relation `p`); raise --max-ground-time\n"
    ));
    println!(
        "the time limit of 0.5 s stopped grounding in {:.2} s",
        run.seconds
    );

    // Every binding tried, none kept: the step limit ends it (about 11 s with the default).
    let spin = format!(
        "(role r) {domain} (<= (legal r go) (d ?a) (d ?b) (d ?c) (d ?d) (d ?e) (d ?f) (d ?g) (d ?h) \
         (distinct (f ?a ?b ?c ?d ?e ?f ?g ?h) (f ?a ?b ?c ?d ?e ?f ?g ?h))) (<= terminal (true x)) (goal r 0)"
    );
    let file = TempFile::new("spin.kif", spin.as_bytes());
    let run = ggpnet(&[
        "--engine",
        "propnet",
        "check",
        file.path(),
        "--max-join-steps",
        "1000000",
    ]);
    assert_eq!(run.code, Some(3));
    assert!(run.stdout.ends_with(
        "error: grounding too large: more than 1000000 join steps (candidate facts tried) (at relation `legal`); \
         raise --max-join-steps\n"
    ));

    let deep = "(role r) (init (c 0)) (<= (next (c (s ?x))) (true (c ?x))) (<= (legal r go) (true (c ?x)))
        (<= terminal (true x)) (goal r 0)";
    let file = TempFile::new("deep.kif", deep.as_bytes());
    let run = ggpnet(&["--engine", "propnet", "check", file.path()]);
    assert_eq!(run.code, Some(3));
    println!("the deepening term stopped in {:.2} s", run.seconds);
    assert!(run.stdout.ends_with(
        "error: grounding too large: terms nested deeper than 64 (at relation `next`); raise --max-term-depth\n"
    ));
    let run = ggpnet(&[
        "--engine",
        "propnet",
        "check",
        file.path(),
        "--max-term-depth",
        "8",
    ]);
    assert_eq!(run.code, Some(3));
    assert!(run
        .stdout
        .contains("terms nested deeper than 8 (at relation `next`)"));
}

#[test]
fn the_interpreter_stops_a_state_that_needs_too_much_work() {
    // Valid GDL, finite in every state, but 30^6 facts of `p` in every state;
    // and a rule that tries 30^8 bindings of which none matches.
    let inits: String = (1..=30).map(|i| format!("(init (d {i})) ")).collect();
    let huge = format!(
        "(role r) {inits}
         (<= (p ?a ?b ?c ?d ?e ?f) (true (d ?a)) (true (d ?b)) (true (d ?c)) (true (d ?d)) (true (d ?e)) (true (d ?f)))
         (<= (legal r (m ?a ?f)) (p ?a ?b ?c ?d ?e ?f)) (<= (next (d ?x)) (true (d ?x)))
         (<= terminal (true x)) (goal r 0)"
    );
    let spin = format!(
        "(role r) {inits}
         (<= (legal r go) (true (d ?a)) (true (d ?b)) (true (d ?c)) (true (d ?d)) (true (d ?e)) (true (d ?f))
             (true (d ?g)) (true (d ?h)) (distinct (f ?a ?b ?c ?d ?e ?f ?g ?h) (f ?a ?b ?c ?d ?e ?f ?g ?h)))
         (<= (next (d ?x)) (true (d ?x))) (<= terminal (true x)) (goal r 0)"
    );
    for (name, rules) in [("huge-state", huge), ("spin-state", spin)] {
        let file = TempFile::new(&format!("{name}.kif"), rules.as_bytes());
        for command in [&["mc", "--seconds", "1"][..], &["perft", "--depth", "1"]] {
            let mut args = vec![command[0], file.path(), "--engine", "interpreter"];
            args.extend(&command[1..]);
            let run = ggpnet(&args);
            assert_eq!(run.code, Some(3), "{args:?}: {}", run.stderr);
            assert!(
                run.stderr.ends_with(
                    "error: evaluating one state took more than 20000000 join steps (candidate facts tried; \
                     the interpreter's limit per state)\n"
                ),
                "{args:?}: {}",
                run.stderr
            );
            println!(
                "{name}: {} stopped at the interpreter's limit in {:.2} s",
                command[0], run.seconds
            );
        }
    }
    // The same join in a static rule: computed once, at load, and bounded too.
    let domain: String = (1..=30).map(|i| format!("(d {i}) ")).collect();
    let static_spin = format!(
        "(role r) {domain} (init x)
         (<= (s go) (d ?a) (d ?b) (d ?c) (d ?d) (d ?e) (d ?f) (d ?g) (d ?h)
             (distinct (f ?a ?b ?c ?d ?e ?f ?g ?h) (f ?a ?b ?c ?d ?e ?f ?g ?h)))
         (<= (legal r ?m) (s ?m)) (<= (legal r stay) (true x)) (<= (next x) (true x))
         (<= terminal (true y)) (goal r 0)"
    );
    let file = TempFile::new("static-spin.kif", static_spin.as_bytes());
    let run = ggpnet(&["mc", file.path(), "--engine", "interpreter", "--seconds", "1"]);
    assert_eq!(run.code, Some(3), "{}", run.stderr);
    assert!(
        run.stderr.ends_with(
            "error: the static relation s/1 is too large to compute: more than 50000000 derivations \
             or 100000000 join steps\n"
        ),
        "{}",
        run.stderr
    );
    println!("the static join stopped in {:.2} s", run.seconds);
}

/// Under the default engine (auto), a game whose terms nest or double at every
/// step fails to ground, runs on the interpreter, and stops there at the
/// interpreter's bound on the terms it lets out.
#[test]
fn the_interpreter_stops_terms_that_grow_without_bound() {
    let game = |next: &str| {
        format!("(role r) (init (c 0)) (<= (legal r go) (true (c ?x))) {next} (<= terminal (true (c done))) (goal r 0)")
    };
    let doubling = game("(<= (next (c (p ?x ?x))) (true (c ?x)))");
    let deepening = game("(<= (next (c (s ?x))) (true (c ?x)))");
    let cases = [
        (
            "doubling",
            doubling,
            "a term nested 21 deep",
            &["mc", "perft"][..],
        ),
        ("deepening", deepening, "a term nested 1001 deep", &["mc"]),
    ];
    for (name, rules, found, commands) in cases {
        let file = TempFile::new(&format!("{name}-terms.kif"), rules.as_bytes());
        for &command in commands {
            let command = match command {
                "mc" => &["mc", "--playouts", "1"][..],
                _ => &["perft", "--depth", "30"],
            };
            let mut args = vec![command[0], file.path()];
            args.extend(&command[1..]);
            let run = ggpnet(&args);
            assert_eq!(run.code, Some(3), "{args:?}: {}", run.stderr);
            let error = run.stderr.lines().last().unwrap_or_default();
            assert!(
                error.starts_with("error: the terms one state derives are too large: ")
                    && error.ends_with(&format!(
                        "{found} (the interpreter's limits: 1000000 symbols, 1000 levels)"
                    )),
                "{args:?}: {}",
                run.stderr
            );
            println!(
                "{name}: {} stopped at the interpreter's bound in {:.2} s",
                command[0], run.seconds
            );
        }
    }
}

#[test]
fn limits_are_validated_when_parsed() {
    for option in [
        "--max-ground-rules",
        "--max-ground-atoms",
        "--max-term-depth",
        "--max-join-steps",
        "--max-mem",
        "--max-input",
    ] {
        let run = ggpnet(&[option, "0", "check"]);
        assert_eq!(run.code, Some(2), "{option}");
        assert!(
            run.stderr.contains(&format!("invalid value '0' for '{option} <")),
            "{option}: {}",
            run.stderr
        );
    }
    let run = ggpnet(&["--max-term-depth", "1025", "check"]);
    assert_eq!(run.code, Some(2));
    for command in ["corpus", "stats", "check"] {
        let run = ggpnet(&[command, "--help"]);
        assert_eq!(run.code, Some(0), "{command} --help: {}", run.stderr);
        assert!(run.stdout.contains("--max-mem <MIB>"), "{command} --help");
    }
}

#[test]
fn devices_and_oversized_files_are_refused() {
    let run = ggpnet(&["check", "/dev/zero"]);
    assert_eq!(run.code, Some(2));
    assert_eq!(
        run.stderr,
        "error: cannot read /dev/zero: it is not a regular file (a device, FIFO or socket)\n"
    );
    let big = TempFile::new("big.kif", &vec![b' '; (1 << 20) + 1]);
    let run = ggpnet(&["--max-input", "1", "check", big.path()]);
    assert_eq!(run.code, Some(2));
    assert_eq!(
        run.stderr,
        format!(
            "error: cannot read {}: it is larger than 1 MiB (raise --max-input)\n",
            big.path()
        )
    );
    let game = TempFile::new("game.kif", ggpnet::DEFAULT_GAME.as_bytes());
    let run = ggpnet(&["replay", game.path(), "/dev/zero"]);
    assert_eq!(run.code, Some(2));
    assert_eq!(
        run.stderr,
        "error: cannot read /dev/zero: it is not a regular file (a device, FIFO or socket)\n"
    );
    let run = ggpnet(&["export", "/dev/zero", "--format", "json"]);
    assert_eq!(run.code, Some(2), "{}", run.stderr);
    assert!(run
        .stderr
        .contains("cannot read /dev/zero: it is not a regular file"));
}

#[test]
fn a_fifo_is_refused_without_waiting_for_a_writer() {
    let path = std::env::temp_dir().join(format!("ggpnet-hostile-{}-fifo.kif", std::process::id()));
    let _ = std::fs::remove_file(&path);
    let made = Command::new("mkfifo").arg(&path).status();
    if !made.is_ok_and(|s| s.success()) {
        println!("notice: mkfifo is not available; skipping the FIFO case");
        return;
    }
    let fifo = TempFile(path);
    let run = ggpnet(&["check", fifo.path()]);
    assert_eq!(run.code, Some(2));
    assert_eq!(
        run.stderr,
        format!(
            "error: cannot read {}: it is not a regular file (a device, FIFO or socket)\n",
            fifo.path()
        )
    );
}

/// A game where `a` may move into a state that is not terminal but leaves
/// `b` without a legal move (a random playout abandons it); the other move wins.
const STUCK: &str = "(role a) (role b) (init s0)
    (<= (legal a good) (true s0)) (<= (legal a bad) (true s0)) (<= (legal b wait) (true s0))
    (<= (legal a wait) (true stuck))
    (<= (next done) (does a good)) (<= (next stuck) (does a bad)) (<= (next stuck) (true stuck))
    (<= terminal (true done))
    (<= (goal a 100) (true done)) (<= (goal b 0) (true done))
    (<= (goal a 0) (not (true done))) (<= (goal b 100) (not (true done)))";

#[test]
fn uct_search_treats_a_state_without_a_legal_move_as_abandoned() {
    let game = TempFile::new("stuck.kif", STUCK.as_bytes());
    let json = TempFile::new("stuck.json", b"");
    let run = ggpnet(&[
        "match",
        game.path(),
        "--player",
        "a=builtin:uct",
        "--player",
        "b=builtin:uct",
        "--startclock",
        "1",
        "--playclock",
        "0.5",
        "--json",
        json.path(),
    ]);
    assert!(!run.stderr.contains("internal error"), "{}", run.stderr);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let out: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(json.path()).expect("the record")).expect("JSON");
    let record = &out["matches"][0];
    // UCT explored the stuck state (its playouts abandoned, no panic) and took the win.
    assert_eq!(record["goalValues"], serde_json::json!([100, 0]), "{record}");
    assert_eq!(
        record["errors"],
        serde_json::json!([["", ""], ["", ""]]),
        "{record}"
    );
}

#[test]
fn every_line_ending_ends_a_comment() {
    // An unsafe rule after a comment: were the comment to run on, the game
    // would be valid without it.
    let lines = [
        "(role r) (init s) (legal r go) ; the first comment",
        "(<= terminal (true t)) (goal r 100) ; another",
        "  (<= (next ?x) (true s))",
    ];
    for (name, end) in [("lf", "\n"), ("crlf", "\r\n"), ("cr", "\r")] {
        let (code, stdout) = check(name, &lines.join(end));
        assert_eq!(code, Some(1), "{name}: {stdout}");
        assert!(stdout.contains("error at 3:3: unsafe rule"), "{name}: {stdout}");
    }
}

/// Two corpus games, one after the other: a 10 KB game whose optimization takes
/// several times that of its parts (18 s of 19 on the project's machine, with
/// no limit). The time limit of grounding bounds the optimizer too.
#[test]
fn the_time_limit_stops_the_optimizer_of_two_games_in_one() {
    let Some(corpus) = ggpnet_tools::corpus::for_test("skipping the two-games case") else {
        return;
    };
    let read = |name: &str| std::fs::read_to_string(corpus.join("games").join(name)).expect("a corpus game");
    let both = read("pancakes88.kif") + "\n" + &read("2pffa_zerosum.kif");
    let file = TempFile::new("two-games.kif", both.as_bytes());
    let run = ggpnet(&[
        "--engine",
        "propnet",
        "--max-ground-time",
        "1",
        "check",
        file.path(),
    ]);
    assert_eq!(run.code, Some(3), "{}{}", run.stdout, run.stderr);
    let error = run.stdout.lines().last().unwrap_or_default();
    assert!(
        error.starts_with("error: grounding too large: more than 1.0 s spent (")
            && error.ends_with("); raise --max-ground-time"),
        "{}",
        run.stdout
    );
    println!("stopped in {:.2} s: {error}", run.seconds);
}
