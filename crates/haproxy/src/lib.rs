//! All I/O toward HAProxy: the owned state directory (atomic writes, stale-file removal),
//! `haproxy -c` checks on a staged copy, and the master-worker process with its master CLI.

mod check;
mod master_cli;
mod process;
mod state_dir;

pub use check::{CheckFailure, check_config};
pub use master_cli::{MasterCli, ProcStatus};
pub use process::{Haproxy, HaproxyError, LaunchOptions};
pub use state_dir::{StateDir, StateDirError};
