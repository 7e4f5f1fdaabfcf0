//! Counting distinct users and issues in bounded memory.
//!
//! A set holds the 64-bit hashes of what it counted, exactly, up to a limit;
//! past it the hashes go into a HyperLogLog sketch of fixed size and the
//! count becomes an estimate (said so in every output). The limits are
//! chosen by what a set counts: a whole export's users (many, few sets) or
//! one message's (usually few, up to 100,000 sets).
//!
//! Everything here is integer work or the four IEEE operations, so the same
//! input gives the same estimate natively and in wasm (no `ln` from a
//! platform's libm: [`ln`] is written out).

use std::collections::HashSet;
use std::hash::{BuildHasherDefault, Hasher};

/// The hash of a user or issue key: what sets hold.
pub(crate) fn key_hash(key: &str) -> u64 {
    xxhash_rust::xxh3::xxh3_64(key.as_bytes())
}

/// A hasher for values that are hashes already.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct Prehashed(u64);

impl Hasher for Prehashed {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        // Only u64 keys are hashed with it; fold anything else anyway.
        for &b in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(b);
        }
    }
    fn write_u64(&mut self, value: u64) {
        self.0 = value;
    }
}

pub(crate) type PrehashedSet = HashSet<u64, BuildHasherDefault<Prehashed>>;

/// The limits of one kind of set: exact up to `exact` distinct values, then
/// a sketch of `2^precision` one-byte registers.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Limits {
    pub exact: usize,
    pub precision: u32,
}

/// A whole export's users or issues: exact to 65,536, then ±0.8 % (16 KB).
pub(crate) const WIDE: Limits = Limits {
    exact: 1 << 16,
    precision: 14,
};
/// One pattern's or category's: exact to 4,096, then ±1.6 % (4 KB).
pub(crate) const PATTERN: Limits = Limits {
    exact: 1 << 12,
    precision: 12,
};
/// One message's: exact to 64, then ±3.2 % (1 KB). Up to 100,000 of them,
/// but all their exact values together are at most one per event, and a
/// message needs 64 users for a sketch.
pub(crate) const MESSAGE: Limits = Limits {
    exact: 64,
    precision: 10,
};

/// Up to this many hashes are kept in a plain list (searched in order).
const LIST: usize = 32;

/// A distinct count.
#[derive(Debug, Clone)]
pub(crate) struct Distinct {
    limits: Limits,
    repr: Repr,
}

#[derive(Debug, Clone)]
enum Repr {
    List(Vec<u64>),
    Set(PrehashedSet),
    Sketch(Box<[u8]>),
}

impl Distinct {
    pub(crate) fn new(limits: Limits) -> Distinct {
        Distinct {
            limits,
            repr: Repr::List(Vec::new()),
        }
    }

    /// Counts `hash` (a [`key_hash`]).
    pub(crate) fn insert(&mut self, hash: u64) {
        match &mut self.repr {
            Repr::List(list) => {
                if list.contains(&hash) {
                    return;
                }
                list.push(hash);
                if list.len() > self.limits.exact {
                    let list = std::mem::take(list);
                    self.repr = Repr::Sketch(self.sketch_of(list));
                } else if list.len() > LIST {
                    let set = list.drain(..).collect();
                    self.repr = Repr::Set(set);
                }
            }
            Repr::Set(set) => {
                set.insert(hash);
                if set.len() > self.limits.exact {
                    let set = std::mem::take(set);
                    self.repr = Repr::Sketch(self.sketch_of(set));
                }
            }
            Repr::Sketch(registers) => add(registers, self.limits.precision, hash),
        }
    }

    /// Counts everything `other` counted (same limits).
    pub(crate) fn merge(&mut self, other: &Distinct) {
        match &other.repr {
            Repr::List(list) => list.iter().for_each(|&h| self.insert(h)),
            Repr::Set(set) => set.iter().for_each(|&h| self.insert(h)),
            Repr::Sketch(theirs) => {
                if !matches!(self.repr, Repr::Sketch(_)) {
                    let hashes: Vec<u64> = match &mut self.repr {
                        Repr::List(list) => std::mem::take(list),
                        Repr::Set(set) => set.drain().collect(),
                        Repr::Sketch(_) => Vec::new(),
                    };
                    self.repr = Repr::Sketch(self.sketch_of(hashes));
                }
                if let Repr::Sketch(mine) = &mut self.repr {
                    for (m, t) in mine.iter_mut().zip(theirs.iter()) {
                        *m = (*m).max(*t);
                    }
                }
            }
        }
    }

    /// The count, and whether it is an estimate.
    pub(crate) fn count(&self) -> (u64, bool) {
        match &self.repr {
            Repr::List(list) => (list.len() as u64, false),
            Repr::Set(set) => (set.len() as u64, false),
            Repr::Sketch(registers) => (estimate(registers), true),
        }
    }

    fn sketch_of(&self, hashes: impl IntoIterator<Item = u64>) -> Box<[u8]> {
        let mut registers = vec![0u8; 1 << self.limits.precision].into_boxed_slice();
        for hash in hashes {
            add(&mut registers, self.limits.precision, hash);
        }
        registers
    }
}

fn add(registers: &mut [u8], precision: u32, hash: u64) {
    let index = (hash >> (64 - precision)) as usize;
    // The rank of the first 1 bit among the remaining 64 - p bits.
    let rest = (hash << precision) | (1 << (precision - 1));
    let rank = rest.leading_zeros() as u8 + 1;
    if registers[index] < rank {
        registers[index] = rank;
    }
}

/// HyperLogLog's estimate (Flajolet et al., with the linear-counting
/// correction for small counts), rounded to a whole number.
fn estimate(registers: &[u8]) -> u64 {
    let m = registers.len() as f64;
    let alpha = match registers.len() {
        16 => 0.673,
        32 => 0.697,
        64 => 0.709,
        _ => 0.7213 / (1.0 + 1.079 / m),
    };
    let mut sum = 0.0;
    let mut zeros = 0u32;
    for &r in registers {
        // 2^-r exactly.
        sum += f64::from_bits((1023 - u64::from(r)) << 52);
        if r == 0 {
            zeros += 1;
        }
    }
    let raw = alpha * m * m / sum;
    let value = if raw <= 2.5 * m && zeros > 0 {
        m * ln(m / f64::from(zeros))
    } else {
        raw
    };
    (value + 0.5) as u64
}

/// The natural logarithm of a positive finite `x`, from the four IEEE
/// operations only (the same bits on every platform):
/// `x = f · 2^e` with `f` in [1, 2), `ln f = 2 atanh((f-1)/(f+1))`.
fn ln(x: f64) -> f64 {
    const LN_2: f64 = std::f64::consts::LN_2;
    let bits = x.to_bits();
    let exponent = ((bits >> 52) & 0x7ff) as i64 - 1023;
    let fraction = f64::from_bits((bits & ((1 << 52) - 1)) | (1023 << 52));
    let s = (fraction - 1.0) / (fraction + 1.0);
    let s2 = s * s;
    let mut term = s;
    let mut total = 0.0;
    let mut k = 1.0;
    // s <= 1/3, so each term is at most a ninth of the one before.
    for _ in 0..20 {
        total += term / k;
        term *= s2;
        k += 2.0;
    }
    exponent as f64 * LN_2 + 2.0 * total
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn exact_up_to_the_limit_then_an_estimate_within_its_error() {
        let mut users = Distinct::new(PATTERN);
        for i in 0..4096u64 {
            users.insert(key_hash(&format!("user-{i}")));
            users.insert(key_hash(&format!("user-{i}")));
        }
        assert_eq!(users.count(), (4096, false));
        for i in 4096..100_000u64 {
            users.insert(key_hash(&format!("user-{i}")));
        }
        let (count, estimated) = users.count();
        assert!(estimated);
        // ±1.6 % is one standard error; allow four.
        assert!(
            (count as f64 - 100_000.0).abs() < 100_000.0 * 0.064,
            "{count}"
        );
    }

    #[test]
    fn small_sketches_count_small_sets_closely() {
        let mut users = Distinct::new(MESSAGE);
        for i in 0..200u64 {
            users.insert(key_hash(&format!("u{i}")));
        }
        let (count, estimated) = users.count();
        assert!(estimated);
        assert!((180..=220).contains(&count), "{count}");
    }

    #[test]
    fn merging_is_a_union() {
        let (mut a, mut b) = (Distinct::new(MESSAGE), Distinct::new(MESSAGE));
        for i in 0..10u64 {
            a.insert(key_hash(&i.to_string()));
            b.insert(key_hash(&(i + 5).to_string()));
        }
        a.merge(&b);
        assert_eq!(a.count(), (15, false));
        let mut big = Distinct::new(MESSAGE);
        for i in 0..1000u64 {
            big.insert(key_hash(&i.to_string()));
        }
        a.merge(&big);
        let (count, estimated) = a.count();
        assert!(estimated && (900..1100).contains(&count), "{count}");
    }

    #[test]
    fn ln_agrees_with_the_platform_closely() {
        for x in [1.0, 1.5, 2.0, 3.0, 10.0, 256.0 / 3.0, 1e-3, 16384.0] {
            assert!((ln(x) - x.ln()).abs() < 1e-12, "{x}");
        }
    }
}
