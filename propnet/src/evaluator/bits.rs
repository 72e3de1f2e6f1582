//! Drawing a random set bit of a packed bit set (a legality set),
//! with the CPU's `popcnt` and `pdep` instructions when it has them: the
//! portable build counts bits in a dozen instructions per word, and finding the
//! `k`-th bit of a word by clearing the lowest `k` costs a mispredicted loop
//! exit when `k` is a random draw. (AMD processors before Zen 3 have `pdep`
//! but run it in microcode, slower than that loop; this project's machines
//! have been Zen 3 and Zen 5, and Intel Xeons.)
//!
//! And copying the few words of a state, or the moves of a joint move, in
//! line (see [`copy_short`]).

use crate::random::Stream;

/// The position of a uniformly random set bit of `words`: [`Stream::draw`]
/// below their number of set bits picks which (lowest first); `None`, without
/// drawing, if none is set. Counting, drawing and selecting run as one piece of
/// code with `popcnt` and `pdep` where the CPU has them.
#[inline]
pub fn draw(words: &[u64], rng: &mut Stream) -> Option<usize> {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("popcnt") && std::arch::is_x86_feature_detected!("bmi2") {
        // SAFETY: the CPU has `popcnt` and `pdep`.
        return unsafe { draw_x86(words, rng) };
    }
    draw_with(words, rng, select_in_word_portable)
}

/// [`draw`] compiled with `popcnt` and `pdep`.
///
/// # Safety
/// The CPU must have POPCNT and BMI2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "popcnt,bmi2")]
unsafe fn draw_x86(words: &[u64], rng: &mut Stream) -> Option<usize> {
    draw_with(words, rng, |word, k| select_in_word_pdep(word, k))
}

/// Slices longer than this many items are copied by `memcpy`.
const INLINE_ITEMS: usize = 16;

/// Copies `from` into `to` (of the same length), in line when short: the
/// words of a state, the moves of a joint move.
///
/// A plain copy loop becomes a call to `memcpy`, whose dispatch costs more
/// than the two or three words of a typical state (3% of a connect four
/// playout on the sweep, where the loop turned into a call when unrelated code
/// changed around it). Pairs of items copied with the odd last one checked
/// apart are not a pattern the compiler replaces by a call; long slices, where
/// the call pays, are copied by `memcpy`.
#[inline]
pub(crate) fn copy_short<T: Copy>(to: &mut [T], from: &[T]) {
    assert_eq!(to.len(), from.len(), "a copy between slices of one length");
    if to.len() > INLINE_ITEMS {
        to.copy_from_slice(from);
        return;
    }
    for (t, f) in to.chunks_mut(2).zip(from.chunks(2)) {
        t[0] = f[0];
        if let (Some(t1), Some(&f1)) = (t.get_mut(1), f.get(1)) {
            *t1 = f1;
        }
    }
}

#[inline(always)]
fn draw_with(words: &[u64], rng: &mut Stream, in_word: impl Fn(u64, u32) -> u32) -> Option<usize> {
    match words.iter().map(|w| w.count_ones() as usize).sum() {
        0 => None,
        n => select_in(words, rng.draw(n), in_word),
    }
}

/// The position of set bit `k < word.count_ones()` of `word`, by `pdep`:
/// callable only from code compiled with BMI2 (the CPU has it).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "bmi2")]
#[inline]
fn select_in_word_pdep(word: u64, k: u32) -> u32 {
    std::arch::x86_64::_pdep_u64(1 << k, word).trailing_zeros()
}

/// Skips whole words by their bit counts, then finds the bit in its word with
/// `in_word(word, k)`, the position of set bit `k < word.count_ones()`.
#[inline(always)]
fn select_in(words: &[u64], k: usize, in_word: impl Fn(u64, u32) -> u32) -> Option<usize> {
    let mut k = k;
    for (w, &word) in words.iter().enumerate() {
        let here = word.count_ones() as usize;
        if k < here {
            return Some(w * 64 + in_word(word, k as u32) as usize);
        }
        k -= here;
    }
    None
}

#[inline(always)]
fn select_in_word_portable(word: u64, k: u32) -> u32 {
    let mut bits = word;
    for _ in 0..k {
        bits &= bits - 1;
    }
    bits.trailing_zeros()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Pseudo-random words with every density of bits.
    fn words() -> Vec<u64> {
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        (0..300)
            .map(|i| {
                x = x.rotate_left(17).wrapping_mul(0xD1B5_4A32_D192_ED03) ^ (x >> 29);
                match i % 4 {
                    0 => x & x.rotate_left(11),
                    1 => x | x.rotate_left(7),
                    2 => 0,
                    _ => x,
                }
            })
            .collect()
    }

    /// The positions of the set bits of `words`, found bit by bit.
    fn set_bits(words: &[u64]) -> Vec<usize> {
        (0..words.len() * 64)
            .filter(|&b| words[b / 64] >> (b % 64) & 1 == 1)
            .collect()
    }

    #[test]
    fn selecting_agrees_with_a_bit_by_bit_scan() {
        let words = words();
        let ones = set_bits(&words);
        for (k, &position) in ones.iter().enumerate() {
            assert_eq!(
                select_in(&words, k, select_in_word_portable),
                Some(position),
                "bit {k}"
            );
            #[cfg(target_arch = "x86_64")]
            if std::arch::is_x86_feature_detected!("bmi2") {
                // SAFETY: the CPU has BMI2.
                let pdep = |word, k| unsafe { select_in_word_pdep(word, k) };
                assert_eq!(select_in(&words, k, pdep), Some(position), "bit {k}");
            }
        }
        assert_eq!(select_in(&words, ones.len(), select_in_word_portable), None);
        assert_eq!(select_in(&[], 0, select_in_word_portable), None);
        assert_eq!(select_in(&[u64::MAX], 63, select_in_word_portable), Some(63));
    }

    /// A draw picks the set bit whose rank a draw below their count gives,
    /// and a word set with no bit set draws nothing.
    #[test]
    fn draws_pick_the_drawn_rank() {
        let words = words();
        let ones = set_bits(&words);
        let mut rng = Stream::new(5, 0);
        for round in 0..500 {
            let mut expected = rng.clone();
            let position = ones[expected.draw(ones.len())];
            assert_eq!(draw(&words, &mut rng), Some(position), "round {round}");
            assert_eq!(rng, expected, "round {round}");
            let portable = draw_with(&words, &mut rng.clone(), select_in_word_portable);
            assert_eq!(portable, draw(&words, &mut rng.clone()), "round {round}");
        }
        let before = rng.clone();
        assert_eq!(draw(&[0, 0], &mut rng), None);
        assert_eq!(rng, before);
    }
}
