//! Keys and certificates made with `openssl` (RSA 1024 for brevity, P-256, Ed25519):
//! each key checked against its own certificate and against others.

use super::key_matches;
use crate::tls::pem_blocks;

const RSA_CERT: &str = "\
-----BEGIN CERTIFICATE-----\n\
MIICAjCCAWugAwIBAgIUebTzf81putdWtHkpNzmdUNyTJ/8wDQYJKoZIhvcNAQEL\n\
BQAwEzERMA8GA1UEAwwIcnNhLnRlc3QwHhcNMjYxMjA3MTMzNzM3WhcNMzYxMjA0\n\
MTMzNzM3WjATMREwDwYDVQQDDAhyc2EudGVzdDCBnzANBgkqhkiG9w0BAQEFAAOB\n\
jQAwgYkCgYEA7e1KTtiEz+kMEI6XbH/efc/X8BzoIyoBjihh9Wmx3nGRujBwi8vA\n\
tDMGR/Wk2v0TDMryo+0dSvlz5zFNnfsIu9wyLbSV8ll8dw8Zz/jiiDjZAXYuAm4U\n\
KStVt4eBztsDbJ7643e0APwicEmdJYrbUWE3MErIDD49U6kGllwNxOMCAwEAAaNT\n\
MFEwHQYDVR0OBBYEFKkBVjolDU6PntTNbDbfSBPupdJmMB8GA1UdIwQYMBaAFKkB\n\
VjolDU6PntTNbDbfSBPupdJmMA8GA1UdEwEB/wQFMAMBAf8wDQYJKoZIhvcNAQEL\n\
BQADgYEAFkJUFb+AFvkhZoLXhTWKrudjc38Kl4B3e1FXyM2jrSR7sXioU6TGXQ7p\n\
q7eQvhTSnSYzfUwS4Xm1CAA58m1puqhevnPSDdYZvCnEPgXbHcSAVqGeHchCpISD\n\
bAdiiMNZGqexhtCdb6J62+NrjZE63CjBWnvFwboepZ00zIL7B5g=\n\
-----END CERTIFICATE-----\n\
";
const RSA_PKCS1: &str = "\
-----BEGIN RSA PRIVATE KEY-----\n\
MIICXAIBAAKBgQDt7UpO2ITP6QwQjpdsf959z9fwHOgjKgGOKGH1abHecZG6MHCL\n\
y8C0MwZH9aTa/RMMyvKj7R1K+XPnMU2d+wi73DIttJXyWXx3DxnP+OKIONkBdi4C\n\
bhQpK1W3h4HO2wNsnvrjd7QA/CJwSZ0littRYTcwSsgMPj1TqQaWXA3E4wIDAQAB\n\
AoGAQRnIV0KPNIRDtNQPQrTKIAqavyxpqBV6T3dlNk0xSfgxM4zFfrrFg4jikxX3\n\
gaP1bm6pbYkXlsgimoO3BR8HCDjsoNpZnuUzJ4QV1SfptGFJ5q+w5mwyndUoolsq\n\
QFA8g5M755j+GCHDMzKrtOtOik1IaLEQytODpyKmScPUZEECQQD33k/F+sIqqVaZ\n\
260azO3aBu72+o5fYhZhhkswqlEaYRG07FUoB14794Tpwh2ao8bJidsFdeypYYWO\n\
FINEIO97AkEA9bt8hrKVVP+Z341hM2o6VbVZV0pvs6fv1+/dlJ7LNTriXrqg+Lyq\n\
hNhyV9HJMcfg/op4mPU3N+n8f5nI8QGPuQJBAJHfUqFX/vcua1nm74wLOJuMYwwU\n\
zr8Rscw5RXzhbxOQNuR8BW2mUG4IMD+FzvhYFEA9khk3mkzgqMHCDrKEk4sCQD66\n\
v8065XgvT76LvtZ7Na0PgGESNXWtV0LOjsgTyVgrUgJQrisRLo5/GqFkgnHczojs\n\
HGEfqBrz9ms0fOFZPrECQBb/wwbLeHcXja32tqHLswuLNPZZH9xNcNhnAh67BNVj\n\
yq2r2NBiOhQNTAwT5nAhwP3+7S53hNQRwzyqImEP8hs=\n\
-----END RSA PRIVATE KEY-----\n\
";
const RSA_PKCS8: &str = "\
-----BEGIN PRIVATE KEY-----\n\
MIICdgIBADANBgkqhkiG9w0BAQEFAASCAmAwggJcAgEAAoGBAO3tSk7YhM/pDBCO\n\
l2x/3n3P1/Ac6CMqAY4oYfVpsd5xkbowcIvLwLQzBkf1pNr9EwzK8qPtHUr5c+cx\n\
TZ37CLvcMi20lfJZfHcPGc/44og42QF2LgJuFCkrVbeHgc7bA2ye+uN3tAD8InBJ\n\
nSWK21FhNzBKyAw+PVOpBpZcDcTjAgMBAAECgYBBGchXQo80hEO01A9CtMogCpq/\n\
LGmoFXpPd2U2TTFJ+DEzjMV+usWDiOKTFfeBo/VubqltiReWyCKag7cFHwcIOOyg\n\
2lme5TMnhBXVJ+m0YUnmr7DmbDKd1SiiWypAUDyDkzvnmP4YIcMzMqu0606KTUho\n\
sRDK04OnIqZJw9RkQQJBAPfeT8X6wiqpVpnbrRrM7doG7vb6jl9iFmGGSzCqURph\n\
EbTsVSgHXjv3hOnCHZqjxsmJ2wV17KlhhY4Ug0Qg73sCQQD1u3yGspVU/5nfjWEz\n\
ajpVtVlXSm+zp+/X792Unss1OuJeuqD4vKqE2HJX0ckxx+D+iniY9Tc36fx/mcjx\n\
AY+5AkEAkd9SoVf+9y5rWebvjAs4m4xjDBTOvxGxzDlFfOFvE5A25HwFbaZQbggw\n\
P4XO+FgUQD2SGTeaTOCowcIOsoSTiwJAPrq/zTrleC9Pvou+1ns1rQ+AYRI1da1X\n\
Qs6OyBPJWCtSAlCuKxEujn8aoWSCcdzOiOwcYR+oGvP2azR84Vk+sQJAFv/DBst4\n\
dxeNrfa2ocuzC4s09lkf3E1w2GcCHrsE1WPKravY0GI6FA1MDBPmcCHA/f7tLneE\n\
1BHDPKoiYQ/yGw==\n\
-----END PRIVATE KEY-----\n\
";
const OTHER_RSA_PKCS1: &str = "\
-----BEGIN RSA PRIVATE KEY-----\n\
MIICWwIBAAKBgQCcXjgN1gOPW4AoT3kMBkodFwva6vPaM401LNu5PQ8C3PkZ5sY7\n\
/z9UMEtPerr8ZbFh2P0Q+H7bkC36kmjflsivxN9DgoZetUnQ7nsR6nuhQuyiTs7f\n\
OT+O+wfZpwLc9wVasbhaVawzVcw6nszDWr9oznAMomTocaTM+R+GrcWyGQIDAQAB\n\
AoGAEC+wnb4JoE1YdtPDM/tysJAyKfcoRu4PL/H0zLgFVcaKAqRg4NULOSvGn/OU\n\
Z4wfUIGlsJwIhbHnEIkXUg3JuD66dg+M1r9W4QfaelHxhGJzBxEtimMq/V0VnOJ9\n\
kgnxQBmTfX6u5Y7PWsJWGTk3vO30Ja3maDGqo5GICrtI2gECQQDMYSTju3kPTMdU\n\
qjs2wyir4gAxfhb2eyO3iASg5da8yaCerOgEiyPaTezOzvppmpbg2QyCtVxDtLZR\n\
jzP4ccXjAkEAw9y7OT/Kn2+9kr1vl4AU0VPvPSRFNxe4PfP79p/fTW4Qm/dBVEi/\n\
3u4+p4GTO18ncvuxjlLwtHjykpjqu9WI0wJAZeq3g5zUNK375JtzJc7SNExh/kw7\n\
VTR4zifU7wtONxxwrU/Z75IXEeC0CzkppInDXWK/G1snJFg0Zp17tBPAMwJADIsF\n\
PmxUaJN6W3xgOh6Mtr8eUhcRi66sMOOAHlIstcO3spVKDMC/8OHnB0koCaRVXWq6\n\
+zdajOQ1/KdoWPEa2wJAPDEKC4qSUmkPhBr8JK1FpaL9RqldPKyVXVyKocT30CdX\n\
Ztd+ddr5sfH82q0DVtNSQRduTDE8a0JhlV9FPmr8bg==\n\
-----END RSA PRIVATE KEY-----\n\
";
const EC_CERT: &str = "\
-----BEGIN CERTIFICATE-----\n\
MIIBeDCCAR+gAwIBAgIUDAT2kPdbgru2HN+B3JvMREzuGCswCgYIKoZIzj0EAwIw\n\
EjEQMA4GA1UEAwwHZWMudGVzdDAeFw0yNjEyMDcxMzM3MzdaFw0zNjEyMDQxMzM3\n\
MzdaMBIxEDAOBgNVBAMMB2VjLnRlc3QwWTATBgcqhkjOPQIBBggqhkjOPQMBBwNC\n\
AARyztljQcrYXXSf4R+HwwNksoFKzVY6SW06cLyB6XyWrCyG6Z3nEF1PWoETioh+\n\
v08uBBIG6wmd07KIP+EIkhrGo1MwUTAdBgNVHQ4EFgQUZxqrZeLOdHjU+EuP5r36\n\
2rErZMwwHwYDVR0jBBgwFoAUZxqrZeLOdHjU+EuP5r362rErZMwwDwYDVR0TAQH/\n\
BAUwAwEB/zAKBggqhkjOPQQDAgNHADBEAiA3r7jaqJyPzZktwWwygj9M/LoP3L82\n\
ntTaILm1TIsRYgIgcMkngrITnPiQ7auo4iGBtNCCB9suEZRjYKReUr3sbt8=\n\
-----END CERTIFICATE-----\n\
";
const EC_SEC1: &str = "\
-----BEGIN EC PRIVATE KEY-----\n\
MHcCAQEEIPrp0HZZhMidB6llTbyRz6n93niBllx/Wvmr+UlWHbqLoAoGCCqGSM49\n\
AwEHoUQDQgAEcs7ZY0HK2F10n+Efh8MDZLKBSs1WOkltOnC8gel8lqwshumd5xBd\n\
T1qBE4qIfr9PLgQSBusJndOyiD/hCJIaxg==\n\
-----END EC PRIVATE KEY-----\n\
";
const EC_PKCS8: &str = "\
-----BEGIN PRIVATE KEY-----\n\
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQg+unQdlmEyJ0HqWVN\n\
vJHPqf3eeIGWXH9a+av5SVYduouhRANCAARyztljQcrYXXSf4R+HwwNksoFKzVY6\n\
SW06cLyB6XyWrCyG6Z3nEF1PWoETioh+v08uBBIG6wmd07KIP+EIkhrG\n\
-----END PRIVATE KEY-----\n\
";
const OTHER_EC_SEC1: &str = "\
-----BEGIN EC PRIVATE KEY-----\n\
MHcCAQEEIKITz0uZn3//tYp16Bsaic7DykMTOkuW0pNX3eOClMccoAoGCCqGSM49\n\
AwEHoUQDQgAEFnBkOYt0kNrAbfwbF2jCXA8fCze5ZswOIbh0ZFk/wWKzb0OE0Qi6\n\
tP5OrvXEer+XMCrNB98t+MRHn1IrQmSZ6Q==\n\
-----END EC PRIVATE KEY-----\n\
";
const OTHER_EC_PKCS8: &str = "\
-----BEGIN PRIVATE KEY-----\n\
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgohPPS5mff/+1inXo\n\
GxqJzsPKQxM6S5bSk1fd44KUxxyhRANCAAQWcGQ5i3SQ2sBt/BsXaMJcDx8LN7lm\n\
zA4huHRkWT/BYrNvQ4TRCLq0/k6u9cR6v5cwKs0H3y34xEefUitCZJnp\n\
-----END PRIVATE KEY-----\n\
";
const ED25519_CERT: &str = "\
-----BEGIN CERTIFICATE-----\n\
MIIBODCB66ADAgECAhQ1Pp509riz5QAmOalXV7OCuRW9DTAFBgMrZXAwEjEQMA4G\n\
A1UEAwwHZWQudGVzdDAeFw0yNjEyMDcxMzM3MzdaFw0zNjEyMDQxMzM3MzdaMBIx\n\
EDAOBgNVBAMMB2VkLnRlc3QwKjAFBgMrZXADIQCCjA0rElN0/xPqBHIRXtzmtB2n\n\
rQO7wC/P0GR7SomqgKNTMFEwHQYDVR0OBBYEFHEPna06vykUHqCj3MBQm/1JFEPH\n\
MB8GA1UdIwQYMBaAFHEPna06vykUHqCj3MBQm/1JFEPHMA8GA1UdEwEB/wQFMAMB\n\
Af8wBQYDK2VwA0EA8mZAM9pxcGjAORfQLTMIahQb1gKppPh9imUpAlbph8sQKVVx\n\
jAsZDC0wzLcgPtZasnPcr7vHxxuxGjEOxsw1BQ==\n\
-----END CERTIFICATE-----\n\
";
const ED25519_PKCS8: &str = "\
-----BEGIN PRIVATE KEY-----\n\
MC4CAQAwBQYDK2VwBCIEIDqU+5EO/yG4EhzcVw0Z9gL/dgULEjBWH/yNfYjDP+nE\n\
-----END PRIVATE KEY-----\n\
";

fn check(key: &str, certificate: &str) -> Result<(), String> {
    let key = pem_blocks(key.as_bytes()).expect("PEM");
    let certificate = pem_blocks(certificate.as_bytes()).expect("PEM");
    let parsed = certificate[0].parse_x509().expect("a certificate");
    key_matches(&key[0].label, &key[0].contents, &parsed)
}

#[test]
fn a_key_matches_its_own_certificate_in_every_encoding() {
    for (key, certificate) in [
        (RSA_PKCS1, RSA_CERT),
        (RSA_PKCS8, RSA_CERT),
        (EC_SEC1, EC_CERT),
        (EC_PKCS8, EC_CERT),
        // Its encoding carries no public half to compare: accepted, as before.
        (ED25519_PKCS8, ED25519_CERT),
    ] {
        assert_eq!(check(key, certificate), Ok(()), "{key}");
    }
}

#[test]
fn a_key_of_another_certificate_is_refused() {
    let mismatch = Err("tls.key is not the private key of the certificate in tls.crt".to_owned());
    for (key, certificate) in [
        (OTHER_RSA_PKCS1, RSA_CERT),
        (OTHER_EC_SEC1, EC_CERT),
        (OTHER_EC_PKCS8, EC_CERT),
        (RSA_PKCS1, EC_CERT),
        (RSA_PKCS8, EC_CERT),
        (EC_SEC1, RSA_CERT),
    ] {
        assert_eq!(check(key, certificate), mismatch, "{key}");
    }
}

#[test]
fn a_key_that_is_not_one_is_refused() {
    assert_eq!(
        check(
            "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n",
            EC_CERT
        ),
        Err("tls.key holds a PRIVATE KEY block that is not a valid private key".to_owned())
    );
    assert_eq!(
        check(
            "-----BEGIN RSA PRIVATE KEY-----\nMAMCAQA=\n-----END RSA PRIVATE KEY-----\n",
            RSA_CERT
        ),
        Err("tls.key holds a RSA PRIVATE KEY block that is not a valid private key".to_owned())
    );
}
