//! Real-time GDL (rtGDL): timed states, the event-driven update, and random
//! timed playouts.
//!
//! An rtGDL state is a set of (lifetime, fact) pairs ([`TimedState`]); it
//! stays as it is until an event: a move arriving, or the earliest expiry
//! t_u ([`RtGame::next_expiry`]). [`RtGame::update`] is the spec's
//! u(Δt, M, S) with its input validated: Δt > 0 and at most t_u, one
//! optional move per role, every move legal, and an event at Δt (a move, or
//! t_u itself).
//!
//! A random timed playout ([`RtGame::playout`]) simulates the execution model
//! of the spec's section 4: each role with legal moves draws one and a delay
//! from a seeded [`TimeModel`]; the earliest event among the pending moves and
//! the next expiry happens, with every move due at that time in the same
//! update. A pending move drawn before an update may be illegal when it
//! arrives: as in section 4 it is ignored (no update for it) and its role
//! draws again. A playout ends in a terminal state, at the event limit, or
//! when nothing can happen any more (no role has a legal move and every
//! lifetime is infinite).
//!
//! Two engines run a game behind the same [`RtGame`] interface:
//!
//! - the propnet ([`RtEngine::Propnet`]) compiles the circuit form of the
//!   game (`ggpnet_kif::rtgdl::circuit_form`): the state is the circuit's
//!   base bits and, beside them, the lifetime of every base whose source is
//!   finite and the time argument of every base whose argument is carried
//!   (`Slots`). A base is a pair (source, fact): its source is `infinity`,
//!   a constant, "copy the lowered lifetime of fact G" or "the time argument
//!   held by the current fact with key K"; a time argument in the fact (the
//!   chess clock's `(timer white 2.25)`) is a constant or carried the same two
//!   ways. Each ground `next` with a source is its own base, so the circuit
//!   computes the condition of every source and the simulator only gives each
//!   new base its values. An update lowers the finite lifetimes by Δt (μ),
//!   clears the bases that expire and sets their `rt:expired` bases (which
//!   the circuit reads as `expired`), evaluates the circuit with the moves
//!   that came (a partial joint move: the inputs of the roles that moved),
//!   then gives each next base the lifetime and time argument of its sources. A fact with several
//!   finite lifetimes copied into one base, or a key with several carried time
//!   arguments read at once, is an error at that update (the set semantics
//!   allows it, a base holds one value). Since the simulator sets and clears
//!   bases the circuit's own transition does not, the circuit is optimized
//!   only by passes exact for every state and input
//!   ([`propnet::OptimizeConfig::exact`]): none relies on reachable states or
//!   one move per role. This departs from the GDL pipeline's `load`, which
//!   also requires every role to have a legal move initially: in rtGDL a role
//!   may wait for an event, so [`propnet::compile`] is used.
//! - the interpreter ([`RtEngine::Interpreter`]) is the oracle
//!   ([`ggpnet_reference::RtReference`]), for every valid game.
//!
//! [`RtEngine::Auto`] (the default) takes the propnet, or the interpreter
//! when the game is outside the compiled fragment, with the rule and reason
//! ([`RtGame::fallback_reason`]). Times are exact ([`Time`], millionths of a
//! lifetime unit); floating point appears only where the time model draws a
//! delay, which is then rounded to a tick.

use crate::playouts::{Budget, MAX_THREADS};
use crate::propnet::random::Stream;
use crate::propnet::{self, LoadConfig, Loaded, StateMachine};
use ggpnet_kif::rtgdl::{Lifetime, Time, TICKS_PER_UNIT};
use ggpnet_kif::Term;
use ggpnet_reference::{RtReference, RtState};
use std::fmt;
use std::str::FromStr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// A refused rtGDL game or request, with the reason (and line:col of the
/// rule where one is to blame).
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct RtError {
    message: String,
}

impl RtError {
    fn new(message: impl Into<String>) -> RtError {
        RtError {
            message: message.into(),
        }
    }

    /// What was refused and why.
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for RtError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.message.starts_with("error") {
            true => f.write_str(&self.message),
            false => write!(f, "error: {}", self.message),
        }
    }
}

impl std::error::Error for RtError {}

impl From<ggpnet_reference::ReferenceError> for RtError {
    fn from(e: ggpnet_reference::ReferenceError) -> RtError {
        RtError::new(e.to_string())
    }
}

/// Numbers rtGDL games in the order they are made.
static NEXT_GAME: AtomicU64 = AtomicU64::new(1);

/// A timed state: every (lifetime, fact) pair that holds ([`RtGame::pairs`]
/// lists them). It belongs to the [`RtGame`] that made it.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub struct TimedState {
    game: u64,
    repr: Repr,
}

#[derive(Clone, PartialEq, Eq, Hash, Debug)]
enum Repr {
    /// The interpreter's set of pairs.
    Facts(RtState),
    /// The propnet's base bits, and beside them their lifetimes and time arguments.
    Bits(propnet::State, Slots),
}

/// A move as the engine holds it: the propnet's input, the interpreter's text.
#[derive(Clone, PartialEq, Eq, Debug)]
enum Choice {
    Input(propnet::Move),
    Text(String),
}

/// Which engine runs an rtGDL game.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub enum RtEngine {
    /// The propnet, or the interpreter when the game is outside the fragment
    /// the propnet compiles (the reason is kept, [`RtGame::fallback_reason`]).
    #[default]
    Auto,
    /// The propnet only: a game outside its fragment is an error.
    Propnet,
    /// The interpreter (the oracle).
    Interpreter,
}

/// A value the simulator gives a base from the state before the update.
#[derive(Clone, Copy, Debug)]
enum Carried {
    /// `(rt:copy G)`: the lowered lifetime of fact G (its number).
    LifetimeOf(usize),
    /// `(rt:held K)`: the time argument of the current fact whose key is K (its number).
    HeldBy(usize),
}

/// Where the lifetime of a base of the circuit form comes from
/// (`ggpnet_kif::rtgdl::circuit_form`).
#[derive(Clone, Copy, Debug)]
enum Source {
    /// `(rt:lifetime infinity F)`.
    Infinite,
    /// `(rt:lifetime c F)`: the constant c.
    Constant(Time),
    /// `(rt:lifetime (rt:copy G) F)` or `(rt:lifetime (rt:held K) F)`.
    Carried(Carried),
    /// `(rt:expired F)`: set by the simulator for one update, never part of a state.
    Expired,
}

/// What a base of the circuit form means.
#[derive(Clone, Copy, Debug)]
struct Base {
    source: Source,
    /// The number of its fact, as the circuit form writes it.
    fact: usize,
    /// Where its time argument comes from and the number of its key, when
    /// the argument is not a constant.
    argument: Option<(Carried, usize)>,
}

/// The numbers beside the base bits of a state: per base, its lifetime in
/// ticks (for a set base with a finite source) and its time argument in
/// ticks (for a set base whose argument is carried); 0 elsewhere.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
struct Slots {
    lifetimes: Vec<u64>,
    arguments: Vec<u64>,
}

impl Slots {
    fn new(bases: usize) -> Slots {
        Slots {
            lifetimes: vec![0; bases],
            arguments: vec![0; bases],
        }
    }
}

/// Facts and keys of the circuit form, numbered by their canonical KIF.
#[derive(Default)]
struct Numbering {
    numbers: rustc_hash::FxHashMap<String, usize>,
    texts: Vec<String>,
}

impl Numbering {
    fn number(&mut self, term: &Term, symbols: &ggpnet_kif::SymbolTable) -> usize {
        let text = ggpnet_kif::term_to_string(term, symbols);
        *self.numbers.entry(text.clone()).or_insert_with(|| {
            self.texts.push(text);
            self.texts.len() - 1
        })
    }
}

/// The symbols of the circuit form that the simulator reads.
struct FormSymbols {
    lifetime: ggpnet_kif::SymbolId,
    expired: ggpnet_kif::SymbolId,
    copy: ggpnet_kif::SymbolId,
    held: ggpnet_kif::SymbolId,
    slot: ggpnet_kif::SymbolId,
}

/// The compiled circuit of an rtGDL game and what each base means.
struct Net {
    loaded: Loaded,
    bases: Vec<Base>,
    /// The facts and keys, canonical KIF, by number.
    facts: Vec<String>,
    /// Per fact: its bases with a finite source.
    finite: Vec<Vec<usize>>,
    /// Per key: the bases with that key and a carried time argument.
    holders: Vec<Vec<usize>>,
    /// Per fact: its `rt:expired` base, if the circuit has one.
    expired: Vec<Option<usize>>,
    /// The numbers beside the initial bits.
    initial: Slots,
}

impl fmt::Debug for Net {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Net({} bases)", self.bases.len())
    }
}

/// The text of a fact whose key is `key`, `value` at its time argument.
fn fill(key: &str, value: impl fmt::Display) -> String {
    let slot = format!(" {}", ggpnet_kif::rtgdl::SLOT_SYMBOL);
    let at = key
        .match_indices(&slot)
        .map(|(at, _)| at)
        .find(|&at| matches!(key.as_bytes().get(at + slot.len()), Some(b' ' | b')')))
        .expect("a key holds its slot");
    format!("{} {value}{}", &key[..at], &key[at + slot.len()..])
}

impl Net {
    /// Compiles the circuit form of `description` (see
    /// `ggpnet_kif::rtgdl::circuit_form`), every pass keeping the value of
    /// each output for any state and moves (the simulator sets bases the
    /// circuit's transition does not: `rt:expired`, and clears expired ones).
    fn compile(
        description: &ggpnet_kif::Description,
        ground: &ggpnet_grounder::Config,
    ) -> Result<Net, String> {
        let form = ggpnet_kif::rtgdl::circuit_form(description).map_err(|e| e.to_string())?;
        // One rule per line, so that an error's line names the rule it comes from.
        let symbols = &form.description.symbols;
        let text: String = form
            .description
            .rules
            .iter()
            .map(|r| ggpnet_kif::rule_to_string(r, symbols) + "\n")
            .collect();
        let config = LoadConfig::new()
            .optimize(propnet::OptimizeConfig::exact())
            .ground(ground.clone());
        let loaded = propnet::compile(&text, &config).map_err(|e| {
            let line = match &e {
                propnet::LoadError::Gdl(g) => g.span.map(|s| s.line as usize),
                _ => None,
            };
            let origin = line.and_then(|l| form.origins.get(l.checked_sub(1)?).copied().flatten());
            match origin.map(|o| &description.rules[o]) {
                Some(rule) => format!(
                    "error at {}: the propnet: {}\n  in rule {}",
                    rule.span,
                    e.to_string().lines().next().unwrap_or_default(),
                    ggpnet_kif::rule_to_string(rule, &description.symbols)
                ),
                None => format!("the propnet: {e}"),
            }
        })?;
        let mut symbols = ggpnet_kif::SymbolTable::new();
        let marks = FormSymbols {
            lifetime: symbols.intern(ggpnet_kif::rtgdl::LIFETIME_SYMBOL),
            expired: symbols.intern(ggpnet_kif::rtgdl::EXPIRED_SYMBOL),
            copy: symbols.intern(ggpnet_kif::rtgdl::COPY_SYMBOL),
            held: symbols.intern(ggpnet_kif::rtgdl::HELD_SYMBOL),
            slot: symbols.intern(ggpnet_kif::rtgdl::SLOT_SYMBOL),
        };
        let mut numbering = Numbering::default();
        let mut bases = Vec::new();
        for text in loaded.game.facts() {
            let term = ggpnet_kif::parse_term(text, &mut symbols).map_err(|e| e.to_string())?;
            bases.push(Net::base(&term, &marks, &symbols, &mut numbering)?);
        }
        let facts = numbering.texts;
        let mut finite = vec![Vec::new(); facts.len()];
        let mut holders = vec![Vec::new(); facts.len()];
        let mut expired_bases = vec![None; facts.len()];
        for (b, base) in bases.iter().enumerate() {
            match base.source {
                Source::Constant(_) | Source::Carried(_) => finite[base.fact].push(b),
                Source::Expired => expired_bases[base.fact] = Some(b),
                Source::Infinite => {}
            }
            if let Some((_, key)) = base.argument {
                holders[key].push(b);
            }
        }
        let mut initial = Slots::new(bases.len());
        for b in loaded.game.initial().0.iter_ones() {
            match (bases[b].source, bases[b].argument) {
                (Source::Constant(t), None) => initial.lifetimes[b] = t.ticks(),
                (Source::Infinite, None) => {}
                _ => unreachable!("init heads are constants"),
            }
        }
        Ok(Net {
            loaded,
            bases,
            facts,
            finite,
            holders,
            expired: expired_bases,
            initial,
        })
    }

    /// What the base `term` of the circuit form means.
    fn base(
        term: &Term,
        marks: &FormSymbols,
        symbols: &ggpnet_kif::SymbolTable,
        numbering: &mut Numbering,
    ) -> Result<Base, String> {
        let carried = |t: &Term, numbering: &mut Numbering| match t {
            Term::Compound(c, of) if *c == marks.copy => {
                Some(Carried::LifetimeOf(numbering.number(&of[0], symbols)))
            }
            Term::Compound(c, of) if *c == marks.held => {
                Some(Carried::HeldBy(numbering.number(&of[0], symbols)))
            }
            _ => None,
        };
        let (source, fact) = match term {
            Term::Compound(f, args) if *f == marks.expired => {
                let fact = numbering.number(&args[0], symbols);
                return Ok(Base {
                    source: Source::Expired,
                    fact,
                    argument: None,
                });
            }
            Term::Compound(f, args) if *f == marks.lifetime => (&args[0], &args[1]),
            _ => unreachable!("every base of the circuit form is a lifetime pair or an expiry"),
        };
        let refused = |why: &str| {
            format!(
                "fact {} derived with lifetime {}: {why}",
                ggpnet_kif::term_to_string(fact, symbols),
                ggpnet_kif::term_to_string(source, symbols)
            )
        };
        let source = match (source, carried(source, numbering)) {
            (_, Some(c)) => Source::Carried(c),
            (Term::Atom(a), None) => match Lifetime::parse(symbols.name(*a)) {
                Ok(Lifetime::Infinity) => Source::Infinite,
                Ok(Lifetime::Finite(t)) => Source::Constant(t),
                Err(reason) => return Err(refused(&reason)),
            },
            _ => return Err(refused("a compound term is not a lifetime")),
        };
        let mut argument = None;
        if let Term::Compound(f, args) = fact {
            for (position, arg) in args.iter().enumerate() {
                if let Some(c) = carried(arg, numbering) {
                    let mut key = args.clone();
                    key[position] = Term::Atom(marks.slot);
                    argument = Some((c, numbering.number(&Term::Compound(*f, key), symbols)));
                }
            }
        }
        Ok(Base {
            source,
            fact: numbering.number(fact, symbols),
            argument,
        })
    }

    /// The pairs of a state of bits and slots, sorted by fact then lifetime.
    fn pairs(&self, bits: &propnet::State, slots: &Slots) -> Vec<(Lifetime, String)> {
        let ticks = |t: u64| Time::from_ticks(t).expect("a stored time");
        let mut pairs: Vec<(Lifetime, String)> = bits
            .0
            .iter_ones()
            .filter_map(|b| {
                let base = self.bases[b];
                let lifetime = match base.source {
                    Source::Infinite => Lifetime::Infinity,
                    Source::Constant(_) | Source::Carried(_) => Lifetime::Finite(ticks(slots.lifetimes[b])),
                    Source::Expired => return None,
                };
                let fact = match base.argument {
                    Some((_, key)) => fill(&self.facts[key], ticks(slots.arguments[b])),
                    None => self.facts[base.fact].clone(),
                };
                Some((lifetime, fact))
            })
            .collect();
        pairs.sort_unstable_by(|a, b| (&a.1, a.0).cmp(&(&b.1, b.0)));
        pairs.dedup();
        pairs
    }

    /// t_u of a state: its smallest finite lifetime.
    fn next_expiry(&self, bits: &propnet::State, slots: &Slots) -> Option<Time> {
        let finite = bits
            .0
            .iter_ones()
            .filter(|&b| matches!(self.bases[b].source, Source::Constant(_) | Source::Carried(_)));
        finite
            .map(|b| slots.lifetimes[b])
            .min()
            .map(|t| Time::from_ticks(t).expect("a stored lifetime"))
    }

    /// The update of a state whose input was checked: μ and the expired
    /// bases set beside the bits, the circuit evaluated with the moves, and
    /// each next base given the lifetime and time argument of its sources.
    fn update(
        &self,
        machine: &mut StateMachine,
        bits: &propnet::State,
        slots: &Slots,
        elapsed: Time,
        joint: &[propnet::Move],
    ) -> Result<(propnet::State, Slots), RtError> {
        let mut now = bits.clone();
        let mut lowered = Slots {
            lifetimes: vec![0; slots.lifetimes.len()],
            arguments: slots.arguments.clone(),
        };
        for b in bits.0.iter_ones() {
            let base = self.bases[b];
            if matches!(base.source, Source::Constant(_) | Source::Carried(_)) {
                match slots.lifetimes[b].checked_sub(elapsed.ticks()).filter(|&t| t > 0) {
                    Some(left) => lowered.lifetimes[b] = left,
                    None => {
                        now.0.set(b, false);
                        if let Some(e) = self.expired[base.fact] {
                            now.0.set(e, true);
                        }
                    }
                }
            }
        }
        machine.is_terminal(&now); // loads `now` into the evaluator
        let next = machine.next_unchecked(joint);
        let mut next_slots = Slots::new(slots.lifetimes.len());
        let mut next_bits = next.clone();
        for b in next.0.iter_ones() {
            let base = self.bases[b];
            match base.source {
                Source::Infinite => {}
                Source::Constant(t) => next_slots.lifetimes[b] = t.ticks(),
                Source::Expired => next_bits.0.set(b, false),
                Source::Carried(c) => next_slots.lifetimes[b] = self.carry(c, &now, &lowered, base)?,
            }
            if let Some((c, _)) = base.argument {
                next_slots.arguments[b] = self.carry(c, &now, &lowered, base)?;
            }
        }
        Ok((next_bits, next_slots))
    }

    /// A base's fact for a message: `_` at a carried time argument.
    fn shown_fact(&self, base: Base) -> String {
        match base.argument {
            Some((_, key)) => fill(&self.facts[key], "_"),
            None => self.facts[base.fact].clone(),
        }
    }

    /// The value `carried` takes for the next base `to` from the current bits
    /// `now` and their lowered slots; an error unless exactly one value.
    fn carry(
        &self,
        carried: Carried,
        now: &propnet::State,
        lowered: &Slots,
        to: Base,
    ) -> Result<u64, RtError> {
        let (from, values) = match carried {
            Carried::LifetimeOf(g) => (&self.finite[g], &lowered.lifetimes),
            Carried::HeldBy(k) => (&self.holders[k], &lowered.arguments),
        };
        let mut found: Vec<u64> = from.iter().filter(|&&g| now.0[g]).map(|&g| values[g]).collect();
        found.sort_unstable();
        found.dedup();
        match found[..] {
            [t] => Ok(t),
            _ => {
                let shown: Vec<String> = found
                    .iter()
                    .map(|&t| Time::from_ticks(t).expect("a stored time").to_string())
                    .collect();
                let shown = shown.join(", ");
                let (fact, n) = (self.shown_fact(to), found.len());
                Err(RtError::new(match carried {
                    Carried::LifetimeOf(g) => format!(
                        "fact {fact} would copy the lifetime of {}, which has {n} finite lifetimes ({shown}): the propnet keeps one lifetime per source (the interpreter runs such games)",
                        self.facts[g]
                    ),
                    Carried::HeldBy(k) => format!(
                        "fact {fact} would take the time argument of {}, which has {n} values ({shown}): the propnet keeps one value per key (the interpreter runs such games)",
                        fill(&self.facts[k], "_")
                    ),
                }))
            }
        }
    }
}

/// The engine behind an rtGDL game.
#[derive(Debug)]
enum Backend {
    Interpreter(RtReference),
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
    ggpnet_kif::parse(text).is_ok_and(|d| ggpnet_kif::rtgdl::is_rtgdl(&d))
}

impl RtGame {
    /// [`RtGame::load_with`] on [`RtEngine::Auto`].
    pub fn load(text: &str) -> Result<RtGame, RtError> {
        RtGame::load_with(text, RtEngine::Auto)
    }

    /// Parses and checks an rtGDL description: the rtGDL checks
    /// (`ggpnet_kif::rtgdl::check`), then GDL's checks of its embedding into
    /// GDL (keyword restrictions with `expired` read like `true`, safety,
    /// stratification, recursion restriction); each error names the rule's
    /// line:col. Then compiles it on `engine`.
    pub fn load_with(text: &str, engine: RtEngine) -> Result<RtGame, RtError> {
        RtGame::load_limited(text, engine, &ggpnet_grounder::Config::default())
    }

    /// [`RtGame::load_with`] with these grounding limits for the propnet
    /// (past one, [`RtEngine::Auto`] falls back to the interpreter).
    pub fn load_limited(
        text: &str,
        engine: RtEngine,
        ground: &ggpnet_grounder::Config,
    ) -> Result<RtGame, RtError> {
        let description = ggpnet_kif::parse(text).map_err(|e| RtError::new(e.to_string()))?;
        let embedded = ggpnet_kif::rtgdl::embed(&description).map_err(|e| RtError::new(e.to_string()))?;
        let mut gdl = embedded.description.clone();
        let in_rtgdl = |e: ggpnet_grounder::GdlError| {
            // Name the rule as written, not its embedding.
            let original = e
                .span
                .and_then(|span| description.rules.iter().find(|r| r.span == span));
            let rule = original.map(|r| ggpnet_kif::rule_to_string(r, &description.symbols));
            let mut message = e.message.clone();
            if message.contains("'true'") {
                message.push_str(" (rtGDL's 'expired' counts as 'true')");
            }
            RtError::new(ggpnet_grounder::GdlError { rule, message, ..e }.to_string())
        };
        ggpnet_grounder::prepare(&mut gdl).map_err(in_rtgdl)?;
        ggpnet_grounder::check_playable(&embedded.description).map_err(in_rtgdl)?;
        let interpreter = || RtReference::new(&description).map(Backend::Interpreter);
        let (backend, fallback) = match engine {
            RtEngine::Interpreter => (interpreter()?, None),
            RtEngine::Propnet => (
                Backend::Propnet(Box::new(
                    Net::compile(&description, ground).map_err(RtError::new)?,
                )),
                None,
            ),
            RtEngine::Auto => match Net::compile(&description, ground) {
                Ok(net) => (Backend::Propnet(Box::new(net)), None),
                Err(why) => (interpreter()?, Some(why)),
            },
        };
        let id = NEXT_GAME.fetch_add(1, Ordering::Relaxed);
        Ok(RtGame::with_backend(id, Arc::new(backend), fallback))
    }

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
    pub fn engine(&self) -> crate::Engine {
        match &*self.backend {
            Backend::Interpreter(_) => crate::Engine::Interpreter,
            Backend::Propnet(_) => crate::Engine::Propnet,
        }
    }

    /// Why the interpreter runs the game although the propnet was tried: the
    /// rule outside the compiled fragment and why (`None` otherwise).
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
    fn own<'s>(&self, state: &'s TimedState) -> Result<&'s Repr, RtError> {
        if state.game != self.id {
            return Err(RtError::new("the state belongs to another game"));
        }
        Ok(&state.repr)
    }

    /// The number `role` checked against the roles.
    fn role(&self, role: usize) -> Result<usize, RtError> {
        if role >= self.roles.len() {
            return Err(RtError::new(format!(
                "no role number {role}: the game has {} role(s)",
                self.roles.len()
            )));
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
            Repr::Facts(s) => self.reference().legal_moves(s, role),
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
            Repr::Facts(s) => self.reference().is_terminal(s),
            Repr::Bits(bits, _) => self.on_machine(|m| m.is_terminal(bits)),
        })
    }

    /// Per role, every integer goal value derivable in `state`, sorted.
    pub fn goal_values(&self, state: &TimedState) -> Result<Vec<Vec<i64>>, RtError> {
        Ok(match self.own(state)? {
            Repr::Facts(s) => self.reference().goals(s),
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
        if moves.len() != self.roles.len() {
            return Err(RtError::new(format!(
                "a joint move needs one move per role: expected {}, found {}",
                self.roles.len(),
                moves.len()
            )));
        }
        if elapsed.is_zero() {
            return Err(RtError::new("invalid update: the elapsed time must be positive"));
        }
        let expiry = self.next_expiry(state)?;
        if let Some(t) = expiry.filter(|&t| elapsed > t) {
            return Err(RtError::new(format!(
                "invalid update: {elapsed} is past the next expiry at {t}"
            )));
        }
        if moves.iter().all(Option::is_none) && expiry != Some(elapsed) {
            return Err(RtError::new(format!(
                "invalid update: no move and no fact expires at {elapsed}: no event"
            )));
        }
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
                    let illegal = || {
                        RtError::new(format!(
                            "move {chosen} is not legal for role {}",
                            self.roles[role]
                        ))
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
    fn apply(
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
    fn choices(&self, state: &TimedState, role: usize, out: &mut Vec<Choice>) {
        out.clear();
        match &state.repr {
            Repr::Facts(s) => out.extend(
                self.reference()
                    .legal_moves(s, role)
                    .into_iter()
                    .map(Choice::Text),
            ),
            Repr::Bits(bits, _) => self.on_machine(|m| {
                out.extend(m.legal_moves(bits, role).into_iter().map(Choice::Input));
            }),
        }
    }

    /// The canonical text of a move.
    fn choice_text(&self, choice: &Choice) -> String {
        match choice {
            Choice::Input(input) => self.on_machine(|m| m.move_to_kif(*input).to_owned()),
            Choice::Text(text) => text.clone(),
        }
    }
}

/// How long a simulated player takes to send its move, in lifetime units.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum TimeModel {
    /// Uniform in (0, max], to the tick (`uniform:MAX`).
    Uniform(Time),
    /// Exponential with this mean, rounded to the tick, at least one tick (`exp:MEAN`).
    Exponential(Time),
    /// One tick (a millionth of a unit): the move comes at once (`immediate`).
    Immediate,
}

/// The default time model, `uniform:1`.
pub const DEFAULT_TIME_MODEL: &str = "uniform:1";

/// The largest MAX or MEAN of a time model, in units.
pub const MAX_MODEL_UNITS: u64 = 1_000_000;

impl FromStr for TimeModel {
    type Err = String;

    /// Reads `uniform:MAX`, `exp:MEAN` (MAX and MEAN positive decimal numbers
    /// of at most [`MAX_MODEL_UNITS`] units, six fraction digits) or `immediate`.
    fn from_str(text: &str) -> Result<TimeModel, String> {
        let usage = "a time model is uniform:MAX, exp:MEAN or immediate";
        if text == "immediate" {
            return Ok(TimeModel::Immediate);
        }
        let (kind, value) = text.split_once(':').ok_or_else(|| format!("'{text}': {usage}"))?;
        let time = Time::parse(value).map_err(|e| format!("'{text}': {e}"))?;
        if time.is_zero() || time > Time::from_ticks(MAX_MODEL_UNITS * TICKS_PER_UNIT).expect("in range") {
            return Err(format!(
                "'{text}': the value must be more than 0 and at most {MAX_MODEL_UNITS}"
            ));
        }
        match kind {
            "uniform" => Ok(TimeModel::Uniform(time)),
            "exp" => Ok(TimeModel::Exponential(time)),
            _ => Err(format!("'{text}': {usage}")),
        }
    }
}

impl fmt::Display for TimeModel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TimeModel::Uniform(t) => write!(f, "uniform:{t}"),
            TimeModel::Exponential(t) => write!(f, "exp:{t}"),
            TimeModel::Immediate => f.write_str("immediate"),
        }
    }
}

impl TimeModel {
    /// A delay drawn from `rng`: positive, at most [`MAX_MODEL_UNITS`] times 64 units.
    pub fn delay(self, rng: &mut Stream) -> Time {
        let ticks = match self {
            TimeModel::Uniform(max) => 1 + rng.draw(max.ticks() as usize) as u64,
            TimeModel::Exponential(mean) => {
                // 53 random bits give u in [0, 1); -ln(1 - u) is at most 53 ln 2 < 37.
                let u = (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
                let ticks = -(mean.ticks() as f64) * (1.0 - u).ln();
                (ticks.round() as u64).max(1)
            }
            TimeModel::Immediate => 1,
        };
        Time::from_ticks(ticks).expect("at most 37 times the model's bounded mean")
    }
}

/// How a timed playout ended.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum TimedEnd {
    /// In a terminal state.
    Terminal,
    /// At the event limit, not terminal.
    EventLimit,
    /// Nothing can happen any more: no role has a legal move and every
    /// lifetime is infinite, in a state that is not terminal.
    Stalled,
}

/// What one timed playout did.
#[derive(Clone, Debug)]
pub struct TimedPlayout {
    /// How it ended.
    pub end: TimedEnd,
    /// Updates performed (moves arriving or facts expiring).
    pub events: u64,
    /// Moves that took part in an update.
    pub moves: u64,
    /// Moves that arrived when no longer legal, and were ignored.
    pub ignored_moves: u64,
    /// Game time from the start to the last event, in ticks.
    pub game_ticks: u128,
    /// The last state.
    pub state: TimedState,
    /// Per role, its goal in the last state when exactly one value is derivable.
    pub goals: Vec<Option<i64>>,
}

/// One step of a timed playout, for [`RtGame::playout_with`]'s observer.
#[derive(Clone, Debug)]
pub struct TimedEvent {
    /// Time since the previous update.
    pub elapsed: Time,
    /// The moves of the update, one per role.
    pub moves: Vec<Option<String>>,
    /// The state before the update.
    pub before: TimedState,
    /// The state after it.
    pub after: TimedState,
}

impl RtGame {
    /// A random timed playout from `state` with at most `max_events` updates.
    pub fn playout(
        &self,
        state: &TimedState,
        model: TimeModel,
        max_events: u64,
        rng: &mut Stream,
    ) -> Result<TimedPlayout, RtError> {
        self.playout_with(state, model, max_events, rng, |_| {})
    }

    /// [`RtGame::playout`], calling `observe` after each update.
    pub fn playout_with(
        &self,
        start: &TimedState,
        model: TimeModel,
        max_events: u64,
        rng: &mut Stream,
        mut observe: impl FnMut(&TimedEvent),
    ) -> Result<TimedPlayout, RtError> {
        self.run(start, model, max_events, rng, |before, elapsed, moves, after| {
            observe(&TimedEvent {
                elapsed,
                moves: moves
                    .iter()
                    .map(|m| m.as_ref().map(|c| self.choice_text(c)))
                    .collect(),
                before: before.clone(),
                after: after.clone(),
            })
        })
    }

    /// The playout loop: `observe` sees the state before each update, its
    /// time, moves, and the state after. Moves stay as the engine holds them.
    fn run(
        &self,
        start: &TimedState,
        model: TimeModel,
        max_events: u64,
        rng: &mut Stream,
        mut observe: impl FnMut(&TimedState, Time, &[Option<Choice>], &TimedState),
    ) -> Result<TimedPlayout, RtError> {
        self.own(start)?;
        let roles = self.roles.len();
        let mut state = start.clone();
        // Per role, its pending move and when it arrives (time since the last update).
        let mut pending: Vec<Option<(Time, Choice)>> = vec![None; roles];
        let mut legal = Vec::new();
        let mut since = Time::ZERO;
        let mut played = TimedPlayout {
            end: TimedEnd::Terminal,
            events: 0,
            moves: 0,
            ignored_moves: 0,
            game_ticks: 0,
            state: start.clone(),
            goals: Vec::new(),
        };
        let end = loop {
            if self.is_terminal(&state)? {
                break TimedEnd::Terminal;
            }
            if played.events >= max_events {
                break TimedEnd::EventLimit;
            }
            for (role, slot) in pending.iter_mut().enumerate() {
                if slot.is_none() {
                    self.choices(&state, role, &mut legal);
                    if !legal.is_empty() {
                        let chosen = legal[rng.draw(legal.len())].clone();
                        let at = since.checked_add(model.delay(rng)).expect("bounded delays");
                        *slot = Some((at, chosen));
                    }
                }
            }
            let expiry = self.next_expiry(&state)?;
            let first_move = pending.iter().flatten().map(|(at, _)| *at).min();
            let at = match (first_move, expiry) {
                (None, None) => break TimedEnd::Stalled,
                (Some(m), Some(e)) => m.min(e),
                (Some(t), None) | (None, Some(t)) => t,
            };
            let mut moves = vec![None; roles];
            for (role, slot) in pending.iter_mut().enumerate() {
                if slot.as_ref().is_some_and(|(due, _)| *due == at) {
                    let (_, chosen) = slot.take().expect("due");
                    self.choices(&state, role, &mut legal);
                    if legal.contains(&chosen) {
                        moves[role] = Some(chosen);
                    } else {
                        played.ignored_moves += 1;
                    }
                }
            }
            let moved = moves.iter().flatten().count() as u64;
            if moved == 0 && expiry != Some(at) {
                // Every move due was illegal: no update, the timer runs on.
                since = at;
                continue;
            }
            // Valid input: Δt = at > 0 (delays and lifetimes are positive), at
            // most t_u, an event at Δt, every move legal now.
            let after = self.apply(&state, at, &moves)?;
            for (due, _) in pending.iter_mut().flatten() {
                *due = due
                    .checked_sub(at)
                    .expect("pending moves are due after this event");
            }
            since = Time::ZERO;
            played.events += 1;
            played.moves += moved;
            played.game_ticks += u128::from(at.ticks());
            observe(&state, at, &moves, &after);
            state = after;
        };
        played.end = end;
        played.goals = self.goals(&state)?;
        played.state = state;
        Ok(played)
    }

    /// Random timed playouts from `from` until `budget` is spent, on
    /// `threads` threads (1 to [`MAX_THREADS`]), thread `i` drawing from
    /// stream `i` of `seed`: the same seed, playout budget and threads give
    /// the same totals.
    pub fn playouts(
        &self,
        from: &TimedState,
        model: TimeModel,
        max_events: u64,
        budget: Budget,
        threads: usize,
        seed: u64,
    ) -> Result<TimedReport, RtError> {
        self.own(from)?;
        if !(1..=MAX_THREADS).contains(&threads) {
            return Err(RtError::new(format!(
                "threads must be 1 to {MAX_THREADS}, not {threads}"
            )));
        }
        if let Budget::Seconds(s) = budget {
            if !(s.is_finite() && s > 0.0 && s <= 1e9) {
                return Err(RtError::new(format!(
                    "a time budget must be more than 0 and at most 1e9 seconds, not {s}"
                )));
            }
        }
        let start = Instant::now();
        let totals = std::thread::scope(|scope| {
            let workers: Vec<_> = (0..threads)
                .map(|thread| {
                    let game = self.clone();
                    let quota = match budget {
                        Budget::Playouts(n) => {
                            Some(n / threads as u64 + u64::from((thread as u64) < n % threads as u64))
                        }
                        Budget::Seconds(_) => None,
                    };
                    let deadline = match budget {
                        Budget::Seconds(s) => Some(start + Duration::from_secs_f64(s)),
                        Budget::Playouts(_) => None,
                    };
                    scope.spawn(move || {
                        let mut rng = Stream::new(seed, thread as u64);
                        let mut totals = TimedTotals::new(game.roles.len());
                        while quota.is_none_or(|q| totals.playouts < q)
                            && deadline.is_none_or(|d| Instant::now() < d)
                        {
                            let playout = game.playout(from, model, max_events, &mut rng)?;
                            totals.add(&playout);
                        }
                        Ok::<_, RtError>(totals)
                    })
                })
                .collect();
            let mut sum = TimedTotals::new(self.roles.len());
            for worker in workers {
                sum.merge(&worker.join().expect("a playout thread panicked")?);
            }
            Ok::<_, RtError>(sum)
        })?;
        Ok(TimedReport {
            threads,
            seconds: start.elapsed().as_secs_f64(),
            totals,
        })
    }
}

/// Sums over timed playouts.
#[derive(Clone, Debug, Default)]
pub struct TimedTotals {
    /// Playouts run.
    pub playouts: u64,
    /// Playouts that ended in a terminal state.
    pub terminal: u64,
    /// Playouts stopped at the event limit.
    pub at_event_limit: u64,
    /// Playouts where nothing could happen any more.
    pub stalled: u64,
    /// Updates performed.
    pub events: u64,
    /// Moves that took part in updates.
    pub moves: u64,
    /// Moves ignored as illegal when they arrived.
    pub ignored_moves: u64,
    /// Game time summed over playouts, in units.
    pub game_time: f64,
    /// Per role, the sum of its goals over the playouts that gave it one.
    pub goal_sums: Vec<f64>,
    /// Per role, the playouts that ended without one goal value for it.
    pub missing_goals: Vec<u64>,
}

impl TimedTotals {
    fn new(roles: usize) -> TimedTotals {
        TimedTotals {
            goal_sums: vec![0.0; roles],
            missing_goals: vec![0; roles],
            ..TimedTotals::default()
        }
    }

    fn add(&mut self, p: &TimedPlayout) {
        self.playouts += 1;
        match p.end {
            TimedEnd::Terminal => self.terminal += 1,
            TimedEnd::EventLimit => self.at_event_limit += 1,
            TimedEnd::Stalled => self.stalled += 1,
        }
        self.events += p.events;
        self.moves += p.moves;
        self.ignored_moves += p.ignored_moves;
        self.game_time += p.game_ticks as f64 / TICKS_PER_UNIT as f64;
        for (role, goal) in p.goals.iter().enumerate() {
            match goal {
                Some(g) => self.goal_sums[role] += *g as f64,
                None => self.missing_goals[role] += 1,
            }
        }
    }

    fn merge(&mut self, other: &TimedTotals) {
        self.playouts += other.playouts;
        self.terminal += other.terminal;
        self.at_event_limit += other.at_event_limit;
        self.stalled += other.stalled;
        self.events += other.events;
        self.moves += other.moves;
        self.ignored_moves += other.ignored_moves;
        self.game_time += other.game_time;
        for (a, b) in self.goal_sums.iter_mut().zip(&other.goal_sums) {
            *a += b;
        }
        for (a, b) in self.missing_goals.iter_mut().zip(&other.missing_goals) {
            *a += b;
        }
    }
}

/// What a run of timed playouts added up to.
#[derive(Clone, Debug)]
pub struct TimedReport {
    /// Threads used.
    pub threads: usize,
    /// Wall seconds spent.
    pub seconds: f64,
    /// The sums.
    pub totals: TimedTotals,
}

impl TimedReport {
    /// Updates per wall second.
    pub fn events_per_sec(&self) -> f64 {
        self.totals.events as f64 / self.seconds.max(1e-9)
    }

    /// Playouts per wall second.
    pub fn playouts_per_sec(&self) -> f64 {
        self.totals.playouts as f64 / self.seconds.max(1e-9)
    }

    /// Per role, its average goal over the playouts that gave it one.
    pub fn avg_goals(&self) -> Vec<Option<f64>> {
        let t = &self.totals;
        crate::propnet::driver::average_goals(&t.goal_sums, &t.missing_goals, t.playouts)
    }
}
