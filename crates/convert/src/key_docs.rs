//! The configuration page, `docs/configuration.md`, generated from the key definitions.

use std::fmt::Write;

use crate::keys::{ALL_KEYS, ANNOTATION_PREFIXES, Applied, KeyInfo, Scope, UNSUPPORTED_KEYS};

/// The page's path, relative to the workspace root.
pub const CONFIGURATION_PAGE: &str = "docs/configuration.md";

/// The command that writes the page again after a key changed.
pub const REGENERATE_COMMAND: &str =
    "UPDATE_GOLDEN=1 cargo test -p convert --test configuration_doc";

/// The whole page: how keys are set and which value applies, a summary table, then one
/// section per key in [`ALL_KEYS`] order.
pub fn configuration_markdown() -> String {
    let [own_prefix, migration_prefix, legacy_prefix] = ANNOTATION_PREFIXES;
    let mut page = String::new();
    // Writing to a String cannot fail.
    let _ = write!(
        page,
        "# Configuration keys

<!-- Generated from crates/convert/src/keys/ by crates/convert/src/key_docs.rs; edit
those, then run `{REGENERATE_COMMAND}`. -->

portcullis reads these keys from the global ConfigMap (`--configmap NAMESPACE/NAME`, in its
`data`). A key of backend or path scope can also be set as an annotation on one Ingress, or
on a Service (for every backend of that Service, from Ingresses and HTTPRoutes alike), as
`{own_prefix}<key>` or, as haproxy-ingress reads them, `{migration_prefix}<key>` or
`{legacy_prefix}<key>`. The keys of host, backend and path scope can also be set for every
Ingress of an IngressClass, as haproxy-ingress reads them: in the `data` of the ConfigMap
the class's `spec.parameters` names (`kind: ConfigMap`, in the controller's namespace, the
global ConfigMap's). Such a ConfigMap's global keys, unknown keys and invalid values are
reported on it; parameters of another kind or namespace, or naming a ConfigMap that does
not exist, are reported on each Ingress of the class. An edit of the ConfigMap applies
as any other change.

The value that applies is, in order:

1. the annotation of the backend's Service;
2. the Ingress's annotation;
3. the Ingress's IngressClass's parameters;
4. the global ConfigMap's value;
5. the default.

Between prefixes on one object, `{own_prefix}` comes first, then `{migration_prefix}`, then
`{legacy_prefix}`.

An invalid value is reported (object, key, value, reason) and the next one in that order
applies, except for the address lists (`allowlist-source-range`, `whitelist-source-range`,
`denylist-source-range`) and the authentication keys (`auth-type`, `auth-secret`,
`auth-url`): an invalid value refuses every client of the paths it applies to (403) until
it is fixed, so that a typo never serves a path without its protection. An
unknown key, and a global key set as an annotation, are reported and ignored; so are the
keys listed under [Not supported](#not-supported), with the reason.

Annotations under ingress-nginx's prefix `nginx.ingress.kubernetes.io/` are not read:
their keys mean other things and take other values than these. An object that has some
gets one report naming them, and which of them have a key of the same name here, to set
under one of the prefixes above once its meaning below is the one wanted.

Scopes:

- **{global}**: the whole proxy, set in the global ConfigMap only.
- **{backend}**: one backend (a Service port). When Ingresses share a backend, each key
  comes from the oldest Ingress that sets it, as in haproxy-ingress, and a newer one that
  sets it to another value is reported. The backend is the one built by the Ingress that
  sets every key so merged; when no one of them sets them all, the oldest that sets any
  does, and the others' left-out keys are reported: set keys meant for every Ingress of a
  Service on the Service, whose annotations every Ingress of it shares. The backends of
  HTTPRoutes take their Service's annotations, then the global ConfigMap's value; a
  backend that an HTTPRoute and an Ingress share takes the oldest's settings whole.
- **{path}**: one path of one Ingress.
- **{host}**: the hosts of one Ingress's rules. When Ingresses sharing a host set the key
  differently, the oldest Ingress's value applies and the others are reported.

| key | scope | default |
| --- | --- | --- |
",
        global = scope_name(Scope::Global),
        backend = scope_name(Scope::Backend),
        path = scope_name(Scope::Path),
        host = scope_name(Scope::Host),
    );
    for key in ALL_KEYS {
        let _ = writeln!(
            page,
            "| [`{name}`](#{name}) | {scope} | {default} |",
            name = key.name(),
            scope = scope_name(key.scope()),
            default = default_text(*key),
        );
    }
    for key in ALL_KEYS {
        let _ = write!(
            page,
            "
## `{name}`

{doc}

- Scope: {scope}
- Set in: {places}
- Default: {default}
- Accepted values: {values}
- A change: {applied}
{differs}",
            name = key.name(),
            doc = key.doc(),
            scope = scope_name(key.scope()),
            places = places(*key),
            default = default_text(*key),
            values = key.accepted_values(),
            applied = applied_text(key.applied()),
            differs = match key.differs() {
                "" => String::new(),
                text => format!("- Differs from haproxy-ingress: {text}\n"),
            },
        );
    }
    page.push_str(
        "
## Not supported

These keys of haproxy-ingress or ingress-nginx are recognized but not implemented: setting
one is reported (object, key, reason) and has no effect.

| key | why |
| --- | --- |
",
    );
    for key in UNSUPPORTED_KEYS {
        let name = if key.prefix {
            format!("`{}*`", key.name)
        } else {
            format!("`{}`", key.name)
        };
        let _ = writeln!(page, "| {name} | {} |", key.why);
    }
    page
}

fn applied_text(applied: Applied) -> &'static str {
    match applied {
        Applied::Live => "goes live over the runtime API, without a reload",
        Applied::Reload => "reloads HAProxy (seamlessly: no connection is refused)",
    }
}

fn scope_name(scope: Scope) -> &'static str {
    match scope {
        Scope::Global => "global",
        Scope::Backend => "backend",
        Scope::Path => "path",
        Scope::Host => "host",
    }
}

fn default_text(key: &dyn KeyInfo) -> String {
    match key.default_text() {
        "" => "empty".to_owned(),
        text => format!("`{text}`"),
    }
}

/// Where a key can be set.
fn places(key: &dyn KeyInfo) -> String {
    match key.scope() {
        Scope::Global => "the global ConfigMap".to_owned(),
        scope => {
            let annotations: Vec<String> = ANNOTATION_PREFIXES
                .iter()
                .map(|prefix| format!("`{prefix}{}`", key.name()))
                .collect();
            let objects = if scope == Scope::Host {
                "Ingress annotations"
            } else {
                "Ingress and Service annotations"
            };
            format!("the global ConfigMap; {objects} {}", annotations.join(", "))
        }
    }
}
