//! The cores searches run on, shared by every match: a search runs in short
//! slices, each holding one core, so that however many matches search at once,
//! no more threads than cores are runnable and each one sees its deadline pass
//! within a slice.

use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

/// Longest slice of a search on one core.
const SLICE: Duration = Duration::from_millis(5);

/// Cores free for a slice of search.
#[derive(Debug)]
pub(crate) struct Cpu {
    free: Mutex<usize>,
    released: Condvar,
}

/// A core held for a slice; given back when dropped.
pub(crate) struct Slice<'c> {
    cpu: &'c Cpu,
    end: Instant,
}

impl Cpu {
    /// `cores` cores (at least 1).
    pub(crate) fn new(cores: usize) -> Cpu {
        Cpu {
            free: Mutex::new(cores.max(1)),
            released: Condvar::new(),
        }
    }

    /// A core for a slice ending by `deadline`, waiting for one until then;
    /// `None` once the deadline has passed.
    pub(crate) fn slice(&self, deadline: Instant) -> Option<Slice<'_>> {
        let mut free = self.free.lock().unwrap_or_else(|e| e.into_inner());
        loop {
            let now = Instant::now();
            if now >= deadline {
                return None;
            }
            if *free > 0 {
                *free -= 1;
                return Some(Slice {
                    cpu: self,
                    end: (now + SLICE).min(deadline),
                });
            }
            free = self
                .released
                .wait_timeout(free, deadline - now)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
    }
}

impl Slice<'_> {
    /// When the slice ends.
    pub(crate) fn end(&self) -> Instant {
        self.end
    }
}

impl Drop for Slice<'_> {
    fn drop(&mut self) {
        *self.cpu.free.lock().unwrap_or_else(|e| e.into_inner()) += 1;
        self.cpu.released.notify_one();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_more_slices_than_cores_and_none_past_the_deadline() {
        let cpu = Cpu::new(2);
        let deadline = Instant::now() + Duration::from_millis(50);
        let a = cpu.slice(deadline).expect("a core");
        let b = cpu.slice(deadline).expect("a core");
        assert!(a.end() <= deadline && b.end() <= deadline);
        // Both cores held: waits until the deadline, then gives up.
        assert!(cpu.slice(deadline).is_none());
        assert!(Instant::now() >= deadline);
        drop(a);
        let later = Instant::now() + Duration::from_millis(50);
        assert!(cpu.slice(later).is_some());
    }
}
