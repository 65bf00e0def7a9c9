//! How soon the allocator gives memory it no longer uses back to the system.

use std::os::raw::c_long;

/// The index of mimalloc's `purge_delay` option in its `mi_option_e` enumeration (v3);
/// the bindings name no constant for it. `purge_delay_is_the_option_its_variable_sets`
/// checks it against the environment variable that names the option.
const PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;

/// The environment variable that sets the same option, which then stays the operator's.
pub const PURGE_DELAY_VARIABLE: &str = "MIMALLOC_PURGE_DELAY";

/// Milliseconds freed memory stays committed before it is returned. mimalloc v3's
/// default of a second outlasts a whole 10k-service `render` (0.3 s): nothing freed was
/// returned, and its peak RSS was 78-92 MiB where the heap peaks at 45 MB. Returned
/// sooner, memory freed and allocated again later in a pass is faulted in again, which
/// costs time: 10 ms (mimalloc v2's default) gave 64-69 MiB but made a warm full
/// reconciliation at 10k ~25% slower; 50 ms gave 67-78 MiB, too close to the 80 MiB
/// target; 25 ms gives 68-72 MiB (`docs/performance.md`).
pub const PURGE_DELAY_MS: c_long = 25;

/// Sets the purge delay to [`PURGE_DELAY_MS`], unless [`PURGE_DELAY_VARIABLE`] set it.
/// Called first thing in `main`, before any other thread exists.
pub fn return_freed_memory_promptly() {
    if std::env::var_os(PURGE_DELAY_VARIABLE).is_some() {
        return;
    }
    #[expect(
        unsafe_code,
        reason = "the only way to set a mimalloc option from within the process"
    )]
    // SAFETY: `mi_option_set` stores a value that later purges read; every value is
    // valid for this option, and no other thread is running yet to read it concurrently.
    unsafe {
        libmimalloc_sys::mi_option_set(PURGE_DELAY, PURGE_DELAY_MS);
    }
}

/// The purge delay in force, in milliseconds.
pub fn purge_delay_ms() -> c_long {
    #[expect(
        unsafe_code,
        reason = "the only way to read a mimalloc option from within the process"
    )]
    // SAFETY: `mi_option_get` reads an option, initialising it from the environment the
    // first time; it has no precondition.
    unsafe {
        libmimalloc_sys::mi_option_get(PURGE_DELAY)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Set only in the copies of this test binary that the test below starts: whether
    /// the copy's environment sets the purge delay.
    const PROBE: &str = "PORTCULLIS_PURGE_DELAY_PROBE";
    const TEST: &str = "allocator::tests::the_delay_is_set_unless_the_environment_set_it";

    #[test]
    fn the_delay_is_set_unless_the_environment_set_it() {
        match std::env::var(PROBE).as_deref() {
            Ok("variable") => {
                // mimalloc read the variable into the option at `PURGE_DELAY`, which
                // is thus the purge delay; and the operator's value stays.
                assert_eq!(purge_delay_ms(), 4321);
                return_freed_memory_promptly();
                assert_eq!(purge_delay_ms(), 4321);
            }
            Ok(_) => {
                assert_eq!(purge_delay_ms(), 1000, "mimalloc v3's default");
                return_freed_memory_promptly();
                assert_eq!(purge_delay_ms(), PURGE_DELAY_MS);
            }
            Err(_) => {
                let this = std::env::current_exe().expect("the test binary's path");
                for (probe, variable) in [("variable", Some("4321")), ("default", None)] {
                    let mut copy = std::process::Command::new(&this);
                    copy.args(["--exact", TEST]).env(PROBE, probe);
                    match variable {
                        Some(value) => copy.env(PURGE_DELAY_VARIABLE, value),
                        None => copy.env_remove(PURGE_DELAY_VARIABLE),
                    };
                    let status = copy.status().expect("starting the test binary");
                    assert!(status.success(), "the {probe} copy failed: {status}");
                }
            }
        }
    }
}
