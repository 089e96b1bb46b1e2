//! The one lock-poisoning policy of the workspace: a poisoned `std::sync::Mutex` is used as it
//! is. Nothing here panics while holding a lock (`unwrap`/`expect` are denied), so a poisoned
//! lock means a bug elsewhere already reported its panic; refusing the lock afterwards would only
//! add a second failure, such as a shutdown that cancels nothing.

use std::sync::{Mutex, MutexGuard, PoisonError};

/// Locks `mutex`, taking the guard even if a panicking thread poisoned it.
pub fn lock<T: ?Sized>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;

    #[test]
    fn a_poisoned_lock_still_gives_its_value() {
        let shared = Arc::new(Mutex::new(7));
        let clone = Arc::clone(&shared);
        let _ = std::thread::spawn(move || {
            let _guard = clone.lock();
            panic!("poison it");
        })
        .join();
        assert!(shared.is_poisoned());
        assert_eq!(*lock(&shared), 7);
    }
}
