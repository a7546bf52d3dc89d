//! [`Pool`]: idle blocking connections, reused across calls and threads.

use std::sync::{Mutex, PoisonError};

/// Idle connections kept at most; more are closed when returned.
const MAX_IDLE: usize = 64;

/// A stack of idle connections behind a short lock.
///
/// A call takes one (or opens one when none is idle), uses it for one round
/// trip and puts it back, so concurrent callers each get their own and the
/// lock is held only to push or pop.
#[derive(Debug)]
pub(crate) struct Pool<T> {
    idle: Mutex<Vec<T>>,
}

impl<T> Pool<T> {
    pub(crate) fn new() -> Self {
        Pool {
            idle: Mutex::new(Vec::new()),
        }
    }

    /// An idle connection, if any.
    pub(crate) fn take(&self) -> Option<T> {
        // A panic elsewhere cannot leave the stack half-updated.
        self.idle
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .pop()
    }

    /// Returns a healthy connection for reuse.
    pub(crate) fn put(&self, connection: T) {
        let mut idle = self.idle.lock().unwrap_or_else(PoisonError::into_inner);
        if idle.len() < MAX_IDLE {
            idle.push(connection);
        }
    }
}
