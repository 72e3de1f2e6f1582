//! Simplified Boardgames parser errors: each class of malformed file gives its
//! line, column and reason; the older variant's differences give warnings; and
//! random bytes or random mutations of valid files never panic.

use ggpnet::sbg::{self, random::Rng};

const GOOD: &str = "<<Mini>>\n<BOARD>\n3 3\n|k..|\n|...|\n|..K|\n<PIECES>\nK (0,1,e) + (1,0,e)^* &\n<GOALS>\n10 &\n@K 0 2 &\n#k 0 &\n";

/// The error of `text` as `line:col: message`.
fn error(text: &str) -> String {
    match sbg::parse(text) {
        Ok(_) => panic!("accepted:\n{text}"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn the_good_file_parses_without_warnings() {
    let parsed = sbg::parse(GOOD).unwrap();
    assert!(parsed.warnings.is_empty(), "{:?}", parsed.warnings);
}

/// `//` comments end at `\n`, `\r\n` and a lone `\r` alike: the same game is
/// read from each, and an error names the same line and column.
#[test]
fn every_line_ending_ends_comments_and_lines() {
    let commented = GOOD.replace("<PIECES>\n", "<PIECES> // the moves\n");
    let gdl = |text: &str| sbg::to_gdl(&sbg::parse(text).unwrap().rules);
    let expected = gdl(&commented);
    let broken = commented.replace("10 &", "10 &\n  !");
    for end in ["\r\n", "\r"] {
        assert_eq!(gdl(&commented.replace('\n', end)), expected, "{end:?}");
    }
    for end in ["\n", "\r\n", "\r"] {
        assert_eq!(
            error(&broken.replace('\n', end)),
            "11:3: expected a goal ('@' or '#') or the end of the file, found '!'",
            "{end:?}"
        );
    }
}

#[test]
fn each_error_names_its_line_and_column() {
    let cases: &[(&str, &str)] = &[
        ("<<Mini", "1:1: '<<' is not closed by '>>' on its line"),
        ("<<  >>", "1:1: the game's name is empty"),
        ("<<M>> <BORD>", "1:7: expected '<BOARD>', found '<'"),
        (
            "<<M>> <BOARD> x",
            "1:15: expected the board's width (a natural number), found 'x'",
        ),
        ("<<M>> <BOARD> 0 3", "1:15: board width 0 is not in 1..=16"),
        ("<<M>> <BOARD> 3 17", "1:17: board height 17 is not in 1..=16"),
        (
            "<<M>> <BOARD> 99999999999 3",
            "1:15: the board's width is too large",
        ),
        (
            "<<M>>\n<BOARD> 2 2\n|..|\n|.|",
            "4:1: row 2 has 1 squares, the board is 2 wide",
        ),
        (
            "<<M>>\n<BOARD> 2 2\n|..|\n|.x3|",
            "4:4: expected a square ('.' or a letter) or '|' closing the row, found '3'",
        ),
        (
            "<<M>>\n<BOARD> 2 1\n|..|\n|..|",
            "4:1: more rows than the board's height 1",
        ),
        (
            "<<M>>\n<BOARD> 2 2\n|..|\n<PIECES>",
            "4:1: expected row 2 of 2 of the board, found '<'",
        ),
        (
            "<<M>> <BOARD> 1 1 |.| <PIECES> k (0,0,w) &",
            "1:32: piece rules are declared for white's (upper-case) letters: 'k'",
        ),
        (
            "<<M>> <BOARD> 1 1 |.| <PIECES> K (0,0,w) & K (0,0,w) &",
            "1:44: piece K has a second movement rule",
        ),
        (
            "<<M>> <BOARD> 2 2 |..| |..| <PIECES> K (0,1,x) &",
            "1:45: expected 'e', 'p' or 'w', found 'x'",
        ),
        (
            "<<M>> <BOARD> 2 2 |..| |..| <PIECES> K (0;1,e) &",
            "1:42: expected ',' after dx, found ';'",
        ),
        (
            "<<M>> <BOARD> 2 2 |..| |..| <PIECES> K (0,2,e) &",
            "1:40: letter (0,2,e) steps off any 2x2 board",
        ),
        (
            "<<M>> <BOARD> 2 2 |..| |..| <PIECES> K (0,1,e) + &",
            "1:50: expected '(' starting a letter or a group, found '&'",
        ),
        (
            "<<M>> <BOARD> 2 2 |..| |..| <PIECES> K ((0,1,e) &",
            "1:49: expected '+', '(' or ')' closing the group, found '&'",
        ),
        (
            "<<M>> <BOARD> 2 2 |..| |..| <PIECES> K (0,1,e)^x &",
            "1:48: expected the power after '^' (or '*') (a natural number), found 'x'",
        ),
        (
            "<<M>> <BOARD> 2 2 |..| |..| <PIECES> K (0,1,e) <GOALS>",
            "1:48: expected '+', a '(' or '&' ending the rule, found '<'",
        ),
        (
            "<<M>> <BOARD> 2 2 |..| |..| <PIECES> K (0,1,e)^5000 &",
            "1:38: piece K's rule has more than 1024 letters once powers are written out",
        ),
        (
            "<<M>> <BOARD> 2 2 |..| |..| <PIECES> 7",
            "1:38: expected a piece letter (A-Z) or '<GOALS>', found '7'",
        ),
        (
            "<<M>> <BOARD> 1 1 |.| <PIECES> <GOALS> 10",
            "1:42: expected '&' after the turn limit, found the end of the file",
        ),
        (
            "<<M>> <BOARD> 1 1 |.| <PIECES> <GOALS> 20000 &",
            "1:40: turn limit 20000 is larger than 10000",
        ),
        (
            "<<M>> <BOARD> 1 1 |.| <PIECES> <GOALS> 10 & @K 1 0 &",
            "1:48: square 1 0 is off the 1x1 board",
        ),
        (
            "<<M>> <BOARD> 1 1 |.| <PIECES> <GOALS> 10 & @K 0 0 0 0 &",
            "1:52: expected ',' or '&' ending the goal, found '0'",
        ),
        (
            "<<M>> <BOARD> 1 1 |.| <PIECES> <GOALS> 10 & #1 0 &",
            "1:46: expected a piece letter after '#', found '1'",
        ),
        (
            "<<M>> <BOARD> 1 1 |.| <PIECES> <GOALS> 10 & !",
            "1:45: expected a goal ('@' or '#') or the end of the file, found '!'",
        ),
        (
            "<<M>> /* never closed\n<BOARD>",
            "1:7: comment '/*' is never closed by '*/'",
        ),
        ("", "1:1: expected the game's name '<<name>>'"),
    ];
    let wrong: Vec<String> = cases
        .iter()
        .filter(|(text, expected)| error(text) != *expected)
        .map(|(text, _)| format!("{text:?} => {:?}", error(text)))
        .collect();
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    let deep = format!(
        "<<M>> <BOARD> 1 1 |.| <PIECES> K {}(0,0,w){} &",
        "(".repeat(100),
        ")".repeat(100)
    );
    assert_eq!(error(&deep), "1:98: expression nested more than 64 deep");
}

#[test]
fn comments_are_skipped_anywhere_between_tokens() {
    let text = "// a game\n<<Mini>> /* x\n y */ <BOARD> 3 // w\n 3 |k..| |...| |..K| <PIECES> K /*a*/ (0,1,e) /*b*/ + (1,0,e)^*/*c*/& <GOALS> 10 &";
    let parsed = sbg::parse(text).unwrap();
    assert!(parsed.warnings.is_empty());
    assert_eq!(
        parsed.rules.moves_of(b'K').unwrap().to_string(),
        "(0,1,e) + (1,0,e)^*"
    );
}

#[test]
fn the_older_variant_is_accepted_with_warnings() {
    let text = "\u{feff}Old game\r\n<BOARD>\r\n2 2\r\nk.\r\n.K\r\n<PIECES>\r\nK (0,1,e) &&\r\n<GOALS>\r\n10 &\r\n#K 1 &\r\n";
    let parsed = sbg::parse(text).unwrap();
    let warnings: Vec<String> = parsed.warnings.iter().map(ToString::to_string).collect();
    assert_eq!(
        warnings,
        [
            "1:1: warning: byte-order mark ignored (older variant)",
            "1:1: warning: name without '<< >>' read from the first line (older variant)",
            "4:1: warning: board rows without '|...|' (older variant)",
            "7:12: warning: '&&' read as '&' (older variant)",
            "10:1: warning: '#' read as the older variant's capture count: the player loses once that many of its pieces of the type are captured",
        ]
    );
    assert_eq!(parsed.rules.name(), "Old game");
    // One king, lost after one capture: at most 0 left.
    assert_eq!(parsed.rules.count_goals()[0].at_most, 0);
}

#[test]
fn random_bytes_and_mutations_never_panic() {
    let mut rng = Rng::new(11);
    let bases: Vec<String> = std::iter::once(GOOD.to_owned())
        .chain((0..20).map(sbg::random::game))
        .collect();
    let alphabet: Vec<char> = "()<>|&+^*,-.#@ \n/0123456789epwKkPBR".chars().collect();
    let mut accepted = 0;
    for round in 0..20_000 {
        let text: String = if round % 4 == 0 {
            let len = rng.below(200);
            let bytes: Vec<u8> = (0..len).map(|_| rng.below(256) as u8).collect();
            String::from_utf8_lossy(&bytes).into_owned()
        } else {
            let mut chars: Vec<char> = bases[rng.below(bases.len())].chars().collect();
            for _ in 0..1 + rng.below(4) {
                let at = rng.below(chars.len() + 1);
                match rng.below(3) {
                    0 if at < chars.len() => {
                        chars.remove(at);
                    }
                    1 if at < chars.len() => chars[at] = alphabet[rng.below(alphabet.len())],
                    _ => chars.insert(at, alphabet[rng.below(alphabet.len())]),
                }
            }
            chars.into_iter().collect()
        };
        // Whatever parses must also translate (and walk the board) without panicking.
        if let Ok(parsed) = sbg::parse(&text) {
            accepted += 1;
            let gdl = sbg::to_gdl(&parsed.rules);
            assert!(gdl.contains("(role white)"));
            let _ = sbg::board::perft(&parsed.rules, 1);
        }
    }
    println!("{accepted} of 20000 fuzzed texts parsed");
    assert!(accepted > 0);
}

#[test]
fn hostile_expressions_stay_bounded() {
    // Stars nested 60 deep, each around a concatenation: exponential if each
    // star's closure were recomputed inside the enclosing one.
    let mut nested = "(0,1,e)".to_owned();
    for _ in 0..60 {
        nested = format!("({nested})^*(1,0,e)");
    }
    // The largest power allowed around a star: a quadratic Glushkov automaton.
    let powered = "((0,1,e)^*)^1024";
    let empty = format!("|{}|", ".".repeat(16));
    let rows: Vec<String> = std::iter::repeat_n(empty, 15)
        .chain([format!("|K{}|", ".".repeat(15))])
        .collect();
    for rule in [nested.as_str(), powered] {
        let text = format!(
            "<<H>> <BOARD> 16 16 {} <PIECES> K {rule} & <GOALS> 4 &",
            rows.join(" ")
        );
        let parsed = sbg::parse(&text).unwrap_or_else(|e| panic!("{e}"));
        let counts = sbg::board::perft(&parsed.rules, 1);
        assert!(counts[0] > 0, "{counts:?}");
        let automaton = sbg::automaton::Automaton::compile(parsed.rules.moves_of(b'K').unwrap());
        // No more states than letters (61 and 1024) plus a start, and far fewer
        // for the power, whose language is just (0,1,e)^*.
        let bound = if rule == powered { 1 } else { 62 };
        assert!(automaton.states() <= bound, "{} states", automaton.states());
        assert!(sbg::to_gdl(&parsed.rules).contains("(<= (canmove"));
    }
}
