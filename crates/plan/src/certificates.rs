//! Certificates and the certificate list, changed live: new certificate files are loaded
//! before the list names them, and removed ones are deleted after it stops naming them.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use render::RenderedFile;
use render::layout::{CRT_LIST, ManagedDir};

use crate::RuntimeCommand;

/// The largest certificate sent over the runtime API: the command and its payload must
/// fit in one of HAProxy's buffers (`tune.bufsize`, 16 KiB by default).
pub const MAX_CERTIFICATE_PAYLOAD: usize = 14 * 1024;

/// The commands that bring client-certificate CAs and revocation lists to the desired
/// content: new content for files HAProxy has loaded goes live (`set ssl ca-file` /
/// `crl-file`); `None` (a reload) when a file is added or removed, a certificate-list
/// entry naming one changes (HAProxy 2.6's `add ssl crt-list` cannot load a CA file it
/// has not loaded: "unable to load"), or a file is too large for one payload.
pub(crate) fn client_ca_changes(
    live: &BTreeMap<String, RenderedFile>,
    desired: &BTreeMap<String, RenderedFile>,
) -> Option<Vec<RuntimeCommand>> {
    let client_ca = |files: &'_ BTreeMap<String, RenderedFile>| -> BTreeMap<String, RenderedFile> {
        files
            .iter()
            .filter(|(path, _)| ManagedDir::ClientCa.holds(path))
            .map(|(path, file)| (path.clone(), file.clone()))
            .collect()
    };
    let (live_files, desired_files) = (client_ca(live), client_ca(desired));
    if !live_files.keys().eq(desired_files.keys()) {
        return None;
    }
    let mut commands = Vec::new();
    for (path, file) in &desired_files {
        if live_files.get(path).map(|f| f.hash) == Some(file.hash) {
            continue;
        }
        if file.len() > MAX_CERTIFICATE_PAYLOAD {
            return None;
        }
        let name = path.rsplit('/').next().unwrap_or_default();
        commands.push(RuntimeCommand::UpdateCaFile {
            file: path.clone(),
            crl: name.starts_with("crl_"),
            content: Arc::from(file.text().as_bytes()),
        });
    }
    let (live_list, desired_list) = (live.get(CRT_LIST), desired.get(CRT_LIST));
    if live_list.map(|f| f.hash) == desired_list.map(|f| f.hash) {
        return Some(commands);
    }
    let entries = |list: Option<&RenderedFile>| -> BTreeSet<String> {
        list.map(|f| {
            f.text()
                .lines()
                .filter(|l| l.contains(" ca-file "))
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default()
    };
    (entries(live_list) == entries(desired_list)).then_some(commands)
}

/// The commands that turn the live certificates into the desired ones, in a safe order;
/// `None` when one of them cannot be sent live (too large).
pub(crate) fn changes(
    live: &BTreeMap<String, RenderedFile>,
    desired: &BTreeMap<String, RenderedFile>,
) -> Option<Vec<RuntimeCommand>> {
    let is_certificate = |path: &str| ManagedDir::Certs.holds(path) && path != CRT_LIST;
    let mut commands = Vec::new();
    for (path, file) in desired.iter().filter(|(p, _)| is_certificate(p)) {
        let live_hash = live.get(path).map(|f| f.hash);
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
    let (live_list, desired_list) = (live.get(CRT_LIST), desired.get(CRT_LIST));
    // The list is compared line by line only when its content differs.
    if live_list.map(|f| f.hash) != desired_list.map(|f| f.hash) {
        let entries = |list: Option<&RenderedFile>| -> BTreeSet<String> {
            list.map(|f| {
                f.text()
                    .lines()
                    .filter(|l| !l.trim().is_empty())
                    .map(str::to_owned)
                    .collect()
            })
            .unwrap_or_default()
        };
        let live_entries = entries(live_list);
        let desired_entries = entries(desired_list);
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
    }
    let removed = live
        .keys()
        .filter(|p| is_certificate(p) && !desired.contains_key(*p));
    for path in removed {
        commands.push(RuntimeCommand::RemoveCertificate { file: path.clone() });
    }
    Some(commands)
}
