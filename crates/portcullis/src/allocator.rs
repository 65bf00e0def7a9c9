//! How soon the allocator gives memory it no longer uses back to the system.

use std::ffi::c_long;

/// The index of mimalloc's `purge_delay` option in its `mi_option_e` enumeration (v3);
/// the bindings name no constant for it. The test below checks it against the
/// environment variable that names the option.
const PURGE_DELAY_OPTION: libmimalloc_sys::mi_option_t = 15;

/// Milliseconds freed memory stays committed before it is returned. mimalloc v3's
/// default of a second outlasts a whole 10k-service `render` (0.3 s): nothing freed was
/// returned, and its peak RSS was 80-92 MiB where the heap peaks at 45 MB. 25 ms gives
/// 67-74 MiB. Shorter delays return a little more (10 ms: 64-69 MiB); each return costs
/// time when the memory is used again later and faulted in anew, and 25 ms leaves room to
/// reuse what a pass frees within a few of its steps (`docs/performance.md`).
pub const PURGE_DELAY_MS: c_long = 25;

/// Sets the purge delay to [`PURGE_DELAY_MS`] unless the environment set it
/// (`MIMALLOC_PURGE_DELAY`, which stays the operator's to choose). Call it before any
/// other thread starts: first thing in `main`, or in a benchmark's setup.
pub fn return_freed_memory_promptly() {
    #[expect(
        unsafe_code,
        reason = "the only way to set a mimalloc option from within the process"
    )]
    // SAFETY: the index is in range (mimalloc ignores one that is not) and 25 ms is a
    // valid delay. mimalloc keeps its options in plain globals that it reads and writes
    // without synchronisation by design; called at the start of `main`, no other thread
    // is reading them yet.
    unsafe {
        libmimalloc_sys::mi_option_set_default(PURGE_DELAY_OPTION, PURGE_DELAY_MS);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The purge delay in force, in milliseconds.
    fn purge_delay_ms() -> c_long {
        #[expect(unsafe_code, reason = "the only way to read a mimalloc option")]
        // SAFETY: `mi_option_get` reads an option, initialising it from the environment
        // the first time; the index is in range.
        unsafe {
            libmimalloc_sys::mi_option_get(PURGE_DELAY_OPTION)
        }
    }

    /// Set only in the copies of this test binary that the test below starts: whether
    /// the copy's environment sets the purge delay.
    const PROBE: &str = "PORTCULLIS_PURGE_DELAY_PROBE";
    const TEST: &str = "allocator::tests::the_delay_is_set_unless_the_environment_set_it";

    #[test]
    fn the_delay_is_set_unless_the_environment_set_it() {
        match std::env::var(PROBE).as_deref() {
            Ok("variable") => {
                // mimalloc read the variable into the option at `PURGE_DELAY_OPTION`,
                // which is thus the purge delay; and the operator's value stays.
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
                    copy.args(["--exact", TEST, "--test-threads", "1"])
                        .env(PROBE, probe);
                    // mimalloc reads the option under either name, in any case.
                    for (name, _) in std::env::vars_os() {
                        let upper = name.to_string_lossy().to_uppercase();
                        if upper == "MIMALLOC_PURGE_DELAY" || upper == "MIMALLOC_RESET_DELAY" {
                            copy.env_remove(name);
                        }
                    }
                    if let Some(value) = variable {
                        copy.env("MIMALLOC_PURGE_DELAY", value);
                    }
                    let output = copy.output().expect("running the test binary");
                    let stdout = String::from_utf8_lossy(&output.stdout);
                    // A renamed test would match nothing, and pass without a check.
                    assert!(
                        output.status.success() && stdout.contains("1 passed"),
                        "the {probe} copy: {}\n{stdout}{}",
                        output.status,
                        String::from_utf8_lossy(&output.stderr)
                    );
                }
            }
        }
    }
}
