//! Scanning a manifest directory: which objects it holds and which documents are broken.
//!
//! Containment: a file or directory that cannot be read, is not a regular file, is too
//! large or does not parse is reported and keeps serving what it held; it never takes
//! another file's objects away.

use std::collections::{BTreeMap, HashSet};
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use index::SourceEvent;
use resources::{
    DecodeFailure, DocumentCache, LogSafe, Object, ObjectRef, decode_manifest,
    decode_manifest_reusing,
};
use rustc_hash::{FxHashMap, FxHashSet};
use xxhash_rust::xxh3::xxh3_64;

use crate::parallel;
use crate::read::{ReadFailure, Stamp, read_regular_file};
use crate::walk::{self, ListedFile};

/// The default largest manifest file read: 16 MiB, far above any real manifest, far
/// below what would hurt the controller's memory.
pub const DEFAULT_MAX_MANIFEST_BYTES: u64 = 16 * 1024 * 1024;

/// A problem with a manifest file or one of its documents.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ManifestProblem {
    /// The file, relative to the manifest directory (`.` for the directory itself).
    pub file: PathBuf,
    /// What was wrong.
    pub message: String,
}

impl ManifestProblem {
    /// A file that could not be read, and keeps what it held.
    pub(crate) fn read_failed(file: PathBuf, failure: &ReadFailure) -> Self {
        Self {
            file,
            message: format!("{failure}; what it held before is kept"),
        }
    }

    /// A file whose reading panicked (a bug), and keeps what it held.
    pub(crate) fn reading_panicked(file: PathBuf) -> Self {
        Self {
            file,
            message: "reading failed unexpectedly (a bug, please report it); \
                      what it held before is kept"
                .to_owned(),
        }
    }

    /// A file whose decoding panicked (a bug), and keeps what it held.
    pub(crate) fn decoding_panicked(file: PathBuf) -> Self {
        Self {
            file,
            message: "decoding failed unexpectedly (a bug, please report it); \
                      what it held before is kept"
                .to_owned(),
        }
    }

    /// A later definition of an object, in `file`, than its first one, in `first`.
    pub(crate) fn repeated_definition(file: &Path, object: &ObjectRef, first: &Path) -> Self {
        Self {
            file: file.to_path_buf(),
            message: format!(
                "{object} is also defined in {}; the first definition is used",
                first.display()
            ),
        }
    }
}

impl fmt::Display for ManifestProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // File names and messages hold text from the directory: no raw newline may
        // reach a log line.
        write!(
            f,
            "{}: {}",
            LogSafe(&self.file.to_string_lossy()),
            LogSafe(&self.message)
        )
    }
}

struct CachedFile {
    /// Its documents, decoded, for the next edit to reuse.
    documents: DocumentCache,
    /// The stamp of the version read: a file whose stamp is unchanged is not read again.
    stamp: Stamp,
    content_hash: u64,
    /// The objects served, each with its reference (computed where the file is decoded,
    /// on every core): what the content defines, plus, while some of its documents do
    /// not parse, the objects of its last fully parsed content it no longer defines.
    objects: Vec<(ObjectRef, Object)>,
    /// While the content does not parse completely: the objects of the last content
    /// that did, which every later unparsable version keeps.
    last_parsed: Option<Vec<(ObjectRef, Object)>>,
    problems: Vec<ManifestProblem>,
}

impl CachedFile {
    /// The objects an unparsable next version of the file keeps.
    fn last_good_objects(&self) -> &[(ObjectRef, Object)] {
        self.last_parsed.as_deref().unwrap_or(&self.objects)
    }
}

/// A manifest directory, with each file's decoded content cached by content hash so a
/// rescan decodes only files that changed, and reads only files whose stamp changed.
pub struct ManifestDir {
    root: PathBuf,
    max_file_bytes: u64,
    /// Hashed, not ordered: a cold start looks up every file and every object, and only
    /// the problems are listed in order (sorted when they are).
    files: FxHashMap<PathBuf, CachedFile>,
    /// Where each object is defined: file and index in it, first definition first.
    /// Nearly every object has one definition: a sorted vector (one small allocation)
    /// holding a path shared by the file's objects.
    definitions: FxHashMap<ObjectRef, Vec<(Arc<Path>, usize)>>,
    /// The objects as served: each one's first definition.
    current: BTreeMap<ObjectRef, Object>,
    /// Objects defined more than once, reported at each later definition.
    duplicates: BTreeMap<ObjectRef, Vec<ManifestProblem>>,
    /// Where the last scan's symbolic links led (see [`ManifestDir::linked`]).
    linked_dirs: Vec<PathBuf>,
    linked_files: Vec<PathBuf>,
}

impl fmt::Debug for ManifestDir {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ManifestDir")
            .field("root", &self.root)
            .field("max_file_bytes", &self.max_file_bytes)
            .finish_non_exhaustive()
    }
}

impl ManifestDir {
    /// A directory not yet scanned.
    pub fn new(root: impl Into<PathBuf>) -> Self {
        Self {
            root: root.into(),
            max_file_bytes: DEFAULT_MAX_MANIFEST_BYTES,
            files: FxHashMap::default(),
            definitions: FxHashMap::default(),
            current: BTreeMap::new(),
            duplicates: BTreeMap::new(),
            linked_dirs: Vec::new(),
            linked_files: Vec::new(),
        }
    }

    /// Sets the largest file read, in bytes (default [`DEFAULT_MAX_MANIFEST_BYTES`]): a
    /// larger file is reported and keeps the objects it had. Reading stops one byte past
    /// it, so a file that keeps growing costs no more.
    pub fn max_file_bytes(mut self, max_bytes: u64) -> Self {
        self.max_file_bytes = max_bytes;
        self
    }

    /// The directory.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The directories and the files the last scan read through symbolic links,
    /// resolved: a watch of the root does not see changes there.
    pub fn linked(&self) -> (&[PathBuf], &[PathBuf]) {
        (&self.linked_dirs, &self.linked_files)
    }

    /// The largest file read, in bytes.
    #[cfg(test)]
    pub(crate) fn file_limit(&self) -> u64 {
        self.max_file_bytes
    }

    /// Reads the directory again: files whose stamp changed are read, files whose content
    /// changed are decoded, and only the objects those files define (or defined) are
    /// compared. Returns the changes and every problem the directory has now.
    fn update(&mut self) -> (Vec<SourceEvent>, Vec<ManifestProblem>) {
        let mut listing = walk::list(&self.root);
        self.linked_dirs = std::mem::take(&mut listing.linked_dirs);
        self.linked_files = std::mem::take(&mut listing.linked_files);
        let mut problems = listing.problems;
        // Files that keep what they held: unchanged, or unreadable this time.
        let mut kept = FxHashSet::default();
        let mut listed = FxHashSet::default();
        let mut to_decode = Vec::new();
        let mut to_read = Vec::new();
        for file in listing.files {
            listed.insert(file.relative.clone());
            let unchanged = self
                .files
                .get(&file.relative)
                .is_some_and(|c| c.stamp == file.stamp);
            if unchanged {
                kept.insert(file.relative);
            } else {
                to_read.push(file);
            }
        }
        // Files are read (and hashed) on every core, like they are decoded.
        let max_file_bytes = self.max_file_bytes;
        let reads = parallel::map_on_every_core(&to_read, |file| {
            read_listed(file, max_file_bytes).map(|(bytes, stamp)| {
                let content_hash = xxh3_64(&bytes);
                (bytes, stamp, content_hash)
            })
        });
        for (file, read) in to_read.into_iter().zip(reads) {
            let (bytes, stamp, content_hash) = match read {
                Some(Ok(read)) => read,
                // Deleted between listing and reading: it is simply gone.
                Some(Err(ReadFailure::Gone)) => continue,
                Some(Err(failure)) => {
                    problems.push(ManifestProblem::read_failed(
                        file.relative.clone(),
                        &failure,
                    ));
                    kept.insert(file.relative);
                    continue;
                }
                None => {
                    problems.push(ManifestProblem::reading_panicked(file.relative.clone()));
                    kept.insert(file.relative);
                    continue;
                }
            };
            let cached = self.files.get_mut(&file.relative);
            match cached {
                Some(cached) if cached.content_hash == content_hash => {
                    cached.stamp = stamp;
                    kept.insert(file.relative);
                }
                cached => {
                    let (documents, last_good) = cached
                        .map(|c| (c.documents.clone(), c.last_good_objects().to_vec()))
                        .unwrap_or_default();
                    to_decode.push(ToDecode {
                        relative: file.relative,
                        bytes,
                        content_hash,
                        stamp,
                        documents,
                        last_good,
                    });
                }
            }
        }
        // What could not be listed or followed keeps what was read below it before.
        for unreadable in &listing.unreadable {
            kept.extend(
                self.files
                    .keys()
                    .filter(|path| path.starts_with(unreadable) && !listed.contains(*path))
                    .cloned(),
            );
        }
        let mut decoded = Vec::with_capacity(to_decode.len());
        for (path, file) in decode_files(to_decode) {
            match file {
                Some(file) => decoded.push((path, file)),
                None => {
                    problems.push(ManifestProblem::decoding_panicked(path.clone()));
                    kept.insert(path);
                }
            }
        }
        // Files that are gone or changed give up their definitions.
        // Collected, then sorted once: cheaper than a tree of every object at a cold start.
        let decoded_objects: usize = decoded.iter().map(|(_, file)| file.objects.len()).sum();
        let mut affected = Vec::with_capacity(decoded_objects);
        self.definitions.reserve(decoded_objects);
        let stale: Vec<PathBuf> = self
            .files
            .keys()
            .filter(|path| !kept.contains(*path))
            .cloned()
            .collect();
        for path in stale {
            if let Some(old) = self.files.remove(&path) {
                for (index, (object_ref, _)) in old.objects.iter().enumerate() {
                    if let Some(places) = self.definitions.get_mut(object_ref) {
                        places.retain(|(p, i)| !(**p == *path && *i == index));
                        if places.is_empty() {
                            self.definitions.remove(object_ref);
                        }
                    }
                    affected.push(object_ref.clone());
                }
            }
        }
        for (path, file) in decoded {
            let shared: Arc<Path> = Arc::from(path.as_path());
            for (index, (object_ref, _)) in file.objects.iter().enumerate() {
                let places = self.definitions.entry(object_ref.clone()).or_default();
                let place = (shared.clone(), index);
                let at = places.partition_point(|p| *p < place);
                places.insert(at, place);
                affected.push(object_ref.clone());
            }
            self.files.insert(path, file);
        }

        let mut events = Vec::with_capacity(affected.len());
        parallel::sort_unstable_by(&mut affected, Ord::cmp);
        affected.dedup();
        // At a cold start every object is new: the served map is built at once from the
        // sorted references rather than by one insertion each.
        let cold = self.current.is_empty();
        let mut fresh = Vec::with_capacity(if cold { affected.len() } else { 0 });
        for object_ref in affected {
            let places = self.definitions.get(&object_ref);
            let first = places
                .and_then(|p| p.iter().next())
                .and_then(|(path, index)| {
                    let (_, object) = self.files.get(&**path)?.objects.get(*index)?;
                    Some((path, object))
                });
            match first {
                Some((first_path, object)) => {
                    if cold || self.current.get(&object_ref) != Some(object) {
                        if cold {
                            fresh.push((object_ref.clone(), object.clone()));
                        } else {
                            self.current.insert(object_ref.clone(), object.clone());
                        }
                        events.push(SourceEvent::Apply(object.clone()));
                    }
                    let repeated: Vec<ManifestProblem> = places
                        .into_iter()
                        .flatten()
                        .skip(1)
                        .map(|(path, _)| {
                            ManifestProblem::repeated_definition(path, &object_ref, first_path)
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
        if cold {
            self.current = fresh.into_iter().collect();
        }
        let mut by_file: Vec<(&PathBuf, &CachedFile)> = self
            .files
            .iter()
            .filter(|(_, file)| !file.problems.is_empty())
            .collect();
        by_file.sort_unstable_by(|a, b| a.0.cmp(b.0));
        for (_, file) in by_file {
            problems.extend(file.problems.iter().cloned());
        }
        problems.extend(self.duplicates.values().flatten().cloned());
        (events, problems)
    }

    /// Scans and returns the full list, as one whole-list event.
    pub fn initial_events(&mut self) -> (Vec<SourceEvent>, Vec<ManifestProblem>) {
        let (_, problems) = self.update();
        let listed = self
            .current
            .iter()
            .map(|(object_ref, object)| (object_ref.clone(), object.clone()))
            .collect();
        let events = vec![SourceEvent::List(index::ListScope::Everything, listed)];
        (events, problems)
    }

    /// Scans and returns what changed since the previous scan.
    pub fn change_events(&mut self) -> (Vec<SourceEvent>, Vec<ManifestProblem>) {
        self.update()
    }
}

/// A file to decode, with what its previous version leaves to this one.
struct ToDecode {
    relative: PathBuf,
    bytes: Vec<u8>,
    content_hash: u64,
    stamp: Stamp,
    /// The previous version's decoded documents, to reuse.
    documents: DocumentCache,
    /// The objects of the last version that parsed completely, which this one keeps
    /// if it does not.
    last_good: Vec<(ObjectRef, Object)>,
}

/// Decodes files on every core: YAML decoding dominates a cold start. A file whose
/// decoding panicked (a bug) comes back as `None`, so it keeps what it held.
fn decode_files(files: Vec<ToDecode>) -> Vec<(PathBuf, Option<CachedFile>)> {
    let decoded = parallel::map_on_every_core(&files, decode_file);
    files
        .into_iter()
        .zip(decoded)
        .map(|(file, decoded)| (file.relative, decoded))
        .collect()
}

/// How many of the objects kept from a file's last parsable version a report names.
const KEPT_NAMED: usize = 5;

/// Reads a listed file, unless its listing already shows it larger than allowed.
pub(crate) fn read_listed(
    file: &ListedFile,
    max_file_bytes: u64,
) -> Result<(Vec<u8>, Stamp), ReadFailure> {
    if file.stamp.len > max_file_bytes {
        return Err(ReadFailure::TooLarge {
            max_bytes: max_file_bytes,
        });
    }
    read_regular_file(&file.path, max_file_bytes)
}

/// A file's content decoded.
pub(crate) struct DecodedText {
    /// Its objects, each with its reference, in file order.
    pub(crate) objects: Vec<(ObjectRef, Object)>,
    /// What was wrong with it.
    pub(crate) problems: Vec<ManifestProblem>,
    /// Whether every document could be read (no syntax error).
    pub(crate) parsed: bool,
    /// Its documents, for a next version to reuse: empty when decoded without a cache.
    documents: DocumentCache,
}

/// Decodes a file's content; with `previous`, reusing the documents its earlier content
/// shares and keeping this content's for the next version.
pub(crate) fn decode_text(
    relative: &Path,
    bytes: &[u8],
    previous: Option<&DocumentCache>,
) -> DecodedText {
    let problem = |message: String| ManifestProblem {
        file: relative.to_path_buf(),
        message,
    };
    let Ok(text) = std::str::from_utf8(bytes) else {
        return DecodedText {
            objects: Vec::new(),
            problems: vec![problem("not UTF-8 text".to_owned())],
            parsed: false,
            documents: DocumentCache::default(),
        };
    };
    let json = relative.extension().is_some_and(|e| e == "json");
    let (decoded, documents) = match previous {
        Some(previous) => decode_manifest_reusing(text, json, previous),
        None => (decode_manifest(text, json), DocumentCache::default()),
    };
    for ignored in &decoded.ignored {
        tracing::debug!(
            file = %LogSafe(&relative.to_string_lossy()),
            kind = %LogSafe(ignored),
            "ignoring unknown kind"
        );
    }
    let parsed = !decoded
        .errors
        .iter()
        .any(|e| e.failure == DecodeFailure::Syntax);
    // A file's objects share one copy of each namespace's name, chosen here while the
    // text is in the cache: the scan that shares one copy across files then compares
    // these few copies, which stay in the cache, not one cold copy per object.
    let mut namespaces: FxHashSet<resources::Name> = FxHashSet::default();
    DecodedText {
        objects: decoded
            .objects
            .into_iter()
            .map(|object| {
                let mut object_ref = object.object_ref();
                match namespaces.get(&object_ref.namespace) {
                    Some(shared) => object_ref.namespace = shared.clone(),
                    None => {
                        namespaces.insert(object_ref.namespace.clone());
                    }
                }
                (object_ref, object)
            })
            .collect(),
        problems: decoded
            .errors
            .iter()
            .map(|e| problem(e.to_string()))
            .collect(),
        parsed,
        documents,
    }
}

fn decode_file(file: &ToDecode) -> CachedFile {
    let relative = &file.relative;
    let problem = |message: String| ManifestProblem {
        file: relative.clone(),
        message,
    };
    let DecodedText {
        mut objects,
        mut problems,
        parsed,
        documents,
    } = decode_text(relative, &file.bytes, Some(&file.documents));
    let last_parsed = if parsed {
        None
    } else {
        // Which objects an unparsable document defines is unknown (the file may be half
        // written): the objects of the last version that parsed stay, unless a document
        // that parses defines them now.
        let defined: HashSet<&ObjectRef> = objects.iter().map(|(r, _)| r).collect();
        let held: Vec<&(ObjectRef, Object)> = file
            .last_good
            .iter()
            .filter(|(r, _)| !defined.contains(r))
            .collect();
        if !held.is_empty() {
            let mut named: Vec<String> = held
                .iter()
                .take(KEPT_NAMED)
                .map(|(r, _)| r.to_string())
                .collect();
            if held.len() > KEPT_NAMED {
                named.push(format!("and {} more", held.len() - KEPT_NAMED));
            }
            problems.push(problem(format!(
                "does not parse: its last parsable version's {} kept until it does ({})",
                if held.len() == 1 {
                    "object is"
                } else {
                    "objects are"
                },
                named.join(", ")
            )));
        }
        objects.extend(held.into_iter().cloned());
        Some(file.last_good.clone())
    };
    CachedFile {
        documents,
        stamp: file.stamp,
        content_hash: file.content_hash,
        objects,
        last_parsed,
        problems,
    }
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
        let [SourceEvent::List(_, listed)] = &events[..] else {
            panic!("{events:?}");
        };
        assert_eq!(listed.len(), 1, "one object");
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
        let [SourceEvent::List(_, listed)] = &events[..] else {
            panic!("{events:?}");
        };
        let names: Vec<&str> = listed.iter().map(|(r, _)| &*r.name).collect();
        assert_eq!(names, ["svc-x", "svc-y"], "{problems:?}");
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
