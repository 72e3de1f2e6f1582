//! Replaying reference traces (`shared/traces/FORMAT.md`): every playout is
//! followed move by move and, at every step, the state, every role's legal
//! moves, terminal and goals are compared with ours; then the perft counts.

use crate::propnet::eval::EvaluatorKind;
use crate::propnet::playout::perft;
use crate::propnet::{Loaded, StateMachine};
use serde_json::Value;
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

fn strings(value: &Value) -> Option<Vec<String>> {
    value
        .as_array()?
        .iter()
        .map(|v| v.as_str().map(str::to_owned))
        .collect()
}

fn ints(value: &Value) -> Option<Vec<i64>> {
    value.as_array()?.iter().map(Value::as_i64).collect()
}

fn sorted(mut v: Vec<String>) -> Vec<String> {
    v.sort_unstable();
    v
}

/// Replays the trace read from `trace` against `loaded` with a scalar evaluator
/// of `kind`; `Err` when the trace itself cannot be read.
pub fn replay(loaded: &Loaded, trace: impl BufRead, kind: EvaluatorKind) -> Result<ReplayReport, String> {
    let mut machine = StateMachine::with_evaluator(std::sync::Arc::clone(&loaded.game), kind);
    let mut report = ReplayReport::default();
    for (number, line) in trace.lines().enumerate() {
        let line = line.map_err(|e| format!("reading the trace: {e}"))?;
        if line.trim().is_empty() {
            continue;
        }
        let record: Value =
            serde_json::from_str(&line).map_err(|e| format!("trace line {}: {e}", number + 1))?;
        let difference = if record.get("game").is_some() {
            compare_header(&machine, &record)
        } else if let Some(counts) = record.get("perft") {
            compare_perft(loaded, counts, kind, &mut report)
        } else {
            report.playouts += 1;
            compare_playout(&mut machine, &record, &mut report)
        };
        if let Some(difference) = difference {
            report.first_difference = Some(difference);
            break;
        }
    }
    Ok(report)
}

fn compare_header(machine: &StateMachine, header: &Value) -> Option<String> {
    let roles = strings(&header["roles"]).unwrap_or_default();
    if roles != machine.roles() {
        return Some(format!("roles: expected {roles:?}, got {:?}", machine.roles()));
    }
    let init = strings(&header["init"]).unwrap_or_default();
    let ours = machine.state_to_kif(&machine.initial_state());
    (init != ours).then(|| format!("initial state: expected {init:?}, got {ours:?}"))
}

fn compare_playout(machine: &mut StateMachine, playout: &Value, report: &mut ReplayReport) -> Option<String> {
    let seed = &playout["seed"];
    let steps = playout["steps"].as_array().map(Vec::as_slice).unwrap_or(&[]);
    let mut state = machine.initial_state();
    let roles = machine.roles().len();
    for (i, step) in steps.iter().enumerate() {
        let at = format!("seed {seed} step {i}");
        report.steps += 1;
        let expected = strings(&step["state"]).unwrap_or_default();
        let ours = machine.state_to_kif(&state);
        if expected != ours {
            return Some(format!("{at}: state: expected {expected:?}, got {ours:?}"));
        }
        if machine.is_terminal(&state) {
            return Some(format!("{at}: our state is terminal, the reference's is not"));
        }
        for role in 0..roles {
            let expected = strings(&step["legal"][role]).unwrap_or_default();
            let ours = sorted(
                machine
                    .legal_moves(&state, role)
                    .into_iter()
                    .map(|m| machine.move_to_kif(m).to_owned())
                    .collect(),
            );
            if expected != ours {
                let name = &machine.roles()[role];
                return Some(format!(
                    "{at}: legal moves of {name}: expected {expected:?}, got {ours:?}"
                ));
            }
        }
        let goals = machine.goals(&state);
        for (role, ours) in goals.iter().enumerate() {
            let expected = ints(&step["goals"][role]).unwrap_or_default();
            if &expected != ours {
                let name = &machine.roles()[role];
                return Some(format!(
                    "{at}: goals of {name}: expected {expected:?}, got {ours:?}"
                ));
            }
        }
        let last = i + 1 == steps.len();
        if last && playout.get("final").is_none() {
            // Truncated: the state after the last step is not recorded.
            return None;
        }
        let joint = match strings(&step["joint"])
            .unwrap_or_default()
            .iter()
            .enumerate()
            .map(|(role, text)| machine.parse_move(role, text))
            .collect::<Result<Vec<_>, _>>()
        {
            Ok(joint) => joint,
            Err(e) => return Some(format!("{at}: joint move: {e}")),
        };
        state = match machine.next_state(&state, &joint) {
            Ok(next) => next,
            Err(e) => return Some(format!("{at}: {e}")),
        };
    }
    let last = playout.get("final")?;
    let at = format!("seed {seed} final");
    let expected = strings(&last["state"]).unwrap_or_default();
    let ours = machine.state_to_kif(&state);
    if expected != ours {
        return Some(format!("{at}: state: expected {expected:?}, got {ours:?}"));
    }
    if !machine.is_terminal(&state) {
        return Some(format!("{at}: the reference's state is terminal, ours is not"));
    }
    for (role, ours) in machine.goals(&state).iter().enumerate() {
        let expected = match &last["goals"][role] {
            Value::Number(n) => vec![n.as_i64().unwrap_or(i64::MIN)],
            other => ints(other).unwrap_or_default(),
        };
        if &expected != ours {
            let name = &machine.roles()[role];
            return Some(format!(
                "{at}: goals of {name}: expected {expected:?}, got {ours:?}"
            ));
        }
    }
    None
}

fn compare_perft(
    loaded: &Loaded,
    counts: &Value,
    kind: EvaluatorKind,
    report: &mut ReplayReport,
) -> Option<String> {
    let expected: Vec<(usize, u128)> = counts
        .as_object()?
        .iter()
        .filter_map(|(d, n)| Some((d.parse().ok()?, n.as_u64()? as u128)))
        .collect();
    let depth = expected.iter().map(|&(d, _)| d).max().unwrap_or(0);
    let ours = perft(&loaded.game, depth, kind);
    for (d, n) in expected {
        report.perft_depths += 1;
        let got = ours.counts[d - 1];
        if got != n {
            return Some(format!("perft({d}): expected {n}, got {got}"));
        }
    }
    None
}
