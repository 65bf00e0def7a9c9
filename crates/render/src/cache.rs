//! Memoized rendering: a backend's text is reused while the backend value is unchanged,
//! a host's map lines while the host is unchanged, and a shard or map file is assembled
//! again only when one of its parts changed. An empty cache renders everything.

use rustc_hash::FxHashMap as HashMap;
use std::sync::Arc;

use model::{Backend, BackendId, CertId, Host, HostKey, ProxyModel, TlsCert};

use crate::maps::{self, HostLines, MAP_FILES};
use crate::shards::{self, render_backend, shard_header, shard_of};
use crate::{RenderedConfig, RenderedFile, config};

#[derive(Debug)]
struct CachedBackend {
    backend: Backend,
    text: Arc<str>,
    shard: u32,
    shards: u32,
}

/// A file assembled from parts, kept with the parts it was made of.
#[derive(Debug, Default)]
struct Assembled {
    parts: Vec<Arc<str>>,
    file: Option<RenderedFile>,
}

impl Assembled {
    /// Returns the file for these parts, concatenating only if a part changed.
    fn file(&mut self, header: &str, parts: Vec<Arc<str>>) -> RenderedFile {
        let same = parts.len() == self.parts.len()
            && parts
                .iter()
                .zip(&self.parts)
                .all(|(a, b)| Arc::ptr_eq(a, b));
        if let (true, Some(file)) = (same, &self.file) {
            return file.clone();
        }
        let mut text =
            String::with_capacity(header.len() + parts.iter().map(|p| p.len()).sum::<usize>());
        text.push_str(header);
        for part in &parts {
            text.push_str(part);
        }
        let file = RenderedFile::new(text, false);
        self.parts = parts;
        self.file = Some(file.clone());
        file
    }
}

#[derive(Debug)]
struct CachedHost {
    host: Host,
    hosts_map: Arc<str>,
    route_maps: [Arc<str>; 4],
}

/// Memo of the previous render.
#[derive(Debug, Default)]
pub struct RenderCache {
    backends: HashMap<BackendId, CachedBackend>,
    hosts: HashMap<HostKey, CachedHost>,
    certs: HashMap<CertId, (TlsCert, RenderedFile)>,
    shard_files: Vec<Assembled>,
    map_files: [Assembled; 5],
}

impl RenderCache {
    /// Renders a model, reusing whatever the previous render already produced.
    pub fn render(&mut self, model: &ProxyModel) -> RenderedConfig {
        let mut files = std::collections::BTreeMap::new();
        files.insert(
            crate::MAIN_CONFIG.to_owned(),
            RenderedFile::new(config::main_config(model), false),
        );
        self.render_backends(model, &mut files);
        self.render_maps(model, &mut files);
        files.insert(
            config::CRT_LIST.to_owned(),
            RenderedFile::new(maps::crt_list(model), false),
        );
        files.insert(
            config::DEFAULT_CERT.to_owned(),
            self.cert_file(&CertId::default_marker(), &model.default_cert),
        );
        for (id, cert) in &model.certs {
            files.insert(
                format!("certs/{}", id.file_name()),
                self.cert_file(id, cert),
            );
        }
        let wanted: rustc_hash::FxHashSet<&CertId> = model.certs.keys().collect();
        self.certs
            .retain(|id, _| wanted.contains(id) || *id == CertId::default_marker());
        RenderedConfig { files }
    }

    fn render_backends(
        &mut self,
        model: &ProxyModel,
        files: &mut std::collections::BTreeMap<String, RenderedFile>,
    ) {
        let shards = model.global.backend_shards.max(1);
        let mut members: Vec<Vec<Arc<str>>> = vec![Vec::new(); shards as usize];
        for (id, backend) in &model.backends {
            if self
                .backends
                .get(id)
                .is_none_or(|cached| cached.backend != *backend)
            {
                let text: Arc<str> = Arc::from(render_backend(backend));
                let entry = CachedBackend {
                    backend: backend.clone(),
                    text,
                    shard: shard_of(id, shards),
                    shards,
                };
                self.backends.insert(id.clone(), entry);
            }
            let Some(cached) = self.backends.get_mut(id) else {
                continue;
            };
            if cached.shards != shards {
                cached.shard = shard_of(id, shards);
                cached.shards = shards;
            }
            if let Some(list) = members.get_mut(cached.shard as usize) {
                list.push(cached.text.clone());
            }
        }
        if self.backends.len() > model.backends.len() {
            self.backends
                .retain(|id, _| model.backends.contains_key(id));
        }
        self.shard_files
            .resize_with(shards as usize, Assembled::default);
        for (shard, parts) in members.into_iter().enumerate() {
            let shard = shard as u32;
            let file = self.shard_files[shard as usize].file(&shard_header(shard, shards), parts);
            files.insert(shards::shard_file_name(shard, shards), file);
        }
    }

    fn render_maps(
        &mut self,
        model: &ProxyModel,
        files: &mut std::collections::BTreeMap<String, RenderedFile>,
    ) {
        let mut parts: [Vec<Arc<str>>; 5] = Default::default();
        for (key, host) in &model.hosts {
            if self
                .hosts
                .get(key)
                .is_none_or(|cached| cached.host != *host)
            {
                let HostLines {
                    hosts_map,
                    route_maps,
                } = maps::host_lines(key, host);
                let entry = CachedHost {
                    host: host.clone(),
                    hosts_map: Arc::from(hosts_map),
                    route_maps: route_maps.map(Arc::from),
                };
                self.hosts.insert(key.clone(), entry);
            }
            let Some(cached) = self.hosts.get(key) else {
                continue;
            };
            parts[0].push(cached.hosts_map.clone());
            for (index, lines) in cached.route_maps.iter().enumerate() {
                parts[index + 1].push(lines.clone());
            }
        }
        if self.hosts.len() > model.hosts.len() {
            self.hosts.retain(|key, _| model.hosts.contains_key(key));
        }
        let names = std::iter::once(maps::HOSTS_MAP).chain(MAP_FILES);
        for ((name, parts), assembled) in names.zip(parts).zip(self.map_files.iter_mut()) {
            files.insert(name.to_owned(), assembled.file("", parts));
        }
    }

    fn cert_file(&mut self, id: &CertId, cert: &TlsCert) -> RenderedFile {
        match self.certs.get(id) {
            Some((cached, file)) if cached == cert => file.clone(),
            _ => {
                let file = RenderedFile::new(cert.pem_bundle.clone(), true);
                self.certs.insert(id.clone(), (cert.clone(), file.clone()));
                file
            }
        }
    }
}
