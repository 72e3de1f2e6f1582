//! How a run ends: the exit codes of every subcommand.
//!
//! | code | meaning |
//! | --- | --- |
//! | 0 | success (and agreement) |
//! | 1 | an invalid game, or a disagreement (replay, diff, corpus, bench perft; merge as the run it merges) |
//! | 2 | bad input: a usage error, an option out of range, an unreadable or malformed file (KIF that does not parse, a trace or circuit that cannot be read, shard files that do not make one complete run) |
//! | 3 | a limit reached: the game is too large to ground within the configured limits |
//!
//! A failure's code is the code of its [`Kind`] ([`Kind::code`] is the one
//! place codes are chosen), and the kind of a typed error of the library or the
//! system is what [`Classify`] says of it, so that a call site never picks a
//! code: it wraps the error ([`Failure::of`]), or says which kind of failure
//! it found itself ([`Failure::input`], [`Failure::invalid`]).
//!
//! Bad input never panics; a panic would be a bug, reported on one line (exit 101)
//! by the hook [`install_panic_hook`] sets, without a backtrace.

use std::process::ExitCode;

/// The kinds of failure, each with its exit code.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Kind {
    /// An invalid game: it fails the GDL checks, or cannot be played.
    Invalid,
    /// Bad input: usage, an option out of range, an unreadable or malformed file.
    Input,
    /// A limit reached: the game is too large for the configured limits.
    Limit,
}

impl Kind {
    /// Every kind.
    const ALL: [Kind; 3] = [Kind::Invalid, Kind::Input, Kind::Limit];

    /// The exit code of this kind of failure.
    pub fn code(self) -> u8 {
        match self {
            Kind::Invalid => 1,
            Kind::Input => 2,
            Kind::Limit => 3,
        }
    }

    /// The kind of failure of a run of this program that ended with exit
    /// `code` without printing a report (`None`: a code no failure has, such as a crash's).
    pub fn of_exit_code(code: i32) -> Option<Kind> {
        Kind::ALL.into_iter().find(|kind| i32::from(kind.code()) == code)
    }
}

/// A typed error the command line reports: which kind of failure it is.
pub trait Classify: std::fmt::Display {
    /// The kind of failure this error is.
    fn kind(&self) -> Kind;
}

impl Classify for ggpnet::propnet::LoadError {
    /// KIF that does not parse is bad input; grounding stopped at a limit is
    /// a limit; every other refusal finds the game invalid.
    fn kind(&self) -> Kind {
        match self {
            ggpnet::propnet::LoadError::Parse(_) => Kind::Input,
            error if error.is_limit() => Kind::Limit,
            _ => Kind::Invalid,
        }
    }
}

impl Classify for ggpnet::LoadError {
    /// The propnet's refusal as above; the interpreter's by its kind (KIF
    /// that does not parse is bad input, a limit a limit); an rtGDL game
    /// loaded as GDL, as what loading it gave.
    fn kind(&self) -> Kind {
        match self {
            ggpnet::LoadError::Propnet(error) => error.kind(),
            ggpnet::LoadError::Interpreter { refusal, .. } => refusal.kind(),
            ggpnet::LoadError::RealTime(error) => error.kind(),
            _ => Kind::Invalid,
        }
    }
}

impl Classify for ggpnet::Refusal {
    /// Malformed KIF is bad input; a static relation too big for the
    /// interpreter, or an `or` expanding too far, a limit; the rest an invalid game.
    fn kind(&self) -> Kind {
        match self {
            ggpnet::Refusal::Parse(_) => Kind::Input,
            ggpnet::Refusal::Invalid(e) if matches!(e.kind, ggpnet::grounder::ErrorKind::TooLarge { .. }) => {
                Kind::Limit
            }
            ggpnet::Refusal::Rules(error) => error.kind(),
            _ => Kind::Invalid,
        }
    }
}

impl Classify for ggpnet::kif::ParseError {
    /// Malformed KIF.
    fn kind(&self) -> Kind {
        Kind::Input
    }
}

impl Classify for ggpnet::sbg::ParseError {
    /// A malformed Simplified Boardgames file.
    fn kind(&self) -> Kind {
        Kind::Input
    }
}

impl Classify for std::io::Error {
    /// A file that cannot be read or written, a port that cannot be bound.
    fn kind(&self) -> Kind {
        Kind::Input
    }
}

impl Classify for ggpnet::propnet::export::ExportError {
    /// An unreadable circuit file, unknown output names, an export too large for its form.
    fn kind(&self) -> Kind {
        Kind::Input
    }
}

impl Classify for ggpnet_reference::ReferenceError {
    /// A static relation too big to compute, a state that needs more work
    /// than the limit per state, or a term past the interpreter's bounds, is a limit; every other refusal finds the game
    /// invalid (or the request, which this program makes, refused).
    fn kind(&self) -> Kind {
        match self {
            ggpnet_reference::ReferenceError::TooLarge { .. }
            | ggpnet_reference::ReferenceError::WorkLimit { .. }
            | ggpnet_reference::ReferenceError::TermsTooLarge { .. } => Kind::Limit,
            _ => Kind::Invalid,
        }
    }
}

impl Classify for ggpnet::Error {
    /// A setting out of range, or a state or move the game refuses, is bad
    /// input; more joint moves than can be listed is a limit; a failure of
    /// the interpreter is classified as the interpreter's error.
    fn kind(&self) -> Kind {
        match self {
            ggpnet::Error::TooManyJointMoves { .. } => Kind::Limit,
            ggpnet::Error::Interpreter(error) => error.kind(),
            ggpnet::Error::Playouts(error) => error.kind(),
            _ => Kind::Input,
        }
    }
}

impl Classify for ggpnet::propnet::driver::McError {
    /// Playouts from a state of another game, or worker threads that could not start.
    fn kind(&self) -> Kind {
        Kind::Input
    }
}

impl Classify for csv::Error {
    /// A CSV table that cannot be written.
    fn kind(&self) -> Kind {
        Kind::Input
    }
}

impl Classify for ggpnet::realtime::RtError {
    /// An rtGDL game refused, or a request on it (it names no kind: every one
    /// counts as an invalid game).
    fn kind(&self) -> Kind {
        Kind::Invalid
    }
}

impl Classify for ggpnet::manager::MatchError {
    /// A match that could not be run to its end: the game or the setup broke it.
    fn kind(&self) -> Kind {
        Kind::Invalid
    }
}

/// Why a run could not do what was asked: the message for standard error and its kind.
#[derive(Debug)]
pub struct Failure {
    message: String,
    kind: Kind,
}

impl Failure {
    /// Bad input this program found itself (a usage error, an option out of
    /// range, a file refused for its size or kind, a malformed trace): exit 2.
    pub fn input(message: impl Into<String>) -> Failure {
        Failure {
            message: message.into(),
            kind: Kind::Input,
        }
    }

    /// A game this program refuses itself: exit 1.
    pub fn invalid(message: impl Into<String>) -> Failure {
        Failure {
            message: message.into(),
            kind: Kind::Invalid,
        }
    }

    /// A limit this program enforces itself was reached: exit 3.
    pub fn limit(message: impl Into<String>) -> Failure {
        Failure {
            message: message.into(),
            kind: Kind::Limit,
        }
    }

    /// The failure `error` is: its message, and the kind [`Classify`] gives it.
    pub fn of(error: &impl Classify) -> Failure {
        Failure::worded(error, error.to_string())
    }

    /// The failure `error` is, told by `message` (which quotes it).
    pub fn worded(error: &impl Classify, message: String) -> Failure {
        Failure {
            message,
            kind: error.kind(),
        }
    }

    /// The same failure with `place` (a file, say) named before its message.
    pub fn at(self, place: &str) -> Failure {
        Failure {
            message: format!("{place}: {}", self.message),
            kind: self.kind,
        }
    }

    /// The message.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// The same failure once its message is on standard output: only the exit code is left to give.
    pub fn printed(self) -> Failure {
        Failure {
            message: String::new(),
            kind: self.kind,
        }
    }

    /// Prints the message (if not printed already) and returns the exit code.
    pub fn report(self) -> ExitCode {
        if !self.message.is_empty() {
            eprintln!("{}", self.message);
        }
        ExitCode::from(self.kind.code())
    }
}

/// Replaces the default panic message (and its backtrace, whatever `RUST_BACKTRACE`
/// says) with one line that names the place and asks for a report.
pub fn install_panic_hook() {
    std::panic::set_hook(Box::new(|info| {
        let place = info
            .location()
            .map_or_else(String::new, |l| format!(" at {}:{}", l.file(), l.line()));
        let payload = info.payload();
        let what = payload
            .downcast_ref::<&str>()
            .copied()
            .or_else(|| payload.downcast_ref::<String>().map(String::as_str))
            .unwrap_or("a panic");
        eprintln!("ggpnet: internal error{place}: {what} (a bug: please report it with the command line)");
    }));
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every kind's code reads back as that kind, and the codes are the documented ones.
    #[test]
    fn codes_are_the_documented_ones_and_read_back() {
        let codes: Vec<u8> = Kind::ALL.iter().map(|k| k.code()).collect();
        assert_eq!(codes, [1, 2, 3]);
        for kind in Kind::ALL {
            assert_eq!(Kind::of_exit_code(i32::from(kind.code())), Some(kind));
        }
        assert_eq!(Kind::of_exit_code(0), None);
        assert_eq!(Kind::of_exit_code(101), None);
    }

    /// A load error's kind follows its type: parse error, limit, invalid game.
    #[test]
    fn load_errors_are_classified_by_kind() {
        let config = ggpnet::propnet::LoadConfig::default();
        let kind = |text: &str| ggpnet::propnet::load(text, &config).err().map(|e| e.kind());
        assert_eq!(kind("(role r) (init p"), Some(Kind::Input));
        let unsafe_rule = "(role r) (init p) (<= (legal r (go ?x)) (true p)) (<= (next p) (true p))
            (<= terminal (true p)) (<= (goal r 100) (true p))";
        assert_eq!(kind(unsafe_rule), Some(Kind::Invalid));
        let limited = config
            .clone()
            .ground(ggpnet::grounder::Config::new().max_ground_rules(1));
        let valid = "(role r) (init off) (<= (legal r press) (true off)) (<= (next on) (does r press))
            (<= terminal (true on)) (<= (goal r 100) (true on)) (<= (goal r 0) (true off))";
        let error = ggpnet::propnet::load(valid, &limited)
            .err()
            .expect("past the limit");
        assert_eq!(Failure::of(&error).kind.code(), 3);
        let error = ggpnet::LoadError::Propnet(error);
        assert_eq!(error.kind(), Kind::Limit);
        // The interpreter's refusals are classified by their kind too.
        let interpreter = ggpnet::Config::new().engine(ggpnet::EngineChoice::Interpreter);
        let refused = |text: &str| ggpnet::Game::load(text, &interpreter).err().map(|e| e.kind());
        assert_eq!(refused("(role r) (init p"), Some(Kind::Input));
        assert_eq!(refused(unsafe_rule), Some(Kind::Invalid));
    }
}
