//! The PEM files backend servers' TLS needs (CA bundles, client certificates), counted
//! by the backends using them, so a change touches only the backends that changed.

use std::collections::BTreeMap;

use imbl::ordmap::DiffItem;
use model::{Backend, ProxyModel, TlsVerify};

use crate::RenderedFile;
use crate::layout::{backend_ca_file, backend_crt_file, backend_policy_ca_file};

/// Each file with the number of backends using it.
#[derive(Debug, Clone, Default)]
pub(crate) struct BackendTlsFiles {
    files: BTreeMap<String, (RenderedFile, usize)>,
}

impl BackendTlsFiles {
    /// Brings the files to the model's backends; `previous` is the model they matched.
    pub(crate) fn update(&mut self, previous: Option<&ProxyModel>, model: &ProxyModel) {
        match previous {
            Some(previous) => {
                for item in previous.backends.diff(&model.backends) {
                    match item {
                        DiffItem::Add(_, backend) => self.retain(backend),
                        DiffItem::Remove(_, backend) => self.release(backend),
                        DiffItem::Update {
                            old: (_, old),
                            new: (_, new),
                        } => {
                            if old.server_options.tls != new.server_options.tls
                                || old.settings.error_pages != new.settings.error_pages
                            {
                                self.retain(new);
                                self.release(old);
                            }
                        }
                    }
                }
            }
            None => {
                self.files.clear();
                for backend in model.backends.values() {
                    self.retain(backend);
                }
            }
        }
    }

    /// The files, by path.
    pub(crate) fn files(&self) -> impl Iterator<Item = (&String, &RenderedFile)> {
        self.files.iter().map(|(path, (file, _))| (path, file))
    }

    fn retain(&mut self, backend: &Backend) {
        for (path, pem, private) in pem_files(backend) {
            let entry = self
                .files
                .entry(path)
                .or_insert_with(|| (RenderedFile::new(pem.to_owned(), private), 0));
            // The Secret's content is the same for every backend of one model; a backend
            // that brings a new content replaces the old one.
            if entry.0.text() != pem {
                entry.0 = RenderedFile::new(pem.to_owned(), private);
            }
            entry.1 += 1;
        }
    }

    fn release(&mut self, backend: &Backend) {
        for (path, _, _) in pem_files(backend) {
            if let Some(entry) = self.files.get_mut(&path) {
                entry.1 = entry.1.saturating_sub(1);
                if entry.1 == 0 {
                    self.files.remove(&path);
                }
            }
        }
    }
}

/// The backend's files: path, content, and whether it holds a private key. Its own error
/// pages are among them (in the error pages' directory).
fn pem_files(backend: &Backend) -> Vec<(String, &str, bool)> {
    let mut files: Vec<(String, &str, bool)> = backend
        .settings
        .error_pages
        .iter()
        .map(|(code, page)| {
            (
                crate::responses::page_path(*code, page),
                page.response(),
                false,
            )
        })
        .collect();
    let Some(tls) = &backend.server_options.tls else {
        return files;
    };
    match &tls.verify {
        TlsVerify::Required { ca, .. } => {
            files.push((backend_ca_file(&ca.secret), ca.pem.as_str(), false));
        }
        TlsVerify::Policy { ca: Some(ca), .. } => {
            files.push((backend_policy_ca_file(&ca.secret), ca.pem.as_str(), false));
        }
        TlsVerify::Policy { ca: None, .. } | TlsVerify::None => {}
    }
    if let Some(cert) = &tls.client_cert {
        files.push((backend_crt_file(&cert.secret), cert.pem.as_str(), true));
    }
    files
}
