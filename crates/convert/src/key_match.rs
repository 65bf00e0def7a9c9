//! Whether a TLS Secret's private key belongs to its certificate: the public half the
//! key's own encoding carries, compared with the certificate's.

use x509_parser::certificate::X509Certificate;
use x509_parser::der_parser::ber::{BerObject, Class};
use x509_parser::der_parser::der::parse_der;
use x509_parser::public_key::PublicKey;

/// `rsaEncryption` (RFC 8017).
const RSA_ENCRYPTION: &str = "1.2.840.113549.1.1.1";
/// `id-ecPublicKey` (RFC 5480).
const EC_PUBLIC_KEY: &str = "1.2.840.10045.2.1";

/// The public half a private key's encoding carries.
enum Public<'a> {
    Rsa {
        modulus: &'a [u8],
        exponent: &'a [u8],
    },
    /// The point, as a certificate's `subjectPublicKey` holds it.
    Ec(&'a [u8]),
    /// Not compared: another algorithm (Ed25519, say), or an EC key without its point.
    Unknown,
}

/// Checks that the private key (a PEM block's `label` and DER `contents`) is the one
/// whose public half `certificate` holds. HAProxy refuses a certificate file whose key
/// is not its certificate's (and the whole configuration with it); a key that cannot be
/// read is refused the same way.
pub(crate) fn key_matches(
    label: &str,
    contents: &[u8],
    certificate: &X509Certificate<'_>,
) -> Result<(), String> {
    let unreadable = || format!("tls.key holds a {label} block that is not a valid private key");
    let public = match label {
        "RSA PRIVATE KEY" => rsa_public(contents),
        "EC PRIVATE KEY" => ec_public(contents),
        "PRIVATE KEY" => pkcs8_public(contents),
        _ => Some(Public::Unknown),
    }
    .ok_or_else(unreadable)?;
    let matches = match (public, certificate.public_key().parsed()) {
        (Public::Rsa { modulus, exponent }, Ok(PublicKey::RSA(rsa))) => {
            unsigned(modulus) == unsigned(rsa.modulus)
                && unsigned(exponent) == unsigned(rsa.exponent)
        }
        (Public::Ec(point), Ok(PublicKey::EC(_))) => {
            point == &*certificate.public_key().subject_public_key.data
        }
        // A key of one kind for a certificate of another.
        (Public::Rsa { .. } | Public::Ec(_), Ok(PublicKey::RSA(_) | PublicKey::EC(_))) => false,
        // What this does not read (an RSASSA-PSS certificate's key, say) stays HAProxy's to
        // check, as it was.
        _ => true,
    };
    if matches {
        Ok(())
    } else {
        Err("tls.key is not the private key of the certificate in tls.crt".to_owned())
    }
}

/// An integer's bytes without the sign byte DER puts before a high bit.
fn unsigned(bytes: &[u8]) -> &[u8] {
    let start = bytes.iter().take_while(|b| **b == 0).count();
    &bytes[start.min(bytes.len().saturating_sub(1))..]
}

/// The items of a DER sequence that is the whole of `der`.
fn sequence(der: &[u8]) -> Option<Vec<BerObject<'_>>> {
    match parse_der(der) {
        Ok(([], object)) => object.as_sequence().ok().cloned(),
        _ => None,
    }
}

/// PKCS #1 `RSAPrivateKey`: version, modulus, public exponent, ...
fn rsa_public(der: &[u8]) -> Option<Public<'_>> {
    let items = sequence(der)?;
    let (modulus, exponent) = (
        items.get(1)?.as_slice().ok()?,
        items.get(2)?.as_slice().ok()?,
    );
    Some(Public::Rsa { modulus, exponent })
}

/// SEC 1 `ECPrivateKey`: version 1, the private key, `[0]` parameters, `[1]` the point.
fn ec_public(der: &[u8]) -> Option<Public<'_>> {
    let items = sequence(der)?;
    items.get(1)?.as_slice().ok()?;
    let tagged = items
        .iter()
        .skip(2)
        .find(|item| item.header.class() == Class::ContextSpecific && item.header.tag().0 == 1);
    let Some(tagged) = tagged else {
        return Some(Public::Unknown);
    };
    let (_, point) = parse_der(tagged.as_slice().ok()?).ok()?;
    Some(Public::Ec(point.as_bitstring().ok()?.data))
}

/// PKCS #8 `PrivateKeyInfo`: version, the algorithm, the algorithm's own private key.
fn pkcs8_public(der: &[u8]) -> Option<Public<'_>> {
    let items = sequence(der)?;
    let algorithm = items
        .get(1)?
        .as_sequence()
        .ok()?
        .first()?
        .as_oid()
        .ok()?
        .to_id_string();
    let inner = items.get(2)?.as_slice().ok()?;
    match algorithm.as_str() {
        RSA_ENCRYPTION => rsa_public(inner),
        EC_PUBLIC_KEY => ec_public(inner),
        _ => Some(Public::Unknown),
    }
}

#[cfg(test)]
#[path = "key_match_tests.rs"]
mod tests;
