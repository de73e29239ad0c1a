//! One wake-up shared by several sources — the channels of a room's members, a member's own
//! channel and its action queue — so the one thread that serves them all waits once for any
//! of them, instead of on each in turn.

use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

/// Rung by a source when it has something; a ring before the wait is not lost.
#[derive(Debug, Default)]
pub struct Bell {
    rung: Mutex<bool>,
    wake: Condvar,
}

impl Bell {
    pub fn ring(&self) {
        *self.rung.lock().unwrap_or_else(|p| p.into_inner()) = true;
        self.wake.notify_all();
    }

    /// Waits until the bell rings or `timeout` passes, and silences it; `true` when it rang.
    pub fn wait(&self, timeout: Duration) -> bool {
        let deadline = Instant::now() + timeout;
        let mut rung = self.rung.lock().unwrap_or_else(|p| p.into_inner());
        while !*rung {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return false;
            }
            rung = match self.wake.wait_timeout(rung, left) {
                Ok((guard, _)) => guard,
                Err(poisoned) => poisoned.into_inner().0,
            };
        }
        *rung = false;
        true
    }
}

/// Where a bell goes once someone hands one over: a source made before its listener holds
/// the slot, and rings whatever bell is in it (none yet: nothing to ring).
#[derive(Debug, Clone, Default)]
pub struct BellSlot(Arc<Mutex<Option<Arc<Bell>>>>);

impl BellSlot {
    /// Rings `bell` from now on.
    pub fn set(&self, bell: Arc<Bell>) {
        *self.0.lock().unwrap_or_else(|p| p.into_inner()) = Some(bell);
    }

    /// Rings the bell in the slot, if there is one.
    pub fn ring(&self) {
        if let Some(bell) = &*self.0.lock().unwrap_or_else(|p| p.into_inner()) {
            bell.ring();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_ring_wakes_the_waiter_and_is_not_lost_when_it_comes_first() {
        let bell = Arc::new(Bell::default());
        assert!(!bell.wait(Duration::from_millis(1)), "nobody rang");
        bell.ring();
        assert!(bell.wait(Duration::ZERO), "a ring before the wait");
        assert!(!bell.wait(Duration::ZERO), "one ring, one wake");
        let ringer = Arc::clone(&bell);
        let started = Instant::now();
        let thread = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(20));
            ringer.ring();
        });
        assert!(bell.wait(Duration::from_secs(10)));
        assert!(started.elapsed() < Duration::from_secs(10));
        thread.join().unwrap();
    }
}
