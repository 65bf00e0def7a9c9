//! Where haproxy-ingress's `oauth` finds oauth2-proxy: the Service of the Ingress's own
//! path `oauth-uri-prefix`, which also serves oauth2-proxy's sign-in.

use resources::{IngressServiceBackend, IngressSpec, Kind, Object, ObjectRef};

use crate::auth::OauthTarget;
use crate::lookup::Recorder;

/// Every path of the Ingress (without a final `/`) with its Service.
pub(crate) fn service_paths(spec: &IngressSpec) -> Vec<(String, IngressServiceBackend)> {
    spec.rules
        .iter()
        .flatten()
        .filter_map(|rule| rule.http.as_ref())
        .flat_map(|http| http.paths.iter())
        .filter_map(|path| {
            let text = path.path.as_deref().unwrap_or("/");
            let service = path.backend.service.clone()?;
            Some((text.trim_end_matches('/').to_owned(), service))
        })
        .collect()
}

/// Where `oauth` checks the path `path` of an Ingress in `namespace` whose paths are
/// `paths`: at the Service port of its path `prefix`, unless `path` is that path or
/// below it (oauth2-proxy's own).
pub(crate) fn target(
    paths: &[(String, IngressServiceBackend)],
    prefix: &str,
    path: &str,
    namespace: &str,
    lookups: &mut Recorder<'_>,
) -> OauthTarget {
    let own = path
        .strip_prefix(prefix)
        .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'));
    if own {
        return OauthTarget::Exempt;
    }
    service(paths, prefix, namespace, lookups).map_or(OauthTarget::Missing, |(name, port)| {
        OauthTarget::Service(name, port)
    })
}

/// The Service and port number of the path `prefix` (a named port looked up on the
/// Service).
fn service(
    paths: &[(String, IngressServiceBackend)],
    prefix: &str,
    namespace: &str,
    lookups: &mut Recorder<'_>,
) -> Option<(String, u16)> {
    let (_, service) = paths.iter().find(|(path, _)| path == prefix)?;
    let port = service.port.as_ref()?;
    let number = match (port.number, port.name.as_deref()) {
        (Some(number), _) => number,
        (None, Some(name)) => {
            let reference = ObjectRef::new(Kind::Service, namespace, &service.name);
            let Some(Object::Service(found)) = lookups.get(reference) else {
                return None;
            };
            found
                .spec
                .as_ref()?
                .ports
                .as_ref()?
                .iter()
                .find(|p| p.name.as_deref() == Some(name))?
                .port
        }
        (None, None) => return None,
    };
    Some((service.name.clone(), u16::try_from(number).ok()?))
}
