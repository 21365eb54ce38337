//! Ids for runs and jobs: short, sortable by time, safe in paths.
//!
//! 13 characters of Crockford base32 (lowercase): 9 for the milliseconds
//! since the epoch (good until the year 3084), 4 random. Every id that comes
//! from outside is validated against exactly this alphabet and length, so no
//! path traversal or odd character can reach the file system.

use std::time::{SystemTime, UNIX_EPOCH};

const ALPHABET: &[u8; 32] = b"0123456789abcdefghjkmnpqrstvwxyz";
pub const ID_LEN: usize = 13;

/// Milliseconds since the epoch (0 if the clock is before it).
pub fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

pub fn new_id() -> String {
    let ms = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0);
    let mut s = String::with_capacity(ID_LEN);
    for i in (0..9).rev() {
        s.push(ALPHABET[((ms >> (i * 5)) & 31) as usize] as char);
    }
    s.push_str(&random_suffix(4));
    s
}

/// `n` characters of the id alphabet, different at every call. Uniqueness,
/// not secrecy, is what matters (ids and temp-file names): they come from
/// std's per-thread random hash keys (read from the kernel once per
/// thread) with a counter and the time, rather than from opening,
/// reading and closing `/dev/urandom` at every call (three system calls,
/// four times in every run).
pub fn random_suffix(n: usize) -> String {
    use std::hash::{BuildHasher, Hasher};
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0);
    let mut out = String::with_capacity(n);
    let mut word = 0u64;
    for i in 0..n {
        // 12 characters of 5 bits from each 64-bit hash.
        if i % 12 == 0 {
            let mut h = std::hash::RandomState::new().build_hasher();
            h.write_u64(COUNTER.fetch_add(1, Ordering::Relaxed));
            h.write_u64(nanos);
            word = h.finish();
        }
        out.push(ALPHABET[(word & 31) as usize] as char);
        word >>= 5;
    }
    out
}

pub fn is_valid(id: &str) -> bool {
    id.len() == ID_LEN && id.bytes().all(|b| ALPHABET.contains(&b))
}

/// `<id>-<n>`: the n-th of something made under one id (a fan-out's
/// candidate n), n from 1 to 9999 without leading zeros.
pub fn is_nth(s: &str) -> bool {
    s.rsplit_once('-').is_some_and(|(id, n)| {
        is_valid(id)
            && (1..=4).contains(&n.len())
            && !n.starts_with('0')
            && n.bytes().all(|b| b.is_ascii_digit())
    })
}

/// What is made under one id: its n-th (`is_nth`), or attempt k (2 to
/// 99) of its n-th, `<id>-<n>-a<k>` (a fan-out candidate's fallback agent
/// in a worktree of its own).
pub fn is_made(s: &str) -> bool {
    is_nth(s) || attempt_of(s).is_some_and(is_nth)
}

/// What `<x>-a<k>` (attempt k, 2 to 99, of whatever `x` names: a fallback
/// agent's worktree) is an attempt of; `None` for anything else.
pub fn attempt_of(s: &str) -> Option<&str> {
    s.rsplit_once("-a")
        .filter(|(_, k)| {
            (1..=2).contains(&k.len())
                && !k.starts_with('0')
                && *k != "1"
                && k.bytes().all(|b| b.is_ascii_digit())
        })
        .map(|(x, _)| x)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_valid_and_sortable() {
        let a = new_id();
        std::thread::sleep(std::time::Duration::from_millis(2));
        let b = new_id();
        assert!(is_valid(&a) && is_valid(&b));
        assert!(a[..9] < b[..9]);
    }

    #[test]
    fn rejects_traversal_and_odd_characters() {
        for bad in [
            "../etc",
            "",
            "0123456789abc/",
            "0123456789ABC",
            "0123456789abi",
            "012345678\0abc",
            "0123456789abé",
            "0123456789abcd",
        ] {
            assert!(!is_valid(bad), "{bad:?}");
        }
        assert!(is_valid("0123456789abc"));
    }
}
