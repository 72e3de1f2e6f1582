//! The translation to GDL.
//!
//! Roles `white` and `black`; the state is `(cell X Y PLAYER KIND)` (kinds in
//! lower case), `(control PLAYER)`, `(step N)` (half-moves played), and where
//! goals need them `(reached PLAYER)` (the last move reached an `@` square) and
//! `(count PLAYER KIND N)` (pieces left of a type some `#` goal counts). A move
//! is `(move X0 Y0 X Y)`; the player not in control plays `noop`.
//!
//! Legal moves walk each piece's [`Automaton`]: `(reach P KIND S X0 Y0 X Y)`
//! holds when the piece of `P` on `(X0, Y0)` can be in state `S` on `(X, Y)`,
//! one rule per transition, joined with `(shift P D X1 Y1 X2 Y2)` facts (the
//! step `D` on the board for `P`, only between squares on the board) and the
//! letter's condition on the square reached. Grounding is bounded by states ×
//! squares × squares per piece type, whatever the stars.

use crate::automaton::Automaton;
use crate::rules::{On, Player, Rules};
use std::collections::BTreeMap;
use std::fmt::Write;

/// The GDL (KIF) text of `rules`.
pub fn to_gdl(rules: &Rules) -> String {
    let mut out = String::new();
    // Writing into a String cannot fail.
    let _ = write_gdl(rules, &mut out);
    out
}

/// Writes the whole translation of `rules`, section by section.
fn write_gdl(rules: &Rules, out: &mut String) -> std::fmt::Result {
    let name: String = rules.name().chars().filter(|c| !c.is_control()).collect();
    writeln!(
        out,
        ";; {name}: translated from Simplified Boardgames by ggpnet sbg2gdl\n"
    )?;
    writeln!(
        out,
        "(role white)\n(role black)\n(opponent white black)\n(opponent black white)\n"
    )?;
    let thresholds = rules.count_thresholds();
    write_initial_state(rules, &thresholds, out)?;
    let automata: Vec<(u8, Automaton)> = rules
        .piece_rules()
        .map(|(kind, regex)| (kind, Automaton::compile(regex)))
        .collect();
    let step_id = step_ids(&automata);
    write_board(rules, &step_id, out)?;
    write_moves(&automata, &step_id, out)?;
    write_next_state(rules, out)?;
    let has_reach = !rules.reach_goals().is_empty();
    if has_reach {
        write_reach_goals(rules, out)?;
    }
    let has_count = !thresholds.is_empty();
    if has_count {
        write_count_goals(rules, &thresholds, out)?;
    }
    write_outcome(rules, has_reach, has_count, out)
}

/// Writes the initial state: control, step, the pieces and the counts of the
/// `thresholds` (the piece types some `#` goal counts).
fn write_initial_state(
    rules: &Rules,
    thresholds: &[(Player, u8, u32)],
    out: &mut String,
) -> std::fmt::Result {
    let w = rules.width();
    writeln!(out, ";; Initial state")?;
    writeln!(out, "(init (control white))\n(init (step 0))")?;
    for y in 0..rules.height() {
        for x in 0..w {
            if let Some(piece) = rules.initial_board()[y * w + x] {
                writeln!(
                    out,
                    "(init (cell {x} {y} {} {}))",
                    piece.owner.name(),
                    kind_name(piece.kind)
                )?;
            }
        }
    }
    for &(player, kind, _) in thresholds {
        let n = rules.initial_count(player, kind);
        writeln!(out, "(init (count {} {} {n}))", player.name(), kind_name(kind))?;
    }
    Ok(())
}

/// Numbers every step `(dx, dy)` some automaton's transitions take, in order:
/// the `D` of `(shift P D X1 Y1 X2 Y2)`.
fn step_ids(automata: &[(u8, Automaton)]) -> BTreeMap<(i32, i32), usize> {
    let mut steps: Vec<(i32, i32)> = automata
        .iter()
        .flat_map(|(_, automaton)| automaton.transitions().iter().map(|(_, l, _)| (l.dx, l.dy)))
        .collect();
    steps.sort();
    steps.dedup();
    steps.iter().enumerate().map(|(i, s)| (*s, i)).collect()
}

/// Writes the board: its squares, the `shift` facts of every step for each
/// player, and `occupied` and `empty`.
fn write_board(rules: &Rules, step_id: &BTreeMap<(i32, i32), usize>, out: &mut String) -> std::fmt::Result {
    let (w, h) = (rules.width(), rules.height());
    writeln!(out, "\n;; The board")?;
    for y in 0..h {
        for x in 0..w {
            writeln!(out, "(square {x} {y})")?;
        }
    }
    for (&(dx, dy), id) in step_id {
        for player in Player::BOTH {
            let dy = match player {
                Player::White => dy,
                Player::Black => -dy,
            };
            for y in 0..h as i32 {
                for x in 0..w as i32 {
                    let (x2, y2) = (x + dx, y + dy);
                    if (0..w as i32).contains(&x2) && (0..h as i32).contains(&y2) {
                        writeln!(out, "(shift {} d{id} {x} {y} {x2} {y2})", player.name())?;
                    }
                }
            }
        }
    }
    writeln!(out, "(<= (occupied ?x ?y) (true (cell ?x ?y ?p ?k)))")?;
    writeln!(out, "(<= (empty ?x ?y) (square ?x ?y) (not (occupied ?x ?y)))")
}

/// Writes the legal moves: one `reach` rule per transition of each piece
/// type's automaton, `canmove` from its accepting states, and `legal`.
fn write_moves(
    automata: &[(u8, Automaton)],
    step_id: &BTreeMap<(i32, i32), usize>,
    out: &mut String,
) -> std::fmt::Result {
    writeln!(
        out,
        "\n;; Moves: each piece type's automaton walked over the board"
    )?;
    writeln!(
        out,
        "(<= (reach ?p ?k s0 ?x ?y ?x ?y) (true (control ?p)) (true (cell ?x ?y ?p ?k)))"
    )?;
    for (kind, automaton) in automata {
        let k = kind_name(*kind);
        for &(from, letter, to) in automaton.transitions() {
            let condition = match letter.on {
                On::Empty => "(empty ?x2 ?y2)",
                On::Own => "(true (cell ?x2 ?y2 ?p ?k2))",
                On::Opponent => "(opponent ?p ?o) (true (cell ?x2 ?y2 ?o ?k2))",
            };
            writeln!(
                out,
                "(<= (reach ?p {k} s{to} ?x0 ?y0 ?x2 ?y2) (reach ?p {k} s{from} ?x0 ?y0 ?x1 ?y1) (shift ?p d{} ?x1 ?y1 ?x2 ?y2) {condition})",
                step_id[&(letter.dx, letter.dy)]
            )?;
        }
        for s in (0..automaton.states()).filter(|&s| automaton.is_accepting(s)) {
            writeln!(
                out,
                "(<= (canmove ?p ?x0 ?y0 ?x ?y) (reach ?p {k} s{s} ?x0 ?y0 ?x ?y))"
            )?;
        }
    }
    writeln!(out, "(<= hasmove (canmove ?p ?x0 ?y0 ?x ?y))")?;
    writeln!(
        out,
        "(<= (legal ?p (move ?x0 ?y0 ?x ?y)) (canmove ?p ?x0 ?y0 ?x ?y))"
    )?;
    writeln!(out, "(<= (legal ?p noop) (role ?p) (not (true (control ?p))))")
}

/// Writes the next state: the moved piece, the pieces that stay, control,
/// and the step counter with its `succ` facts up to the turn limit.
fn write_next_state(rules: &Rules, out: &mut String) -> std::fmt::Result {
    writeln!(out, "\n;; Next state")?;
    writeln!(
        out,
        "(<= (next (cell ?x ?y ?p ?k)) (does ?p (move ?x0 ?y0 ?x ?y)) (true (cell ?x0 ?y0 ?p ?k)))"
    )?;
    writeln!(out, "(<= (next (cell ?x ?y ?o ?k)) (true (cell ?x ?y ?o ?k)) (not (vacated ?x ?y)) (not (arrived ?x ?y)))")?;
    writeln!(out, "(<= (vacated ?x ?y) (does ?p (move ?x ?y ?x2 ?y2)))")?;
    writeln!(out, "(<= (arrived ?x ?y) (does ?p (move ?x1 ?y1 ?x ?y)))")?;
    writeln!(
        out,
        "(<= (next (control ?o)) (true (control ?p)) (opponent ?p ?o))"
    )?;
    writeln!(out, "(<= (next (step ?n)) (true (step ?m)) (succ ?m ?n))")?;
    for n in 0..rules.turn_limit() {
        writeln!(out, "(succ {n} {})", n + 1)?;
    }
    Ok(())
}

/// Writes the `@` goals: the goal squares and the `reached` state they set.
fn write_reach_goals(rules: &Rules, out: &mut String) -> std::fmt::Result {
    writeln!(
        out,
        "\n;; @ goals: the mover wins by moving a piece onto one of its squares"
    )?;
    for goal in rules.reach_goals() {
        for (x, y) in &goal.squares {
            writeln!(
                out,
                "(goalsquare {} {} {x} {y})",
                goal.player.name(),
                kind_name(goal.kind)
            )?;
        }
    }
    writeln!(out, "(<= (next (reached ?p)) (does ?p (move ?x0 ?y0 ?x ?y)) (true (cell ?x0 ?y0 ?p ?k)) (goalsquare ?p ?k ?x ?y))")
}

/// Writes the `#` goals of the `thresholds`: the counts that lose, the
/// captures that lower a count, and `countlost`.
fn write_count_goals(rules: &Rules, thresholds: &[(Player, u8, u32)], out: &mut String) -> std::fmt::Result {
    writeln!(out, "\n;; # goals: pieces left of each counted type")?;
    let mut most = 0;
    for &(player, kind, at_most) in thresholds {
        let initial = rules.initial_count(player, kind);
        most = most.max(initial);
        for c in 0..=at_most.min(initial) {
            writeln!(out, "(countloss {} {} {c})", player.name(), kind_name(kind))?;
        }
    }
    for c in 1..=most {
        writeln!(out, "(pred {c} {})", c - 1)?;
    }
    writeln!(
        out,
        "(<= (captured ?o ?k) (does ?p (move ?x0 ?y0 ?x ?y)) (true (cell ?x ?y ?o ?k)) (distinct ?x0 ?x))"
    )?;
    writeln!(
        out,
        "(<= (captured ?o ?k) (does ?p (move ?x0 ?y0 ?x ?y)) (true (cell ?x ?y ?o ?k)) (distinct ?y0 ?y))"
    )?;
    writeln!(
        out,
        "(<= (next (count ?o ?k ?c)) (true (count ?o ?k ?c)) (not (captured ?o ?k)))"
    )?;
    writeln!(
        out,
        "(<= (next (count ?o ?k ?c)) (true (count ?o ?k ?c1)) (captured ?o ?k) (pred ?c1 ?c))"
    )?;
    writeln!(
        out,
        "(<= (countlost ?p) (true (count ?p ?k ?c)) (countloss ?p ?k ?c))"
    )?;
    writeln!(out, "(<= countdecided (countlost ?p))")
}

/// Writes `terminal` and the goals, the kinds of win in order of precedence:
/// `@` reached (`has_reach`), `#` counts (`has_count`), no legal move, turn limit.
fn write_outcome(rules: &Rules, has_reach: bool, has_count: bool, out: &mut String) -> std::fmt::Result {
    writeln!(
        out,
        "\n;; Terminal and goals, in order: @ reached, # counts, no legal move, turn limit"
    )?;
    if has_reach {
        writeln!(out, "(<= terminal (true (reached ?p)))")?;
        writeln!(out, "(<= reachdecided (true (reached ?p)))")?;
        writeln!(out, "(<= (wins ?p) (true (reached ?p)))")?;
    }
    let not_reach = if has_reach { " (not reachdecided)" } else { "" };
    if has_count {
        writeln!(out, "(<= terminal countdecided)")?;
        writeln!(
            out,
            "(<= (wins ?p) (opponent ?p ?o) (countlost ?o) (not (countlost ?p)){not_reach})"
        )?;
    }
    let not_count = if has_count { " (not countdecided)" } else { "" };
    writeln!(out, "(<= terminal (not hasmove))")?;
    writeln!(
        out,
        "(<= (wins ?p) (opponent ?p ?o) (true (control ?o)) (not hasmove){not_reach}{not_count})"
    )?;
    writeln!(out, "(<= terminal (true (step {})))", rules.turn_limit())?;
    writeln!(out, "(<= (loses ?p) (opponent ?p ?o) (wins ?o))")?;
    writeln!(out, "(<= (goal ?p 100) (wins ?p))")?;
    writeln!(out, "(<= (goal ?p 0) (loses ?p))")?;
    writeln!(
        out,
        "(<= (goal ?p 50) (role ?p) (not (wins ?p)) (not (loses ?p)))"
    )?;
    Ok(())
}

/// A piece type's GDL constant: its letter in lower case.
fn kind_name(kind: u8) -> char {
    kind.to_ascii_lowercase() as char
}
