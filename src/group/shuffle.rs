//! Seeded shuffles and labels: the order in which a judge or a critic sees
//! several peers' work, replayable from `--seed`, and the labels it sees.

/// A small, well-mixed PRNG (splitmix64): the shuffles must replay exactly
/// from `--seed` on every platform and release, so no crate's algorithm
/// (which may change between versions) decides them.
pub struct Rng(u64);

impl Rng {
    /// An independent stream per `stream` (a critic's index, the chair's, a
    /// judge's).
    pub fn new(seed: u64, stream: u64) -> Rng {
        let mut r = Rng(seed ^ stream.wrapping_mul(0xA076_1D64_78BD_642F));
        r.next_u64();
        r
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Fisher–Yates.
    pub fn shuffle<T>(&mut self, v: &mut [T]) {
        for i in (1..v.len()).rev() {
            let j = (self.next_u64() % (i as u64 + 1)) as usize;
            v.swap(i, j);
        }
    }
}

/// `A`, `B`, … for positions 0, 1, …
pub fn label(i: usize) -> String {
    let c = (b'A' + (i % 26) as u8) as char;
    if i < 26 {
        c.to_string()
    } else {
        format!("{c}{}", i / 26)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shuffles_replay_and_streams_differ() {
        let base: Vec<usize> = (0..6).collect();
        let order = |seed, stream| {
            let mut v = base.clone();
            Rng::new(seed, stream).shuffle(&mut v);
            v
        };
        assert_eq!(order(7, 1), order(7, 1));
        assert_ne!(order(7, 1), order(7, 2));
        assert_ne!(order(7, 1), order(8, 1));
        let mut sorted = order(7, 1);
        sorted.sort();
        assert_eq!(sorted, base);
    }

    #[test]
    fn labels() {
        assert_eq!(label(0), "A");
        assert_eq!(label(2), "C");
        assert_eq!(label(27), "B1");
    }
}
