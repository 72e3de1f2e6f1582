//! The values the command line's options accept, validated when it is parsed
//! (clap value parsers): a value out of range is a usage error (exit code 2)
//! that names the option, never a panic later.

use ggpnet::propnet::driver::{DEFAULT_MAX_DEPTH, MAX_PERFT_DEPTH, MAX_SECONDS};
use ggpnet::MAX_THREADS;

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

/// Parses a positive game time in lifetime units (a decimal, at most six fraction digits).
pub fn game_time(text: &str) -> Result<ggpnet::realtime::Time, String> {
    let time = ggpnet::realtime::Time::parse(text.trim())?;
    match time.is_zero() {
        true => Err(format!(
            "{text} is out of range: a game time limit must be above 0"
        )),
        false => Ok(time),
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

/// Most playouts `diff` runs: each plays on the reference interpreter, so more
/// would run for hours.
pub const MAX_DIFF_PLAYOUTS: usize = 100_000;

/// Parses `diff --playouts`: from 1 to [`MAX_DIFF_PLAYOUTS`].
pub fn diff_playouts(text: &str) -> Result<usize, String> {
    count_in(text, 1, MAX_DIFF_PLAYOUTS, "playouts")
}

/// Parses `diff --steps`: from 1 to the playouts' depth limit ([`DEFAULT_MAX_DEPTH`]).
pub fn diff_steps(text: &str) -> Result<usize, String> {
    count_in(text, 1, DEFAULT_MAX_DEPTH as usize, "steps")
}

/// Parses `on` or `off` (of `--native`).
pub fn on_off(text: &str) -> Result<bool, String> {
    match text.trim() {
        "on" => Ok(true),
        "off" => Ok(false),
        _ => Err(format!("'{text}' is neither on nor off")),
    }
}

/// An engine choice: `auto`, `propnet` or `interpreter`.
pub fn engine(s: &str) -> Result<ggpnet::EngineChoice, String> {
    use ggpnet::EngineChoice::*;
    [Auto, Propnet, Interpreter]
        .into_iter()
        .find(|&e| engine_name(e) == s)
        .ok_or_else(|| format!("unknown engine '{s}' (expected auto, propnet or interpreter)"))
}

/// The command-line name of an engine choice.
pub fn engine_name(choice: ggpnet::EngineChoice) -> &'static str {
    match choice {
        ggpnet::EngineChoice::Auto => "auto",
        ggpnet::EngineChoice::Propnet => "propnet",
        ggpnet::EngineChoice::Interpreter => "interpreter",
    }
}

/// A search of the player: `uct`, `mc` or `random`.
pub fn search(s: &str) -> Result<ggpnet::player::Search, String> {
    use ggpnet::player::Search::*;
    [Uct, Mc, Random]
        .into_iter()
        .find(|e| e.name() == s)
        .ok_or_else(|| format!("unknown search '{s}' (expected uct, mc or random)"))
}

/// `--leaves`: how UCT evaluates its leaves, `auto`, `scalar` or `lanes`.
pub fn leaves(s: &str) -> Result<ggpnet::player::Leaves, String> {
    ggpnet::player::Leaves::ALL
        .into_iter()
        .find(|l| l.name() == s)
        .ok_or_else(|| format!("unknown leaf evaluation '{s}' (expected auto, scalar or lanes)"))
}

/// `--gdl2-form`: `2010` or `2013`.
pub fn gdl2_form(s: &str) -> Result<ggpnet::manager::Gdl2Form, String> {
    use ggpnet::manager::Gdl2Form::*;
    match s {
        "2010" => Ok(Form2010),
        "2013" => Ok(Form2013),
        _ => Err(format!("unknown form '{s}' (expected 2010 or 2013)")),
    }
}

/// Parses `--shard I/N`: 1 <= I <= N <= [`ggpnet_tools::shard::MAX_SHARDS`].
pub fn shard(text: &str) -> Result<ggpnet_tools::shard::Shard, String> {
    text.parse()
}

/// Parses a time model of `--time-model` (see [`ggpnet::realtime::TimeModel`]).
pub fn time_model(text: &str) -> Result<ggpnet::realtime::TimeModel, String> {
    text.parse()
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
        assert_eq!(diff_playouts("100000"), Ok(MAX_DIFF_PLAYOUTS));
        assert!(diff_playouts("100001").is_err());
        assert!(diff_playouts("18446744073709551615").is_err());
        assert!(diff_steps("10001").is_err());
    }
}
