//! Scanning a manifest directory: which objects it holds and which documents are broken.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use index::SourceEvent;
use resources::{DocumentCache, Object, ObjectRef, decode_manifest_reusing};
use xxhash_rust::xxh3::xxh3_64;

/// A problem with a manifest file or one of its documents.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ManifestProblem {
    /// The file, relative to the manifest directory.
    pub file: PathBuf,
    /// What was wrong.
    pub message: String,
}

impl fmt::Display for ManifestProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.file.display(), self.message)
    }
}

struct CachedFile {
    /// Its documents, decoded, for the next edit to reuse.
    documents: DocumentCache,
    /// Size, modification time and inode when it was read: a file whose stamp is
    /// unchanged is not read again.
    stamp: Option<Stamp>,
    content_hash: u64,
    objects: Vec<Object>,
    problems: Vec<ManifestProblem>,
}

/// What identifies a file's version without reading it.
type Stamp = (u64, std::time::SystemTime, u64);

fn stamp(path: &Path) -> Option<Stamp> {
    use std::os::unix::fs::MetadataExt;
    let metadata = std::fs::metadata(path).ok()?;
    Some((metadata.len(), metadata.modified().ok()?, metadata.ino()))
}

/// A manifest directory, with each file's decoded content cached by content hash so a
/// rescan decodes only files that changed, and reads only files whose size, modification
/// time or inode changed.
pub struct ManifestDir {
    root: PathBuf,
    files: BTreeMap<PathBuf, CachedFile>,
    /// Where each object is defined: file and index in it, first definition first.
    /// Nearly every object has one definition: a sorted vector (one small allocation)
    /// holding a path shared by the file's objects.
    definitions: BTreeMap<ObjectRef, Vec<(Arc<Path>, usize)>>,
    /// The objects as served: each one's first definition.
    current: BTreeMap<ObjectRef, Object>,
    /// Objects defined more than once, reported at each later definition.
    duplicates: BTreeMap<ObjectRef, Vec<ManifestProblem>>,
}

impl fmt::Debug for ManifestDir {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ManifestDir")
            .field("root", &self.root)
            .finish_non_exhaustive()
    }
}

impl ManifestDir {
    /// A directory not yet scanned.
    pub fn new(root: impl Into<PathBuf>) -> Self {
        Self {
            root: root.into(),
            files: BTreeMap::new(),
            definitions: BTreeMap::new(),
            current: BTreeMap::new(),
            duplicates: BTreeMap::new(),
        }
    }

    /// The directory.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Reads the directory again: files whose stamp changed are read, files whose content
    /// changed are decoded, and only the objects those files define (or defined) are
    /// compared. Returns the changes and every problem the directory has now.
    fn update(&mut self) -> (Vec<SourceEvent>, Vec<ManifestProblem>) {
        let mut problems = Vec::new();
        let mut paths = Vec::new();
        if let Err(err) = collect_files(&self.root, &mut paths) {
            problems.push(ManifestProblem {
                file: PathBuf::new(),
                message: err,
            });
        }
        paths.sort();
        let mut kept = BTreeSet::new();
        let mut to_decode = Vec::new();
        for path in paths {
            let relative = path.strip_prefix(&self.root).unwrap_or(&path).to_path_buf();
            let current_stamp = stamp(&path);
            if let Some(cached) = self.files.get_mut(&relative)
                && current_stamp.is_some()
                && cached.stamp == current_stamp
            {
                kept.insert(relative);
                continue;
            }
            let bytes = match std::fs::read(&path) {
                Ok(bytes) => bytes,
                // Deleted between listing and reading: it is simply gone.
                Err(err) if err.kind() == std::io::ErrorKind::NotFound => continue,
                Err(err) => {
                    problems.push(ManifestProblem {
                        file: relative,
                        message: err.to_string(),
                    });
                    continue;
                }
            };
            let content_hash = xxh3_64(&bytes);
            match self.files.get_mut(&relative) {
                Some(cached) if cached.content_hash == content_hash => {
                    cached.stamp = current_stamp;
                    kept.insert(relative);
                }
                cached => {
                    let documents = cached.map(|c| c.documents.clone()).unwrap_or_default();
                    to_decode.push((relative, bytes, content_hash, current_stamp, documents));
                }
            }
        }
        // Files that are gone or changed give up their definitions.
        let mut affected = BTreeSet::new();
        let stale: Vec<PathBuf> = self
            .files
            .keys()
            .filter(|path| !kept.contains(*path))
            .cloned()
            .collect();
        for path in stale {
            if let Some(old) = self.files.remove(&path) {
                for (index, object) in old.objects.iter().enumerate() {
                    let object_ref = object.object_ref();
                    if let Some(places) = self.definitions.get_mut(&object_ref) {
                        places.retain(|(p, i)| !(**p == *path && *i == index));
                        if places.is_empty() {
                            self.definitions.remove(&object_ref);
                        }
                    }
                    affected.insert(object_ref);
                }
            }
        }
        for (path, file) in decode_files(to_decode) {
            let shared: Arc<Path> = Arc::from(path.as_path());
            for (index, object) in file.objects.iter().enumerate() {
                let object_ref = object.object_ref();
                let places = self.definitions.entry(object_ref.clone()).or_default();
                let place = (shared.clone(), index);
                let at = places.partition_point(|p| *p < place);
                places.insert(at, place);
                affected.insert(object_ref);
            }
            self.files.insert(path, file);
        }

        let mut events = Vec::new();
        for object_ref in affected {
            let places = self.definitions.get(&object_ref);
            let first = places
                .and_then(|p| p.iter().next())
                .and_then(|(path, index)| {
                    Some((path, self.files.get(&**path)?.objects.get(*index)?))
                });
            match first {
                Some((first_path, object)) => {
                    if self.current.get(&object_ref) != Some(object) {
                        self.current.insert(object_ref.clone(), object.clone());
                        events.push(SourceEvent::Apply(object.clone()));
                    }
                    let repeated: Vec<ManifestProblem> = places
                        .into_iter()
                        .flatten()
                        .skip(1)
                        .map(|(path, _)| ManifestProblem {
                            file: path.to_path_buf(),
                            message: format!(
                                "{object_ref} is also defined in {}; the first definition is used",
                                first_path.display()
                            ),
                        })
                        .collect();
                    if repeated.is_empty() {
                        self.duplicates.remove(&object_ref);
                    } else {
                        self.duplicates.insert(object_ref, repeated);
                    }
                }
                None => {
                    if self.current.remove(&object_ref).is_some() {
                        events.push(SourceEvent::Delete(object_ref.clone()));
                    }
                    self.duplicates.remove(&object_ref);
                }
            }
        }
        for file in self.files.values() {
            problems.extend(file.problems.iter().cloned());
        }
        problems.extend(self.duplicates.values().flatten().cloned());
        (events, problems)
    }

    /// Scans and returns the full list as an `Init ... InitDone` bracket.
    pub fn initial_events(&mut self) -> (Vec<SourceEvent>, Vec<ManifestProblem>) {
        let (_, problems) = self.update();
        let mut events = vec![SourceEvent::Init(index::ListScope::Everything)];
        events.extend(self.current.values().cloned().map(SourceEvent::InitApply));
        events.push(SourceEvent::InitDone);
        (events, problems)
    }

    /// Scans and returns what changed since the previous scan.
    pub fn change_events(&mut self) -> (Vec<SourceEvent>, Vec<ManifestProblem>) {
        self.update()
    }
}

/// Decodes files on every core: YAML decoding dominates a cold start.
/// A file to decode: path, content, content hash, stamp.
type ToDecode = (PathBuf, Vec<u8>, u64, Option<Stamp>, DocumentCache);

fn decode_files(files: Vec<ToDecode>) -> Vec<(PathBuf, CachedFile)> {
    let workers = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(files.len().max(1));
    let next = std::sync::atomic::AtomicUsize::new(0);
    let decode_some = || {
        let mut decoded = Vec::new();
        loop {
            let index = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            let Some((relative, bytes, hash, stamp, documents)) = files.get(index) else {
                return decoded;
            };
            let file = CachedFile {
                stamp: *stamp,
                ..decode_file(relative, bytes, *hash, documents)
            };
            decoded.push((relative.clone(), file));
        }
    };
    if workers <= 1 {
        return decode_some();
    }
    std::thread::scope(|scope| {
        let handles: Vec<_> = (0..workers).map(|_| scope.spawn(decode_some)).collect();
        // A worker only panics if decoding panics, which the decoder never does.
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap_or_default())
            .collect()
    })
}

fn decode_file(
    relative: &Path,
    bytes: &[u8],
    content_hash: u64,
    previous: &DocumentCache,
) -> CachedFile {
    let problem = |message: String| ManifestProblem {
        file: relative.to_path_buf(),
        message,
    };
    let Ok(text) = std::str::from_utf8(bytes) else {
        return CachedFile {
            documents: DocumentCache::default(),
            stamp: None,
            content_hash,
            objects: Vec::new(),
            problems: vec![problem("not UTF-8 text".to_owned())],
        };
    };
    let json = relative.extension().is_some_and(|e| e == "json");
    let (decoded, documents) = decode_manifest_reusing(text, json, previous);
    for ignored in &decoded.ignored {
        tracing::debug!(file = %relative.display(), kind = %ignored, "ignoring unknown kind");
    }
    CachedFile {
        documents,
        stamp: None,
        content_hash,
        objects: decoded.objects,
        problems: decoded
            .errors
            .into_iter()
            .map(|e| problem(e.to_string()))
            .collect(),
    }
}

/// Whether a path names a manifest file (by extension; hidden files are editor droppings).
pub(crate) fn is_manifest(path: &Path) -> bool {
    let hidden = path
        .file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n.starts_with('.'));
    let extension = path.extension().and_then(|e| e.to_str()).unwrap_or("");
    !hidden && matches!(extension, "yaml" | "yml" | "json")
}

fn collect_files(dir: &Path, out: &mut Vec<PathBuf>) -> Result<(), String> {
    let entries = std::fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    for entry in entries.flatten() {
        let path = entry.path();
        let Ok(file_type) = entry.file_type() else {
            continue;
        };
        let is_dir = file_type.is_dir() || (file_type.is_symlink() && path.is_dir());
        if is_dir {
            let hidden = path
                .file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with('.'));
            if !hidden {
                collect_files(&path, out)?;
            }
        } else if is_manifest(&path) {
            out.push(path);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const SERVICE_A: &str = "apiVersion: v1\nkind: Service\nmetadata: {name: a}\n";

    #[test]
    fn scans_recursively_reports_problems_and_diffs_changes() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("nested")).unwrap();
        std::fs::write(dir.path().join("nested/a.yml"), SERVICE_A).unwrap();
        std::fs::write(dir.path().join("broken.yaml"), "kind: [").unwrap();
        std::fs::write(dir.path().join("notes.txt"), "ignored").unwrap();
        std::fs::write(
            dir.path().join("dup.json"),
            r#"{"apiVersion":"v1","kind":"Service","metadata":{"name":"a"}}"#,
        )
        .unwrap();
        let mut manifests = ManifestDir::new(dir.path());
        let (events, problems) = manifests.initial_events();
        assert_eq!(events.len(), 3, "Init, one object, InitDone");
        let messages: Vec<String> = problems.iter().map(ToString::to_string).collect();
        assert_eq!(messages.len(), 2, "{messages:?}");
        assert!(
            messages[0].starts_with("broken.yaml: document 1 (line 1): invalid YAML"),
            "{messages:?}"
        );
        assert_eq!(
            messages[1],
            "nested/a.yml: Service default/a is also defined in dup.json; the first definition is used"
        );

        std::fs::remove_file(dir.path().join("dup.json")).unwrap();
        let (events, _) = manifests.change_events();
        assert!(events.is_empty(), "the surviving definition is identical");

        std::fs::remove_file(dir.path().join("nested/a.yml")).unwrap();
        let (events, _) = manifests.change_events();
        assert!(matches!(&events[..], [SourceEvent::Delete(r)] if r.name == "a"));
    }

    #[test]
    fn rescans_follow_only_the_files_that_changed() {
        let dir = tempfile::tempdir().unwrap();
        let service = |name: &str, port: u16| {
            format!(
                "apiVersion: v1\nkind: Service\nmetadata: {{name: {name}}}\nspec: {{ports: [{{port: {port}}}]}}\n"
            )
        };
        std::fs::write(dir.path().join("a.yaml"), service("svc-x", 80)).unwrap();
        std::fs::write(dir.path().join("b.yaml"), service("svc-x", 81)).unwrap();
        std::fs::write(dir.path().join("c.yaml"), service("svc-y", 80)).unwrap();
        let mut manifests = ManifestDir::new(dir.path());
        let (events, problems) = manifests.initial_events();
        assert_eq!(
            events.len(),
            4,
            "Init, x, y, InitDone: {events:?} {problems:?}"
        );
        assert_eq!(problems.len(), 1, "x is defined twice: {problems:?}");

        // Touched but identical, and renamed: nothing changes.
        std::fs::write(dir.path().join("c.yaml"), service("svc-y", 80)).unwrap();
        std::fs::rename(dir.path().join("c.yaml"), dir.path().join("d.yaml")).unwrap();
        let (events, _) = manifests.change_events();
        assert!(events.is_empty(), "{events:?}");

        // The first definition goes: the second one takes over, and is different.
        std::fs::remove_file(dir.path().join("a.yaml")).unwrap();
        let (events, problems) = manifests.change_events();
        let [SourceEvent::Apply(Object::Service(x))] = &events[..] else {
            panic!("{events:?}");
        };
        let port = x
            .spec
            .as_ref()
            .and_then(|s| s.ports.as_ref())
            .map(|p| p[0].port);
        assert_eq!(port, Some(81));
        assert!(problems.is_empty(), "{problems:?}");
    }
}
