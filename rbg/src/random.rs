//! A small deterministic random generator for playouts: xoshiro256** seeded
//! through splitmix64, with Lemire's unbiased bounded draw.

/// A seeded generator; the same seed gives the same draws.
///
/// ```
/// let (mut a, mut b) = (ggpnet_rbg::Rng::new(3), ggpnet_rbg::Rng::new(3));
/// assert_eq!(a.below(10), b.below(10));
/// assert!(a.below(10) < 10);
/// ```
#[derive(Clone, Debug)]
pub struct Rng {
    s: [u64; 4],
}

impl Rng {
    /// A generator for `seed`.
    ///
    /// ```
    /// let mut rng = ggpnet_rbg::Rng::new(0);
    /// assert_ne!(rng.next_u64(), rng.next_u64());
    /// ```
    pub fn new(seed: u64) -> Rng {
        let mut x = seed;
        let mut next = || {
            x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = x;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^ (z >> 31)
        };
        Rng {
            s: [next(), next(), next(), next()],
        }
    }

    /// The next 64 random bits.
    ///
    /// ```
    /// let mut rng = ggpnet_rbg::Rng::new(5);
    /// let _bits: u64 = rng.next_u64();
    /// ```
    pub fn next_u64(&mut self) -> u64 {
        let result = self.s[1].wrapping_mul(5).rotate_left(7).wrapping_mul(9);
        let t = self.s[1] << 17;
        self.s[2] ^= self.s[0];
        self.s[3] ^= self.s[1];
        self.s[1] ^= self.s[2];
        self.s[0] ^= self.s[3];
        self.s[2] ^= t;
        self.s[3] = self.s[3].rotate_left(45);
        result
    }

    /// A number in `0..n`, every one equally likely (`n` > 0).
    ///
    /// ```
    /// let mut rng = ggpnet_rbg::Rng::new(9);
    /// assert!((0..100).all(|_| rng.below(3) < 3));
    /// ```
    pub fn below(&mut self, n: usize) -> usize {
        let n = n as u64;
        let mut m = (self.next_u64() as u128) * (n as u128);
        if (m as u64) < n {
            let threshold = n.wrapping_neg() % n;
            while (m as u64) < threshold {
                m = (self.next_u64() as u128) * (n as u128);
            }
        }
        (m >> 64) as usize
    }
}
