//! The self-signed certificate served when no default certificate is configured.
//!
//! It is generated once and kept in the state directory, so restarts and `render` into
//! the same directory give the same bytes.

use std::path::Path;

use model::TlsCert;
use x509_parser::pem::Pem;

const COMMON_NAME: &str = "portcullis default certificate";

/// Reuses the generated certificate found in `dir`, or generates a new one.
pub fn load_or_generate(dir: &Path) -> anyhow::Result<TlsCert> {
    let path = dir.join(render::layout::DEFAULT_CERT);
    if let Ok(text) = std::fs::read_to_string(&path)
        && is_generated(&text)
    {
        return Ok(TlsCert { pem_bundle: text });
    }
    generate()
}

fn is_generated(text: &str) -> bool {
    let Some(Ok(pem)) = Pem::iter_from_buffer(text.as_bytes()).next() else {
        return false;
    };
    let Ok(certificate) = pem.parse_x509() else {
        return false;
    };
    let has_key = text.contains("PRIVATE KEY-----");
    let ours = certificate
        .subject()
        .iter_common_name()
        .any(|cn| cn.as_str() == Ok(COMMON_NAME));
    has_key && ours && certificate.validity().is_valid()
}

fn generate() -> anyhow::Result<TlsCert> {
    let mut params = rcgen::CertificateParams::new(vec!["portcullis.invalid".to_owned()])?;
    params
        .distinguished_name
        .push(rcgen::DnType::CommonName, COMMON_NAME);
    let key = rcgen::KeyPair::generate()?;
    let certificate = params.self_signed(&key)?;
    Ok(TlsCert {
        pem_bundle: format!("{}{}", certificate.pem(), key.serialize_pem()),
    })
}
