//! DNS resolution: `resolvers` sections, and the server lines of backends HAProxy
//! resolves by name.

use std::fmt::Write;

use model::{NamedServers, Resolution, Resolvers};

/// The `resolvers` sections, each after an empty line.
pub(crate) fn resolvers_sections(resolvers: &Resolvers) -> String {
    let mut text = String::new();
    for section in &resolvers.sections {
        let _ = writeln!(text, "\nresolvers {}", section.name);
        for (index, server) in section.nameservers.iter().enumerate() {
            let _ = writeln!(text, "    nameserver ns{:02} {server}", index + 1);
        }
        let _ = write!(
            text,
            "    accepted_payload_size {}\n    hold obsolete {}\n    hold valid {}\n    timeout retry {}\n",
            resolvers.accepted_payload_size,
            resolvers.hold_obsolete,
            resolvers.hold_valid,
            resolvers.timeout_retry
        );
    }
    text
}

/// The server lines of a backend whose servers are a name: one server resolved when
/// HAProxy loads its configuration (in maintenance while the name does not resolve, so
/// a name that does not resolve never stops HAProxy), or a template of servers a
/// resolver fills and updates. Their options are the section's `default-server` line.
pub(crate) fn named_server_lines(text: &mut String, named: &NamedServers) {
    let NamedServers {
        host,
        port,
        resolution,
    } = named;
    match resolution {
        Resolution::AtLoad => {
            let _ = writeln!(
                text,
                "    server {host}_{port} {host}:{port} init-addr last,libc,none"
            );
        }
        Resolution::Resolver { name, slots } => {
            let _ = writeln!(
                text,
                "    server-template srv {slots} {host}:{port} resolvers {name} resolve-prefer ipv4 init-addr none"
            );
        }
    }
}
