//! Manifest snippets for tests.

/// A Service with one port (named `http` when `port_name` is given) and an EndpointSlice
/// whose endpoints are the given ports on 127.0.0.1, with their readiness.
pub fn backend(
    namespace: &str,
    service: &str,
    port: u16,
    port_name: Option<&str>,
    endpoints: &[(u16, bool)],
) -> String {
    let name_line = port_name
        .map(|n| format!("\n    name: {n}"))
        .unwrap_or_default();
    let mut text = format!(
        "---\napiVersion: v1\nkind: Service\nmetadata: {{name: {service}, namespace: {namespace}}}\nspec:\n  ports:\n  - port: {port}{name_line}\n"
    );
    for (index, (endpoint_port, ready)) in endpoints.iter().enumerate() {
        let slice_port_name = port_name
            .map(|n| format!("name: {n}, "))
            .unwrap_or_default();
        text.push_str(&format!(
            "---\napiVersion: discovery.k8s.io/v1\nkind: EndpointSlice\nmetadata:\n  name: {service}-{index}\n  namespace: {namespace}\n  labels: {{kubernetes.io/service-name: {service}}}\naddressType: IPv4\nports:\n- {{{slice_port_name}port: {endpoint_port}}}\nendpoints:\n- addresses: [127.0.0.1]\n  conditions: {{ready: {ready}}}\n"
        ));
    }
    text
}

/// A self-signed certificate and key (PEM) for `common_name` and the given names.
pub fn self_signed(common_name: &str, names: &[&str]) -> (String, String) {
    let names: Vec<String> = names.iter().map(|n| (*n).to_owned()).collect();
    let built = rcgen::CertificateParams::new(names).and_then(|mut params| {
        params
            .distinguished_name
            .push(rcgen::DnType::CommonName, common_name);
        let key = rcgen::KeyPair::generate()?;
        let cert = params.self_signed(&key)?;
        Ok((cert.pem(), key.serialize_pem()))
    });
    built.unwrap_or_default()
}

/// A kubernetes.io/tls Secret holding `certificate` and `key` (PEM), via `stringData`.
pub fn tls_secret(namespace: &str, name: &str, certificate: &str, key: &str) -> String {
    let indent = |pem: &str| {
        pem.lines()
            .map(|l| format!("    {l}\n"))
            .collect::<String>()
    };
    format!(
        "---\napiVersion: v1\nkind: Secret\nmetadata: {{name: {name}, namespace: {namespace}}}\ntype: kubernetes.io/tls\nstringData:\n  tls.crt: |\n{}  tls.key: |\n{}",
        indent(certificate),
        indent(key)
    )
}

/// Writes a manifest file whole, then renames it into place: a directory watcher never
/// sees half a file.
pub fn write_manifest(dir: &std::path::Path, file: &str, text: &str) -> std::io::Result<()> {
    let temporary = dir.join(format!(".{file}.tmp"));
    std::fs::write(&temporary, text)?;
    std::fs::rename(&temporary, dir.join(file))
}
