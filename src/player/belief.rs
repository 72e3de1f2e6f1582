//! What a player of a GDL-II game believes the state to be: a sample of the
//! states consistent with its own moves and percepts so far, kept up to date by
//! particle filtering, as HyperPlay (Schofield, Cerexhe, Thielscher 2012) does.
//!
//! The sample has repeats: a state's share of it stands for its probability.
//! After each step every state of the sample is tried in turn, again and again:
//! one trial draws a joint move (this player's own move fixed, every other role's
//! uniformly among its legal moves, as the `random` role plays and as the player
//! assumes of its opponents) and keeps the successor when this player's percepts
//! there are the ones received. Each state gets the same number of trials, so a
//! state's offspring is proportional to the likelihood of the percepts from it:
//! in Monty Hall, the door the host could open in two ways is half as likely
//! as the one it was forced to open, and the sample shows it.
//!
//! When no trial matches (the sample missed every consistent state), the
//! sample is drawn anew by random walks from the initial state through the
//! whole history; when this player's move may have been replaced by the
//! manager (the 2010 protocol form does not say), its own move is drawn too.
//! Both are bounded by a number of trials and by the deadline.

use crate::{Error, Machine, Move, State, Stream};
use std::time::Instant;

/// Trials per state of the sample wanted, at most, when filtering one step.
const TRIALS_PER_STATE: usize = 64;

/// Joint moves tried at one step of a walk from the initial state before the walk
/// is given up.
const TRIALS_PER_WALK_STEP: usize = 16;

/// One step of the history: this player's move (when known) and the
/// percepts it received after the joint move.
#[derive(Clone, Debug)]
struct Step {
    own: Option<Move>,
    percepts: Vec<String>,
}

/// A sample of the states consistent with what one role has done and seen.
#[derive(Clone, Debug)]
pub(crate) struct Belief {
    role: usize,
    initial: State,
    history: Vec<Step>,
    states: Vec<State>,
    /// The size of the sample wanted.
    capacity: usize,
}

/// How a step was taken in.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Update {
    /// The sample, filtered, still held consistent states.
    Filtered,
    /// The sample was drawn anew from the initial state.
    Resampled,
    /// No consistent state was found: the sample holds successors that
    /// disagree with the percepts.
    Lost,
}

impl Belief {
    /// The belief of `role` at the start: the initial state (the sample of
    /// `capacity` states, at least 1, is drawn as steps come).
    pub(crate) fn new(initial: State, role: usize, capacity: usize) -> Belief {
        Belief {
            role,
            states: vec![initial.clone()],
            initial,
            history: Vec::new(),
            capacity: capacity.max(1),
        }
    }

    /// The states of the sample, with repeats.
    pub(crate) fn states(&self) -> &[State] {
        &self.states
    }

    /// Takes in a step: this player played `own` (`None` when not known) and then
    /// received `percepts`. Works until `deadline` at most.
    pub(crate) fn update(
        &mut self,
        machine: &mut Machine,
        own: Option<Move>,
        percepts: &[String],
        rng: &mut Stream,
        deadline: Instant,
    ) -> Result<Update, Error> {
        self.history.push(Step {
            own,
            percepts: canonical(percepts),
        });
        let step = self.history.last().expect("pushed above").clone();
        let mut next = self.filter(machine, &step, rng, deadline)?;
        if next.is_empty() && step.own.is_some() {
            // The manager may have replaced this player's move.
            let unknown = Step { own: None, ..step };
            next = self.filter(machine, &unknown, rng, deadline)?;
        }
        if !next.is_empty() {
            self.states = next;
            return Ok(Update::Filtered);
        }
        let walked = self.walk(machine, rng, deadline)?;
        if !walked.is_empty() {
            self.states = walked;
            return Ok(Update::Resampled);
        }
        let mut successors = Vec::with_capacity(self.states.len());
        for state in &self.states {
            if let Some(s) = self.trial(machine, state, None, rng)? {
                successors.push(s.0);
            }
        }
        if !successors.is_empty() {
            self.states = successors;
        }
        Ok(Update::Lost)
    }

    /// Successors of the sample consistent with `step`: trials over its states
    /// in turn until the capacity is reached, the trials are spent, or the deadline.
    fn filter(
        &self,
        machine: &mut Machine,
        step: &Step,
        rng: &mut Stream,
        deadline: Instant,
    ) -> Result<Vec<State>, Error> {
        let mut next = Vec::with_capacity(self.capacity);
        let trials = self.capacity * TRIALS_PER_STATE;
        for state in self.states.iter().cycle().take(trials) {
            if next.len() >= self.capacity || Instant::now() >= deadline {
                break;
            }
            if let Some((s, seen)) = self.trial(machine, state, step.own.as_ref(), rng)? {
                if seen == step.percepts {
                    next.push(s);
                }
            }
        }
        Ok(next)
    }

    /// A new sample by random walks from the initial state through the history,
    /// each step's joint move drawn until this player's percepts match.
    fn walk(&self, machine: &mut Machine, rng: &mut Stream, deadline: Instant) -> Result<Vec<State>, Error> {
        let mut found = Vec::new();
        let walks = self.capacity * TRIALS_PER_STATE / self.history.len().max(1);
        'walks: for _ in 0..walks.max(1) {
            if found.len() >= self.capacity || Instant::now() >= deadline {
                break;
            }
            let mut state = self.initial.clone();
            for step in &self.history {
                let mut matched = None;
                for _ in 0..TRIALS_PER_WALK_STEP {
                    if let Some((s, seen)) = self.trial(machine, &state, step.own.as_ref(), rng)? {
                        if seen == step.percepts {
                            matched = Some(s);
                            break;
                        }
                    }
                }
                match matched {
                    Some(s) => state = s,
                    None => continue 'walks,
                }
            }
            found.push(state);
        }
        Ok(found)
    }

    /// One trial from `state`: a joint move with this player's move `own` (drawn
    /// when `None`) and every other role's drawn; the successor and this
    /// player's percepts, or `None` when `state` is terminal, `own` is not
    /// legal there, or some role has no legal move.
    fn trial(
        &self,
        machine: &mut Machine,
        state: &State,
        own: Option<&Move>,
        rng: &mut Stream,
    ) -> Result<Option<(State, Vec<String>)>, Error> {
        if machine.is_terminal(state)? {
            return Ok(None);
        }
        let roles = machine.game().roles().len();
        let mut joint = Vec::with_capacity(roles);
        for role in 0..roles {
            let m = match own {
                Some(m) if role == self.role => {
                    if !machine.legal_moves(state, role)?.contains(m) {
                        return Ok(None);
                    }
                    m.clone()
                }
                _ => match machine.random_move(state, role, rng)? {
                    Some(m) => m,
                    None => return Ok(None),
                },
            };
            joint.push(m);
        }
        let seen = machine.percepts(state, &joint)?.swap_remove(self.role);
        let next = machine.next_state(state, &joint)?;
        Ok(Some((next, canonical(&seen))))
    }

    /// This player's moves worth considering: those legal in every state of
    /// the sample, or, when there are none, those legal in the most states.
    /// Never a move legal in none.
    pub(crate) fn candidates(&self, machine: &mut Machine) -> Result<Vec<Move>, Error> {
        let mut counts: Vec<(Move, usize)> = Vec::new();
        for state in &self.states {
            for m in machine.legal_moves(state, self.role)? {
                match counts.iter_mut().find(|(c, _)| *c == m) {
                    Some(entry) => entry.1 += 1,
                    None => counts.push((m, 1)),
                }
            }
        }
        let most = counts.iter().map(|c| c.1).max().unwrap_or(0);
        Ok(counts.into_iter().filter(|c| c.1 == most).map(|c| c.0).collect())
    }
}

/// Percepts compared as sets, in any case (the Dresden GameController
/// upper-cases everything): lower-cased, sorted, without repeats.
pub(crate) fn canonical(percepts: &[String]) -> Vec<String> {
    let mut set: Vec<String> = percepts.iter().map(|p| p.to_lowercase()).collect();
    set.sort_unstable();
    set.dedup();
    set
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Config, Game};
    use std::time::Duration;

    /// In Monty Hall, after choosing door 1 and seeing door 3 opened, the car
    /// is behind door 2 twice as often as behind door 1: the sample must say so.
    #[test]
    fn the_sample_follows_the_likelihood_of_the_percepts() {
        let game = Game::load(include_str!("../../games/montyhall.kif"), &Config::default()).unwrap();
        let mut machine = game.machine();
        let mut rng = Stream::new(5, 0);
        let mut belief = Belief::new(game.initial_state(), 0, 3000);
        let deadline = Instant::now() + Duration::from_secs(60);
        let steps: [(&str, &[&str]); 3] = [
            ("wait", &["(does candidate wait)"]),
            ("(choose 1)", &["(does candidate (choose 1))"]),
            ("wait", &["(does candidate wait)", "(opened 3)"]),
        ];
        for (own, percepts) in steps {
            let own = game.parse_move(0, own).unwrap();
            let percepts: Vec<String> = percepts.iter().map(|p| p.to_string()).collect();
            let update = belief.update(&mut machine, Some(own), &percepts, &mut rng, deadline);
            assert_eq!(update, Ok(Update::Filtered));
        }
        assert_eq!(belief.states().len(), 3000);
        let behind = |door: &str| {
            let fact = format!("(car {door})");
            let states = belief.states().iter();
            states
                .filter(|s| game.state_to_kif(s).unwrap().contains(&fact))
                .count()
        };
        assert_eq!(behind("3"), 0);
        let share = behind("2") as f64 / 3000.0;
        assert!(
            (0.62..0.72).contains(&share),
            "car behind door 2 in {share} of the sample"
        );
        let candidates = belief.candidates(&mut machine).unwrap();
        let texts: Vec<String> = candidates.iter().map(|m| game.move_to_kif(m).unwrap()).collect();
        assert_eq!(texts, ["stay", "switch"]);
    }
}
