//! The state directory's layout: every name portcullis gives a file or directory there.
//!
//! The rendered files name some of these (the certificates, the maps, the admin socket),
//! and the `haproxy` crate writes and sweeps the others, so they are spelled here once.
//! Paths are relative to the state directory and `/`-separated.

use model::CertId;

// Literal tokens, so that the constants below can be joined with `concat!`.
macro_rules! backends_dir {
    () => {
        "backends"
    };
}
macro_rules! maps_dir {
    () => {
        "maps"
    };
}
macro_rules! certs_dir {
    () => {
        "certs"
    };
}
macro_rules! backend_tls_dir {
    () => {
        "backend-tls"
    };
}

macro_rules! client_ca_dir {
    () => {
        "client-ca"
    };
}
macro_rules! global_tls_dir {
    () => {
        "global-tls"
    };
}

macro_rules! errors_dir {
    () => {
        "errors"
    };
}
macro_rules! acls_dir {
    () => {
        "acls"
    };
}

macro_rules! lua_dir {
    () => {
        "lua"
    };
}

/// The main configuration file, loaded first.
pub const MAIN_CONFIG: &str = "haproxy.cfg";
/// Directory of the backend shard files, loaded after the main file.
pub const BACKENDS_DIR: &str = backends_dir!();
/// Directory of the routing maps.
pub const MAPS_DIR: &str = maps_dir!();
/// Directory of the certificate files and the certificate list.
pub const CERTS_DIR: &str = certs_dir!();
/// Directory of the CA bundles and client certificates used toward backend servers.
pub const BACKEND_TLS_DIR: &str = backend_tls_dir!();
/// Directory of the CA bundles and revocation lists client certificates are checked
/// against.
pub const CLIENT_CA_DIR: &str = client_ca_dir!();
/// Directory of the custom error pages.
pub const ERRORS_DIR: &str = errors_dir!();
/// Directory of the TLS files of global keys: DH parameters, the stats page's certificate.
pub const GLOBAL_TLS_DIR: &str = global_tls_dir!();
/// Directory of the address lists (ACL pattern files).
pub const ACLS_DIR: &str = acls_dir!();
/// Directory of the Lua scripts HAProxy loads.
pub const LUA_DIR: &str = lua_dir!();
/// The external authentication action (`auth-url`).
pub const AUTH_LUA_FILE: &str = concat!(lua_dir!(), "/auth-request.lua");
/// Certificate served for unknown SNI names.
pub const DEFAULT_CERT: &str = concat!(certs_dir!(), "/default.pem");
/// SNI-selected certificates.
pub const CRT_LIST: &str = concat!(certs_dir!(), "/crt-list.txt");

/// Every directory or top-level file of rendered files. Other top-level entries are not
/// rendered files: [`RUN_DIR`], [`STAGING_DIR`], and whatever else the user keeps there.
pub const MANAGED_ROOTS: &[&str] = &[
    MAIN_CONFIG,
    BACKENDS_DIR,
    MAPS_DIR,
    CERTS_DIR,
    BACKEND_TLS_DIR,
    ERRORS_DIR,
    CLIENT_CA_DIR,
    GLOBAL_TLS_DIR,
    ACLS_DIR,
    LUA_DIR,
];

/// The directory holding HAProxy's sockets, relative to HAProxy's working directory
/// (the state directory, unless its path is too long for a socket address).
pub const RUN_DIR: &str = "run";
/// The master CLI's socket (`-S`), in [`RUN_DIR`].
pub const MASTER_SOCKET: &str = "master.sock";
/// The runtime API's socket (the rendered `stats socket`), in [`RUN_DIR`].
pub const ADMIN_SOCKET: &str = "admin.sock";

/// The HTTPS frontend's socket, in [`RUN_DIR`], when the HTTPS port reads SNI first
/// (TLS passthrough): the TCP frontend hands it the connections HAProxy terminates.
pub const TERMINATE_SOCKET: &str = "https.sock";

/// The SNI names whose TLS connections are passed through, and their backends.
pub const PASSTHROUGH_MAP: &str = concat!(maps_dir!(), "/passthrough.map");

/// Where a configuration is assembled for `haproxy -c`; it exists only during a check.
pub const STAGING_DIR: &str = "staging";

/// A directory of rendered files.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ManagedDir {
    /// Backend shard files.
    Backends,
    /// Routing maps.
    Maps,
    /// Certificate files and the certificate list.
    Certs,
    /// CA bundles and client certificates toward backend servers.
    BackendTls,
    /// Custom error pages.
    Errors,
    /// CA bundles and revocation lists for client certificates.
    ClientCa,
    /// TLS files of global keys.
    GlobalTls,
    /// Address lists.
    Acls,
    /// Lua scripts.
    Lua,
}

impl ManagedDir {
    /// Every one, in the order of [`MANAGED_ROOTS`].
    pub const ALL: &[ManagedDir] = &[
        ManagedDir::Backends,
        ManagedDir::Maps,
        ManagedDir::Certs,
        ManagedDir::BackendTls,
        ManagedDir::Errors,
        ManagedDir::ClientCa,
        ManagedDir::GlobalTls,
        ManagedDir::Acls,
        ManagedDir::Lua,
    ];

    /// Its name in the state directory.
    pub const fn name(self) -> &'static str {
        match self {
            ManagedDir::Backends => BACKENDS_DIR,
            ManagedDir::Maps => MAPS_DIR,
            ManagedDir::Certs => CERTS_DIR,
            ManagedDir::BackendTls => BACKEND_TLS_DIR,
            ManagedDir::Errors => ERRORS_DIR,
            ManagedDir::ClientCa => CLIENT_CA_DIR,
            ManagedDir::GlobalTls => GLOBAL_TLS_DIR,
            ManagedDir::Acls => ACLS_DIR,
            ManagedDir::Lua => LUA_DIR,
        }
    }

    /// Whether `path` names a file in this directory.
    pub fn holds(self, path: &str) -> bool {
        path.strip_prefix(self.name())
            .is_some_and(|rest| rest.starts_with('/'))
    }
}

/// The file of a backend shard: `backends/shard-007.cfg`, zero-padded so lexical order
/// is numeric order.
pub fn shard_file_name(shard: u32, shards: u32) -> String {
    let width = (shards.max(1) - 1).to_string().len().max(3);
    format!("{BACKENDS_DIR}/shard-{shard:0width$}.cfg")
}

/// The file of a custom error page: `errors/503-<content hash>.http`.
pub fn error_page_file(code: u16, content_hash: u64) -> String {
    format!("{ERRORS_DIR}/{code}-{content_hash:016x}.http")
}

/// A TLS file of a global key, named by its content: `global-tls/<what>-<hash>.pem`, so a
/// new content changes the main configuration that names it.
pub fn global_tls_file(what: &str, content: &str) -> String {
    format!(
        "{GLOBAL_TLS_DIR}/{what}-{:016x}.pem",
        xxhash_rust::xxh3::xxh3_64(content.as_bytes())
    )
}

/// The file of a Secret's certificate bundle.
pub fn certificate_file(id: &CertId) -> String {
    format!("{CERTS_DIR}/{}", id.file_name())
}

/// A path as a backend shard file names it: `default-path config` resolves a relative
/// path from the directory of the file that names it, and `add server` finds a file
/// HAProxy loaded by that same name.
pub fn from_shard_file(path: &str) -> String {
    format!("../{path}")
}

/// The file of an address list's blocks: `acls/<name>.lst`.
pub fn address_list_file(name: &model::ListName) -> String {
    format!("{ACLS_DIR}/{name}.lst")
}

/// The file of an address list's exceptions: `acls/<name>-except.lst`.
pub fn address_exceptions_file(name: &model::ListName) -> String {
    format!("{ACLS_DIR}/{name}-except.lst")
}

/// Whether a path names an address list file (whose content HAProxy takes live).
pub fn is_address_list_file(path: &str) -> bool {
    ManagedDir::Acls.holds(path) && path.ends_with(".lst")
}

/// The CA bundle of a Secret, checking backend servers' certificates.
pub fn backend_ca_file(secret: &CertId) -> String {
    format!("{BACKEND_TLS_DIR}/ca_{}", secret.file_name())
}

/// The CA bundle of a BackendTLSPolicy (`policy`: its namespace and name), checking
/// backend servers: named apart from Secrets' bundles, which may share its name.
pub fn backend_policy_ca_file(policy: &CertId) -> String {
    format!("{BACKEND_TLS_DIR}/policy-ca_{}", policy.file_name())
}

/// The client certificate and key of a Secret, presented to backend servers.
pub fn backend_crt_file(secret: &CertId) -> String {
    format!("{BACKEND_TLS_DIR}/crt_{}", secret.file_name())
}

/// The CA bundle of a Secret or a ConfigMap, checking client certificates. (`_` is in no
/// Kubernetes name, so `ca_cm_…` is never a Secret's file.)
pub fn client_ca_file(ca: &model::ClientCa) -> String {
    match ca.source {
        model::CaSource::Secret => format!("{CLIENT_CA_DIR}/ca_{}", ca.secret.file_name()),
        model::CaSource::ConfigMap => format!("{CLIENT_CA_DIR}/ca_cm_{}", ca.secret.file_name()),
    }
}

/// The revocation lists of a Secret, checking client certificates.
pub fn client_crl_file(secret: &CertId) -> String {
    format!("{CLIENT_CA_DIR}/crl_{}", secret.file_name())
}

/// A routing map. Each frontend looks a request up in the hosts map, then in its exact
/// map, then in its prefix map (see the `maps` module).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum MapFile {
    /// Known host keys, exact and wildcard.
    Hosts,
    /// The plain-HTTP frontend's exact paths.
    HttpExact,
    /// The plain-HTTP frontend's path prefixes.
    HttpPrefix,
    /// The HTTPS frontend's exact paths.
    HttpsExact,
    /// The HTTPS frontend's path prefixes.
    HttpsPrefix,
    /// Host patterns (`server-alias-regex`, `redirect-from-regex`) → host keys, tried in
    /// file order after the hosts map.
    RegexHosts,
}

impl MapFile {
    /// Every map, in the order of their paths.
    pub const ALL: [MapFile; 6] = [
        MapFile::Hosts,
        MapFile::HttpExact,
        MapFile::HttpPrefix,
        MapFile::HttpsExact,
        MapFile::HttpsPrefix,
        MapFile::RegexHosts,
    ];

    /// Its path.
    pub const fn path(self) -> &'static str {
        match self {
            MapFile::Hosts => concat!(maps_dir!(), "/hosts.map"),
            MapFile::HttpExact => concat!(maps_dir!(), "/http-exact.map"),
            MapFile::HttpPrefix => concat!(maps_dir!(), "/http-prefix.map"),
            MapFile::HttpsExact => concat!(maps_dir!(), "/https-exact.map"),
            MapFile::HttpsPrefix => concat!(maps_dir!(), "/https-prefix.map"),
            MapFile::RegexHosts => concat!(maps_dir!(), "/regex-hosts.map"),
        }
    }

    /// The map a path is, if it is one.
    pub fn from_path(path: &str) -> Option<MapFile> {
        MapFile::ALL.into_iter().find(|map| map.path() == path)
    }

    /// The exact-path map of the plain-HTTP or of the HTTPS frontend.
    pub const fn exact_paths(plain_http: bool) -> MapFile {
        if plain_http {
            MapFile::HttpExact
        } else {
            MapFile::HttpsExact
        }
    }

    /// The path-prefix map of the plain-HTTP or of the HTTPS frontend.
    pub const fn path_prefixes(plain_http: bool) -> MapFile {
        if plain_http {
            MapFile::HttpPrefix
        } else {
            MapFile::HttpsPrefix
        }
    }

    /// Whether its entries are tried in file order (the first match wins), so a live
    /// change must replace it whole rather than append an entry.
    pub const fn ordered(self) -> bool {
        matches!(self, MapFile::RegexHosts)
    }

    /// Its place in [`MapFile::ALL`].
    pub(crate) const fn position(self) -> usize {
        self as usize
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_file_lies_in_its_managed_directory() {
        assert!(
            MapFile::ALL
                .iter()
                .all(|map| ManagedDir::Maps.holds(map.path()))
        );
        assert!(ManagedDir::Certs.holds(DEFAULT_CERT) && ManagedDir::Certs.holds(CRT_LIST));
        assert!(ManagedDir::Backends.holds(&shard_file_name(7, 16)));
        assert!(!ManagedDir::Maps.holds("mapsx/hosts.map") && !ManagedDir::Maps.holds(MAPS_DIR));
        let names: Vec<&str> = ManagedDir::ALL.iter().map(|dir| dir.name()).collect();
        assert_eq!(names, MANAGED_ROOTS[1..]);
    }

    #[test]
    fn maps_are_listed_in_path_order_and_found_by_path() {
        let paths: Vec<&str> = MapFile::ALL.iter().map(|map| map.path()).collect();
        assert!(paths.is_sorted(), "{paths:?}");
        for (position, map) in MapFile::ALL.into_iter().enumerate() {
            assert_eq!(map.position(), position);
            assert_eq!(MapFile::from_path(map.path()), Some(map));
        }
        assert_eq!(MapFile::from_path("maps/other.map"), None);
    }

    #[test]
    fn shard_files_sort_numerically() {
        assert_eq!(shard_file_name(7, 16), "backends/shard-007.cfg");
        assert_eq!(shard_file_name(42, 5000), "backends/shard-0042.cfg");
    }

    #[test]
    fn a_secret_and_a_configmap_of_one_name_are_two_client_ca_files() {
        let ca = |source| model::ClientCa {
            secret: CertId {
                namespace: "web".into(),
                name: "client-ca".into(),
            },
            source,
            ca: String::new(),
            crl: None,
        };
        let secret = client_ca_file(&ca(model::CaSource::Secret));
        let configmap = client_ca_file(&ca(model::CaSource::ConfigMap));
        assert_eq!(secret, "client-ca/ca_web_client-ca.pem");
        assert_eq!(configmap, "client-ca/ca_cm_web_client-ca.pem");
        assert!(ManagedDir::ClientCa.holds(&configmap));
    }
}
