//! portcullis: a Kubernetes ingress controller for HAProxy.

use std::process::ExitCode;

use clap::Parser;
use portcullis::{cli, controller, oneshot};

/// Reconciliation allocates and frees many small values; glibc's allocator spent about
/// 40% of a full reconciliation consolidating free chunks (measured with perf).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
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
