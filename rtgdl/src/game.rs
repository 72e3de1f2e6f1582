//! An rtGDL game behind one interface whichever engine runs it: timed
//! states and the event-driven update.
//!
//! An rtGDL state is a set of (lifetime, fact) pairs ([`TimedState`]); it
//! stays as it is until an event: a move arriving, or the earliest expiry
//! t_u ([`RtGame::next_expiry`]). [`RtGame::update`] is the spec's
//! u(Δt, M, S) with its input validated: Δt > 0 and at most t_u, one
//! optional move per role, every move legal, and an event at Δt (a move, or
//! t_u itself).
//!
//! Two engines run a game: the propnet ([`EngineChoice::Propnet`], the compiled
//! circuit form with the simulator beside it, see `net.rs`) and the
//! interpreter ([`EngineChoice::Interpreter`], the oracle [`RtReference`], for
//! every valid game). [`EngineChoice::Auto`] (the default) takes the propnet, or
//! the interpreter when the game is outside the compiled fragment, with the
//! rule and reason ([`RtGame::fallback_reason`]).

use crate::error::RtError;
use crate::interpreter::{check_update, RtReference, RtState};
use crate::net::{Net, Slots};
use crate::syntax::embed;
use crate::time::{Lifetime, Time};
use ggpnet_grounder::GdlError;
use ggpnet_kif::rule_to_string;
use ggpnet_propnet::{self as propnet, Loaded, StateMachine};
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

/// Numbers rtGDL games in the order they are made.
static NEXT_GAME: AtomicU64 = AtomicU64::new(1);

/// A timed state: every (lifetime, fact) pair that holds ([`RtGame::pairs`]
/// lists them). It belongs to the [`RtGame`] that made it.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub struct TimedState {
    game: u64,
    repr: Repr,
}

/// A state as its engine holds it.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub(crate) enum Repr {
    /// The interpreter's set of pairs.
    Facts(RtState),
    /// The propnet's base bits, and beside them their lifetimes and time arguments.
    Bits(propnet::State, Slots),
}

/// A move as the engine holds it: the propnet's input, the interpreter's text.
#[derive(Clone, PartialEq, Eq, Debug)]
pub(crate) enum Choice {
    /// The propnet's input.
    Input(propnet::Move),
    /// The interpreter's move, canonical KIF.
    Text(String),
}

/// Which engine may run a game, GDL or real-time (the facade's
/// `ggpnet::EngineChoice` is this type).
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub enum EngineChoice {
    /// The propnet, or the interpreter when the propnet cannot run the game: a
    /// GDL game whose grounding passes one of its limits, an rtGDL game outside
    /// the fragment the propnet compiles (the reason is kept, see
    /// [`RtGame::fallback_reason`]).
    #[default]
    Auto,
    /// The propnet only: a game it cannot run is an error.
    Propnet,
    /// The interpreter only (the oracle; for games known to be too large, and
    /// for tests).
    Interpreter,
}

/// The engine that runs a game, GDL or real-time: the one an [`EngineChoice`]
/// chose (the facade's `ggpnet::Engine` is this type).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Engine {
    /// The compiled propositional network (for rtGDL, with the simulator beside it).
    Propnet,
    /// The reference interpreter, evaluating the rules (for rtGDL, their
    /// embedding) on each state.
    Interpreter,
}

impl Engine {
    /// Its name in reports (`propnet`, `interpreter`).
    pub fn name(self) -> &'static str {
        match self {
            Engine::Propnet => "propnet",
            Engine::Interpreter => "interpreter",
        }
    }
}

impl fmt::Display for Engine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The engine behind an rtGDL game.
#[derive(Debug)]
enum Backend {
    /// The oracle.
    Interpreter(RtReference),
    /// The compiled circuit form.
    Propnet(Box<Net>),
}

/// An rtGDL game: cheap to clone, one clone per thread (each keeps its own
/// evaluation scratch space: the interpreter's cache, the propnet's machine).
#[derive(Debug)]
pub struct RtGame {
    id: u64,
    roles: Vec<String>,
    backend: Arc<Backend>,
    /// Why the interpreter runs the game, when the propnet was tried.
    fallback: Option<String>,
    /// The interpreter of this clone (its cache is its own).
    reference: Option<RtReference>,
    /// The state machine of this clone, on the propnet.
    machine: Option<Mutex<StateMachine>>,
}

impl Clone for RtGame {
    fn clone(&self) -> RtGame {
        RtGame::with_backend(self.id, Arc::clone(&self.backend), self.fallback.clone())
    }
}

/// Whether `text` is an rtGDL description (it parses, and some rule has
/// `init`, `true` or `next` with a lifetime, or `expired`).
pub fn is_rtgdl(text: &str) -> bool {
    ggpnet_kif::parse(text).is_ok_and(|d| crate::syntax::is_rtgdl(&d))
}

impl RtGame {
    /// [`RtGame::load_with`] on [`EngineChoice::Auto`].
    pub fn load(text: &str) -> Result<RtGame, RtError> {
        RtGame::load_with(text, EngineChoice::Auto)
    }

    /// Parses and checks an rtGDL description: the rtGDL checks
    /// ([`check`](crate::syntax::check)), then GDL's checks of its embedding into
    /// GDL (keyword restrictions with `expired` read like `true`, safety,
    /// stratification, recursion restriction); each error names the rule's
    /// line:col. Then compiles it on `engine`.
    pub fn load_with(text: &str, engine: EngineChoice) -> Result<RtGame, RtError> {
        RtGame::load_limited(text, engine, &ggpnet_grounder::Config::default())
    }

    /// [`RtGame::load_with`] with these grounding limits for the propnet
    /// (past one, [`EngineChoice::Auto`] falls back to the interpreter).
    pub fn load_limited(
        text: &str,
        engine: EngineChoice,
        ground: &ggpnet_grounder::Config,
    ) -> Result<RtGame, RtError> {
        let description = ggpnet_kif::parse(text).map_err(RtError::Parse)?;
        let embedded = embed(&description).map_err(RtError::Invalid)?;
        let mut gdl = embedded.description.clone();
        let in_rtgdl = |e: GdlError| {
            // Name the rule as written, not its embedding.
            let original = e
                .span
                .and_then(|span| description.rules.iter().find(|r| r.span == span));
            let rule = original.map(|r| rule_to_string(r, &description.symbols));
            let mut message = e.message.clone();
            if message.contains("'true'") {
                message.push_str(" (rtGDL's 'expired' counts as 'true')");
            }
            RtError::Gdl(GdlError { rule, message, ..e })
        };
        ggpnet_grounder::prepare(&mut gdl).map_err(in_rtgdl)?;
        ggpnet_grounder::check_playable(&embedded.description).map_err(in_rtgdl)?;
        let interpreter = || RtReference::new(&description).map(Backend::Interpreter);
        let (backend, fallback) = match engine {
            EngineChoice::Interpreter => (interpreter()?, None),
            EngineChoice::Propnet => (
                Backend::Propnet(Box::new(Net::compile(&description, ground)?)),
                None,
            ),
            EngineChoice::Auto => match Net::compile(&description, ground) {
                Ok(net) => (Backend::Propnet(Box::new(net)), None),
                Err(why) => (interpreter()?, Some(why.message())),
            },
        };
        let id = NEXT_GAME.fetch_add(1, Ordering::Relaxed);
        Ok(RtGame::with_backend(id, Arc::new(backend), fallback))
    }

    /// The game `id` on `backend`, with a machine or interpreter of its own.
    fn with_backend(id: u64, backend: Arc<Backend>, fallback: Option<String>) -> RtGame {
        let (roles, reference, machine) = match &*backend {
            Backend::Interpreter(r) => (r.roles(), Some(r.clone()), None),
            Backend::Propnet(net) => (
                net.loaded.game.roles().to_vec(),
                None,
                Some(Mutex::new(net.loaded.machine())),
            ),
        };
        RtGame {
            id,
            roles,
            backend,
            fallback,
            reference,
            machine,
        }
    }

    /// The engine that runs the game.
    pub fn engine(&self) -> Engine {
        match &*self.backend {
            Backend::Interpreter(_) => Engine::Interpreter,
            Backend::Propnet(_) => Engine::Propnet,
        }
    }

    /// Why the interpreter runs the game although the propnet was tried: the
    /// [`RtError::message`] of the propnet's refusal, such as the rule outside
    /// the compiled fragment and why (`None` otherwise). Loading on
    /// [`EngineChoice::Propnet`] gives the refusal itself.
    pub fn fallback_reason(&self) -> Option<&str> {
        self.fallback.as_deref()
    }

    /// The compiled propnet of the circuit form (`None` on the interpreter).
    pub fn propnet(&self) -> Option<&Loaded> {
        match &*self.backend {
            Backend::Propnet(net) => Some(&net.loaded),
            Backend::Interpreter(_) => None,
        }
    }

    /// The roles, in the order of the `role` facts.
    pub fn roles(&self) -> &[String] {
        &self.roles
    }

    /// The initial state: every `init(t, f)`.
    pub fn initial_state(&self) -> TimedState {
        let repr = match (&*self.backend, &self.reference) {
            (Backend::Propnet(net), _) => Repr::Bits(net.loaded.game.initial().clone(), net.initial.clone()),
            (Backend::Interpreter(_), Some(r)) => Repr::Facts(r.initial_state()),
            (Backend::Interpreter(_), None) => unreachable!("an interpreter game keeps its interpreter"),
        };
        TimedState { game: self.id, repr }
    }

    /// `state`, refused if another game made it.
    pub(crate) fn own<'s>(&self, state: &'s TimedState) -> Result<&'s Repr, RtError> {
        if state.game != self.id {
            return Err(RtError::ForeignState);
        }
        Ok(&state.repr)
    }

    /// The number `role` checked against the roles.
    fn role(&self, role: usize) -> Result<usize, RtError> {
        if role >= self.roles.len() {
            return Err(RtError::NoSuchRole {
                role,
                roles: self.roles.len(),
            });
        }
        Ok(role)
    }

    /// Runs `query` on the propnet's machine of this clone.
    fn on_machine<T>(&self, query: impl FnOnce(&mut StateMachine) -> T) -> T {
        let machine = self.machine.as_ref().expect("a propnet game keeps its machine");
        let mut machine = machine.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        query(&mut machine)
    }

    /// The interpreter of this clone.
    fn reference(&self) -> &RtReference {
        self.reference
            .as_ref()
            .expect("an interpreter game keeps its interpreter")
    }

    /// The (lifetime, fact) pairs of `state`, facts in canonical KIF, sorted
    /// by fact then lifetime.
    pub fn pairs(&self, state: &TimedState) -> Result<Vec<(Lifetime, String)>, RtError> {
        Ok(match (self.own(state)?, &*self.backend) {
            (Repr::Facts(s), _) => s.pairs().to_vec(),
            (Repr::Bits(bits, slots), Backend::Propnet(net)) => net.pairs(bits, slots),
            (Repr::Bits(..), Backend::Interpreter(_)) => unreachable!("states match their game"),
        })
    }

    /// The legal moves of role number `role` in `state` (canonical KIF, sorted).
    pub fn legal_moves(&self, state: &TimedState, role: usize) -> Result<Vec<String>, RtError> {
        let role = self.role(role)?;
        Ok(match self.own(state)? {
            Repr::Facts(s) => self.reference().legal_moves(s, role)?,
            Repr::Bits(bits, _) => self.on_machine(|m| {
                let mut moves: Vec<String> = m
                    .legal_moves(bits, role)
                    .into_iter()
                    .map(|mv| m.move_to_kif(mv).to_owned())
                    .collect();
                moves.sort_unstable();
                moves
            }),
        })
    }

    /// Whether `state` is terminal.
    pub fn is_terminal(&self, state: &TimedState) -> Result<bool, RtError> {
        Ok(match self.own(state)? {
            Repr::Facts(s) => self.reference().is_terminal(s)?,
            Repr::Bits(bits, _) => self.on_machine(|m| m.is_terminal(bits)),
        })
    }

    /// Per role, every integer goal value derivable in `state`, sorted.
    pub fn goal_values(&self, state: &TimedState) -> Result<Vec<Vec<i64>>, RtError> {
        Ok(match self.own(state)? {
            Repr::Facts(s) => self.reference().goals(s)?,
            Repr::Bits(bits, _) => self.on_machine(|m| {
                let mut goals = m.goals(bits);
                for values in &mut goals {
                    values.sort_unstable();
                    values.dedup();
                }
                goals
            }),
        })
    }

    /// Per role, its goal in `state` when exactly one value is derivable.
    pub fn goals(&self, state: &TimedState) -> Result<Vec<Option<i64>>, RtError> {
        let values = self.goal_values(state)?;
        Ok(values.iter().map(|v| (v.len() == 1).then(|| v[0])).collect())
    }

    /// t_u: the time from `state`'s beginning until its first fact expires
    /// (`None` when every lifetime is infinite).
    pub fn next_expiry(&self, state: &TimedState) -> Result<Option<Time>, RtError> {
        Ok(match (self.own(state)?, &*self.backend) {
            (Repr::Facts(s), _) => s.next_expiry(),
            (Repr::Bits(bits, slots), Backend::Propnet(net)) => net.next_expiry(bits, slots),
            (Repr::Bits(..), Backend::Interpreter(_)) => unreachable!("states match their game"),
        })
    }

    /// The state after `elapsed` time with `moves` (one per role, `None` for
    /// a role that does not move): the spec's u(Δt, M, S). Refused: a wrong
    /// number of moves, Δt = 0, Δt past t_u, no event at Δt (no move, and Δt
    /// is not t_u), an illegal move; and on the propnet, a fact that would
    /// copy two different lifetimes into its one slot.
    pub fn update(
        &self,
        state: &TimedState,
        elapsed: Time,
        moves: &[Option<String>],
    ) -> Result<TimedState, RtError> {
        let repr = self.own(state)?;
        check_update(self.roles.len(), self.next_expiry(state)?, elapsed, moves)?;
        let choices = match repr {
            // The interpreter checks the moves itself.
            Repr::Facts(_) => moves.iter().map(|m| m.clone().map(Choice::Text)).collect(),
            Repr::Bits(bits, _) => self.on_machine(|m| {
                let mut choices = Vec::with_capacity(moves.len());
                for (role, chosen) in moves.iter().enumerate() {
                    let Some(chosen) = chosen else {
                        choices.push(None);
                        continue;
                    };
                    let illegal = || RtError::IllegalMove {
                        role: self.roles[role].clone(),
                        chosen: chosen.clone(),
                    };
                    let input = m.parse_move(role, chosen).map_err(|_| illegal())?;
                    if !m.legal_moves(bits, role).contains(&input) {
                        return Err(illegal());
                    }
                    choices.push(Some(Choice::Input(input)));
                }
                Ok(choices)
            })?,
        };
        self.apply(state, elapsed, &choices)
    }

    /// u(Δt, M, S) for checked input: Δt positive and at most t_u, an event at
    /// Δt, every move legal (the interpreter checks again).
    pub(crate) fn apply(
        &self,
        state: &TimedState,
        elapsed: Time,
        moves: &[Option<Choice>],
    ) -> Result<TimedState, RtError> {
        let repr = match (&state.repr, &*self.backend) {
            (Repr::Facts(s), _) => {
                let texts: Vec<Option<String>> = moves
                    .iter()
                    .map(|m| m.as_ref().map(|c| self.choice_text(c)))
                    .collect();
                Repr::Facts(self.reference().update(s, elapsed, &texts)?)
            }
            (Repr::Bits(bits, slots), Backend::Propnet(net)) => {
                let joint: Vec<propnet::Move> = moves
                    .iter()
                    .flatten()
                    .map(|c| match c {
                        Choice::Input(input) => *input,
                        Choice::Text(_) => unreachable!("the propnet's moves are inputs"),
                    })
                    .collect();
                let (bits, slots) = self.on_machine(|m| net.update(m, bits, slots, elapsed, &joint))?;
                Repr::Bits(bits, slots)
            }
            (Repr::Bits(..), Backend::Interpreter(_)) => unreachable!("states match their game"),
        };
        Ok(TimedState { game: self.id, repr })
    }

    /// The legal moves of `role` in `state` as the engine holds them, into `out`
    /// (the propnet's in input order, the interpreter's sorted).
    pub(crate) fn choices(
        &self,
        state: &TimedState,
        role: usize,
        out: &mut Vec<Choice>,
    ) -> Result<(), RtError> {
        out.clear();
        match &state.repr {
            Repr::Facts(s) => out.extend(
                self.reference()
                    .legal_moves(s, role)?
                    .into_iter()
                    .map(Choice::Text),
            ),
            Repr::Bits(bits, _) => self.on_machine(|m| {
                out.extend(m.legal_moves(bits, role).into_iter().map(Choice::Input));
            }),
        }
        Ok(())
    }

    /// The canonical text of a move.
    pub(crate) fn choice_text(&self, choice: &Choice) -> String {
        match choice {
            Choice::Input(input) => self.on_machine(|m| m.move_to_kif(*input).to_owned()),
            Choice::Text(text) => text.clone(),
        }
    }
}
