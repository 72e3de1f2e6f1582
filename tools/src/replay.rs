//! Replaying reference traces (`shared/traces/FORMAT.md`): every playout is
//! followed move by move and, at every step, the state, every role's legal
//! moves, terminal and goals are compared with ours; then the perft counts.
//! GDL-II traces (`shared/traces-gdl2/FORMAT.md`) add each step's percepts
//! (`sees`), compared too, goal values written as strings (`"00"`, read as
//! the integer they spell, as the GameController does), and playouts stopped
//! by a fault of the game (`error`): their last step has no joint move, and
//! agrees when some role has no legal move there, as recorded.

use ggpnet::propnet::driver::MAX_PERFT_DEPTH;
use ggpnet::propnet::evaluator::EvaluatorKind;
use ggpnet::{Game, Machine, State};
use serde::Deserialize;
use serde_json::Value;
use std::collections::BTreeMap;
use std::io::BufRead;

/// The outcome of a replay.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ReplayReport {
    /// Playouts compared.
    pub playouts: usize,
    /// Steps compared, over all playouts.
    pub steps: usize,
    /// Perft depths compared.
    pub perft_depths: usize,
    /// The first disagreement, if any.
    pub first_difference: Option<String>,
}

impl ReplayReport {
    /// True when nothing differed.
    pub fn agree(&self) -> bool {
        self.first_difference.is_none()
    }
}

/// The first line of a trace: the game, its roles and its initial state.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Header {
    /// Required, but not compared: a game file may be renamed.
    #[serde(rename = "game")]
    _game: serde::de::IgnoredAny,
    roles: Vec<String>,
    init: Vec<String>,
}

/// One step of a playout: the state, every role's legal moves and goals in it, the joint move played.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Step {
    state: Vec<String>,
    legal: Vec<Vec<String>>,
    /// `None` (`null`) only at the last step of a playout stopped by an `error`.
    joint: Option<Vec<String>>,
    goals: Vec<Vec<GoalValue>>,
    /// Per role, the percepts after the joint move (GDL-II traces only).
    #[serde(default)]
    sees: Option<Vec<Vec<String>>>,
}

/// A goal value: a JSON number, or a string for a value written otherwise
/// than as a canonical integer (`"00"`), read as the integer it spells.
#[derive(Clone, Debug, Deserialize)]
#[serde(untagged)]
enum GoalValue {
    Number(i64),
    Text(String),
}

impl GoalValue {
    fn value(&self) -> Result<i64, String> {
        match self {
            GoalValue::Number(n) => Ok(*n),
            GoalValue::Text(t) => t
                .parse()
                .map_err(|_| format!("goal value {t:?} is not an integer")),
        }
    }
}

/// Goal values as integers.
fn values(goals: &[GoalValue]) -> Result<Vec<i64>, String> {
    goals.iter().map(GoalValue::value).collect()
}

/// A role's goal in a terminal state: the one value derivable, or every value derivable.
#[derive(Clone, Debug, Deserialize)]
#[serde(untagged)]
enum FinalGoal {
    One(GoalValue),
    All(Vec<GoalValue>),
}

/// The terminal state a finished playout reached.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Final {
    state: Vec<String>,
    terminal: bool,
    goals: Vec<FinalGoal>,
}

/// One playout: its steps, then its terminal state, or a mark that it was cut short.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Playout {
    seed: u64,
    steps: Vec<Step>,
    #[serde(rename = "final")]
    end: Option<Final>,
    #[serde(default)]
    truncated: bool,
    #[serde(default)]
    timeout: bool,
    /// The fault of the game that stopped the playout (GDL-II traces).
    #[serde(default)]
    error: Option<String>,
}

/// The last line: perft counts by depth.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct PerftLine {
    perft: BTreeMap<String, u64>,
}

/// A reference trace (`shared/traces/FORMAT.md`), read whole and checked before
/// anything is compared: a header, playouts, and perft counts last. A trace that
/// cannot be fully checked is refused, never counted as agreement.
#[derive(Clone, Debug)]
pub struct Trace {
    header: Header,
    playouts: Vec<Playout>,
    /// (depth, count), depths ascending.
    perft: Vec<(usize, u128)>,
}

impl Trace {
    /// Reads and checks a trace; the error names the line and what is wrong.
    pub fn read(trace: impl BufRead) -> Result<Trace, String> {
        let mut header = None;
        let mut playouts = Vec::new();
        let mut perft = None;
        let mut last_line = 0;
        for (number, line) in trace.lines().enumerate() {
            let number = number + 1;
            let line = line.map_err(|e| format!("reading the trace at line {number}: {e}"))?;
            if line.trim().is_empty() {
                continue;
            }
            last_line = number;
            let at = |e: &dyn std::fmt::Display| format!("trace line {number}: {e}");
            let record: Value = serde_json::from_str(&line).map_err(|e| at(&e))?;
            if perft.is_some() {
                return Err(at(&"a line after the perft counts, which must come last"));
            }
            if record.get("game").is_some() {
                if header.is_some() || !playouts.is_empty() {
                    return Err(at(
                        &"a second header: the header must be the first line, and only one",
                    ));
                }
                header = Some(Header::deserialize(record).map_err(|e| at(&e))?);
            } else if header.is_none() {
                return Err(at(&"the trace must start with its header (game, roles, init)"));
            } else if record.get("perft").is_some() {
                let counts = PerftLine::deserialize(record).map_err(|e| at(&e))?;
                // A game whose playouts stop on a fault may have no counts (FORMAT.md of traces-gdl2).
                let faulty = playouts.iter().any(|p: &Playout| p.error.is_some());
                perft = Some(if faulty && counts.perft.is_empty() {
                    Vec::new()
                } else {
                    perft_counts(counts.perft).map_err(|e| at(&e))?
                });
            } else {
                let playout = Playout::deserialize(record).map_err(|e| at(&e))?;
                let roles = header.as_ref().map_or(0, |h: &Header| h.roles.len());
                check_playout(&playout, roles).map_err(|e| at(&e))?;
                playouts.push(playout);
            }
        }
        let header = header.ok_or("the trace is empty: no header, playouts or perft counts")?;
        let perft = perft
            .ok_or_else(|| format!("trace line {last_line}: the trace ends without its perft counts line"))?;
        Ok(Trace {
            header,
            playouts,
            perft,
        })
    }
}

/// Checks a playout's shape against the number of roles.
fn check_playout(playout: &Playout, roles: usize) -> Result<(), String> {
    let seed = playout.seed;
    for (i, step) in playout.steps.iter().enumerate() {
        let last = i + 1 == playout.steps.len();
        if step.joint.is_none() && !(last && playout.error.is_some()) {
            return Err(format!(
                "seed {seed} step {i}: no `joint` move, which only the last step of a playout with an `error` may lack"
            ));
        }
        for (what, n) in [
            ("legal", step.legal.len()),
            ("joint", step.joint.as_ref().map_or(roles, Vec::len)),
            ("goals", step.goals.len()),
            ("sees", step.sees.as_ref().map_or(roles, Vec::len)),
        ] {
            if n != roles {
                return Err(format!(
                    "seed {seed} step {i}: `{what}` has {n} entries for {roles} roles"
                ));
            }
        }
    }
    if playout.timeout && !playout.truncated {
        return Err(format!("seed {seed}: `timeout` without `truncated`"));
    }
    if playout.error.is_some() {
        return match (&playout.end, playout.truncated, playout.steps.last()) {
            (None, false, Some(step)) if step.joint.is_none() => Ok(()),
            _ => Err(format!(
                "seed {seed}: a playout with an `error` ends with a step without `joint`, and has neither `final` nor `truncated`"
            )),
        };
    }
    match (&playout.end, playout.truncated) {
        (Some(end), false) if end.terminal && end.goals.len() == roles => Ok(()),
        (Some(end), false) if !end.terminal => Err(format!("seed {seed}: `final.terminal` is not true")),
        (Some(end), false) => Err(format!(
            "seed {seed}: `final.goals` has {} entries for {roles} roles",
            end.goals.len()
        )),
        (None, true) => Ok(()),
        (Some(_), true) => Err(format!("seed {seed}: a playout both truncated and final")),
        (None, false) => Err(format!(
            "seed {seed}: the playout has neither `final` nor `truncated`"
        )),
    }
}

/// The perft counts by depth, ascending; depths must be whole numbers from 1 to [`MAX_PERFT_DEPTH`].
fn perft_counts(counts: BTreeMap<String, u64>) -> Result<Vec<(usize, u128)>, String> {
    let mut out = Vec::with_capacity(counts.len());
    for (depth, count) in counts {
        let d: usize = depth
            .parse()
            .ok()
            .filter(|d| (1..=MAX_PERFT_DEPTH).contains(d))
            .ok_or_else(|| {
                format!("perft depth `{depth}` is not a whole number from 1 to {MAX_PERFT_DEPTH}")
            })?;
        out.push((d, u128::from(count)));
    }
    if out.is_empty() {
        return Err("the perft line has no counts".to_owned());
    }
    out.sort_unstable();
    if out.windows(2).any(|w| w[0].0 == w[1].0) {
        return Err("a perft depth appears twice".to_owned());
    }
    Ok(out)
}

fn sorted(mut v: Vec<String>) -> Vec<String> {
    v.sort_unstable();
    v
}

/// Replays `trace` against `game` (on the propnet, with a scalar evaluator of
/// `kind`): the header, every playout step by step, then the perft counts, up to
/// the first difference.
pub fn replay(game: &Game, trace: &Trace, kind: EvaluatorKind) -> ReplayReport {
    let mut machine = game.machine_with_evaluator(kind);
    let mut report = ReplayReport::default();
    report.first_difference = compare_header(game, &trace.header)
        .or_else(|| {
            trace.playouts.iter().find_map(|playout| {
                report.playouts += 1;
                compare_playout(&mut machine, playout, &mut report).err()
            })
        })
        .or_else(|| compare_perft(game, &trace.perft, kind, &mut report));
    report
}

fn compare_header(game: &Game, header: &Header) -> Option<String> {
    let roles = &header.roles;
    if roles != game.roles() {
        return Some(format!("roles: expected {roles:?}, got {:?}", game.roles()));
    }
    let init = &header.init;
    let ours = game.state_to_kif(&game.initial_state()).ok()?;
    (init != &ours).then(|| format!("initial state: expected {init:?}, got {ours:?}"))
}

/// Follows `playout`; the error is the first difference.
fn compare_playout(
    machine: &mut Machine,
    playout: &Playout,
    report: &mut ReplayReport,
) -> Result<(), String> {
    let seed = playout.seed;
    let game = machine.game().clone();
    let mut state = game.initial_state();
    for (i, step) in playout.steps.iter().enumerate() {
        let at = format!("seed {seed} step {i}");
        report.steps += 1;
        compare_step(machine, &state, step).map_err(|d| format!("{at}: {d}"))?;
        let Some(joint) = &step.joint else {
            // The recorded fault: some role has no legal move (the legal lists compared equal).
            return match step.legal.iter().position(Vec::is_empty) {
                Some(_) => Ok(()),
                None => Err(format!(
                    "{at}: the trace stopped on {:?}, but every role has a legal move",
                    playout.error.as_deref().unwrap_or("")
                )),
            };
        };
        let joint = joint
            .iter()
            .enumerate()
            .map(|(role, text)| game.parse_move(role, text))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| format!("{at}: joint move: {e}"))?;
        if let Some(expected) = &step.sees {
            let ours = machine
                .percepts(&state, &joint)
                .map_err(|e| format!("{at}: percepts: {e}"))?;
            for (role, (expected, ours)) in expected.iter().zip(&ours).enumerate() {
                if expected != ours {
                    let name = &game.roles()[role];
                    return Err(format!(
                        "{at}: percepts of {name}: expected {expected:?}, got {ours:?}"
                    ));
                }
            }
        }
        let last = i + 1 == playout.steps.len();
        if last && playout.end.is_none() {
            // Truncated: the state after the last step is not recorded.
            return Ok(());
        }
        state = machine
            .next_state(&state, &joint)
            .map_err(|e| format!("{at}: {e}"))?;
    }
    let Some(end) = playout.end.as_ref() else {
        return Ok(());
    };
    compare_final(machine, &state, end).map_err(|d| format!("seed {seed} final: {d}"))
}

/// The first difference between our `state` and a trace's step taken in it.
fn compare_step(machine: &mut Machine, state: &State, step: &Step) -> Result<(), String> {
    let game = machine.game().clone();
    let ours = game.state_to_kif(state).map_err(|e| e.to_string())?;
    if step.state != ours {
        return Err(format!("state: expected {:?}, got {ours:?}", step.state));
    }
    if machine.is_terminal(state).map_err(|e| e.to_string())? {
        return Err("our state is terminal, the reference's is not".to_owned());
    }
    for (role, expected) in step.legal.iter().enumerate() {
        let moves = machine.legal_moves(state, role).map_err(|e| e.to_string())?;
        let texts = moves.iter().map(|m| game.move_to_kif(m));
        let ours = sorted(texts.collect::<Result<_, _>>().map_err(|e| e.to_string())?);
        if expected != &ours {
            let name = &game.roles()[role];
            return Err(format!(
                "legal moves of {name}: expected {expected:?}, got {ours:?}"
            ));
        }
    }
    let goals = machine.goal_values(state).map_err(|e| e.to_string())?;
    for (role, (expected, ours)) in step.goals.iter().zip(&goals).enumerate() {
        let expected = values(expected)?;
        if &expected != ours {
            let name = &game.roles()[role];
            return Err(format!("goals of {name}: expected {expected:?}, got {ours:?}"));
        }
    }
    Ok(())
}

/// The first difference between our `state` after a playout's last step and the trace's terminal state.
fn compare_final(machine: &mut Machine, state: &State, end: &Final) -> Result<(), String> {
    let game = machine.game().clone();
    let ours = game.state_to_kif(state).map_err(|e| e.to_string())?;
    if end.state != ours {
        return Err(format!("state: expected {:?}, got {ours:?}", end.state));
    }
    if !machine.is_terminal(state).map_err(|e| e.to_string())? {
        return Err("the reference's state is terminal, ours is not".to_owned());
    }
    let goals = machine.goal_values(state).map_err(|e| e.to_string())?;
    for (role, (expected, ours)) in end.goals.iter().zip(goals).enumerate() {
        let expected = match expected {
            FinalGoal::One(g) => vec![g.value()?],
            FinalGoal::All(gs) => values(gs)?,
        };
        if expected != ours {
            let name = &game.roles()[role];
            return Err(format!("goals of {name}: expected {expected:?}, got {ours:?}"));
        }
    }
    Ok(())
}

fn compare_perft(
    game: &Game,
    expected: &[(usize, u128)],
    kind: EvaluatorKind,
    report: &mut ReplayReport,
) -> Option<String> {
    let depth = expected.last().map_or(0, |&(d, _)| d);
    let ours = match game.perft(depth, kind) {
        Ok(counts) => counts,
        Err(e) => return Some(format!("perft: {e}")),
    };
    for &(d, n) in expected {
        report.perft_depths += 1;
        let got = ours[d - 1];
        if got != n {
            return Some(format!("perft({d}): expected {n}, got {got}"));
        }
    }
    None
}
