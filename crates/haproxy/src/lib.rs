//! All I/O toward HAProxy: the owned state directory (atomic writes, stale-file removal,
//! the sweep of unmanaged entries), the sockets' directory,
//! `haproxy -c` checks on a staged copy, the master-worker process with its master CLI,
//! and the runtime API for live changes.

#![forbid(unsafe_code)]

mod check;
mod lock;
mod log_relay;
mod master_cli;
mod process;
mod runtime_api;
mod server_stats;
mod session_closer;
mod sockets;
mod state_dir;
mod sweep;

pub use check::{CHECK_TIME_LIMIT, CheckError, CheckFailure, check_config, check_config_within};
pub use lock::LOCK_FILE;
pub use log_relay::RELAYED_LINES_PER_SECOND;
pub use master_cli::{MasterCli, ProcStatus};
pub use process::{Haproxy, HaproxyError, LaunchOptions, Reloaded, finish_and_stop};
pub use render::layout::STAGING_DIR;
pub use runtime_api::{Applied, Exchange, RuntimeApi, RuntimeError};
pub use session_closer::close_sessions_gradually;
pub use sockets::{MAX_SOCKET_PATH, Sockets};
pub use state_dir::{StateDir, StateDirError};
