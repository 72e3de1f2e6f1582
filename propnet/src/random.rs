//! The random streams that choose playouts' moves: xoshiro256++ (Blackman and
//! Vigna), seeded through SplitMix64, and draws below a bound by Lemire's
//! multiply-and-reject method, which is exact (every rank equally likely) and
//! rejects a draw with probability below `n / 2^64`. [`StreamGroup`] holds eight
//! streams side by side and draws for them at once, with the same results as
//! each stream drawing alone.

/// One random stream.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Stream {
    state: [u64; 4],
}

/// The golden-ratio increment of SplitMix64, also used to spread stream numbers.
const GOLDEN: u64 = 0x9E37_79B9_7F4A_7C15;

/// Next output of the SplitMix64 generator at `state`.
fn split_mix(state: &mut u64) -> u64 {
    *state = state.wrapping_add(GOLDEN);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

impl Stream {
    /// Stream number `stream` under `seed`: scalar playouts of thread `t` use
    /// stream `t`; lane `l` of thread `t` uses stream `t * LANES + l`.
    pub fn new(seed: u64, stream: u64) -> Stream {
        let mut mix = seed;
        let mut state = split_mix(&mut mix) ^ stream.wrapping_mul(GOLDEN);
        Stream {
            state: std::array::from_fn(|_| split_mix(&mut state)),
        }
    }

    /// The next 64 random bits.
    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        let [s0, s1, s2, s3] = self.state;
        let result = s0.wrapping_add(s3).rotate_left(23).wrapping_add(s0);
        let t = s1 << 17;
        let s2 = s2 ^ s0;
        let s3 = s3 ^ s1;
        self.state = [s0 ^ s3, s1 ^ s2, s2 ^ t, s3.rotate_left(45)];
        result
    }

    /// A uniformly random number below `n` (at least 1), or 0 without drawing
    /// when `n` is 1. Every driver chooses moves this way, so the same stream
    /// makes the same choices in each.
    #[inline]
    pub fn draw(&mut self, n: usize) -> usize {
        debug_assert!(n >= 1);
        if n == 1 {
            return 0;
        }
        loop {
            if let Some(rank) = accept(self.next_u64(), n as u64) {
                return rank as usize;
            }
        }
    }
}

/// A stream is a generator of the `rand` ecosystem (`rand_core`'s traits) too, so that code which
/// takes an `RngCore` (shuffles, distributions) draws from the same family.
impl rand_core::RngCore for Stream {
    fn next_u32(&mut self) -> u32 {
        (Stream::next_u64(self) >> 32) as u32
    }

    fn next_u64(&mut self) -> u64 {
        Stream::next_u64(self)
    }

    fn fill_bytes(&mut self, dest: &mut [u8]) {
        rand_core::impls::fill_bytes_via_next(self, dest)
    }

    fn try_fill_bytes(&mut self, dest: &mut [u8]) -> Result<(), rand_core::Error> {
        self.fill_bytes(dest);
        Ok(())
    }
}

/// Seeding as `rand` does it: 32 bytes are the state (an all-zero seed,
/// which xoshiro cannot leave, is taken as stream 0 of seed 0); a `u64` seed
/// is [`Stream::new`]`(seed, 0)`.
impl rand_core::SeedableRng for Stream {
    type Seed = [u8; 32];

    fn from_seed(seed: [u8; 32]) -> Stream {
        let state: [u64; 4] = std::array::from_fn(|k| {
            u64::from_le_bytes(seed[8 * k..8 * k + 8].try_into().expect("eight bytes"))
        });
        if state == [0; 4] {
            return Stream::new(0, 0);
        }
        Stream { state }
    }

    fn seed_from_u64(seed: u64) -> Stream {
        Stream::new(seed, 0)
    }
}

/// Lemire's test of 64 random bits `v` for a rank below `n`: the high word of
/// `v * n`, unless the low word falls in the `2^64 mod n` values that would
/// favour some ranks.
#[inline]
fn accept(v: u64, n: u64) -> Option<u64> {
    let product = u128::from(v) * u128::from(n);
    let low = product as u64;
    if low < n && low < n.wrapping_neg() % n {
        return None;
    }
    Some((product >> 64) as u64)
}

/// Eight streams side by side, each of the four state words of the eight in
/// one array, so that a draw for all eight is a few operations on 512 bits.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StreamGroup {
    state: [[u64; 8]; 4],
}

impl StreamGroup {
    /// The streams `streams`, side by side.
    pub fn new(streams: [Stream; 8]) -> StreamGroup {
        StreamGroup {
            state: std::array::from_fn(|k| std::array::from_fn(|i| streams[i].state[k])),
        }
    }

    /// Stream `i` of the block as it is now.
    pub fn stream(&self, i: usize) -> Stream {
        Stream {
            state: std::array::from_fn(|k| self.state[k][i]),
        }
    }

    fn set_stream(&mut self, i: usize, stream: &Stream) {
        for k in 0..4 {
            self.state[k][i] = stream.state[k];
        }
    }

    /// For each stream `i` whose bit is set in `drawing`, [`Stream::draw`] below
    /// `counts[i]` (at least 2, below 2^32); the other streams do not move and
    /// their ranks are 0.
    pub fn draw(&mut self, drawing: u8, counts: &[u64; 8]) -> [u64; 8] {
        std::array::from_fn(|i| {
            if (drawing >> i) & 1 == 0 {
                return 0;
            }
            let mut stream = self.stream(i);
            let rank = stream.draw(counts[i] as usize) as u64;
            self.set_stream(i, &stream);
            rank
        })
    }

    /// [`StreamGroup::draw`] with the counts and the ranks bit-sliced: bit `i` of
    /// `counts[p]` is bit `p` of stream `i`'s count, and likewise the ranks.
    #[inline(always)]
    pub fn draw_sliced<const P: usize>(&mut self, drawing: u8, counts: &[u8; P]) -> [u8; P] {
        let mut whole = [0u64; 8];
        for (p, &bits) in counts.iter().enumerate() {
            for (i, count) in whole.iter_mut().enumerate() {
                *count |= u64::from((bits >> i) & 1) << p;
            }
        }
        let ranks = self.draw(drawing, &whole);
        std::array::from_fn(|p| (0..8).fold(0, |bits, i| bits | (((ranks[i] >> p) & 1) as u8) << i))
    }

    /// [`StreamGroup::draw_sliced`] in 512-bit registers: a few dozen instructions
    /// for the eight streams.
    ///
    /// # Safety
    /// The CPU must have AVX-512F.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx512f")]
    #[inline]
    pub unsafe fn draw_sliced_avx512<const P: usize>(&mut self, drawing: u8, counts: &[u8; P]) -> [u8; P] {
        use std::arch::x86_64::*;
        let mut n = _mm512_setzero_si512();
        for (p, &bits) in counts.iter().enumerate() {
            n = _mm512_mask_or_epi64(n, bits, n, _mm512_set1_epi64(1 << p));
        }
        // SAFETY: an unaligned 512-bit load of state word `k` of the eight
        // streams, `[u64; 8]`: exactly its 64 bytes (the CPU has AVX-512F, the
        // caller's contract).
        let load = |k: usize| unsafe { _mm512_loadu_si512(self.state[k].as_ptr().cast()) };
        let (s0, s1, s2, s3) = (load(0), load(1), load(2), load(3));
        let v = _mm512_add_epi64(_mm512_rol_epi64::<23>(_mm512_add_epi64(s0, s3)), s0);
        let t = _mm512_slli_epi64::<17>(s1);
        let (x2, x3) = (_mm512_xor_si512(s2, s0), _mm512_xor_si512(s3, s1));
        let next = [
            _mm512_xor_si512(s0, x3),
            _mm512_xor_si512(s1, x2),
            _mm512_xor_si512(x2, t),
            _mm512_rol_epi64::<45>(x3),
        ];
        for (k, word) in next.into_iter().enumerate() {
            // SAFETY: stores within state word `k`, `[u64; 8]`, the lanes of `drawing` only.
            _mm512_mask_storeu_epi64(self.state[k].as_mut_ptr().cast(), drawing, word);
        }
        // `v * n` from 32-bit halves (n is below 2^32): the low word, and the high word.
        let low_part = _mm512_mul_epu32(v, n);
        let high_part = _mm512_mul_epu32(_mm512_srli_epi64::<32>(v), n);
        let low = _mm512_add_epi64(low_part, _mm512_slli_epi64::<32>(high_part));
        let mut rank =
            _mm512_srli_epi64::<32>(_mm512_add_epi64(high_part, _mm512_srli_epi64::<32>(low_part)));
        let unsure = _mm512_mask_cmplt_epu64_mask(drawing, low, n);
        if unsure != 0 {
            // A low word below `n` needs Lemire's exact test (probability below 2^-32).
            let mut words = [[0u64; 8]; 3];
            for (words, vector) in words.iter_mut().zip([v, n, rank]) {
                // SAFETY: 64 bytes into a `[u64; 8]`.
                _mm512_storeu_si512(words.as_mut_ptr().cast(), vector);
            }
            let [v, n, mut ranks] = words;
            self.settle(unsure, &v, &n, &mut ranks);
            // SAFETY: 64 bytes from a `[u64; 8]`.
            rank = _mm512_loadu_si512(ranks.as_ptr().cast());
        }
        rank = _mm512_maskz_mov_epi64(drawing, rank);
        std::array::from_fn(|p| _mm512_test_epi64_mask(rank, _mm512_set1_epi64(1 << p)))
    }

    /// [`StreamGroup::draw_sliced`] in 256-bit registers, four streams to a register.
    ///
    /// # Safety
    /// The CPU must have AVX2.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    #[inline]
    pub unsafe fn draw_sliced_avx2<const P: usize>(&mut self, drawing: u8, counts: &[u8; P]) -> [u8; P] {
        use std::arch::x86_64::*;
        let lane_bits = _mm256_set_epi64x(8, 4, 2, 1);
        // All ones in the 64-bit lanes of one half whose bits of `bits` are set.
        let lanes_of = |bits: u8, half: usize| {
            let spread = _mm256_set1_epi64x(i64::from(bits >> (4 * half)));
            _mm256_cmpeq_epi64(_mm256_and_si256(spread, lane_bits), lane_bits)
        };
        let rol = |x: __m256i, left: i32| {
            let count = |c: i32| _mm_cvtsi32_si128(c);
            _mm256_or_si256(
                _mm256_sll_epi64(x, count(left)),
                _mm256_srl_epi64(x, count(64 - left)),
            )
        };
        let sign = _mm256_set1_epi64x(i64::MIN);
        let mut v = [_mm256_setzero_si256(); 2];
        let mut n = [_mm256_setzero_si256(); 2];
        let mut rank = [_mm256_setzero_si256(); 2];
        let mut unsure = 0u8;
        for half in 0..2 {
            for (p, &bits) in counts.iter().enumerate() {
                let bit = _mm256_set1_epi64x(1 << p);
                n[half] = _mm256_or_si256(n[half], _mm256_and_si256(lanes_of(bits, half), bit));
            }
            let words = self.state.as_mut_ptr();
            // SAFETY: word `k` of the block's streams `4 * half..4 * half + 4`.
            let state = |k: usize| unsafe { (*words.add(k)).as_mut_ptr().add(4 * half).cast::<i64>() };
            // SAFETY: the four words from `state(k)`, within state word `k`
            // (the CPU has AVX2, the caller's contract).
            let load = |k: usize| unsafe { _mm256_loadu_si256(state(k).cast_const().cast()) };
            let (s0, s1, s2, s3) = (load(0), load(1), load(2), load(3));
            v[half] = _mm256_add_epi64(rol(_mm256_add_epi64(s0, s3), 23), s0);
            let t = _mm256_slli_epi64::<17>(s1);
            let (x2, x3) = (_mm256_xor_si256(s2, s0), _mm256_xor_si256(s3, s1));
            let next = [
                _mm256_xor_si256(s0, x3),
                _mm256_xor_si256(s1, x2),
                _mm256_xor_si256(x2, t),
                rol(x3, 45),
            ];
            let moving = lanes_of(drawing, half);
            for (k, word) in next.into_iter().enumerate() {
                // SAFETY: stores within the four words from `state(k)`, the lanes of `moving` only.
                _mm256_maskstore_epi64(state(k), moving, word);
            }
            // `v * n` from 32-bit halves (n is below 2^32), as in the 512-bit draw.
            let low_part = _mm256_mul_epu32(v[half], n[half]);
            let high_part = _mm256_mul_epu32(_mm256_srli_epi64::<32>(v[half]), n[half]);
            let low = _mm256_add_epi64(low_part, _mm256_slli_epi64::<32>(high_part));
            rank[half] =
                _mm256_srli_epi64::<32>(_mm256_add_epi64(high_part, _mm256_srli_epi64::<32>(low_part)));
            rank[half] = _mm256_and_si256(rank[half], moving);
            // Unsigned `low < n`, as a signed comparison with the top bits flipped.
            let below = _mm256_cmpgt_epi64(_mm256_xor_si256(n[half], sign), _mm256_xor_si256(low, sign));
            let below = _mm256_movemask_pd(_mm256_castsi256_pd(_mm256_and_si256(below, moving)));
            unsure |= (below as u8) << (4 * half);
        }
        if unsure != 0 {
            let mut words = [[0u64; 8]; 3];
            for (words, vectors) in words.iter_mut().zip([v, n, rank]) {
                for (half, vector) in vectors.into_iter().enumerate() {
                    // SAFETY: 32 bytes into words `4 half..4 half + 4` of a `[u64; 8]` (`half` is 0 or 1).
                    _mm256_storeu_si256(words[4 * half..].as_mut_ptr().cast(), vector);
                }
            }
            let [v, n, mut ranks] = words;
            self.settle(unsure, &v, &n, &mut ranks);
            for (half, vector) in rank.iter_mut().enumerate() {
                // SAFETY: 32 bytes from words `4 half..4 half + 4` of a `[u64; 8]` (`half` is 0 or 1).
                *vector = _mm256_loadu_si256(ranks[4 * half..].as_ptr().cast());
            }
        }
        std::array::from_fn(|p| {
            let to_sign = _mm_cvtsi32_si128(63 - p as i32);
            rank.iter().enumerate().fold(0, |bits, (half, &vector)| {
                let top = _mm256_castsi256_pd(_mm256_sll_epi64(vector, to_sign));
                bits | (_mm256_movemask_pd(top) as u8) << (4 * half)
            })
        })
    }

    /// Lemire's exact test for the streams in `unsure`, whose random bits `v`
    /// times their bounds `n` had a low word below the bound: a stream either
    /// keeps its rank (`ranks`) or, rejected, draws again.
    #[cold]
    fn settle(&mut self, unsure: u8, v: &[u64; 8], n: &[u64; 8], ranks: &mut [u64; 8]) {
        let mut unsure = unsure;
        while unsure != 0 {
            let i = unsure.trailing_zeros() as usize;
            unsure &= unsure - 1;
            ranks[i] = match accept(v[i], n[i]) {
                Some(rank) => rank,
                None => {
                    let mut stream = self.stream(i);
                    let rank = stream.draw(n[i] as usize) as u64;
                    self.set_stream(i, &stream);
                    rank
                }
            };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The reference output of xoshiro256++ from state [1, 2, 3, 4], as its
    /// authors' C code computes it.
    #[test]
    fn xoshiro_matches_the_reference_output() {
        let mut stream = Stream { state: [1, 2, 3, 4] };
        let outputs: Vec<u64> = (0..4).map(|_| stream.next_u64()).collect();
        assert_eq!(
            outputs,
            [
                41_943_041,
                58_720_359,
                3_588_806_011_781_223,
                3_591_011_842_654_386
            ]
        );
    }

    /// The same outputs as rand_xoshiro's implementation from the same state.
    #[test]
    fn xoshiro_matches_rand_xoshiro() {
        use rand::{RngCore, SeedableRng};
        let state = [0x0123_4567_89AB_CDEF, 42, u64::MAX, 7];
        let mut seed = [0u8; 32];
        for (k, word) in state.iter().enumerate() {
            seed[8 * k..8 * k + 8].copy_from_slice(&word.to_le_bytes());
        }
        let mut theirs = rand_xoshiro::Xoshiro256PlusPlus::from_seed(seed);
        let mut ours = Stream { state };
        for _ in 0..1000 {
            assert_eq!(ours.next_u64(), theirs.next_u64());
        }
    }

    #[test]
    fn the_rand_traits_draw_from_the_stream() {
        use rand::{Rng, RngCore, SeedableRng};
        let mut a = Stream::new(9, 2);
        let mut b = a.clone();
        assert_eq!(RngCore::next_u64(&mut a), b.next_u64());
        assert_eq!(RngCore::next_u32(&mut a), (b.next_u64() >> 32) as u32);
        let mut bytes = [0u8; 12];
        a.fill_bytes(&mut bytes);
        assert_eq!(bytes[..8], b.next_u64().to_le_bytes());
        // The last four bytes come from one `next_u32`: the high half of a draw.
        assert_eq!(bytes[8..], ((b.next_u64() >> 32) as u32).to_le_bytes());
        assert_eq!(Stream::seed_from_u64(5), Stream::new(5, 0));
        assert_eq!(Stream::from_seed([0; 32]), Stream::new(0, 0));
        let mut seeded = Stream::from_seed([1; 32]);
        assert!((0..100).all(|_| seeded.gen_range(0..7) < 7));
    }

    #[test]
    fn streams_differ() {
        let first: Vec<u64> = (0..3).map(|s| Stream::new(1, s).next_u64()).collect();
        assert!(first[0] != first[1] && first[1] != first[2] && first[0] != first[2]);
        assert_ne!(Stream::new(1, 0), Stream::new(2, 0));
    }

    #[test]
    fn lemire_rejects_exactly_the_biased_low_words() {
        // 2^64 mod 3 = 1: a low word of 0 is rejected, every other accepted.
        assert_eq!(accept(0, 3), None);
        assert_eq!(accept(1, 3), Some(0));
        assert_eq!(accept(u64::MAX, 3), Some(2));
        // Powers of two reject nothing.
        assert_eq!(accept(0, 4), Some(0));
    }

    #[test]
    fn draws_are_below_the_bound_and_cover_it() {
        let mut stream = Stream::new(3, 0);
        let mut seen = [0u32; 7];
        for _ in 0..7000 {
            seen[stream.draw(7)] += 1;
        }
        assert!(seen.iter().all(|&k| k > 800), "{seen:?}");
        assert_eq!(stream.draw(1), 0);
    }

    /// Every sliced draw of a block draws what its plain draw does.
    #[test]
    fn sliced_draws_are_plain_draws() {
        let mut streams: [Stream; 8] = std::array::from_fn(|i| Stream::new(4, i as u64));
        // Their first draws need the exact test (see below).
        streams[2].state = [0, 5, 6, 0];
        streams[6].state = [0, 7, 8, 0];
        let (mut plain, mut sliced) = (StreamGroup::new(streams.clone()), StreamGroup::new(streams));
        #[cfg(target_arch = "x86_64")]
        let mut wide = std::arch::is_x86_feature_detected!("avx512f").then(|| plain.clone());
        #[cfg(target_arch = "x86_64")]
        let mut half_wide = std::arch::is_x86_feature_detected!("avx2").then(|| plain.clone());
        for round in 0..300u64 {
            let drawing = (round as u8).wrapping_mul(91) | 0b0100_0101;
            let counts: [u64; 8] = std::array::from_fn(|i| 2 + (round * 11 + i as u64 * 5) % 1000);
            let ranks = plain.draw(drawing, &counts);
            let sliced_counts: [u8; 10] =
                std::array::from_fn(|p| (0..8).fold(0, |b, i| b | (((counts[i] >> p) & 1) as u8) << i));
            let expected: [u8; 10] =
                std::array::from_fn(|p| (0..8).fold(0, |b, i| b | (((ranks[i] >> p) & 1) as u8) << i));
            assert_eq!(
                sliced.draw_sliced(drawing, &sliced_counts),
                expected,
                "round {round}"
            );
            #[cfg(target_arch = "x86_64")]
            if let Some(wide) = &mut wide {
                // SAFETY: the CPU has AVX-512F.
                let drawn = unsafe { wide.draw_sliced_avx512(drawing, &sliced_counts) };
                assert_eq!(drawn, expected, "round {round}, AVX-512");
                assert_eq!(wide, &plain);
            }
            #[cfg(target_arch = "x86_64")]
            if let Some(half_wide) = &mut half_wide {
                // SAFETY: the CPU has AVX2.
                let drawn = unsafe { half_wide.draw_sliced_avx2(drawing, &sliced_counts) };
                assert_eq!(drawn, expected, "round {round}, AVX2");
                assert_eq!(half_wide, &plain);
            }
            assert_eq!(sliced, plain);
        }
    }

    /// A block draws what its streams would alone, including after a low word
    /// that needs the exact test (a state whose first and last words are 0
    /// gives 0 random bits next).
    #[test]
    fn blocks_draw_as_their_streams_do() {
        let mut streams: [Stream; 8] = std::array::from_fn(|i| Stream::new(9, i as u64));
        streams[3].state = [0, 5, 6, 0];
        streams[5].state = [0, 7, 8, 0];
        let mut block = StreamGroup::new(streams.clone());
        for round in 0..200u64 {
            let drawing = (round as u8).wrapping_mul(37) | 0b0010_1000;
            let counts: [u64; 8] = std::array::from_fn(|i| 2 + (round * 7 + i as u64 * 13) % 300);
            let ranks = block.draw(drawing, &counts);
            for i in 0..8 {
                let expected = if (drawing >> i) & 1 != 0 {
                    streams[i].draw(counts[i] as usize) as u64
                } else {
                    0
                };
                assert_eq!(ranks[i], expected, "round {round}, stream {i}");
                assert_eq!(block.stream(i), streams[i], "round {round}, stream {i}");
            }
        }
    }
}
