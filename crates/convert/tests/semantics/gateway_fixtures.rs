//! Objects the Gateway API cases share.

/// A GatewayClass of ours, `portcullis`.
pub const OUR_CLASS: &str = "
kind: GatewayClass
metadata: {name: portcullis}
spec: {controllerName: portcullis.dev/gateway-controller}
";

/// [`OUR_CLASS`] and Gateway `default/edge` with one listener, `http` (HTTP, port 80, no
/// hostname, routes of its own namespace).
pub const EDGE: &str = "
kind: GatewayClass
metadata: {name: portcullis}
spec: {controllerName: portcullis.dev/gateway-controller}
---
kind: Gateway
metadata: {name: edge}
spec:
  gatewayClassName: portcullis
  listeners: [{name: http, protocol: HTTP, port: 80}]
";
