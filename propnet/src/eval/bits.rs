//! Counting and selecting the set bits of packed bit sets (legality sets),
//! with the CPU's `popcnt` and `pdep` instructions when it has them: the
//! portable build counts bits in a dozen instructions per word, and finding the
//! `k`-th bit of a word by clearing the lowest `k` costs a mispredicted loop
//! exit when `k` is a random draw. (AMD processors before Zen 3 have `pdep`
//! but run it in microcode, slower than that loop; this machine kind is Zen 5.)

/// The number of set bits in `words`.
#[inline]
pub fn count(words: &[u64]) -> usize {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("popcnt") {
        // SAFETY: the CPU has `popcnt`.
        return unsafe { count_x86(words) };
    }
    count_portable(words)
}

/// The position of set bit `k` (from 0, lowest first) of `words`, if it has
/// more than `k`.
#[inline]
pub fn select(words: &[u64], k: usize) -> Option<usize> {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("popcnt") && std::arch::is_x86_feature_detected!("bmi2") {
        // SAFETY: the CPU has `popcnt` and `pdep`.
        return unsafe { select_x86(words, k) };
    }
    select_in(words, k, select_in_word_portable)
}

#[inline(always)]
fn count_portable(words: &[u64]) -> usize {
    words.iter().map(|w| w.count_ones() as usize).sum()
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "popcnt")]
unsafe fn count_x86(words: &[u64]) -> usize {
    count_portable(words)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "popcnt,bmi2")]
unsafe fn select_x86(words: &[u64], k: usize) -> Option<usize> {
    select_in(words, k, |word, k| {
        std::arch::x86_64::_pdep_u64(1 << k, word).trailing_zeros()
    })
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

    #[test]
    fn count_and_select_agree_with_a_bit_by_bit_scan() {
        let words = words();
        let ones: Vec<usize> = (0..words.len() * 64)
            .filter(|&b| words[b / 64] >> (b % 64) & 1 == 1)
            .collect();
        assert_eq!(count(&words), ones.len());
        assert_eq!(count_portable(&words), ones.len());
        for (k, &position) in ones.iter().enumerate() {
            assert_eq!(select(&words, k), Some(position), "bit {k}");
            assert_eq!(
                select_in(&words, k, select_in_word_portable),
                Some(position),
                "bit {k}"
            );
        }
        assert_eq!(select(&words, ones.len()), None);
        assert_eq!(select(&[], 0), None);
        assert_eq!(select(&[u64::MAX], 63), Some(63));
    }
}
