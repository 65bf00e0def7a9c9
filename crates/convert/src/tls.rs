//! Turning a TLS Secret into a certificate bundle HAProxy can load.

use std::collections::BTreeMap;

use model::{CertId, DhParams, TlsCert};
use resources::{Kind, Object, ObjectRef};
use x509_parser::pem::Pem;

use crate::lookup::Recorder;

/// Reads and checks the `tls.crt` / `tls.key` of a Secret (from `data`, or `stringData`
/// as `kubectl apply` would merge it).
pub(crate) fn load_certificate(lookups: &mut Recorder<'_>, id: &CertId) -> Result<TlsCert, String> {
    let (namespace, name) = (id.namespace.as_str(), id.name.as_str());
    let fields = secret_fields(lookups, id)?;
    let field = |key: &str| {
        fields
            .get(key)
            .filter(|v| !v.is_empty())
            .ok_or_else(|| format!("secret {namespace}/{name} has no {key}"))
    };
    let certificate = field("tls.crt")?;
    let key = field("tls.key")?;
    let certificates = pem_blocks(certificate)
        .map_err(|e| format!("secret {namespace}/{name}: tls.crt is not PEM: {e}"))?;
    if certificates.is_empty() || certificates.iter().any(|p| p.label != "CERTIFICATE") {
        return Err(format!(
            "secret {namespace}/{name}: tls.crt must hold only CERTIFICATE blocks"
        ));
    }
    let mut leaf = None;
    for pem in &certificates {
        let parsed = pem.parse_x509().map_err(|e| {
            format!("secret {namespace}/{name}: tls.crt is not a valid X.509 certificate: {e}")
        })?;
        leaf.get_or_insert(parsed);
    }
    // HAProxy would ask for a pass phrase on its terminal (and wait for it); a key that
    // needs one cannot be served.
    if private_key_is_encrypted(key) {
        return Err(format!(
            "secret {namespace}/{name}: tls.key is encrypted; HAProxy needs an unencrypted private key"
        ));
    }
    let mut keys = pem_blocks(key)
        .map_err(|e| format!("secret {namespace}/{name}: tls.key is not PEM: {e}"))?;
    // `openssl ecparam -genkey` writes the curve's parameters before the key; HAProxy
    // loads the key and so does portcullis (the bundle it writes leaves them out).
    keys.retain(|block| block.label != "EC PARAMETERS");
    let [private_key] = keys.as_slice() else {
        return Err(format!(
            "secret {namespace}/{name}: tls.key must hold exactly one private key"
        ));
    };
    if !private_key.label.ends_with("PRIVATE KEY") || private_key.contents.is_empty() {
        return Err(format!(
            "secret {namespace}/{name}: tls.key holds a {} block, not a private key",
            private_key.label
        ));
    }
    // The certificate the key must belong to is the first, as HAProxy reads the bundle.
    if let Some(leaf) = &leaf {
        crate::key_match::key_matches(&private_key.label, &private_key.contents, leaf)
            .map_err(|why| format!("secret {namespace}/{name}: {why}"))?;
    }
    let mut bundle = String::new();
    for pem in certificates.iter().chain([private_key]) {
        bundle.push_str(&encode_pem(&pem.label, &pem.contents));
    }
    Ok(TlsCert { pem_bundle: bundle })
}

/// Reads and checks the `dhparam.pem` of a Secret: one `DH PARAMETERS` block whose DER is
/// a sequence of integers (the prime, the generator), as HAProxy loads it.
pub(crate) fn load_dh_params(lookups: &mut Recorder<'_>, id: &CertId) -> Result<DhParams, String> {
    let (namespace, name) = (id.namespace.as_str(), id.name.as_str());
    let fields = secret_fields(lookups, id)?;
    let Some(text) = fields.get("dhparam.pem").filter(|v| !v.is_empty()) else {
        return Err(format!("secret {namespace}/{name} has no dhparam.pem"));
    };
    let blocks = pem_blocks(text)
        .map_err(|e| format!("secret {namespace}/{name}: dhparam.pem is not PEM: {e}"))?;
    let [block] = blocks.as_slice() else {
        return Err(format!(
            "secret {namespace}/{name}: dhparam.pem must hold exactly one DH PARAMETERS block"
        ));
    };
    let integers = match x509_parser::der_parser::parse_der(&block.contents) {
        Ok(([], object)) => object.as_sequence().ok().and_then(|items| {
            items
                .iter()
                .all(|item| item.as_bigint().is_ok())
                .then_some(items.len())
        }),
        _ => None,
    };
    if block.label != "DH PARAMETERS" || integers.is_none_or(|count| count < 2) {
        return Err(format!(
            "secret {namespace}/{name}: dhparam.pem holds a {} block that is not Diffie-Hellman parameters",
            block.label
        ));
    }
    Ok(DhParams {
        pem: encode_pem(&block.label, &block.contents),
    })
}

/// The fields of a Secret: `data`, overridden by `stringData` as `kubectl apply` would
/// merge it.
pub(crate) fn secret_fields(
    lookups: &mut Recorder<'_>,
    id: &CertId,
) -> Result<BTreeMap<String, Vec<u8>>, String> {
    let (namespace, name) = (id.namespace.as_str(), id.name.as_str());
    let secret_ref = ObjectRef::new(Kind::Secret, namespace, name);
    let Some(Object::Secret(secret)) = lookups.get(secret_ref) else {
        return Err(format!("secret {namespace}/{name} not found"));
    };
    let mut fields = BTreeMap::new();
    for (key, value) in secret.data.iter().flatten() {
        fields.insert(key.clone(), value.0.clone());
    }
    for (key, value) in secret.string_data.iter().flatten() {
        fields.insert(key.clone(), value.clone().into_bytes());
    }
    Ok(fields)
}

/// Whether a PEM private key is protected by a pass phrase (PKCS#8 `ENCRYPTED PRIVATE
/// KEY`, or a traditional key with a `Proc-Type: 4,ENCRYPTED` header).
fn private_key_is_encrypted(pem: &[u8]) -> bool {
    let text = String::from_utf8_lossy(pem);
    text.contains("-----BEGIN ENCRYPTED PRIVATE KEY-----")
        || text.contains("Proc-Type: 4,ENCRYPTED")
}

pub(crate) fn pem_blocks(bytes: &[u8]) -> Result<Vec<Pem>, String> {
    let mut blocks = Vec::new();
    for block in Pem::iter_from_buffer(bytes) {
        blocks.push(block.map_err(|e| e.to_string())?);
    }
    Ok(blocks)
}

/// Re-encodes a PEM block, so the bundle holds nothing but what was parsed.
pub(crate) fn encode_pem(label: &str, contents: &[u8]) -> String {
    use base64::Engine;
    let encoded = base64::engine::general_purpose::STANDARD.encode(contents);
    let mut out = format!("-----BEGIN {label}-----\n");
    for line in encoded.as_bytes().chunks(64) {
        out.push_str(&String::from_utf8_lossy(line));
        out.push('\n');
    }
    out.push_str(&format!("-----END {label}-----\n"));
    out
}

#[cfg(test)]
mod tests {
    use super::private_key_is_encrypted;

    #[test]
    fn keys_behind_a_pass_phrase_are_recognised() {
        assert!(private_key_is_encrypted(
            b"-----BEGIN ENCRYPTED PRIVATE KEY-----\nMIIB\n-----END ENCRYPTED PRIVATE KEY-----\n"
        ));
        assert!(private_key_is_encrypted(
            b"-----BEGIN RSA PRIVATE KEY-----\nProc-Type: 4,ENCRYPTED\nDEK-Info: AES-128-CBC,00\n\nMIIB\n-----END RSA PRIVATE KEY-----\n"
        ));
        assert!(!private_key_is_encrypted(
            b"-----BEGIN PRIVATE KEY-----\nMIIB\n-----END PRIVATE KEY-----\n"
        ));
    }
}
