//! Several calls at once, one thread each: a council's members, a fan-out's
//! candidates and reviewers.
//!
//! Every thread gets its own clone of the `Interrupts` (each peer's
//! supervisor subscribes to the same signals), and the caller waits for all
//! of them: no thread outlives the call, so no peer outlives its group.

use crate::error::{Error, Result};
use crate::process::Interrupts;

/// Run `f` for each index `0..n` on its own thread and return each result
/// in index order. An interrupt (Ctrl-C, `cancel`) in any of them is the
/// whole call's error; any other error stays that index's outcome.
pub fn each<T, F>(n: usize, ints: &Interrupts, f: F) -> Result<Vec<Result<T>>>
where
    T: Send,
    F: Fn(usize, &mut Interrupts) -> Result<T> + Sync,
{
    let out: Vec<Result<T>> = std::thread::scope(|s| {
        let hs: Vec<_> = (0..n)
            .map(|i| {
                let mut ints = ints.clone();
                let f = &f;
                s.spawn(move || f(i, &mut ints))
            })
            .collect();
        hs.into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err(Error::Internal("a peer's thread panicked".into())))
            })
            .collect()
    });
    if let Some(i) = out
        .iter()
        .position(|r| matches!(r, Err(Error::Interrupted { .. })))
    {
        return Err(out.into_iter().nth(i).and_then(Result::err).unwrap());
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_come_back_in_order_and_an_interrupt_wins() {
        let ints = Interrupts::install().unwrap();
        let r = each(4, &ints, |i, _| {
            std::thread::sleep(std::time::Duration::from_millis((4 - i as u64) * 5));
            if i == 2 {
                Err(Error::Internal("two".into()))
            } else {
                Ok(i * 10)
            }
        })
        .unwrap();
        let got: Vec<String> = r
            .iter()
            .map(|x| match x {
                Ok(v) => v.to_string(),
                Err(e) => e.kind().to_string(),
            })
            .collect();
        assert_eq!(got, ["0", "10", "internal", "30"]);
        let e = each(3, &ints, |i, _| {
            if i == 1 {
                Err(Error::Interrupted { signal: "SIGINT" })
            } else {
                Ok(())
            }
        })
        .err()
        .unwrap();
        assert_eq!(e.kind(), "interrupted");
    }
}
