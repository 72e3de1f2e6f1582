//! Time in real-time GDL: exact, never floating point, so that every engine
//! computes the same lifetimes bit for bit.
//!
//! A [`Time`] is a fixed-point count of millionths of a lifetime unit in a
//! `u64`; a lifetime written with more than [`FRACTION_DIGITS`] fraction
//! digits is refused. A [`Lifetime`] is a positive time or infinity. Both
//! print canonically (`1.5`, `0.25`, `3`, `infinity`), which is how they
//! become terms of the rules again.

use std::fmt;

/// Millionths of a lifetime unit in one unit: the precision of [`Time`].
pub const TICKS_PER_UNIT: u64 = 1_000_000;

/// Fraction digits a written lifetime may have.
pub const FRACTION_DIGITS: usize = 6;

/// The largest time, in units: beyond it a lifetime is refused (it would not
/// fit the fixed-point count with room to add two of them).
pub const MAX_UNITS: u64 = 1_000_000_000_000;

/// An exact, non-negative amount of time: a count of millionths of a
/// lifetime unit, at most [`MAX_UNITS`] units.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug, Default)]
pub struct Time(u64);

impl Time {
    /// No time at all.
    pub const ZERO: Time = Time(0);

    /// The smallest positive time, one millionth of a unit.
    pub const TICK: Time = Time(1);

    /// The time of `ticks` millionths of a unit, if it is at most [`MAX_UNITS`] units.
    pub fn from_ticks(ticks: u64) -> Option<Time> {
        (ticks <= MAX_UNITS * TICKS_PER_UNIT).then_some(Time(ticks))
    }

    /// The number of millionths of a unit.
    pub fn ticks(self) -> u64 {
        self.0
    }

    /// Whether this is no time at all.
    pub fn is_zero(self) -> bool {
        self.0 == 0
    }

    /// `self - other`, or `None` when `other` is the larger.
    pub fn checked_sub(self, other: Time) -> Option<Time> {
        self.0.checked_sub(other.0).map(Time)
    }

    /// `self + other`, or `None` past [`MAX_UNITS`] units.
    pub fn checked_add(self, other: Time) -> Option<Time> {
        Time::from_ticks(self.0 + other.0)
    }

    /// Reads a decimal number such as `1`, `1.0`, `5.5` or `0.000001`
    /// (digits, optionally a point and up to [`FRACTION_DIGITS`] digits).
    pub fn parse(text: &str) -> Result<Time, String> {
        let (whole, fraction) = text.split_once('.').unwrap_or((text, ""));
        let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
        if !digits(whole) || (text.contains('.') && !digits(fraction)) {
            return Err(format!("'{text}' is not a decimal number"));
        }
        if fraction.len() > FRACTION_DIGITS {
            return Err(format!(
                "'{text}' has more than {FRACTION_DIGITS} fraction digits (lifetimes are exact to a millionth of a unit)"
            ));
        }
        let whole = whole.trim_start_matches('0');
        let units = match whole.len() {
            0 => 0,
            n if n <= 13 => whole.parse::<u64>().expect("at most 13 digits"),
            _ => u64::MAX,
        };
        if units > MAX_UNITS {
            return Err(format!(
                "'{text}' is larger than the largest lifetime, {MAX_UNITS}"
            ));
        }
        let mut micros = 0;
        for (i, digit) in fraction.bytes().enumerate() {
            micros += u64::from(digit - b'0') * 10u64.pow((FRACTION_DIGITS - 1 - i) as u32);
        }
        Time::from_ticks(units * TICKS_PER_UNIT + micros)
            .ok_or_else(|| format!("'{text}' is larger than the largest lifetime, {MAX_UNITS}"))
    }
}

/// Canonical: the whole units, then the fraction without trailing zeros
/// (`1.5`, `0.25`, `3`).
impl fmt::Display for Time {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (units, micros) = (self.0 / TICKS_PER_UNIT, self.0 % TICKS_PER_UNIT);
        if micros == 0 {
            return write!(f, "{units}");
        }
        let fraction = format!("{micros:06}");
        write!(f, "{units}.{}", fraction.trim_end_matches('0'))
    }
}

/// The lifetime of a fact: a positive [`Time`] or infinity.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
pub enum Lifetime {
    /// A positive time (the invariant of [`Lifetime::finite`]).
    Finite(Time),
    /// The fact holds until the rules drop it.
    Infinity,
}

impl Lifetime {
    /// A finite lifetime; `None` for zero, which no fact may have.
    pub fn finite(time: Time) -> Option<Lifetime> {
        (!time.is_zero()).then_some(Lifetime::Finite(time))
    }

    /// Reads `infinity` or a positive decimal number (see [`Time::parse`]).
    pub fn parse(text: &str) -> Result<Lifetime, String> {
        if text.eq_ignore_ascii_case("infinity") {
            return Ok(Lifetime::Infinity);
        }
        let time = Time::parse(text)?;
        Lifetime::finite(time)
            .ok_or_else(|| format!("'{text}' is zero: a fact with no time left has expired (use 'expired')"))
    }

    /// The finite time, if any.
    pub fn time(self) -> Option<Time> {
        match self {
            Lifetime::Finite(t) => Some(t),
            Lifetime::Infinity => None,
        }
    }

    /// The spec's μ for one fact: the lifetime left after `elapsed`, or `None`
    /// when the fact expired (its lifetime was at most `elapsed`).
    pub fn after(self, elapsed: Time) -> Option<Lifetime> {
        match self {
            Lifetime::Infinity => Some(Lifetime::Infinity),
            Lifetime::Finite(t) => t.checked_sub(elapsed).and_then(Lifetime::finite),
        }
    }
}

/// Canonical: `infinity` or the time (see [`Time`]'s `Display`).
impl fmt::Display for Lifetime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Lifetime::Finite(t) => t.fmt(f),
            Lifetime::Infinity => f.write_str("infinity"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_read_and_print_exactly() {
        for (text, ticks, printed) in [
            ("1", 1_000_000, "1"),
            ("1.0", 1_000_000, "1"),
            ("5.5", 5_500_000, "5.5"),
            ("0.25", 250_000, "0.25"),
            ("120.000", 120_000_000, "120"),
            ("0.000001", 1, "0.000001"),
            ("007.50", 7_500_000, "7.5"),
        ] {
            let t = Time::parse(text).unwrap();
            assert_eq!((t.ticks(), t.to_string().as_str()), (ticks, printed), "{text}");
        }
        for bad in [
            "",
            ".5",
            "5.",
            "-1",
            "1e5",
            "0x10",
            "1.0000001",
            "1.5.2",
            "99999999999999",
            "+1",
        ] {
            assert!(Time::parse(bad).is_err(), "{bad}");
        }
        assert_eq!(Lifetime::parse("Infinity"), Ok(Lifetime::Infinity));
        assert!(Lifetime::parse("0.0").unwrap_err().contains("zero"));
        assert!(Lifetime::Finite(Time::parse("9").unwrap()) < Lifetime::Infinity);
    }

    #[test]
    fn after_is_mu_for_one_fact() {
        let t = |s: &str| Time::parse(s).unwrap();
        let l = Lifetime::finite(t("1.5")).unwrap();
        assert_eq!(l.after(t("0.25")), Lifetime::finite(t("1.25")));
        assert_eq!(l.after(t("1.5")), None);
        assert_eq!(l.after(t("2")), None);
        assert_eq!(Lifetime::Infinity.after(t("2")), Some(Lifetime::Infinity));
    }
}
