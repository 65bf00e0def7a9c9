//! Backend shard files: which backend lives in which file.

use std::fmt::Write;

use model::{Backend, BackendDefaults, BackendId};
use xxhash_rust::xxh3::xxh3_64;

/// The shard of a backend: `xxh3_64(section name, seed 0) % shards`.
///
/// xxh3-64 is specified and stable across versions, platforms and restarts, so a backend
/// stays in its file for as long as the shard count is unchanged.
pub fn shard_of(id: &BackendId, shards: u32) -> u32 {
    let shards = u64::from(shards.max(1));
    // The remainder is below `shards`, which came from a u32.
    u32::try_from(xxh3_64(id.section_name().as_bytes()) % shards).unwrap_or(0)
}

/// The first line of a shard file.
pub(crate) fn shard_header(shard: u32, shards: u32) -> String {
    format!("# portcullis backend shard {shard} of {shards}\n")
}

/// One backend section, as it reads after the backends' `defaults` section (`defaults`).
pub(crate) fn render_backend(backend: &Backend, defaults: &BackendDefaults) -> String {
    let mut text = String::with_capacity(160 + 48 * backend.servers.len());
    // Writing to a String cannot fail.
    let _ = writeln!(text, "\nbackend {}", backend.id.section_name());
    let http = backend.is_http();
    if !http {
        text.push_str("    mode tcp\n");
    }
    crate::servers::section_settings(&mut text, backend, defaults);
    if backend.settings.client_cert_header {
        text.push_str(&crate::client_auth::cert_header_lines());
    }
    for (code, page) in &backend.settings.error_pages {
        let file = crate::responses::page_path(*code, page);
        let _ = writeln!(
            text,
            "    errorfile {code} {}",
            crate::layout::from_shard_file(&file)
        );
    }
    // An HTTPRoute rule's timeout, set by the frontend (see `rules`).
    if http
        && backend
            .origins
            .iter()
            .any(|origin| origin.kind == "HTTPRoute")
    {
        text.push_str(
            "    http-request set-timeout server var(txn.server_timeout) if { var(txn.server_timeout) -m found }\n",
        );
    }
    crate::servers::group_selection(&mut text, backend);
    crate::servers::default_server_line(&mut text, backend, defaults);
    if let Some(named) = &backend.settings.named {
        crate::dns::named_server_lines(&mut text, named);
    }
    crate::servers::server_lines(&mut text, backend);
    text
}
