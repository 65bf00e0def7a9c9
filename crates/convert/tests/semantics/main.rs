//! The routing rules of docs/routing.md and docs/gateway-api.md, one table row per rule.

// Test helpers fail loudly: an unwrap here is an assertion.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod summary;
mod support;

mod ingress_aliases;
mod ingress_backends;
mod ingress_classes;
mod ingress_hosts_and_paths;
mod ingress_merging;
mod ingress_tls;

mod access;
mod gateway_attachment;
mod gateway_backend_tls;
mod gateway_backends;
mod gateway_filters;
mod gateway_fixtures;
mod gateway_grpc;
mod gateway_listener_sets;
mod gateway_matches;
mod gateway_tcp_routes;
mod gateway_tls_routes;
mod status_gateways;
mod status_routes;
mod tcp_services;
