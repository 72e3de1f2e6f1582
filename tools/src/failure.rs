//! How a run ends: the exit codes of every subcommand, and the option values
//! they accept, validated when the command line is parsed.
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

/// Longest run accepted by `--seconds`: about 31 years, far beyond any real run,
/// and far below the range where adding it to a clock overflows.
const MAX_SECONDS: f64 = 1e9;

/// Most worker threads accepted by `--threads`.
pub const MAX_THREADS: usize = 1024;

/// Deepest `perft --depth` accepted.
pub const MAX_PERFT_DEPTH: usize = 1000;

/// Parses a positive, finite number of seconds up to [`MAX_SECONDS`].
pub fn seconds(text: &str) -> Result<f64, String> {
    let value: f64 = text
        .trim()
        .parse()
        .map_err(|_| format!("'{text}' is not a number of seconds"))?;
    if value.is_finite() && value > 0.0 && value <= MAX_SECONDS {
        Ok(value)
    } else {
        Err(format!(
            "{text} is out of range: seconds must be a finite number above 0 and at most {MAX_SECONDS:e}"
        ))
    }
}

/// Parses a count between `min` and `max`.
fn count_in(text: &str, min: usize, max: usize, what: &str) -> Result<usize, String> {
    let value: usize = text
        .trim()
        .parse()
        .map_err(|_| format!("'{text}' is not a whole number of {what}"))?;
    if (min..=max).contains(&value) {
        Ok(value)
    } else {
        Err(format!(
            "{value} is out of range: {what} must be from {min} to {max}"
        ))
    }
}

/// Parses a thread count from 1 to [`MAX_THREADS`].
pub fn threads(text: &str) -> Result<usize, String> {
    count_in(text, 1, MAX_THREADS, "threads")
}

/// Parses a perft depth from 1 to [`MAX_PERFT_DEPTH`].
pub fn perft_depth(text: &str) -> Result<usize, String> {
    count_in(text, 1, MAX_PERFT_DEPTH, "depth")
}

/// Parses a count of at least 1.
pub fn positive(text: &str) -> Result<usize, String> {
    count_in(text, 1, usize::MAX, "items")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seconds_are_positive_finite_and_bounded() {
        assert_eq!(seconds("2.5"), Ok(2.5));
        for bad in ["-1", "0", "nan", "inf", "-inf", "1e308", "1e19", "x", ""] {
            assert!(seconds(bad).is_err(), "{bad} accepted");
        }
        assert!(seconds("1e9").is_ok());
    }

    #[test]
    fn counts_are_bounded() {
        assert_eq!(threads("2"), Ok(2));
        assert!(threads("0").is_err());
        assert!(threads("10000").is_err());
        assert!(perft_depth("18446744073709551615").is_err());
        assert!(perft_depth("1000000000").is_err());
        assert!(perft_depth("99999999999999999999999").is_err());
        assert_eq!(perft_depth("4"), Ok(4));
        assert!(positive("0").is_err());
    }
}
