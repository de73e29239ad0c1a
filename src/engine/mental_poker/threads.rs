//! A game's heavy work off the session thread: RSA key generation and the sealed tables
//! (one RSA private operation per card) run on threads of their own, while the join, ready
//! and setup frames go by, and may use every CPU — a self-play side's thread is pinned to one
//! CPU (`selfplay::cpu`), and new threads would inherit that.

use std::thread::{self, JoinHandle};

/// Work running on its own thread.
pub(crate) struct Background<T>(JoinHandle<T>);

impl<T: Send + 'static> Background<T> {
    pub fn start(work: impl FnOnce() -> T + Send + 'static) -> Background<T> {
        Background(thread::spawn(move || {
            any_cpu();
            work()
        }))
    }

    pub fn wait(self) -> T {
        self.0.join().expect("background work does not panic")
    }
}

/// `work` on every item, split over the available CPUs; the results in item order.
pub(crate) fn parallel_map<T: Sync, U: Send>(items: &[T], work: impl Fn(&T) -> U + Sync) -> Vec<U> {
    let threads = thread::available_parallelism().map_or(1, |n| n.get());
    let chunk = items.len().div_ceil(threads).max(1);
    thread::scope(|scope| {
        let parts: Vec<_> = items
            .chunks(chunk)
            .map(|part| {
                let work = &work;
                scope.spawn(move || {
                    any_cpu();
                    part.iter().map(work).collect::<Vec<U>>()
                })
            })
            .collect();
        parts
            .into_iter()
            .flat_map(|part| part.join().expect("a worker does not panic"))
            .collect()
    })
}

/// `first` on a helper thread and `second` on this one, at the same time.
pub(crate) fn both<A: Send, B>(
    first: impl FnOnce() -> A + Send,
    second: impl FnOnce() -> B,
) -> (A, B) {
    thread::scope(|scope| {
        let helper = scope.spawn(|| {
            any_cpu();
            first()
        });
        let second = second();
        (helper.join().expect("a worker does not panic"), second)
    })
}

/// Lets the calling thread run on any CPU (Linux; elsewhere threads are not pinned).
fn any_cpu() {
    #[cfg(target_os = "linux")]
    // SAFETY: the set is zero-initialised and filled with CPU_SET before use; pid 0 is the
    // calling thread. The kernel keeps only the CPUs this process may use.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        for cpu in 0..libc::CPU_SETSIZE as usize {
            libc::CPU_SET(cpu, &mut set);
        }
        libc::sched_setaffinity(0, size_of::<libc::cpu_set_t>(), &set);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parallel_results_keep_their_order() {
        let items: Vec<u32> = (0..37).collect();
        assert_eq!(
            parallel_map(&items, |x| x * 2),
            (0..37).map(|x| x * 2).collect::<Vec<_>>()
        );
        assert!(parallel_map(&[] as &[u32], |x| *x).is_empty());
        assert_eq!(Background::start(|| 7).wait(), 7);
        assert_eq!(both(|| 1, || "two"), (1, "two"));
    }
}
