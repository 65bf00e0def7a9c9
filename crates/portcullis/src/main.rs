//! portcullis: a Kubernetes ingress controller for HAProxy.

#![forbid(unsafe_code)]

use std::process::ExitCode;

use clap::Parser;
use portcullis::{cli, controller, oneshot};

/// Reconciliation allocates and frees many small values; glibc's allocator spent about
/// 40% of a full reconciliation consolidating free chunks (measured with perf).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    portcullis::allocator::return_freed_memory_promptly();
    let cli = cli::Cli::parse();
    let logs = tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info")),
        )
        // Standard output carries HAProxy's access logs.
        .with_writer(std::io::stderr);
    match cli.log_format {
        cli::LogFormat::Text => logs
            .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
            .init(),
        cli::LogFormat::Json => logs.json().flatten_event(true).init(),
    }
    limit_worker_threads();
    let result = match cli.command {
        cli::Command::Run(args) => tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()
            .map_err(anyhow::Error::from)
            .and_then(|runtime| runtime.block_on(controller::run(*args))),
        cli::Command::Render(args) => oneshot::render(&args),
        cli::Command::Status(args) => oneshot::status(&args),
        cli::Command::Check(args) => match oneshot::check(&args) {
            Ok(true) => Ok(()),
            Ok(false) => return ExitCode::FAILURE,
            Err(err) => Err(err),
        },
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("error: {err:#}");
            ExitCode::FAILURE
        }
    }
}

/// Most threads the parallel stages use. Each keeps its allocator's free pages for
/// itself, so every thread adds memory; past a few, the serial parts dominate anyway.
const MAX_WORKER_THREADS: usize = 8;

/// Sizes the pool the parallel stages share: one thread a core, at most
/// [`MAX_WORKER_THREADS`] (`RAYON_NUM_THREADS` still decides when set).
fn limit_worker_threads() {
    if std::env::var_os("RAYON_NUM_THREADS").is_some() {
        return;
    }
    let cores = std::thread::available_parallelism().map_or(1, std::num::NonZero::get);
    let built = rayon::ThreadPoolBuilder::new()
        .num_threads(cores.min(MAX_WORKER_THREADS))
        .build_global();
    if let Err(err) = built {
        // The pool runs with its defaults: one thread a core.
        tracing::warn!(%err, "the worker threads' limit could not be set");
    }
}
