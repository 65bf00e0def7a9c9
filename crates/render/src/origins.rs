//! Which objects made each rendered line: a configuration HAProxy refuses is narrowed to
//! the objects behind the lines (and certificate files) it names, never dropped whole.
//!
//! The table is derived from the model that rendered the files, by the same functions,
//! so it is exact; it is built only when HAProxy refuses something, so the hot path
//! carries nothing for it.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use model::{CertId, Origin, ProxyModel};

use crate::layout::{CRT_LIST, MAIN_CONFIG, ManagedDir, MapFile, certificate_file};
use crate::{RenderedConfig, ports, rules};

/// The objects behind the lines of a rendered configuration.
#[derive(Debug)]
pub struct OriginTable<'a> {
    rendered: &'a RenderedConfig,
    /// Lines of the main file that come from objects (rule chains, port frontends).
    main_lines: HashMap<String, BTreeSet<Origin>>,
    /// Backend section name → its origins.
    sections: HashMap<String, &'a [Origin]>,
    /// Map key (text before the first space of a map line) → origins.
    map_keys: HashMap<String, BTreeSet<Origin>>,
    /// Certificate file (`certs/...`) → its Secret.
    certificates: BTreeMap<String, CertId>,
}

/// The kind an [`Origin`] of a Secret names.
pub const SECRET_KIND: &str = "Secret";

impl<'a> OriginTable<'a> {
    /// The table of `rendered`, which `model` rendered to.
    pub fn new(model: &'a ProxyModel, rendered: &'a RenderedConfig) -> Self {
        let mut main_lines: HashMap<String, BTreeSet<Origin>> = HashMap::new();
        let mut map_keys: HashMap<String, BTreeSet<Origin>> = HashMap::new();
        for (key, host) in &model.hosts {
            for (line, origin) in rules::host_rule_lines(key, host).origins {
                main_lines.entry(line).or_default().insert(origin);
            }
            let origins: BTreeSet<Origin> = host
                .routes
                .values()
                .map(|route| route.origin.clone())
                .collect();
            for (_, port_lines) in ports::host_port_lines(key, host) {
                for (_, line) in port_lines {
                    // A port frontend's route line names its host and path; the host's
                    // objects are the candidates.
                    main_lines
                        .entry(line.trim_end().to_owned())
                        .or_default()
                        .extend(origins.iter().cloned());
                }
            }
            let host_text = key.map_key().into_owned();
            map_keys
                .entry(host_text.clone())
                .or_default()
                .extend(origins.iter().cloned());
            // The regex hosts' map is keyed by the pattern itself.
            if let model::HostKey::Regex(pattern) = key {
                map_keys
                    .entry(pattern.to_string())
                    .or_default()
                    .extend(origins.iter().cloned());
            }
            for (path, route) in &host.routes {
                for suffix in ["", "/"] {
                    map_keys
                        .entry(format!("{host_text}#{}{suffix}", path.path))
                        .or_default()
                        .insert(route.origin.clone());
                }
            }
        }
        if let Some(rule) = &model.default_rule {
            for (line, origin) in rules::default_rule_lines(rule).origins {
                main_lines.entry(line).or_default().insert(origin);
            }
        }
        let sections = model
            .backends
            .values()
            .map(|backend| (backend.id.section_name(), backend.origins.as_slice()))
            .collect();
        let certificates = model
            .certs
            .keys()
            .map(|id| (certificate_file(id), id.clone()))
            .collect();
        Self {
            rendered,
            main_lines,
            sections,
            map_keys,
            certificates,
        }
    }

    /// The objects behind line `line` (1-based) of the rendered file `file` (relative to
    /// the configuration directory); empty when no object made it.
    pub fn line(&self, file: &str, line: usize) -> BTreeSet<Origin> {
        let Some(rendered) = self.rendered.files.get(file) else {
            return BTreeSet::new();
        };
        let text = rendered.text();
        let Some(content) = line.checked_sub(1).and_then(|n| text.lines().nth(n)) else {
            return BTreeSet::new();
        };
        if file == MAIN_CONFIG {
            return self.main_lines.get(content).cloned().unwrap_or_default();
        }
        if ManagedDir::Backends.holds(file) {
            let section = text
                .lines()
                .take(line)
                .filter_map(|l| l.strip_prefix("backend "))
                .last();
            return section
                .and_then(|name| self.sections.get(name.trim()))
                .map(|origins| origins.iter().cloned().collect())
                .unwrap_or_default();
        }
        if file == CRT_LIST {
            let certificate = content.split_whitespace().next().unwrap_or_default();
            return self
                .certificate(certificate)
                .map_or_else(BTreeSet::new, |id| BTreeSet::from([secret_origin(&id)]));
        }
        if MapFile::from_path(file).is_some() {
            let key = content.split_whitespace().next().unwrap_or_default();
            return self.map_keys.get(key).cloned().unwrap_or_default();
        }
        BTreeSet::new()
    }

    /// The objects of the hosts whose certificate-list lines set `option` to `value`
    /// (`ciphers RC4`): HAProxy names a bad option of a line by the frontend's `bind`
    /// line only, with the value.
    pub fn crt_list_option(&self, option: &str, value: &str) -> BTreeSet<Origin> {
        let Some(rendered) = self.rendered.files.get(CRT_LIST) else {
            return BTreeSet::new();
        };
        let mut origins = BTreeSet::new();
        for line in rendered.text().lines() {
            let Some((options, names)) = line
                .split_once('[')
                .and_then(|(_, rest)| rest.split_once(']'))
            else {
                continue;
            };
            let words: Vec<&str> = options.split_whitespace().collect();
            if !words.windows(2).any(|pair| pair == [option, value]) {
                continue;
            }
            for name in names.split_whitespace() {
                if let Some(found) = self.map_keys.get(name) {
                    origins.extend(found.iter().cloned());
                }
            }
        }
        origins
    }

    /// The Secret whose certificate file is `path` (exactly as rendered, e.g.
    /// `certs/web_tls.pem`, or with the `.key`, `.ocsp`, `.issuer` or `.sctl` suffix
    /// HAProxy looks for beside it).
    pub fn certificate(&self, path: &str) -> Option<CertId> {
        let path = [".key", ".ocsp", ".issuer", ".sctl"]
            .iter()
            .find_map(|suffix| path.strip_suffix(suffix))
            .filter(|base| self.certificates.contains_key(*base))
            .unwrap_or(path);
        self.certificates.get(path).cloned()
    }
}

/// The origin that names a Secret.
pub fn secret_origin(id: &CertId) -> Origin {
    Origin {
        kind: SECRET_KIND,
        namespace: id.namespace.as_str().into(),
        name: id.name.as_str().into(),
    }
}
