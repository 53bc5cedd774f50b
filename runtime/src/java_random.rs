//! Java's `java.util.Random`: the 48-bit linear congruential generator whose sequences Flink's
//! functions (`RAND(seed)`) and the Nexmark generator draw from. The same seed gives the same
//! numbers as the JVM, call for call.

const MULTIPLIER: u64 = 0x5_DEEC_E66D;
const INCREMENT: u64 = 0xB;
const MASK: u64 = (1 << 48) - 1;

/// A `java.util.Random`: [`JavaRandom::new`] is `new Random(seed)`, and each method draws what
/// the Java method of the same name draws.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct JavaRandom {
    state: u64,
}

impl JavaRandom {
    /// `new Random(seed)`.
    pub fn new(seed: i64) -> Self {
        JavaRandom { state: (seed as u64 ^ MULTIPLIER) & MASK }
    }

    /// The generator whose internal 48-bit state is `state` (as [`JavaRandom::state`] gave it).
    pub fn from_state(state: u64) -> Self {
        JavaRandom { state: state & MASK }
    }

    /// The internal 48-bit state, to go on with the same sequence later.
    pub fn state(&self) -> u64 {
        self.state
    }

    /// `next(bits)`: advances the state and returns its top `bits` bits (as Java's `int` cast).
    pub fn next_bits(&mut self, bits: u32) -> i32 {
        self.state = (self.state.wrapping_mul(MULTIPLIER).wrapping_add(INCREMENT)) & MASK;
        (self.state >> (48 - bits)) as i32
    }

    /// `nextInt()`: any `int`.
    pub fn next_int(&mut self) -> i32 {
        self.next_bits(32)
    }

    /// `nextInt(bound)`: an `int` in `[0, bound)`, without the modulo bias (Java's rejection
    /// loop). `bound` must be positive.
    pub fn next_int_below(&mut self, bound: i32) -> i32 {
        debug_assert!(bound > 0, "bound must be positive");
        let r = self.next_bits(31);
        let m = bound - 1;
        if bound & m == 0 {
            return ((i64::from(bound) * i64::from(r)) >> 31) as i32;
        }
        let mut u = r;
        loop {
            let r = u % bound;
            if u.wrapping_sub(r).wrapping_add(m) >= 0 {
                return r;
            }
            u = self.next_bits(31);
        }
    }

    /// `nextLong()`.
    pub fn next_long(&mut self) -> i64 {
        let high = i64::from(self.next_bits(32));
        let low = i64::from(self.next_bits(32));
        (high << 32).wrapping_add(low)
    }

    /// `nextDouble()`: a double in `[0, 1)` with 53 random bits.
    pub fn next_double(&mut self) -> f64 {
        let high = u64::from(self.next_bits(26) as u32);
        let low = u64::from(self.next_bits(27) as u32);
        ((high << 27) + low) as f64 / (1u64 << 53) as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Values a JVM prints for the same calls (`java.util.Random` of OpenJDK 17).
    #[test]
    fn draws_what_the_jvm_draws() {
        let mut random = JavaRandom::new(42);
        assert_eq!(random.next_int(), -1_170_105_035);
        assert_eq!(random.next_int_below(10), 3);
        assert_eq!(random.next_int_below(1024), 699);
        assert_eq!(random.next_int_below(1_000_000_007), 102_948_884);
        assert_eq!(random.next_long(), 5_694_868_678_511_409_995);
        assert_eq!(random.next_double(), 0.277_078_490_074_136_65);
        let mut negative = JavaRandom::new(-7);
        assert_eq!(negative.next_int_below(13), 6);
        assert_eq!(negative.next_int_below(26), 7);
        assert_eq!(negative.next_double(), 0.673_181_190_279_803_8);
        assert_eq!((10f64.powf(negative.next_double() * 6.0) * 100.0 + 0.5).floor() as i64, 134_567);
        let resumed = JavaRandom::from_state(random.state());
        assert_eq!(resumed, random);
    }
}
