//! portcullis: a Kubernetes ingress controller for HAProxy. The library holds the
//! controller's parts so that tests and benchmarks can drive them without the CLI.

pub mod admin;
pub mod allocator;
pub mod busy_ports;
pub mod cli;
pub mod cluster_link;
pub mod controller;
pub mod default_cert;
pub mod driver;
pub mod metrics;
pub mod oneshot;
pub mod pipeline;
pub mod status;
