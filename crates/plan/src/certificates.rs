//! Certificates and the certificate list, changed live: new certificate files are loaded
//! before the list names them, and removed ones are deleted after it stops naming them.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use render::{CRT_LIST, RenderedFile};

use crate::RuntimeCommand;

/// The directory of certificate files and the certificate list.
pub(crate) const CERTS_DIR: &str = "certs/";

/// The largest certificate sent over the runtime API: the command and its payload must
/// fit in one of HAProxy's buffers (`tune.bufsize`, 16 KiB by default).
pub const MAX_CERTIFICATE_PAYLOAD: usize = 14 * 1024;

/// The commands that turn the live certificates into the desired ones, in a safe order;
/// `None` when one of them cannot be sent live (too large).
pub(crate) fn changes(
    live: &BTreeMap<String, RenderedFile>,
    desired: &BTreeMap<String, RenderedFile>,
) -> Option<Vec<RuntimeCommand>> {
    let certificate_files =
        |files: &BTreeMap<String, RenderedFile>| -> BTreeMap<String, RenderedFile> {
            files
                .iter()
                .filter(|(p, _)| p.starts_with(CERTS_DIR) && p.as_str() != CRT_LIST)
                .map(|(p, f)| (p.clone(), f.clone()))
                .collect()
        };
    let live_certs = certificate_files(live);
    let desired_certs = certificate_files(desired);
    let mut commands = Vec::new();
    for (path, file) in &desired_certs {
        let live_hash = live_certs.get(path).map(|f| f.hash);
        if live_hash == Some(file.hash) {
            continue;
        }
        if file.len() > MAX_CERTIFICATE_PAYLOAD {
            return None;
        }
        let (file, content) = (path.clone(), Arc::from(file.text().as_bytes()));
        commands.push(match live_hash {
            Some(_) => RuntimeCommand::UpdateCertificate { file, content },
            None => RuntimeCommand::AddCertificate { file, content },
        });
    }
    let entries = |files: &BTreeMap<String, RenderedFile>| -> BTreeSet<String> {
        files
            .get(CRT_LIST)
            .map(|f| {
                f.text()
                    .lines()
                    .filter(|l| !l.trim().is_empty())
                    .map(str::to_owned)
                    .collect()
            })
            .unwrap_or_default()
    };
    let live_entries = entries(live);
    let desired_entries = entries(desired);
    // New entries first: a host moving to another certificate is never without one.
    for entry in desired_entries.difference(&live_entries) {
        commands.push(RuntimeCommand::AddCrtListEntry {
            list: CRT_LIST.to_owned(),
            entry: entry.clone(),
        });
    }
    for entry in live_entries.difference(&desired_entries) {
        commands.push(RuntimeCommand::RemoveCrtListEntry {
            list: CRT_LIST.to_owned(),
            entry: entry.clone(),
        });
    }
    for path in live_certs
        .keys()
        .filter(|p| !desired_certs.contains_key(*p))
    {
        commands.push(RuntimeCommand::RemoveCertificate { file: path.clone() });
    }
    Some(commands)
}
