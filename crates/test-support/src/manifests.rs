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
    self_signed_on(rcgen::KeyPair::generate(), common_name, names)
}

/// [`self_signed`] on an Ed25519 key, a kind portcullis does not compare with its
/// certificate: a mismatched pair of them is one HAProxy refuses and portcullis does not
/// see (what its safety net is tested with).
pub fn self_signed_ed25519(common_name: &str, names: &[&str]) -> (String, String) {
    self_signed_on(
        rcgen::KeyPair::generate_for(&rcgen::PKCS_ED25519),
        common_name,
        names,
    )
}

fn self_signed_on(
    key: Result<rcgen::KeyPair, rcgen::Error>,
    common_name: &str,
    names: &[&str],
) -> (String, String) {
    let names: Vec<String> = names.iter().map(|n| (*n).to_owned()).collect();
    let built = rcgen::CertificateParams::new(names).and_then(|mut params| {
        params
            .distinguished_name
            .push(rcgen::DnType::CommonName, common_name);
        let key = key?;
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

/// A certificate authority and a client certificate it signed, for mutual TLS.
#[derive(Debug, Clone, Default)]
pub struct ClientPki {
    /// The CA certificate, PEM.
    pub ca_pem: String,
    /// The client certificate, DER.
    pub client_der: Vec<u8>,
    /// The client's private key, PKCS#8 DER.
    pub client_key_der: Vec<u8>,
    /// A revocation list of the CA that revokes the client certificate, PEM.
    pub revoking_crl_pem: String,
}

/// A CA named `ca_name` and a client certificate with common name `client_name`.
pub fn client_pki(ca_name: &str, client_name: &str) -> ClientPki {
    let built = (|| -> Result<ClientPki, rcgen::Error> {
        let mut ca_params = rcgen::CertificateParams::new(Vec::<String>::new())?;
        ca_params
            .distinguished_name
            .push(rcgen::DnType::CommonName, ca_name);
        ca_params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
        ca_params.key_usages = vec![
            rcgen::KeyUsagePurpose::KeyCertSign,
            rcgen::KeyUsagePurpose::CrlSign,
            rcgen::KeyUsagePurpose::DigitalSignature,
        ];
        let ca_key = rcgen::KeyPair::generate()?;
        let ca_cert = ca_params.self_signed(&ca_key)?;
        let issuer = rcgen::Issuer::new(ca_params, ca_key);
        let mut client_params = rcgen::CertificateParams::new(Vec::<String>::new())?;
        client_params
            .distinguished_name
            .push(rcgen::DnType::CommonName, client_name);
        client_params.extended_key_usages = vec![rcgen::ExtendedKeyUsagePurpose::ClientAuth];
        let serial = rcgen::SerialNumber::from(7u64);
        client_params.serial_number = Some(serial.clone());
        let client_key = rcgen::KeyPair::generate()?;
        let client_cert = client_params.signed_by(&client_key, &issuer)?;
        let crl = rcgen::CertificateRevocationListParams {
            this_update: rcgen::date_time_ymd(2024, 1, 1),
            next_update: rcgen::date_time_ymd(2100, 1, 1),
            crl_number: rcgen::SerialNumber::from(1u64),
            issuing_distribution_point: None,
            revoked_certs: vec![rcgen::RevokedCertParams {
                serial_number: serial,
                revocation_time: rcgen::date_time_ymd(2024, 1, 1),
                reason_code: Some(rcgen::RevocationReason::KeyCompromise),
                invalidity_date: None,
            }],
            key_identifier_method: rcgen::KeyIdMethod::Sha256,
        }
        .signed_by(&issuer)?;
        Ok(ClientPki {
            ca_pem: ca_cert.pem(),
            client_der: client_cert.der().to_vec(),
            client_key_der: client_key.serialize_der(),
            revoking_crl_pem: crl.pem()?,
        })
    })();
    // Generation cannot fail for these fixed parameters; an empty value fails the test.
    built.unwrap_or_default()
}

/// An Opaque Secret with `ca.crt` and `ca.crl`, via `stringData`.
pub fn ca_crl_secret(namespace: &str, name: &str, ca_pem: &str, crl_pem: &str) -> String {
    let indent = |pem: &str| {
        pem.lines()
            .map(|l| format!("    {l}\n"))
            .collect::<String>()
    };
    format!(
        "{}  ca.crl: |\n{}",
        ca_secret(namespace, name, ca_pem),
        indent(crl_pem)
    )
}

/// An Opaque Secret with `ca.crt`, via `stringData`.
pub fn ca_secret(namespace: &str, name: &str, ca_pem: &str) -> String {
    let indent = |pem: &str| {
        pem.lines()
            .map(|l| format!("    {l}\n"))
            .collect::<String>()
    };
    format!(
        "---\napiVersion: v1\nkind: Secret\nmetadata: {{name: {name}, namespace: {namespace}}}\nstringData:\n  ca.crt: |\n{}",
        indent(ca_pem)
    )
}

/// A certificate authority and a server certificate it signed, for TLS toward backends.
#[derive(Debug, Clone, Default)]
pub struct ServerPki {
    /// The CA certificate, PEM.
    pub ca_pem: String,
    /// The server certificate, DER.
    pub server_der: Vec<u8>,
    /// The server's private key, PKCS#8 DER.
    pub server_key_der: Vec<u8>,
}

/// A CA named `ca_name` and a server certificate it signed for the DNS names `names`.
pub fn server_pki(ca_name: &str, names: &[&str]) -> ServerPki {
    let built = (|| -> Result<ServerPki, rcgen::Error> {
        let mut ca_params = rcgen::CertificateParams::new(Vec::<String>::new())?;
        ca_params
            .distinguished_name
            .push(rcgen::DnType::CommonName, ca_name);
        ca_params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
        ca_params.key_usages = vec![
            rcgen::KeyUsagePurpose::KeyCertSign,
            rcgen::KeyUsagePurpose::DigitalSignature,
        ];
        let ca_key = rcgen::KeyPair::generate()?;
        let ca_cert = ca_params.self_signed(&ca_key)?;
        let issuer = rcgen::Issuer::new(ca_params, ca_key);
        let names: Vec<String> = names.iter().map(|n| (*n).to_owned()).collect();
        let mut server_params = rcgen::CertificateParams::new(names)?;
        server_params
            .distinguished_name
            .push(rcgen::DnType::CommonName, "backend");
        server_params.extended_key_usages = vec![rcgen::ExtendedKeyUsagePurpose::ServerAuth];
        let server_key = rcgen::KeyPair::generate()?;
        let server_cert = server_params.signed_by(&server_key, &issuer)?;
        Ok(ServerPki {
            ca_pem: ca_cert.pem(),
            server_der: server_cert.der().to_vec(),
            server_key_der: server_key.serialize_der(),
        })
    })();
    // Generation cannot fail for these fixed parameters; an empty value fails the test.
    built.unwrap_or_default()
}

/// A ConfigMap holding `ca_pem` as `ca.crt` (a BackendTLSPolicy's CA reference).
pub fn ca_configmap(namespace: &str, name: &str, ca_pem: &str) -> String {
    let indented: String = ca_pem.lines().map(|l| format!("    {l}\n")).collect();
    format!(
        "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {{name: {name}, namespace: {namespace}}}\ndata:\n  ca.crt: |\n{indented}"
    )
}
