//! Command-line interface.

use std::net::{IpAddr, SocketAddr};
use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, Parser, Subcommand};

/// portcullis: a Kubernetes ingress controller for HAProxy.
#[derive(Debug, Parser)]
#[command(name = "portcullis", version, about)]
pub struct Cli {
    /// The format of the controller's own log lines, on standard error.
    #[arg(long, global = true, value_enum, default_value_t = LogFormat::Text)]
    pub log_format: LogFormat,
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The format of the controller's own log lines.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum LogFormat {
    /// Human-readable lines.
    Text,
    /// One JSON object per line, for log collectors.
    Json,
}

/// Subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Serve the objects with a real HAProxy, following every change.
    Run(Box<RunArgs>),
    /// Render the HAProxy files once, without HAProxy, into a directory.
    Render(RenderArgs),
    /// Report every problem in the manifests; exit non-zero if there is one.
    Check(CheckArgs),
    /// Print the Gateway API status of the manifests' objects, as YAML.
    Status(StatusArgs),
}

/// Where objects come from and how they are turned into configuration.
#[derive(Debug, Args, Clone)]
pub struct ConfigArgs {
    /// The legacy `kubernetes.io/ingress.class` annotation value this controller serves,
    /// and the `ingressClassName` it serves when no IngressClass of that name exists.
    #[arg(long, default_value = "portcullis")]
    pub ingress_class: String,
    /// The `spec.controller` of the IngressClasses this controller serves: give each
    /// deployment its own (`portcullis.dev/ingress-controller/internal`, say) to run
    /// several side by side.
    #[arg(long, default_value = convert::class::CONTROLLER_NAME)]
    pub controller_class: String,
    /// The `spec.controllerName` of the GatewayClasses this controller serves.
    #[arg(long, default_value = convert::gateway::GATEWAY_CONTROLLER)]
    pub gateway_controller: String,
    /// Serve Ingresses that name no class.
    #[arg(long, default_value_t = true, action = clap::ArgAction::Set)]
    pub watch_ingress_without_class: bool,
    /// The global ConfigMap, as NAMESPACE/NAME.
    #[arg(long, value_name = "NS/NAME", value_parser = parse_namespaced)]
    pub configmap: Option<(String, String)>,
    /// The ConfigMap of TCP services (port: NAMESPACE/SERVICE:PORT[:...]), as NAMESPACE/NAME.
    #[arg(long, value_name = "NS/NAME", value_parser = parse_namespaced)]
    pub tcp_services_configmap: Option<(String, String)>,
    /// TLS Secret served for unknown SNI names, as NAMESPACE/NAME (default: self-signed).
    #[arg(long, value_name = "NS/NAME", value_parser = parse_namespaced)]
    pub default_ssl_certificate: Option<(String, String)>,
    /// Address the HTTP and HTTPS frontends bind to.
    #[arg(long, default_value = "0.0.0.0")]
    pub bind_address: IpAddr,
    /// Port of the plain-HTTP frontend.
    #[arg(long, default_value_t = 80)]
    pub http_port: u16,
    /// Port of the HTTPS frontend.
    #[arg(long, default_value_t = 443)]
    pub https_port: u16,
    /// Number of files the backends are spread over; 0 chooses about 100 backends per
    /// file, rounded up to a power of two.
    #[arg(long, default_value_t = 0, value_parser = clap::value_parser!(u32).range(0..=10_000))]
    pub backend_shards: u32,
    /// Largest manifest file read, in bytes; a larger one is reported and keeps the
    /// objects it had (manifest directory only).
    #[arg(long, value_name = "BYTES", default_value_t = source::DEFAULT_MAX_MANIFEST_BYTES, value_parser = clap::value_parser!(u64).range(1..))]
    pub max_manifest_bytes: u64,
}

/// `run`.
#[derive(Debug, Args)]
pub struct RunArgs {
    /// Directory of Kubernetes manifests (*.yaml, *.yml, *.json, recursively), watched;
    /// without it, objects come from the Kubernetes API server.
    #[arg(long, value_name = "DIR")]
    pub manifests: Option<PathBuf>,
    /// Configuration inputs.
    #[command(flatten)]
    pub config: ConfigArgs,
    /// The Kubernetes API server (without `--manifests`).
    #[command(flatten)]
    pub cluster: ClusterArgs,
    /// Directory portcullis owns: HAProxy's files and sockets.
    #[arg(long, default_value = "/var/lib/portcullis")]
    pub state_dir: PathBuf,
    /// The haproxy executable (default: `haproxy` from PATH, then /usr/sbin/haproxy).
    #[arg(long)]
    pub haproxy_bin: Option<PathBuf>,
    /// After every incremental reconciliation, reconcile fully too and stop on any
    /// difference (on by default in debug builds).
    #[arg(long, default_value_t = cfg!(debug_assertions), action = clap::ArgAction::Set)]
    pub verify_incremental: bool,
    /// Address of the admin HTTP server (/healthz, /readyz, /syncz, /metrics).
    #[arg(long, default_value = "127.0.0.1:10254")]
    pub admin_bind: SocketAddr,
    /// Least time between two HAProxy reloads (e.g. `2s`, `500ms`); changes that need a
    /// reload wait and share one, while live updates keep flowing.
    #[arg(long, default_value = "2s", value_parser = parse_duration)]
    pub reload_interval: Duration,
}

/// Where the Kubernetes API server is and what to do there.
#[derive(Debug, Args, Clone)]
pub struct ClusterArgs {
    /// Kubeconfig file (default: `KUBECONFIG`, `~/.kube/config`, then the in-cluster
    /// service account).
    #[arg(long, value_name = "FILE")]
    pub kubeconfig: Option<PathBuf>,
    /// Watch only this namespace (repeat for several; default: all namespaces).
    #[arg(long = "watch-namespace", value_name = "NS")]
    pub watch_namespaces: Vec<String>,
    /// Publish this Service's load-balancer addresses (else its external IPs) in the
    /// status of every served Ingress, as NAMESPACE/NAME.
    #[arg(long, value_name = "NS/NAME", value_parser = parse_namespaced, conflicts_with = "publish_address")]
    pub publish_service: Option<(String, String)>,
    /// Publish these IPs or host names in the status of every served Ingress
    /// (comma-separated or repeated).
    #[arg(long, value_name = "ADDR", value_delimiter = ',')]
    pub publish_address: Vec<String>,
    /// Watch the Gateway API kinds (GatewayClass, Gateway, ListenerSet, HTTPRoute, GRPCRoute,
    /// TLSRoute, TCPRoute, UDPRoute, ReferenceGrant, BackendTLSPolicy, and the ConfigMaps
    /// policies name);
    /// when their CRDs are not installed they are treated as empty.
    #[arg(long, default_value_t = true, action = clap::ArgAction::Set)]
    pub watch_gateway_api: bool,
    /// Name of the Lease that elects the one replica writing status and Events.
    #[arg(long, default_value = "portcullis-leader")]
    pub election_id: String,
    /// Namespace of the Lease (default: `POD_NAMESPACE`, else `default`).
    #[arg(long, env = "POD_NAMESPACE", default_value = "default")]
    pub election_namespace: String,
    /// How long a Lease not renewed stays held; the holder renews every third of it.
    #[arg(long, default_value = "15s", value_parser = parse_duration)]
    pub lease_duration: Duration,
    /// This replica's identity in the Lease (default: `POD_NAME`, else the host name).
    #[arg(long, env = "POD_NAME")]
    pub identity: Option<String>,
}

/// `render`.
#[derive(Debug, Args)]
pub struct RenderArgs {
    /// Directory of Kubernetes manifests (*.yaml, *.yml, *.json, recursively).
    #[arg(long, value_name = "DIR")]
    pub manifests: PathBuf,
    /// Configuration inputs.
    #[command(flatten)]
    pub config: ConfigArgs,
    /// Directory to write to; it is managed exactly as `run --state-dir` manages its own.
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
}

/// `check`.
#[derive(Debug, Args)]
pub struct CheckArgs {
    /// Directory of Kubernetes manifests (*.yaml, *.yml, *.json, recursively).
    #[arg(long, value_name = "DIR")]
    pub manifests: PathBuf,
    /// Configuration inputs.
    #[command(flatten)]
    pub config: ConfigArgs,
    /// Also have this haproxy executable check the configuration the manifests render
    /// to (`haproxy -c`), each refusal named by the objects behind it: what only HAProxy
    /// and its TLS library judge (cipher strings, TLS versions, patterns) is found too.
    #[arg(long, value_name = "PATH")]
    pub haproxy_bin: Option<PathBuf>,
    /// The admin address `run` will bind: a port the global ConfigMap asks for there is
    /// found taken, as `run` finds it.
    #[arg(long, default_value = "127.0.0.1:10254")]
    pub admin_bind: SocketAddr,
}

/// `status`.
#[derive(Debug, Args)]
pub struct StatusArgs {
    /// Directory of Kubernetes manifests (*.yaml, *.yml, *.json, recursively).
    #[arg(long, value_name = "DIR")]
    pub manifests: PathBuf,
    /// Configuration inputs.
    #[command(flatten)]
    pub config: ConfigArgs,
}

impl ConfigArgs {
    /// Why the admin endpoint cannot listen on `admin`, if it cannot: HAProxy's HTTP and
    /// HTTPS frontends would never start beside it (it is bound first).
    pub fn admin_clash(&self, admin: std::net::SocketAddr) -> Option<String> {
        let frontend = if admin.port() == self.http_port {
            "--http-port"
        } else if admin.port() == self.https_port {
            "--https-port"
        } else {
            return None;
        };
        Some(format!(
            "--admin-bind {admin} takes the port of {frontend} ({}), where HAProxy's frontend listens",
            admin.port()
        ))
    }
}

fn parse_namespaced(text: &str) -> Result<(String, String), String> {
    match text.split_once('/') {
        Some((namespace, name))
            if !namespace.is_empty() && !name.is_empty() && !name.contains('/') =>
        {
            Ok((namespace.to_owned(), name.to_owned()))
        }
        _ => Err(format!("'{text}' is not NAMESPACE/NAME")),
    }
}

/// A duration in the syntax of the configuration keys' timeouts (`2s`, `500ms`, ...).
fn parse_duration(text: &str) -> Result<Duration, String> {
    model::HaproxyDuration::parse(text).map(|duration| duration.to_std())
}
