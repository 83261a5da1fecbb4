//! Seeded random streams: xoshiro256++ seeded through SplitMix64.
//!
//! Every component that needs randomness gets its own stream, derived from the scenario seed
//! and a stable component label, so adding a flow never perturbs another flow's draws.
//! Only integer arithmetic and `libm` are used, so draws are identical on every platform.

/// SplitMix64 step: used to expand seeds.
#[inline]
fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// FNV-1a over the label, to turn a component name into a number.
fn label_hash(label: &str) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in label.as_bytes() {
        h ^= *b as u64;
        h = h.wrapping_mul(0x0000_0100_0000_01B3);
    }
    h
}

/// Seed of the stream for component (`label`, `index`) of a run seeded with `seed`.
pub fn stream_seed(seed: u64, label: &str, index: u64) -> u64 {
    let mut s = seed ^ label_hash(label).rotate_left(17) ^ index.wrapping_mul(0xD6E8_FEB8_6659_FD93);
    splitmix64(&mut s);
    splitmix64(&mut s)
}

/// xoshiro256++ generator.
#[derive(Clone, Debug)]
pub struct Rng {
    s: [u64; 4],
}

impl Rng {
    pub fn new(seed: u64) -> Self {
        let mut sm = seed;
        let s = [splitmix64(&mut sm), splitmix64(&mut sm), splitmix64(&mut sm), splitmix64(&mut sm)];
        Rng { s }
    }

    /// The stream for component (`label`, `index`) of a run seeded with `seed`.
    pub fn stream(seed: u64, label: &str, index: u64) -> Self {
        Rng::new(stream_seed(seed, label, index))
    }

    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        let result = (self.s[0].wrapping_add(self.s[3])).rotate_left(23).wrapping_add(self.s[0]);
        let t = self.s[1] << 17;
        self.s[2] ^= self.s[0];
        self.s[3] ^= self.s[1];
        self.s[1] ^= self.s[2];
        self.s[0] ^= self.s[3];
        self.s[2] ^= t;
        self.s[3] = self.s[3].rotate_left(45);
        result
    }

    /// Uniform on [0, 1) with 53 bits of precision.
    #[inline]
    pub fn uniform(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// Uniform on [lo, hi).
    #[inline]
    pub fn range(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * self.uniform()
    }

    /// True with probability `p`.
    #[inline]
    pub fn bernoulli(&mut self, p: f64) -> bool {
        self.uniform() < p
    }

    /// Exponential with the given mean.
    pub fn exponential(&mut self, mean: f64) -> f64 {
        // 1 - u is in (0, 1], so the log is finite.
        -mean * libm::log(1.0 - self.uniform())
    }

    /// Pareto with the given mean and shape (> 1).
    pub fn pareto(&mut self, mean: f64, shape: f64) -> f64 {
        let scale = mean * (shape - 1.0) / shape;
        scale / libm::pow(1.0 - self.uniform(), 1.0 / shape)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streams_are_reproducible_and_distinct() {
        let a: Vec<u64> = (0..4).map({
            let mut r = Rng::stream(1, "flow", 0);
            move |_| r.next_u64()
        }).collect();
        let b: Vec<u64> = (0..4).map({
            let mut r = Rng::stream(1, "flow", 0);
            move |_| r.next_u64()
        }).collect();
        let c: Vec<u64> = (0..4).map({
            let mut r = Rng::stream(1, "flow", 1);
            move |_| r.next_u64()
        }).collect();
        assert_eq!(a, b);
        assert_ne!(a, c);
    }

    #[test]
    fn uniform_mean_and_range() {
        let mut r = Rng::new(42);
        let n = 200_000;
        let mut sum = 0.0;
        for _ in 0..n {
            let u = r.uniform();
            assert!((0.0..1.0).contains(&u));
            sum += u;
        }
        let mean = sum / n as f64;
        assert!((mean - 0.5).abs() < 0.005, "mean {mean}");
    }

    #[test]
    fn exponential_mean() {
        let mut r = Rng::new(7);
        let n = 200_000;
        let mean: f64 = (0..n).map(|_| r.exponential(2.0)).sum::<f64>() / n as f64;
        assert!((mean - 2.0).abs() < 0.03, "mean {mean}");
    }
}
