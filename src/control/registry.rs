//! Which desks this process runs, by engine state dir: how the SDK's window calls (made from
//! inside a hook, with nothing but the state dir in hand) reach their side's desk, and how an
//! abort reaches every open window.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use super::desk::Desk;

static DESKS: Mutex<Vec<(PathBuf, Arc<Desk>)>> = Mutex::new(Vec::new());

/// Makes `desk` the one for `state_dir` until [`unregister`].
pub fn register(state_dir: &Path, desk: Arc<Desk>) {
    let mut desks = DESKS.lock().unwrap_or_else(PoisonError::into_inner);
    desks.retain(|(dir, _)| dir != state_dir);
    desks.push((state_dir.to_path_buf(), desk));
}

pub fn unregister(state_dir: &Path) {
    let mut desks = DESKS.lock().unwrap_or_else(PoisonError::into_inner);
    desks.retain(|(dir, _)| dir != state_dir);
}

/// The desk of a state dir, if this process runs one.
pub fn lookup(state_dir: &Path) -> Option<Arc<Desk>> {
    let desks = DESKS.lock().unwrap_or_else(PoisonError::into_inner);
    desks
        .iter()
        .find(|(dir, _)| dir == state_dir)
        .map(|(_, desk)| desk.clone())
}

/// Closes every open window now (the process is aborting).
pub fn cancel_all(reason: &str) {
    let desks = DESKS.lock().unwrap_or_else(PoisonError::into_inner);
    for (_, desk) in desks.iter() {
        desk.cancel(reason);
    }
}
