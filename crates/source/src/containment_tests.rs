//! Containment of the manifest directory: whatever one file or directory does, it is
//! reported, keeps what it held, and never takes another file's objects away.

use std::os::unix::fs::{PermissionsExt as _, symlink};
use std::path::Path;
use std::sync::mpsc;
use std::time::Duration;

use index::{ListScope, SourceEvent};
use resources::Object;
use rustix::thread::{CapabilitySet, CapabilitySets, capabilities, set_capabilities};

use crate::{ManifestDir, ManifestProblem};

fn service(name: &str, port: u16) -> String {
    format!(
        "apiVersion: v1\nkind: Service\nmetadata: {{name: {name}}}\nspec: {{ports: [{{port: {port}}}]}}\n"
    )
}

/// Each event as `apply NAME:PORT` or `delete NAME`, in order.
fn summary(events: &[SourceEvent]) -> Vec<String> {
    events
        .iter()
        .flat_map(|event| match event {
            SourceEvent::List(_, listed) => listed
                .iter()
                .map(|(_, object)| SourceEvent::Apply(object.clone()))
                .collect(),
            event => vec![event.clone()],
        })
        .filter_map(|event| match &event {
            SourceEvent::Apply(Object::Service(s)) | SourceEvent::InitApply(Object::Service(s)) => {
                let port = s
                    .spec
                    .as_ref()
                    .and_then(|spec| spec.ports.as_ref())
                    .and_then(|ports| ports.first())
                    .map_or(0, |p| p.port);
                let name = s.metadata.name.clone().unwrap_or_default();
                Some(format!("apply {name}:{port}"))
            }
            SourceEvent::Delete(r) => Some(format!("delete {}", r.name)),
            _ => None,
        })
        .collect()
}

/// A manifest directory's first scan, checked against reading it in one pass: the same
/// objects and the same problems, in the same order.
fn first_scan(manifests: &mut ManifestDir) -> (Vec<SourceEvent>, Vec<ManifestProblem>) {
    let (events, problems) = manifests.initial_events();
    let (objects, one_pass_problems) =
        crate::read_manifests(manifests.root(), manifests.file_limit());
    let [SourceEvent::List(ListScope::Everything, listed)] = &events[..] else {
        panic!("a first scan lists everything at once: {events:?}");
    };
    assert_eq!(&objects, listed, "reading in one pass gives other objects");
    assert_eq!(
        one_pass_problems, problems,
        "reading in one pass reports otherwise"
    );
    (events, problems)
}

fn shown(problems: &[ManifestProblem]) -> Vec<String> {
    problems.iter().map(ToString::to_string).collect()
}

/// Scans on another thread and fails, instead of hanging, if the scan does not end
/// within ten seconds (a blocking read or an exponential walk).
fn scan_within_deadline(
    mut manifests: ManifestDir,
    initial: bool,
) -> (ManifestDir, Vec<SourceEvent>, Vec<ManifestProblem>) {
    let (done_tx, done_rx) = mpsc::channel();
    std::thread::spawn(move || {
        let (events, problems) = if initial {
            first_scan(&mut manifests)
        } else {
            manifests.change_events()
        };
        let _ = done_tx.send((manifests, events, problems));
    });
    done_rx
        .recv_timeout(Duration::from_secs(10))
        .expect("the scan did not end within 10 s")
}

/// Makes permission bits bind this thread even as root (tests here run as root, where
/// `chmod 000` alone denies nothing): drops CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH
/// from the thread's effective set until dropped. Capabilities belong to a thread, so
/// other tests are not affected.
struct PermissionsEnforced {
    saved: CapabilitySets,
}

impl PermissionsEnforced {
    fn new() -> Self {
        let saved = capabilities(None).expect("reading this thread's capabilities");
        let mut lowered = saved;
        lowered
            .effective
            .remove(CapabilitySet::DAC_OVERRIDE | CapabilitySet::DAC_READ_SEARCH);
        set_capabilities(None, lowered).expect("lowering this thread's capabilities");
        Self { saved }
    }
}

impl Drop for PermissionsEnforced {
    fn drop(&mut self) {
        let _ = set_capabilities(None, self.saved);
    }
}

fn chmod(path: &Path, mode: u32) {
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

#[test]
fn invalid_namespaces_are_reported_with_file_and_field_and_the_rest_is_served() {
    let dir = tempfile::tempdir().unwrap();
    let text = format!(
        "{}---\napiVersion: v1\nkind: Service\nmetadata: {{name: b, namespace: ../../..}}\n---\napiVersion: v1\nkind: Service\nmetadata: {{name: c, namespace: \"web\\nERROR forged\"}}\n---\n{}",
        service("a", 80),
        service("d", 80)
    );
    std::fs::write(dir.path().join("mixed.yaml"), text).unwrap();
    let mut manifests = ManifestDir::new(dir.path());
    let (events, problems) = first_scan(&mut manifests);
    assert_eq!(summary(&events), ["apply a:80", "apply d:80"]);
    let messages = shown(&problems);
    assert_eq!(messages.len(), 2, "{messages:?}");
    assert!(
        messages[0].starts_with(
            "mixed.yaml: document 2 (line 6): Service: metadata.namespace \"../../..\" is invalid"
        ),
        "{messages:?}"
    );
    assert!(
        messages[1].starts_with(
            "mixed.yaml: document 3 (line 10): Service: metadata.namespace \"web\\nERROR forged\" is invalid"
        ),
        "{messages:?}"
    );
    assert!(messages.iter().all(|m| !m.contains('\n')), "{messages:?}");
}

#[test]
fn file_names_and_messages_cannot_forge_a_log_line() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("evil\nERROR forged.yaml"), "kind: [").unwrap();
    let mut manifests = ManifestDir::new(dir.path());
    let (_, problems) = first_scan(&mut manifests);
    let messages = shown(&problems);
    assert_eq!(messages.len(), 1, "{messages:?}");
    assert!(
        messages[0].starts_with("evil\\nERROR forged.yaml: document 1"),
        "{messages:?}"
    );
    assert!(!messages[0].contains('\n'));
}

#[test]
fn an_unreadable_directory_or_file_keeps_what_it_held_and_takes_nothing_else() {
    let dir = tempfile::tempdir().unwrap();
    let sub = dir.path().join("sub");
    std::fs::create_dir(&sub).unwrap();
    std::fs::write(sub.join("a.yaml"), service("a", 80)).unwrap();
    std::fs::write(dir.path().join("b.yaml"), service("b", 80)).unwrap();
    std::fs::write(dir.path().join("c.yaml"), service("c", 80)).unwrap();
    let mut manifests = ManifestDir::new(dir.path());
    let (events, problems) = first_scan(&mut manifests);
    assert_eq!(summary(&events), ["apply a:80", "apply b:80", "apply c:80"]);
    assert!(problems.is_empty(), "{problems:?}");

    std::fs::write(dir.path().join("c.yaml"), service("c", 81)).unwrap();
    std::fs::write(dir.path().join("d.yaml"), service("d", 80)).unwrap();
    chmod(&sub, 0o000);
    chmod(&dir.path().join("c.yaml"), 0o000);
    let (events, problems) = {
        let _enforced = PermissionsEnforced::new();
        assert!(
            std::fs::read_dir(&sub).is_err() && std::fs::read(dir.path().join("c.yaml")).is_err(),
            "the test needs paths this thread cannot read"
        );
        manifests.change_events()
    };
    chmod(&sub, 0o755);
    chmod(&dir.path().join("c.yaml"), 0o644);
    assert_eq!(
        summary(&events),
        ["apply d:80"],
        "nothing is deleted, the new file lands"
    );
    let messages = shown(&problems);
    assert_eq!(messages.len(), 2, "{messages:?}");
    assert!(
        messages[0].starts_with("sub: directory cannot be read: Permission denied"),
        "{messages:?}"
    );
    assert!(
        messages[0].ends_with("what it held before is kept"),
        "{messages:?}"
    );
    assert!(
        messages[1].starts_with("c.yaml: cannot be read: Permission denied"),
        "{messages:?}"
    );

    // Readable again: the edit made meanwhile lands.
    let (events, problems) = manifests.change_events();
    assert_eq!(summary(&events), ["apply c:81"]);
    assert!(problems.is_empty(), "{problems:?}");
}

#[test]
fn a_dangling_symbolic_link_keeps_what_it_held_until_it_is_removed() {
    // As in a Kubernetes volume: visible links into a hidden directory.
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("..data")).unwrap();
    std::fs::write(dir.path().join("..data/a.yaml"), service("a", 80)).unwrap();
    std::fs::write(dir.path().join("b.yaml"), service("b", 80)).unwrap();
    symlink("..data/a.yaml", dir.path().join("a.yaml")).unwrap();
    let mut manifests = ManifestDir::new(dir.path());
    let (events, _) = first_scan(&mut manifests);
    assert_eq!(summary(&events), ["apply a:80", "apply b:80"]);

    std::fs::remove_file(dir.path().join("..data/a.yaml")).unwrap();
    let (events, problems) = manifests.change_events();
    assert!(events.is_empty(), "{events:?}");
    let messages = shown(&problems);
    assert_eq!(messages.len(), 1, "{messages:?}");
    assert!(
        messages[0].starts_with("a.yaml: symbolic link cannot be followed"),
        "{messages:?}"
    );

    std::fs::remove_file(dir.path().join("a.yaml")).unwrap();
    let (events, problems) = manifests.change_events();
    assert_eq!(summary(&events), ["delete a"]);
    assert!(problems.is_empty(), "{problems:?}");
}

#[test]
fn a_fifo_is_reported_without_blocking() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.yaml"), service("a", 80)).unwrap();
    rustix::fs::mkfifoat(
        rustix::fs::CWD,
        dir.path().join("x.yaml"),
        rustix::fs::Mode::from_raw_mode(0o644),
    )
    .unwrap();
    let (_, events, problems) = scan_within_deadline(ManifestDir::new(dir.path()), true);
    assert_eq!(summary(&events), ["apply a:80"]);
    let messages = shown(&problems);
    assert_eq!(messages.len(), 1, "{messages:?}");
    assert!(
        messages[0].starts_with("x.yaml: not a regular file (a FIFO); not read"),
        "{messages:?}"
    );
}

#[test]
fn a_link_to_a_device_is_reported_without_reading_it() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.yaml"), service("a", 80)).unwrap();
    symlink("/dev/zero", dir.path().join("zero.yaml")).unwrap();
    let (_, events, problems) = scan_within_deadline(ManifestDir::new(dir.path()), true);
    assert_eq!(summary(&events), ["apply a:80"]);
    let messages = shown(&problems);
    assert_eq!(messages.len(), 1, "{messages:?}");
    assert!(
        messages[0].starts_with("zero.yaml: not a regular file (a character device); not read"),
        "{messages:?}"
    );
}

#[test]
fn links_back_to_a_parent_are_walked_once_and_reported_as_loops() {
    let dir = tempfile::tempdir().unwrap();
    let sub = dir.path().join("sub");
    std::fs::create_dir(&sub).unwrap();
    std::fs::write(dir.path().join("a.yaml"), service("a", 80)).unwrap();
    std::fs::write(sub.join("b.yaml"), service("b", 80)).unwrap();
    // Without loop detection each level doubles the paths, up to the kernel's limit of
    // 40 links per path: 2^40 directories.
    symlink("..", sub.join("up1")).unwrap();
    symlink("..", sub.join("up2")).unwrap();
    symlink(".", sub.join("here")).unwrap();
    let (_, events, problems) = scan_within_deadline(ManifestDir::new(dir.path()), true);
    assert_eq!(summary(&events), ["apply a:80", "apply b:80"]);
    let messages = shown(&problems);
    assert_eq!(
        messages,
        [
            "sub/here: symbolic-link loop: this is the directory sub again; not read twice",
            "sub/up1: symbolic-link loop: this is the directory . again; not read twice",
            "sub/up2: symbolic-link loop: this is the directory . again; not read twice",
        ]
    );
}

#[test]
fn an_oversized_file_is_reported_and_keeps_its_objects() {
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("a.yaml");
    std::fs::write(&a, service("a", 80)).unwrap();
    std::fs::write(dir.path().join("b.yaml"), service("b", 80)).unwrap();
    let mut manifests = ManifestDir::new(dir.path()).max_file_bytes(200);
    let (events, _) = first_scan(&mut manifests);
    assert_eq!(summary(&events), ["apply a:80", "apply b:80"]);

    std::fs::write(&a, format!("{}# {}\n", service("a", 81), "x".repeat(200))).unwrap();
    std::fs::write(dir.path().join("b.yaml"), service("b", 81)).unwrap();
    let (events, problems) = manifests.change_events();
    assert_eq!(summary(&events), ["apply b:81"], "a keeps its objects");
    let messages = shown(&problems);
    assert_eq!(
        messages,
        [
            "a.yaml: larger than 200 bytes (--max-manifest-bytes); not read; what it held before is kept"
        ]
    );

    std::fs::write(&a, service("a", 82)).unwrap();
    let (events, problems) = manifests.change_events();
    assert_eq!(summary(&events), ["apply a:82"]);
    assert!(problems.is_empty(), "{problems:?}");
}

#[test]
fn the_cap_is_enforced_while_reading_a_file_of_unknown_size() {
    // /proc files report a size of 0; this one holds far more than 200 bytes.
    let maps = Path::new("/proc/self/maps");
    assert_eq!(std::fs::metadata(maps).unwrap().len(), 0);
    let dir = tempfile::tempdir().unwrap();
    symlink(maps, dir.path().join("maps.yaml")).unwrap();
    let mut manifests = ManifestDir::new(dir.path()).max_file_bytes(200);
    let (_, problems) = first_scan(&mut manifests);
    let messages = shown(&problems);
    assert_eq!(
        messages,
        [
            "maps.yaml: larger than 200 bytes (--max-manifest-bytes); not read; what it held before is kept"
        ]
    );
}

#[test]
fn a_file_that_stops_parsing_keeps_its_last_parsed_objects() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("app.yaml");
    let json = dir.path().join("app.json");
    std::fs::write(
        &file,
        format!("{}---\n{}", service("a", 80), service("b", 80)),
    )
    .unwrap();
    std::fs::write(
        &json,
        r#"{"apiVersion":"v1","kind":"Service","metadata":{"name":"j"}}"#,
    )
    .unwrap();
    let mut manifests = ManifestDir::new(dir.path());
    let (events, _) = first_scan(&mut manifests);
    assert_eq!(summary(&events), ["apply a:80", "apply b:80", "apply j:0"]);

    // Half written: a's document parses and lands; b's does not, and b stays.
    std::fs::write(&file, format!("{}---\nkind: [\n", service("a", 81))).unwrap();
    std::fs::write(&json, r#"{"apiVersion":"v1","kind":"#).unwrap();
    let (events, problems) = manifests.change_events();
    assert_eq!(summary(&events), ["apply a:81"]);
    let messages = shown(&problems);
    assert_eq!(messages.len(), 4, "{messages:?}");
    assert!(
        messages[0].starts_with("app.json: document 1"),
        "{messages:?}"
    );
    assert_eq!(
        messages[1],
        "app.json: does not parse: its last parsable version's object is kept until it does (Service default/j)"
    );
    assert!(
        messages[2].starts_with("app.yaml: document 2 (line 6): invalid YAML"),
        "{messages:?}"
    );
    assert_eq!(
        messages[3],
        "app.yaml: does not parse: its last parsable version's object is kept until it does (Service default/b)"
    );

    // Not text at all: the last parsable version is served again.
    std::fs::write(&file, b"\xff\xfe").unwrap();
    let (events, _) = manifests.change_events();
    assert_eq!(summary(&events), ["apply a:80"]);

    // Fixed: what the file says now is served, b included in its absence.
    std::fs::write(&file, service("a", 82)).unwrap();
    let (events, _) = manifests.change_events();
    assert_eq!(summary(&events), ["apply a:82", "delete b"]);
}

#[test]
fn a_first_scan_with_unreadable_paths_reads_as_one_pass_does() {
    let dir = tempfile::tempdir().unwrap();
    let sub = dir.path().join("sub");
    std::fs::create_dir(&sub).unwrap();
    std::fs::write(sub.join("a.yaml"), service("a", 80)).unwrap();
    std::fs::write(dir.path().join("b.yaml"), service("b", 80)).unwrap();
    std::fs::write(
        dir.path().join("c.yaml"),
        format!("{}---\n{}", service("b", 81), service("c", 80)),
    )
    .unwrap();
    std::fs::write(dir.path().join("d.yaml"), service("d", 80)).unwrap();
    chmod(&sub, 0o000);
    chmod(&dir.path().join("d.yaml"), 0o000);
    let (events, problems) = {
        let _enforced = PermissionsEnforced::new();
        first_scan(&mut ManifestDir::new(dir.path()))
    };
    chmod(&sub, 0o755);
    chmod(&dir.path().join("d.yaml"), 0o644);
    assert_eq!(summary(&events), ["apply b:80", "apply c:80"]);
    let messages = shown(&problems);
    assert_eq!(messages.len(), 3, "{messages:?}");
    assert!(
        messages[0].starts_with("sub: directory cannot be read"),
        "{messages:?}"
    );
    assert!(
        messages[1].starts_with("d.yaml: cannot be read"),
        "{messages:?}"
    );
    assert_eq!(
        messages[2],
        "c.yaml: Service default/b is also defined in b.yaml; the first definition is used"
    );
}
