//! Checking a Simplified Boardgames game's GDL translation, loaded as a
//! [`Game`], against the direct move generator of [`ggpnet::sbg::board`].
//!
//! Both sides are mapped to a common form: a move is its `(from, to)` squares;
//! a state is the set of `((x, y), letter)` pieces (upper case white), the
//! player to move and the half-moves played. [`compare_perft`] counts move
//! paths on both; [`compare_playouts`] plays random games on both side by side,
//! comparing at every step the legal moves, the state, terminal and goals.

use ggpnet::propnet::evaluator::EvaluatorKind;
use ggpnet::sbg::board::{self, Position};
use ggpnet::sbg::random::Rng;
use ggpnet::sbg::{Player, Rules};
use ggpnet::{Game, Machine, Move, State};
use std::collections::BTreeSet;

/// A state in the common form: pieces, player to move, half-moves played.
type Common = (BTreeSet<((usize, usize), char)>, Player, u32);

/// Perft to `depth` on the translation (scalar differential evaluator) and on
/// the oracle: the counts when they agree, else what differs.
pub fn compare_perft(rules: &Rules, game: &Game, depth: usize) -> Result<Vec<u128>, String> {
    let oracle = board::perft(rules, depth);
    let ours = game
        .perft(depth, EvaluatorKind::Differential)
        .map_err(|e| format!("perft on the translation: {e}"))?;
    if ours != oracle {
        return Err(format!("perft: translation {ours:?}, oracle {oracle:?}"));
    }
    Ok(oracle)
}

/// Plays `playouts` random games to the end (uniform moves drawn from the
/// oracle's list by a generator seeded with `seed`) on both sides, comparing
/// every step; the number of states compared, or the first difference.
pub fn compare_playouts(rules: &Rules, game: &Game, playouts: usize, seed: u64) -> Result<usize, String> {
    if game.roles() != ["white", "black"] {
        return Err(format!("roles {:?}, expected white and black", game.roles()));
    }
    let mut machine = game.machine();
    let mut rng = Rng::new(seed);
    let mut steps = 0;
    for playout in 0..playouts {
        let mut position = Position::initial(rules);
        let mut state = game.initial_state();
        loop {
            steps += 1;
            let at = |what: &str| format!("playout {playout}, half-move {}: {what}", position.turn());
            let ours = common_state(game, &state).map_err(|e| at(&e))?;
            let oracle = oracle_state(rules, &position);
            if ours != oracle {
                return Err(at(&format!("state: translation {ours:?}, oracle {oracle:?}")));
            }
            let legal = position.legal_moves(rules);
            let outcome = position.outcome_given(rules, &legal);
            let terminal = machine.is_terminal(&state).map_err(|e| at(&e.to_string()))?;
            if terminal != outcome.is_some() {
                return Err(at(&format!(
                    "terminal: translation {terminal}, oracle {outcome:?}"
                )));
            }
            let goals = machine.goals(&state).map_err(|e| at(&e.to_string()))?;
            let expected = outcome.unwrap_or([50, 50]).map(|g| Some(i64::from(g)));
            if goals != expected {
                return Err(at(&format!("goals: translation {goals:?}, oracle {expected:?}")));
            }
            if terminal {
                break;
            }
            let mover = position.to_move().index();
            let moves = machine
                .legal_moves(&state, mover)
                .map_err(|e| at(&e.to_string()))?;
            let mapped = moves
                .iter()
                .map(|m| common_move(game, m))
                .collect::<Result<Vec<_>, _>>()
                .map_err(|e| at(&e))?;
            let mut sorted = mapped.clone();
            sorted.sort();
            if sorted != legal {
                return Err(at(&format!(
                    "legal moves: translation {sorted:?}, oracle {legal:?}"
                )));
            }
            let noop = machine
                .legal_moves(&state, 1 - mover)
                .map_err(|e| at(&e.to_string()))?;
            let texts = noop
                .iter()
                .map(|m| game.move_to_kif(m).map_err(|e| at(&e.to_string())))
                .collect::<Result<Vec<_>, _>>()?;
            if texts != ["noop"] {
                return Err(at(&format!("the player not to move has {texts:?}, not noop")));
            }
            let chosen = legal[rng.below(legal.len())];
            let index = mapped
                .iter()
                .position(|m| *m == chosen)
                .ok_or_else(|| at("chosen move missing"))?;
            let mut joint = vec![moves[index].clone(), noop[0].clone()];
            if mover == 1 {
                joint.reverse();
            }
            state = next(&mut machine, &state, &joint).map_err(|e| at(&e))?;
            position = position
                .play(rules, chosen)
                .ok_or_else(|| at("the oracle refused its own move"))?;
        }
    }
    Ok(steps)
}

/// The translation's next state, its error as text.
fn next(machine: &mut Machine, state: &State, joint: &[Move]) -> Result<State, String> {
    machine.next_state(state, joint).map_err(|e| e.to_string())
}

/// The oracle's state in the common form.
fn oracle_state(rules: &Rules, position: &Position) -> Common {
    let pieces = position
        .pieces(rules)
        .map(|(square, p)| (square, p.letter()))
        .collect();
    (pieces, position.to_move(), position.turn())
}

/// The translation's state in the common form, read from its facts
/// `(cell X Y PLAYER KIND)`, `(control PLAYER)` and `(step N)`.
fn common_state(game: &Game, state: &State) -> Result<Common, String> {
    let facts = game.state_to_kif(state).map_err(|e| e.to_string())?;
    let mut pieces = BTreeSet::new();
    let (mut control, mut step) = (None, None);
    for fact in &facts {
        let words = words(fact);
        match words.as_slice() {
            ["cell", x, y, owner, kind] => {
                let letter = kind.chars().next().ok_or("empty kind")?;
                let letter = match *owner {
                    "white" => letter.to_ascii_uppercase(),
                    _ => letter,
                };
                pieces.insert(((number(x)?, number(y)?), letter));
            }
            ["control", "white"] => control = Some(Player::White),
            ["control", "black"] => control = Some(Player::Black),
            ["step", n] => step = Some(number(n)? as u32),
            _ => {}
        }
    }
    Ok((
        pieces,
        control.ok_or("no control fact")?,
        step.ok_or("no step fact")?,
    ))
}

/// A move of the translation, `(move X0 Y0 X Y)`, as `(from, to)`.
fn common_move(game: &Game, m: &Move) -> Result<board::Move, String> {
    let text = game.move_to_kif(m).map_err(|e| e.to_string())?;
    match words(&text).as_slice() {
        ["move", x0, y0, x, y] => Ok(board::Move {
            from: (number(x0)?, number(y0)?),
            to: (number(x)?, number(y)?),
        }),
        _ => Err(format!("unexpected move {text}")),
    }
}

/// The symbols of a KIF sentence, parentheses dropped.
fn words(kif: &str) -> Vec<&str> {
    kif.split(|c: char| c == '(' || c == ')' || c.is_whitespace())
        .filter(|w| !w.is_empty())
        .collect()
}

/// A coordinate or count written as a KIF constant.
fn number(word: &str) -> Result<usize, String> {
    word.parse().map_err(|_| format!("not a number: {word}"))
}
