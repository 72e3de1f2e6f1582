//! How a run ends: the exit codes of every subcommand.
//!
//! | code | meaning |
//! | --- | --- |
//! | 0 | success (and agreement) |
//! | 1 | an invalid game, or a disagreement (replay, diff, corpus, bench perft) |
//! | 2 | bad input: a usage error, an option out of range, an unreadable or malformed file (KIF that does not parse, a trace or circuit that cannot be read) |
//! | 3 | a limit reached: the game is too large to ground within the configured limits |
//!
//! Bad input never panics; a panic would be a bug, reported on one line (exit 101)
//! by the hook [`install_panic_hook`] sets, without a backtrace.

use ggpnet::propnet::LoadError;
use std::process::ExitCode;

/// Why a run could not do what was asked: the message for standard error and its exit code.
#[derive(Debug)]
pub struct Failure {
    message: String,
    code: u8,
}

impl Failure {
    /// Bad input: a usage error, an unreadable or malformed file (exit 2).
    pub fn input(message: impl Into<String>) -> Failure {
        Failure {
            message: message.into(),
            code: 2,
        }
    }

    /// An invalid game (exit 1).
    pub fn invalid(message: impl Into<String>) -> Failure {
        Failure {
            message: message.into(),
            code: 1,
        }
    }

    /// A configured limit was reached (exit 3).
    pub fn limit(message: impl Into<String>) -> Failure {
        Failure {
            message: message.into(),
            code: 3,
        }
    }

    /// Why a game did not load, with the exit code of that kind of failure.
    pub fn load(error: &LoadError) -> Failure {
        let message = error.to_string();
        match error {
            LoadError::Parse(_) => Failure::input(message),
            error if error.is_limit() => Failure::limit(message),
            _ => Failure::invalid(message),
        }
    }

    /// The same failure with `place` (a file, say) named before its message.
    pub fn at(self, place: &str) -> Failure {
        Failure {
            message: format!("{place}: {}", self.message),
            code: self.code,
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
            code: self.code,
        }
    }

    /// Prints the message (if not printed already) and returns the exit code.
    pub fn report(self) -> ExitCode {
        if !self.message.is_empty() {
            eprintln!("{}", self.message);
        }
        ExitCode::from(self.code)
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
