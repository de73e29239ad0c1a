//! Keeping both sides of a self-play on one CPU. They take turns (see
//! [`crate::transport::memory::turn_taking_duplex`]), so sharing a core costs them nothing,
//! while it turns every hand-over into a local context switch with the interpreter's heap
//! still in cache instead of a wake-up on another CPU — about twice as fast per round on a
//! virtualised 2-CPU machine.

/// The CPU the calling thread runs on now, if the platform says.
pub fn current() -> Option<usize> {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: sched_getcpu has no preconditions.
        let cpu = unsafe { libc::sched_getcpu() };
        usize::try_from(cpu).ok()
    }
    #[cfg(not(target_os = "linux"))]
    None
}

/// Restricts the calling thread to `cpu`; a failure (or another platform) leaves it free.
pub fn stay_on(cpu: Option<usize>) {
    #[cfg(target_os = "linux")]
    if let Some(cpu) = cpu.filter(|&cpu| cpu < libc::CPU_SETSIZE as usize) {
        // SAFETY: the set is zero-initialised and filled with CPU_SET before use; pid 0 is
        // the calling thread.
        unsafe {
            let mut set: libc::cpu_set_t = std::mem::zeroed();
            libc::CPU_SET(cpu, &mut set);
            libc::sched_setaffinity(0, size_of::<libc::cpu_set_t>(), &set);
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = cpu;
}
