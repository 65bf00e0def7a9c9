//! All I/O toward HAProxy: the owned state directory (atomic writes, stale-file removal),
//! `haproxy -c` checks on a staged copy, the master-worker process with its master CLI,
//! and the runtime API for live changes.

mod check;
mod master_cli;
mod process;
mod runtime_api;
mod state_dir;

pub use check::{CheckFailure, check_config};
pub use master_cli::{MasterCli, ProcStatus};
pub use process::{Haproxy, HaproxyError, LaunchOptions};
pub use runtime_api::{Applied, Exchange, RuntimeApi, RuntimeError};
pub use state_dir::{StateDir, StateDirError};
