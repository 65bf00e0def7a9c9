//! Settings that come from the command line rather than from objects.

use std::collections::BTreeSet;
use std::net::IpAddr;

use model::TlsCert;

/// Settings that come from the command line rather than from objects.
#[derive(Debug, Clone)]
pub struct ConvertOptions {
    /// `--ingress-class`.
    pub ingress_class: String,
    /// `--controller-class`: the `spec.controller` of the IngressClasses this controller
    /// serves ([`crate::class::CONTROLLER_NAME`] by default).
    pub controller_class: String,
    /// `--gateway-controller`: the `spec.controllerName` of the GatewayClasses this
    /// controller serves ([`crate::gateway::GATEWAY_CONTROLLER`] by default).
    pub gateway_controller: String,
    /// `--watch-ingress-without-class`.
    pub watch_ingress_without_class: bool,
    /// `--configmap`: namespace and name of the global ConfigMap.
    pub global_configmap: Option<(String, String)>,
    /// `--tcp-services-configmap`: namespace and name of the ConfigMap of TCP services.
    pub tcp_services_configmap: Option<(String, String)>,
    /// `--default-ssl-certificate`: namespace and name of a TLS Secret.
    pub default_ssl_certificate: Option<(String, String)>,
    /// Served when no default certificate is configured, or it is unusable.
    pub fallback_certificate: TlsCert,
    /// `--bind-address`.
    pub bind_address: IpAddr,
    /// `--http-port`.
    pub http_port: u16,
    /// `--https-port`.
    pub https_port: u16,
    /// `--backend-shards`; 0 chooses by the number of backends
    /// ([`crate::automatic_shards`]).
    pub backend_shards: u32,
    /// Ports no Gateway listener may take (the admin endpoint's).
    pub reserved_ports: Vec<u16>,
    /// Ports another process on this machine holds (found by trying to bind them), which
    /// a Gateway listener's frontend could not bind.
    pub busy_ports: BTreeSet<u16>,
}

impl ConvertOptions {
    /// The ports Gateway listeners are compared with.
    pub fn listener_ports(&self) -> ListenerPorts {
        ListenerPorts {
            http: self.http_port,
            https: self.https_port,
            reserved: self.reserved_ports.clone(),
            busy: self.busy_ports.clone(),
            gateway_controller: self.gateway_controller.clone(),
        }
    }
}

/// What a Gateway's listeners are read against: the ports HAProxy's own frontends and the
/// controller hold, which a listener's port is compared with, and the controller name of
/// the GatewayClasses served.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListenerPorts {
    /// `--http-port`: the HTTP frontend (which also serves listeners on port 80).
    pub http: u16,
    /// `--https-port`: the HTTPS frontend (which also serves listeners on port 443).
    pub https: u16,
    /// Ports no listener may take (the admin endpoint's, the stats page's, the
    /// exporter's).
    pub reserved: Vec<u16>,
    /// Ports another process holds.
    pub busy: BTreeSet<u16>,
    /// `--gateway-controller`: the GatewayClasses whose `controllerName` this is are ours.
    pub gateway_controller: String,
}

impl Default for ListenerPorts {
    fn default() -> Self {
        Self {
            http: 80,
            https: 443,
            reserved: Vec::new(),
            busy: BTreeSet::new(),
            gateway_controller: crate::gateway::GATEWAY_CONTROLLER.to_owned(),
        }
    }
}
