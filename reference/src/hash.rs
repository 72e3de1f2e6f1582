//! A fast, non-cryptographic hasher for the interpreter's internal tables.
//!
//! Every key hashed here is an interned id (or a short sequence of them) made by the
//! interpreter itself, so there is no adversary to defend against and a
//! multiply-and-rotate hash is enough. It is several times cheaper than the standard
//! library's SipHash on such keys, which matters because joins hash constantly.

use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasherDefault, Hasher};

/// An odd constant with well-spread bits (2^64 divided by the golden ratio).
const MULTIPLIER: u64 = 0x9E37_79B9_7F4A_7C15;

/// Hashes words by rotating the state, mixing the word in, adding and multiplying
/// (the addition keeps runs of zero words from hashing to zero).
#[derive(Default, Clone, Copy, Debug)]
pub(crate) struct FastHasher {
    state: u64,
}

impl FastHasher {
    fn mix(&mut self, word: u64) {
        self.state = (self.state.rotate_left(26) ^ word)
            .wrapping_add(MULTIPLIER)
            .wrapping_mul(MULTIPLIER);
    }
}

impl Hasher for FastHasher {
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for chunk in &mut chunks {
            let mut word = [0u8; 8];
            word.copy_from_slice(chunk);
            self.mix(u64::from_le_bytes(word));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut word = [0u8; 8];
            word[..rest.len()].copy_from_slice(rest);
            self.mix(u64::from_le_bytes(word) ^ ((rest.len() as u64) << 59));
        }
    }

    fn write_u32(&mut self, n: u32) {
        self.mix(u64::from(n));
    }

    fn write_u64(&mut self, n: u64) {
        self.mix(n);
    }

    fn write_usize(&mut self, n: usize) {
        self.mix(n as u64);
    }

    fn finish(&self) -> u64 {
        // A product's low bits depend only on the factors' low bits; fold the high
        // half down, because hash tables pick buckets with the low bits.
        self.state ^ (self.state >> 32)
    }
}

/// A `HashMap` using [`FastHasher`].
pub(crate) type FastMap<K, V> = HashMap<K, V, BuildHasherDefault<FastHasher>>;

/// A `HashSet` using [`FastHasher`].
pub(crate) type FastSet<T> = HashSet<T, BuildHasherDefault<FastHasher>>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_input_equal_hash_and_different_input_usually_differs() {
        let hash = |words: &[u32]| {
            let mut h = FastHasher::default();
            words.iter().for_each(|&w| h.write_u32(w));
            h.finish()
        };
        assert_eq!(hash(&[1, 2, 3]), hash(&[1, 2, 3]));
        assert_ne!(hash(&[1, 2, 3]), hash(&[3, 2, 1]));
        assert_ne!(hash(&[0]), hash(&[0, 0]));
        // Keys differing only in their last word still spread over low bits.
        let low = |words: &[u32]| {
            let mut h = FastHasher::default();
            h.write(&words.iter().flat_map(|w| w.to_le_bytes()).collect::<Vec<u8>>());
            h.finish() & 0xFFFF
        };
        let buckets: FastSet<u64> = (0..1000).map(|i| low(&[7, 1, 2, i])).collect();
        assert!(buckets.len() > 900, "{} distinct low hashes", buckets.len());
        let mut map: FastMap<Box<[u32]>, usize> = FastMap::default();
        map.insert(vec![7, 8].into(), 1);
        assert_eq!(map.get(&[7u32, 8][..]), Some(&1));
    }
}
