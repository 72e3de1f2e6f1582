//! The propnet engine of rtGDL: the compiled circuit of a game's circuit
//! form ([`crate::circuit`]) and the simulator that keeps lifetimes and time
//! arguments beside its base bits.
//!
//! The state is the circuit's base bits and, beside them, the lifetime of
//! every base whose source is finite and the time argument of every base
//! whose argument is carried ([`Slots`]). A base is a pair (source, fact):
//! its source is `infinity`, a constant, "copy the lowered lifetime of fact
//! G" or "the time argument held by the current fact with key K"; a time
//! argument in the fact (the chess clock's `(timer white 2.25)`) is a
//! constant or carried the same two ways. Each ground `next` with a source is
//! its own base, so the circuit computes the condition of every source and
//! the simulator only gives each new base its values. An update lowers the
//! finite lifetimes by Δt (μ), clears the bases that expire and sets their
//! `rt:expired` bases (which the circuit reads as `expired`), evaluates the
//! circuit with the moves that came (a partial joint move: the inputs of the
//! roles that moved), then gives each next base the lifetime and time
//! argument of its sources. A fact with several finite lifetimes copied into
//! one base, or a key with several carried time arguments read at once, is
//! an error at that update (the set semantics allows it, a base holds one
//! value).
//!
//! Since the simulator sets and clears bases the circuit's own transition
//! does not, the circuit is optimized only by passes exact for every state
//! and input ([`OptimizeConfig::exact`]): none relies on reachable states or
//! one move per role. This departs from the GDL pipeline's `load`, which also
//! requires every role to have a legal move initially: in rtGDL a role may
//! wait for an event, so [`propnet::compile`] is used.

use crate::circuit::circuit_form;
use crate::error::RtError;
use crate::syntax::{COPY_SYMBOL, EXPIRED_SYMBOL, HELD_SYMBOL, LIFETIME_SYMBOL, SLOT_SYMBOL};
use crate::time::{Lifetime, Time};
use ggpnet_kif::{parse_term, rule_to_string, term_to_string, Description, SymbolId, SymbolTable, Term};
use ggpnet_propnet::{self as propnet, LoadConfig, LoadError, Loaded, OptimizeConfig, StateMachine};
use std::collections::HashMap;
use std::fmt;

/// A value the simulator gives a base from the state before the update.
#[derive(Clone, Copy, Debug)]
enum Carried {
    /// `(rt:copy G)`: the lowered lifetime of fact G (its number).
    LifetimeOf(usize),
    /// `(rt:held K)`: the time argument of the current fact whose key is K (its number).
    HeldBy(usize),
}

/// Where the lifetime of a base of the circuit form comes from.
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
pub(crate) struct Slots {
    lifetimes: Vec<u64>,
    arguments: Vec<u64>,
}

impl Slots {
    /// No number for any of `bases` bases.
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
    numbers: HashMap<String, usize>,
    texts: Vec<String>,
}

impl Numbering {
    /// The number of `term`, a new one the first time it is seen.
    fn number(&mut self, term: &Term, symbols: &SymbolTable) -> usize {
        let text = term_to_string(term, symbols);
        *self.numbers.entry(text.clone()).or_insert_with(|| {
            self.texts.push(text);
            self.texts.len() - 1
        })
    }
}

/// The symbols of the circuit form that the simulator reads.
struct FormSymbols {
    lifetime: SymbolId,
    expired: SymbolId,
    copy: SymbolId,
    held: SymbolId,
    slot: SymbolId,
}

/// The compiled circuit of an rtGDL game and what each base means.
pub(crate) struct Net {
    /// The compiled circuit form.
    pub(crate) loaded: Loaded,
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
    pub(crate) initial: Slots,
}

impl fmt::Debug for Net {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Net({} bases)", self.bases.len())
    }
}

/// The text of a fact whose key is `key`, `value` at its time argument.
fn fill(key: &str, value: impl fmt::Display) -> String {
    let slot = format!(" {SLOT_SYMBOL}");
    let at = key
        .match_indices(&slot)
        .map(|(at, _)| at)
        .find(|&at| matches!(key.as_bytes().get(at + slot.len()), Some(b' ' | b')')))
        .expect("a key holds its slot");
    format!("{} {value}{}", &key[..at], &key[at + slot.len()..])
}

impl Net {
    /// Compiles the circuit form of `description` ([`circuit_form`]), every
    /// pass keeping the value of each output for any state and moves (the
    /// simulator sets bases the circuit's transition does not: `rt:expired`,
    /// and clears expired ones).
    pub(crate) fn compile(
        description: &Description,
        ground: &ggpnet_grounder::Config,
    ) -> Result<Net, RtError> {
        let form = circuit_form(description).map_err(RtError::OutsideFragment)?;
        // One rule per line, so that an error's line names the rule it comes from.
        let symbols = &form.description.symbols;
        let text: String = form
            .description
            .rules
            .iter()
            .map(|r| rule_to_string(r, symbols) + "\n")
            .collect();
        let config = LoadConfig::new()
            .optimize(OptimizeConfig::exact())
            .ground(ground.clone());
        let loaded = propnet::compile(&text, &config).map_err(|error| {
            let line = match &error {
                LoadError::Gdl(g) => g.span.map(|s| s.line as usize),
                _ => None,
            };
            let origin = line.and_then(|l| form.origins.get(l.checked_sub(1)?).copied().flatten());
            let rule = origin.map(|o| &description.rules[o]);
            RtError::Propnet {
                rule: rule.map(|r| (r.span, rule_to_string(r, &description.symbols))),
                error,
            }
        })?;
        Net::read(loaded)
    }

    /// What each base of the compiled circuit form `loaded` means, and the
    /// numbers beside its initial bits.
    fn read(loaded: Loaded) -> Result<Net, RtError> {
        let mut symbols = SymbolTable::new();
        let marks = FormSymbols {
            lifetime: symbols.intern(LIFETIME_SYMBOL),
            expired: symbols.intern(EXPIRED_SYMBOL),
            copy: symbols.intern(COPY_SYMBOL),
            held: symbols.intern(HELD_SYMBOL),
            slot: symbols.intern(SLOT_SYMBOL),
        };
        let mut numbering = Numbering::default();
        let mut bases = Vec::new();
        for text in loaded.game.facts() {
            let term = parse_term(text, &mut symbols).map_err(RtError::Parse)?;
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
        symbols: &SymbolTable,
        numbering: &mut Numbering,
    ) -> Result<Base, RtError> {
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
        let refused = |reason: String| RtError::InvalidLifetime {
            fact: term_to_string(fact, symbols),
            lifetime: term_to_string(source, symbols),
            reason,
        };
        let source = match (source, carried(source, numbering)) {
            (_, Some(c)) => Source::Carried(c),
            (Term::Atom(a), None) => match Lifetime::parse(symbols.name(*a)) {
                Ok(Lifetime::Infinity) => Source::Infinite,
                Ok(Lifetime::Finite(t)) => Source::Constant(t),
                Err(reason) => return Err(refused(reason)),
            },
            _ => return Err(refused("a compound term is not a lifetime".into())),
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
    pub(crate) fn pairs(&self, bits: &propnet::State, slots: &Slots) -> Vec<(Lifetime, String)> {
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
    pub(crate) fn next_expiry(&self, bits: &propnet::State, slots: &Slots) -> Option<Time> {
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
    pub(crate) fn update(
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
        if let [t] = found[..] {
            return Ok(t);
        }
        let found: Vec<Time> = found
            .iter()
            .map(|&t| Time::from_ticks(t).expect("a stored time"))
            .collect();
        let fact = self.shown_fact(to);
        Err(match carried {
            Carried::LifetimeOf(g) => RtError::SeveralLifetimes {
                fact,
                source: self.facts[g].clone(),
                lifetimes: found,
            },
            Carried::HeldBy(k) => RtError::SeveralArguments {
                fact,
                key: fill(&self.facts[k], "_"),
                values: found,
            },
        })
    }
}
