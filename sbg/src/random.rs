//! Random SBG games for testing: random board sizes, placements, movement
//! expressions (letters, concatenation, `+`, `^n`, `^*`), turn limits and goals,
//! written as text in the formal grammar (with a comment or two), so that the
//! parser is exercised too. The same seed gives the same game.

use crate::rules::{Letter, On, Regex};
use ggpnet_propnet::random::Stream;
use std::fmt::Write;

/// The generator of random games: a stream of the project's one random family
/// ([`Stream`], xoshiro256++), with the draws the generator needs, every rank
/// equally likely.
#[derive(Clone, Debug)]
pub struct Rng(Stream);

impl Rng {
    /// A generator for `seed`.
    pub fn new(seed: u64) -> Rng {
        Rng(Stream::new(seed, 0))
    }

    /// A number in `0..n` (`n` > 0).
    pub fn below(&mut self, n: usize) -> usize {
        self.0.draw(n)
    }

    /// A number in `lo..=hi`.
    pub fn range(&mut self, lo: i64, hi: i64) -> i64 {
        lo + self.below((hi - lo + 1) as usize) as i64
    }

    /// True with probability `percent` / 100.
    pub fn chance(&mut self, percent: usize) -> bool {
        self.below(100) < percent
    }
}

/// The text of a random game for `seed`.
pub fn game(seed: u64) -> String {
    let mut rng = Rng::new(seed);
    let (w, h) = (rng.range(3, 6) as usize, rng.range(3, 6) as usize);
    let mut kinds: Vec<u8> = Vec::new();
    while kinds.len() < rng.range(1, 3) as usize {
        let k = b'A' + rng.below(26) as u8;
        if !kinds.contains(&k) {
            kinds.push(k);
        }
    }
    let mut board = vec![vec!['.'; w]; h];
    for (owner, rows) in [(true, 0..2usize), (false, h - 2..h)] {
        for _ in 0..rng.range(2, 5) {
            let (x, y) = (rng.below(w), rows.start + rng.below(rows.len()));
            let k = kinds[rng.below(kinds.len())] as char;
            board[y][x] = if owner { k } else { k.to_ascii_lowercase() };
        }
    }
    let mut text = String::new();
    let _ = writeln!(text, "<<Random {seed}>>\n<BOARD> {w} {h}");
    for row in board.iter().rev() {
        let _ = writeln!(text, "|{}|", row.iter().collect::<String>());
    }
    text.push_str("<PIECES> // generated\n");
    for &k in &kinds {
        if rng.chance(85) {
            let alternatives = (0..rng.range(2, 4))
                .map(|_| expression(&mut rng, w, h, 3))
                .collect();
            let regex = Regex::Alt(alternatives);
            let _ = writeln!(text, "{} {regex} &", k as char);
        }
    }
    let _ = writeln!(text, "<GOALS>\n{} &", rng.range(2, 12));
    for letter in [kinds[0], kinds[rng.below(kinds.len())].to_ascii_lowercase()] {
        if rng.chance(50) {
            let squares: Vec<String> = (0..rng.range(1, 3))
                .map(|_| format!("{} {}", rng.below(w), rng.below(h)))
                .collect();
            let _ = writeln!(text, "@{} {} &", letter as char, squares.join(", "));
        }
        if rng.chance(40) {
            let _ = writeln!(text, "#{} {} & /* count */", letter as char, rng.range(0, 1));
        }
    }
    text
}

/// A random expression at most `depth` operators deep, letters within a `w` x `h` board.
pub fn expression(rng: &mut Rng, w: usize, h: usize, depth: usize) -> Regex {
    if depth == 0 || rng.chance(35) {
        let on = match rng.below(10) {
            0..=5 => On::Empty,
            6..=8 => On::Opponent,
            _ => On::Own,
        };
        let dx = rng.range(-2, 2).clamp(1 - w as i64, w as i64 - 1) as i32;
        let dy = rng.range(-2, 2).clamp(1 - h as i64, h as i64 - 1) as i32;
        return Regex::Letter(Letter { dx, dy, on });
    }
    let choice = rng.below(4);
    if choice < 2 {
        let n = rng.range(2, 3);
        let parts = (0..n).map(|_| expression(rng, w, h, depth - 1)).collect();
        return if choice == 0 {
            Regex::Concat(parts)
        } else {
            Regex::Alt(parts)
        };
    }
    match choice {
        2 => Regex::Power(Box::new(expression(rng, w, h, depth - 1)), rng.range(0, 3) as u32),
        _ => Regex::Star(Box::new(expression(rng, w, h, depth - 1))),
    }
}
