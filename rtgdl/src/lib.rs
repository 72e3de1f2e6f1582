//! Real-time GDL (rtGDL, Kowalski and Kisielewicz, `shared/specs/rtgdl.txt`):
//! the language in one crate. Its state facts carry lifetimes, `(init T F)`,
//! `(true T F)`, `(next T F)` with `T` a positive real or `infinity`, and
//! `(expired F)` holds in the update right after F's lifetime ran out.
//!
//! # Organisation
//!
//! The modules follow the language from text to play, each using only those
//! before it in this list:
//!
//! 1. `time`: exact times and lifetimes ([`Time`], [`Lifetime`]), fixed-point
//!    millionths of a unit, never floating point.
//! 2. [`syntax`]: which descriptions are rtGDL, the checks of the spec's
//!    section 2.1, warnings, the embedding into GDL on which GDL's checks
//!    and the interpreter run, and the symbols the embeddings reserve.
//! 3. [`circuit`]: the circuit form, the GDL whose lifetimes and time
//!    arguments are abstract so that the propnet grounds it to a finite
//!    circuit, for the fragment of rtGDL it covers.
//! 4. `error`: [`RtError`], the refusals of every module below, by kind.
//! 5. `interpreter`: [`RtReference`], the oracle of the spec's Definition 1
//!    for every valid game, on the reference interpreter of the embedding.
//! 6. `net`: the propnet engine, the compiled circuit form with a simulator
//!    keeping lifetimes and time arguments beside its base bits.
//! 7. `game`: [`RtGame`], either engine behind one interface ([`EngineChoice`]
//!    chooses), with timed states and the validated event-driven update.
//! 8. `playout`: random timed playouts, the execution model of the spec's
//!    section 4 with a [`TimeModel`] for the players' delays.
//!
//! Why one crate: the language used to be spread over the pipeline (its
//! reading in the KIF crate, its interpreter in the reference crate, its
//! engine in the facade); here it depends on those stages and nothing but
//! the facade (which re-exports it as `ggpnet::realtime`, where its match
//! play lives) and the command line depend on it. The interpreter is built
//! on the reference interpreter's public evaluation of rules on any facts
//! ([`ggpnet_reference::Reference::derive_next`]); the timed playouts take
//! the propnet driver's [`Budget`](ggpnet_propnet::driver::Budget) and
//! thread limit.
//!
//! ```
//! use ggpnet_rtgdl::{RtGame, Time};
//! let game = RtGame::load(
//!     "(role r) (init 1.0 (appear cat))
//!      (<= (next 3.0 (gone ?c)) (expired (appear ?c)))
//!      (<= (next ?t (gone ?c)) (true ?t (gone ?c)))
//!      (<= (legal r (catch ?c)) (true ?t (appear ?c)))
//!      (<= (next infinity caught) (does r (catch ?c)))
//!      (<= terminal (true infinity caught)) (goal r 100)",
//! )?;
//! let start = game.initial_state();
//! assert_eq!(game.next_expiry(&start)?, Some(Time::parse("1")?));
//! let caught = game.update(&start, Time::parse("0.5")?, &[Some("(catch cat)".into())])?;
//! assert!(game.is_terminal(&caught)?);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

#![forbid(unsafe_code)]
#![warn(missing_docs)]
#![cfg_attr(not(test), warn(clippy::too_many_lines))]

pub mod circuit;
mod error;
mod game;
mod interpreter;
mod net;
mod playout;
pub mod syntax;
mod time;

pub use error::RtError;
pub use game::{is_rtgdl, Engine, EngineChoice, RtGame, TimedState};
pub use interpreter::{RtReference, RtState};
pub use playout::{TimeModel, TimedEnd, TimedEvent, TimedPlayout, TimedReport, TimedTotals};
pub use playout::{DEFAULT_TIME_MODEL, MAX_MODEL_UNITS};
pub use syntax::RtgdlError;
pub use time::{Lifetime, Time, FRACTION_DIGITS, MAX_UNITS, TICKS_PER_UNIT};
