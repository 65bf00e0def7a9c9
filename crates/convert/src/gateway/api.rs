//! The Gateway API's names this controller answers to.

/// The `controllerName` of the GatewayClasses portcullis serves.
pub const GATEWAY_CONTROLLER: &str = "portcullis.dev/gateway-controller";
/// The Gateway API group.
pub const GROUP: &str = "gateway.networking.k8s.io";
