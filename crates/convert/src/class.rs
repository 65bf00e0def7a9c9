//! Which Ingresses are ours: IngressClass, legacy annotation, or no class at all.

use resources::{Ingress, IngressClassParametersReference, Kind, Object, ObjectRef};

use crate::lookup::Recorder;

/// The controller name our IngressClasses carry in `spec.controller`, unless
/// `--controller-class` says another.
pub const CONTROLLER_NAME: &str = "portcullis.dev/ingress-controller";
/// The legacy class annotation.
pub const LEGACY_CLASS_ANNOTATION: &str = "kubernetes.io/ingress.class";
/// Marks the cluster's default IngressClass.
pub const DEFAULT_CLASS_ANNOTATION: &str = "ingressclass.kubernetes.io/is-default-class";

/// Whether an Ingress belongs to this controller, recording the IngressClasses it
/// looks at.
///
/// `ingressClassName` names an IngressClass; it is ours when that class's controller is
/// ours (`--controller-class`), or, when no such IngressClass exists, when the name is
/// `--ingress-class`. Else the legacy annotation must equal `--ingress-class`. An Ingress with neither is ours when one
/// of our IngressClasses is the default class or `--watch-ingress-without-class` is on.
pub(crate) fn is_ours(ingress: &Ingress, lookups: &mut Recorder<'_>) -> bool {
    let options = lookups.options();
    let class_name = ingress
        .spec
        .as_ref()
        .and_then(|s| s.ingress_class_name.as_deref());
    if let Some(class_name) = class_name.filter(|n| !n.is_empty()) {
        return match lookups.get(ObjectRef::new(Kind::IngressClass, "", class_name)) {
            Some(Object::IngressClass(class)) => {
                class.spec.as_ref().and_then(|s| s.controller.as_deref())
                    == Some(options.controller_class.as_str())
            }
            _ => class_name == options.ingress_class,
        };
    }
    let annotations = ingress.metadata.annotations.as_ref();
    if let Some(legacy) = annotations.and_then(|a| a.get(LEGACY_CLASS_ANNOTATION)) {
        return *legacy == options.ingress_class;
    }
    options.watch_ingress_without_class || ours_is_default(lookups)
}

fn ours_is_default(lookups: &mut Recorder<'_>) -> bool {
    let controller = lookups.options().controller_class.as_str();
    lookups
        .of_kind(Kind::IngressClass)
        .into_iter()
        .any(|o| match o {
            Object::IngressClass(class) => {
                let ours =
                    class.spec.as_ref().and_then(|s| s.controller.as_deref()) == Some(controller);
                let default = class
                    .metadata
                    .annotations
                    .as_ref()
                    .and_then(|a| a.get(DEFAULT_CLASS_ANNOTATION))
                    .is_some_and(|v| v == "true");
                ours && default
            }
            _ => false,
        })
}

/// The ConfigMap an IngressClass's `spec.parameters` names, which is read in the
/// controller's namespace (the global ConfigMap's, `--configmap`), as haproxy-ingress
/// reads it in its own. Parameters of another kind, group or namespace are refused with
/// the reason.
pub(crate) fn parameters_configmap(
    parameters: &IngressClassParametersReference,
    controller_namespace: Option<&str>,
) -> Result<ObjectRef, String> {
    let described = format!("{} {}", parameters.kind, parameters.name)
        .escape_debug()
        .to_string();
    if parameters
        .api_group
        .as_deref()
        .is_some_and(|group| !group.is_empty())
        || !parameters.kind.eq_ignore_ascii_case("ConfigMap")
    {
        return Err(format!(
            "its parameters ({described}) are not a ConfigMap, the only kind read"
        ));
    }
    let Some(controller_namespace) = controller_namespace else {
        return Err(format!(
            "its parameters ({described}) are read in the controller's namespace, the global ConfigMap's, and no --configmap is set"
        ));
    };
    if let Some(namespace) = parameters.namespace.as_deref()
        && namespace != controller_namespace
    {
        return Err(format!(
            "its parameters ({described}) are in namespace {}; they are read only in the controller's namespace, the global ConfigMap's ({controller_namespace})",
            namespace.escape_debug()
        ));
    }
    Ok(ObjectRef::new(
        Kind::ConfigMap,
        controller_namespace,
        parameters.name.as_str(),
    ))
}
