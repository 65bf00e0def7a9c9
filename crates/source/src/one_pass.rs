//! Reading a manifest directory once, for a command that computes once (`render`,
//! `check`): the same objects and problems as a [`ManifestDir`](crate::ManifestDir)'s
//! first scan, without the caches and the definition index a next scan would need.

use std::cmp::Ordering;
use std::path::Path;

use resources::{Object, ObjectRef};

use crate::ManifestProblem;
use crate::manifest_dir::{DecodedText, decode_text, read_listed};
use crate::parallel;
use crate::read::ReadFailure;
use crate::walk;

/// One file's outcome.
enum FileRead {
    /// Deleted between listing and reading: it is simply gone.
    Gone,
    /// It could not be read.
    Failed(ReadFailure),
    /// Read; `None` if its decoding panicked (a bug).
    Decoded(Option<DecodedText>),
}

/// Every object the manifests below `root` define, sorted by reference, each from its
/// first definition (by file path, then place in the file), and every problem, in the
/// order [`ManifestDir::initial_events`](crate::ManifestDir::initial_events) reports
/// them.
pub fn read_manifests(
    root: &Path,
    max_file_bytes: u64,
) -> (Vec<(ObjectRef, Object)>, Vec<ManifestProblem>) {
    let listing = walk::list(root);
    let mut problems = listing.problems;
    // Each file read and decoded in one piece of work: no pass waits for every read.
    let reads = parallel::map_on_every_core(&listing.files, |file| {
        match read_listed(file, max_file_bytes) {
            Err(ReadFailure::Gone) => FileRead::Gone,
            Err(failure) => FileRead::Failed(failure),
            Ok((bytes, _)) => {
                let decoded =
                    std::panic::catch_unwind(|| decode_text(&file.relative, &bytes, None));
                FileRead::Decoded(decoded.ok())
            }
        }
    });
    let mut decoded = Vec::with_capacity(reads.len());
    let mut decoding_panicked = Vec::new();
    for (file, read) in listing.files.into_iter().zip(reads) {
        match read {
            None => problems.push(ManifestProblem::reading_panicked(file.relative)),
            Some(FileRead::Gone) => {}
            Some(FileRead::Failed(failure)) => {
                problems.push(ManifestProblem::read_failed(file.relative, &failure));
            }
            Some(FileRead::Decoded(None)) => decoding_panicked.push(file.relative),
            Some(FileRead::Decoded(Some(text))) => decoded.push((file.relative, text)),
        }
    }
    // A scan reports every read failure before any decoding failure.
    problems.extend(
        decoding_panicked
            .into_iter()
            .map(ManifestProblem::decoding_panicked),
    );
    decoded.sort_unstable_by(|a, b| a.0.cmp(&b.0));
    for (_, text) in &decoded {
        problems.extend(text.problems.iter().cloned());
    }

    // Every definition, by object, then by file (sorted above) and place in it.
    let mut places: Vec<(u32, u32)> = Vec::new();
    for (file, (_, text)) in decoded.iter().enumerate() {
        places.extend((0..text.objects.len()).map(|index| (file as u32, index as u32)));
    }
    let reference =
        |&(file, index): &(u32, u32)| &decoded[file as usize].1.objects[index as usize].0;
    let order = |a: &(u32, u32), b: &(u32, u32)| -> Ordering {
        reference(a).cmp(reference(b)).then(a.cmp(b))
    };
    parallel::sort_unstable_by(&mut places, order);
    // Later definitions are reported last, after every file's own problems.
    let mut objects: Vec<(ObjectRef, Object)> = Vec::with_capacity(places.len());
    let mut first: Option<&(u32, u32)> = None;
    for place in &places {
        match first {
            Some(winner) if reference(winner) == reference(place) => {
                problems.push(ManifestProblem::repeated_definition(
                    &decoded[place.0 as usize].0,
                    reference(place),
                    &decoded[winner.0 as usize].0,
                ));
            }
            _ => {
                first = Some(place);
                let (object_ref, object) = &decoded[place.0 as usize].1.objects[place.1 as usize];
                objects.push((object_ref.clone(), object.clone()));
            }
        }
    }
    (objects, problems)
}

#[cfg(test)]
mod tests {
    use index::{ListScope, SourceEvent};
    use proptest::prelude::*;

    use super::*;
    use crate::ManifestDir;

    /// One document of a generated manifest file.
    fn document(kind: u8, name: u8, port: u16) -> String {
        match kind % 6 {
            0 | 1 => format!(
                "apiVersion: v1\nkind: Service\nmetadata: {{name: s{name}, namespace: n{}}}\nspec: {{ports: [{{port: {port}}}]}}\n",
                name % 2
            ),
            2 => format!(
                "apiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata: {{name: s{name}}}\nspec: {{defaultBackend: {{service: {{name: s{name}, port: {{number: {port}}}}}}}}}\n"
            ),
            3 => "kind: [\n".to_owned(),
            4 => format!("apiVersion: v1\nkind: Service\nmetadata: {{name: \"bad/{name}\"}}\n"),
            _ => "apiVersion: example.com/v1\nkind: Unknown\nmetadata: {name: x}\n".to_owned(),
        }
    }

    /// A file: its place (one of a few directories and names), how it is written, and
    /// its documents.
    fn file() -> impl Strategy<Value = (u8, u8, u8, Vec<(u8, u8, u16)>)> {
        (
            0u8..3,
            0u8..5,
            0u8..8,
            proptest::collection::vec((0u8..6, 0u8..6, 80u16..83), 0..5),
        )
    }

    fn write(root: &Path, (directory, name, form, documents): &(u8, u8, u8, Vec<(u8, u8, u16)>)) {
        let directory = root.join(["", "apps", "apps/nested"][*directory as usize]);
        std::fs::create_dir_all(&directory).unwrap();
        let text: Vec<String> = documents
            .iter()
            .map(|&(kind, name, port)| document(kind, name, port))
            .collect();
        let (file_name, bytes) = match form {
            // Not text.
            0 => (format!("f{name}.yaml"), b"\xff\xfe".to_vec()),
            // JSON: one object.
            1 => (
                format!("f{name}.json"),
                format!(
                    r#"{{"apiVersion":"v1","kind":"Service","metadata":{{"name":"s{}"}}}}"#,
                    documents.len()
                )
                .into_bytes(),
            ),
            2 => (format!("f{name}.yml"), text.join("---\n").into_bytes()),
            _ => (format!("f{name}.yaml"), text.join("---\n").into_bytes()),
        };
        std::fs::write(directory.join(file_name), bytes).unwrap();
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        /// Whatever a directory holds (objects defined in several files or twice in one,
        /// broken and invalid documents, JSON, unknown kinds, files that are not text):
        /// one pass reads exactly what a manifest directory's first scan does.
        #[test]
        fn one_pass_reads_what_a_first_scan_does(
            files in proptest::collection::vec(file(), 0..12),
        ) {
            let dir = tempfile::tempdir().unwrap();
            for file in &files {
                write(dir.path(), file);
            }
            let (events, problems) = ManifestDir::new(dir.path()).initial_events();
            let [SourceEvent::List(ListScope::Everything, listed)] = &events[..] else {
                panic!("a first scan lists everything at once: {events:?}");
            };
            let (objects, one_pass_problems) =
                read_manifests(dir.path(), crate::DEFAULT_MAX_MANIFEST_BYTES);
            prop_assert_eq!(&objects, listed);
            prop_assert_eq!(one_pass_problems, problems);
        }
    }

    #[test]
    fn thousands_of_objects_over_many_files_read_as_a_first_scan_does() {
        // Enough files and objects that reading and sorting run on every core.
        let dir = tempfile::tempdir().unwrap();
        for file in 0..30u16 {
            let documents: Vec<String> = (0..140u16)
                .map(|n| document(n as u8 % 3, ((file * 140 + n) % 251) as u8, 80 + file % 3))
                .collect();
            std::fs::write(
                dir.path().join(format!("f{file}.yaml")),
                documents.join("---\n"),
            )
            .unwrap();
        }
        let (events, problems) = ManifestDir::new(dir.path()).initial_events();
        let [SourceEvent::List(_, listed)] = &events[..] else {
            panic!("{events:?}");
        };
        let (objects, one_pass_problems) =
            read_manifests(dir.path(), crate::DEFAULT_MAX_MANIFEST_BYTES);
        assert!(
            listed.len() > 300 && problems.len() > 3000,
            "{} {}",
            listed.len(),
            problems.len()
        );
        assert_eq!(&objects, listed);
        assert_eq!(one_pass_problems, problems);
    }
}
