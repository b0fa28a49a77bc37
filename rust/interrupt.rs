//! Letting a long call be interrupted (Ctrl-C in Python) between units of work.
//!
//! The core knows nothing of Python: the caller of a long operation (the Python layer)
//! installs a check for the calling thread with [`with_check`], and the loops that can run
//! long — planning file after file, listing directory after directory, waiting for the
//! next row group's batch — call [`interrupted`] between units. The check runs at most
//! every [`CHECK_EVERY`], so a loop over thousands of small files pays nothing measurable.
//! Work on other threads is not checked: it stops when the stream that waits for it does.
//!
//! ```
//! use pqsift::interrupt::{interrupted, with_check};
//! assert!(!interrupted()); // no check installed
//! assert!(with_check(|| true, interrupted));
//! assert!(!with_check(|| false, interrupted));
//! ```

use std::cell::RefCell;
use std::time::{Duration, Instant};

/// The least time between two runs of a thread's check.
pub const CHECK_EVERY: Duration = Duration::from_millis(20);

struct Installed {
    check: Box<dyn Fn() -> bool>,
    last: Option<Instant>,
    fired: bool,
}

thread_local! {
    static CHECK: RefCell<Option<Installed>> = const { RefCell::new(None) };
}

/// Runs `f` with `check` installed for this thread: [`interrupted`] calls it.
pub fn with_check<T>(check: impl Fn() -> bool + 'static, f: impl FnOnce() -> T) -> T {
    struct Restore(Option<Installed>);
    impl Drop for Restore {
        fn drop(&mut self) {
            CHECK.with(|slot| *slot.borrow_mut() = self.0.take());
        }
    }
    let previous =
        CHECK.with(|slot| slot.borrow_mut().replace(Installed { check: Box::new(check), last: None, fired: false }));
    let _restore = Restore(previous);
    f()
}

/// Whether this thread's caller asked to stop: its check (run at most every
/// [`CHECK_EVERY`]) said so now or before. `false` without a check installed.
pub fn interrupted() -> bool {
    CHECK.with(|slot| {
        let mut slot = slot.borrow_mut();
        let Some(installed) = slot.as_mut() else { return false };
        if installed.fired {
            return true;
        }
        let now = Instant::now();
        if installed.last.is_some_and(|last| now.duration_since(last) < CHECK_EVERY) {
            return false;
        }
        installed.last = Some(now);
        installed.fired = (installed.check)();
        installed.fired
    })
}

/// `Err(PqsiftError::Interrupted)` when [`interrupted`].
pub fn check() -> crate::Result<()> {
    if interrupted() { Err(crate::PqsiftError::Interrupted) } else { Ok(()) }
}
