//! Reading a manifest directory once, for a command that computes once (`render`,
//! `check`): the same objects and problems as a [`ManifestDir`](crate::ManifestDir)'s
//! first scan, without the caches and the definition index a next scan would need.

use std::cmp::Ordering;
use std::path::Path;

use resources::{Kind, Name, Object, ObjectRef};
use rustc_hash::FxHashSet;

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

/// A definition's place (file and place in it) with what definitions are ordered by: its
/// reference, then its place. The reference's texts are not kept, only their heads:
/// sorting a cold start's objects then decides nearly every comparison without reading
/// any text (at 100k objects, reading them took most of the sort's time), and a place is
/// 48 bytes.
struct Place {
    kind: Kind,
    namespace: TextHead,
    name: TextHead,
    file: u32,
    index: u32,
}

impl Place {
    fn new(object_ref: &ObjectRef, file: usize, index: usize) -> Self {
        Self {
            kind: object_ref.kind,
            namespace: TextHead::new(&object_ref.namespace),
            name: TextHead::new(&object_ref.name),
            file: file as u32,
            index: index as u32,
        }
    }

    /// The order of `(ObjectRef, file, index)`; `reference` gives a place's reference, for
    /// texts their heads cannot tell apart.
    fn order<'a>(&self, other: &Self, reference: impl Fn(&Self) -> &'a ObjectRef) -> Ordering {
        self.reference_order(other, reference)
            .then((self.file, self.index).cmp(&(other.file, other.index)))
    }

    /// Whether two places define the same reference. Next to each other after the sort,
    /// most places differ only in a name that fits in its head: no text is read for them.
    fn same_reference<'a>(&self, other: &Self, reference: impl Fn(&Self) -> &'a ObjectRef) -> bool {
        self.reference_order(other, reference).is_eq()
    }

    /// The order of the two places' references, read only for texts their heads cannot
    /// tell apart.
    fn reference_order<'a>(
        &self,
        other: &Self,
        reference: impl Fn(&Self) -> &'a ObjectRef,
    ) -> Ordering {
        self.kind
            .cmp(&other.kind)
            .then_with(|| {
                (self.namespace.order(&other.namespace))
                    .unwrap_or_else(|| reference(self).namespace.cmp(&reference(other).namespace))
            })
            .then_with(|| {
                (self.name.order(&other.name))
                    .unwrap_or_else(|| reference(self).name.cmp(&reference(other).name))
            })
    }
}

/// A text's first bytes and length.
#[derive(Clone, Copy)]
struct TextHead {
    /// The first 16 bytes, zero-padded, as a big-endian number: two heads that differ
    /// order as their texts do.
    head: (u64, u64),
    /// The length, at most `u16::MAX` (any length over the head's is only that).
    len: u16,
}

impl TextHead {
    const HEAD: usize = 16;

    fn new(text: &str) -> Self {
        let mut bytes = [0; Self::HEAD];
        let len = text.len().min(Self::HEAD);
        bytes[..len].copy_from_slice(&text.as_bytes()[..len]);
        let number = u128::from_be_bytes(bytes);
        Self {
            head: ((number >> 64) as u64, number as u64),
            len: u16::try_from(text.len()).unwrap_or(u16::MAX),
        }
    }

    /// The order of the texts, when their heads tell it.
    fn order(&self, other: &Self) -> Option<Ordering> {
        match self.head.cmp(&other.head) {
            Ordering::Equal => {
                let fits = |head: &Self| usize::from(head.len) <= Self::HEAD;
                // Whole in equal heads: the shorter is the longer's start (its padding
                // matched the longer's bytes), so it goes first.
                (fits(self) && fits(other)).then(|| self.len.cmp(&other.len))
            }
            unequal => Some(unequal),
        }
    }
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
    let mut places: Vec<Place> = Vec::new();
    for (file, (_, text)) in decoded.iter().enumerate() {
        places.extend(
            (text.objects.iter().enumerate())
                .map(|(index, (object_ref, _))| Place::new(object_ref, file, index)),
        );
    }
    let reference = |place: &Place| &decoded[place.file as usize].1.objects[place.index as usize].0;
    parallel::sort_unstable_by(&mut places, |a, b| a.order(b, reference));
    // Later definitions are reported last, after every file's own problems.
    let mut first_definitions: Vec<(u32, u32)> = Vec::with_capacity(places.len());
    let mut first: Option<&Place> = None;
    for place in &places {
        match first {
            Some(winner) if winner.same_reference(place, reference) => {
                problems.push(ManifestProblem::repeated_definition(
                    &decoded[place.file as usize].0,
                    reference(place),
                    &decoded[winner.file as usize].0,
                ));
            }
            _ => {
                first = Some(place);
                first_definitions.push((place.file, place.index));
            }
        }
    }
    drop(places);
    // Moved out, not cloned: a clone and the drop of the original touch every object's
    // shared counts once more (a cache miss each at 100k objects). Each file's list is
    // turned into options where it lies.
    let mut definitions: Vec<Vec<Option<(ObjectRef, Object)>>> = decoded
        .iter_mut()
        .map(|(_, text)| {
            std::mem::take(&mut text.objects)
                .into_iter()
                .map(Some)
                .collect()
        })
        .collect();
    let mut objects: Vec<(ObjectRef, Object)> = Vec::with_capacity(first_definitions.len());
    // Each namespace's references share one copy of its name: one allocation, and the
    // index's ordered map compares them without reading their text.
    let mut namespaces: FxHashSet<Name> = FxHashSet::default();
    let mut last_namespace: Option<Name> = None;
    for (file, index) in first_definitions {
        let Some((mut object_ref, object)) = definitions[file as usize][index as usize].take()
        else {
            continue;
        };
        object_ref.namespace = match &last_namespace {
            Some(last) if *last == object_ref.namespace => last.clone(),
            _ => {
                let shared = match namespaces.get(&object_ref.namespace) {
                    Some(shared) => shared.clone(),
                    None => {
                        namespaces.insert(object_ref.namespace.clone());
                        object_ref.namespace
                    }
                };
                last_namespace = Some(shared.clone());
                shared
            }
        };
        objects.push((object_ref, object));
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
            // Names and namespaces both shorter and longer than what a sort compares
            // without reading the text.
            0 | 1 => format!(
                "apiVersion: v1\nkind: Service\nmetadata: {{name: {}{name}, namespace: {}{}}}\nspec: {{ports: [{{port: {port}}}]}}\n",
                ["s", "service-with-a-long-shared-start-"][usize::from(kind % 2)],
                ["n", "namespace-with-a-long-shared-start-"][usize::from(name.is_multiple_of(3))],
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
        /// Texts of any bytes and lengths around the head's (shared starts, zero bytes,
        /// one a prefix of the other) order by their heads as they do whole, or their
        /// heads say they cannot tell.
        #[test]
        fn texts_order_by_their_heads_as_they_do_whole(
            start in "[a\\x00]{0,18}",
            a in "[ab\\x00-]{0,4}",
            b in "[ab\\x00-]{0,4}",
        ) {
            let (a, b) = (format!("{start}{a}"), format!("{start}{b}"));
            let (head_a, head_b) = (TextHead::new(&a), TextHead::new(&b));
            if let Some(order) = head_a.order(&head_b) {
                prop_assert_eq!(order, a.cmp(&b));
            } else {
                prop_assert!(a.len() > TextHead::HEAD || b.len() > TextHead::HEAD);
            }
            prop_assert_eq!(head_a.order(&head_b).map(Ordering::reverse), head_b.order(&head_a));
            if a.len() <= TextHead::HEAD && b.len() <= TextHead::HEAD {
                prop_assert_eq!(head_a.order(&head_b), Some(a.cmp(&b)));
            }
        }
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
    fn the_references_of_one_namespace_share_its_name() {
        let dir = tempfile::tempdir().unwrap();
        for file in 0..6u8 {
            let documents: Vec<String> = (0..5u8)
                .map(|n| document(n % 2, file * 5 + n, 80))
                .collect();
            std::fs::write(
                dir.path().join(format!("f{file}.yaml")),
                documents.join("---\n"),
            )
            .unwrap();
        }
        let (objects, _) = read_manifests(dir.path(), crate::DEFAULT_MAX_MANIFEST_BYTES);
        assert!(objects.len() == 30, "{}", objects.len());
        let text = |name: &Name| name.as_str().as_ptr();
        let mut namespaces = 0;
        for (index, (a, _)) in objects.iter().enumerate() {
            let first = objects.iter().position(|(b, _)| b.namespace == a.namespace);
            if first == Some(index) {
                namespaces += 1;
            }
            let (b, _) = &objects[first.unwrap()];
            assert_eq!(text(&a.namespace), text(&b.namespace), "{a} and {b}");
        }
        assert_eq!(namespaces, 4, "two short and two long namespaces");
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
