//! `portcullis render`, `check` and `status`: one pass over the manifests, HAProxy only
//! where `check` is asked to have it judge the result.

use std::path::Path;
use std::sync::Arc;

use anyhow::Context as _;
use haproxy::StateDir;
use index::{Index, ListScope, Snapshot, SourceEvent};

use crate::cli::{CheckArgs, RenderArgs, StatusArgs};
use crate::default_cert;
use crate::pipeline;

fn load(directory: &Path, max_file_bytes: u64) -> (Snapshot, Vec<String>) {
    // Read once, with nothing kept for a next scan: the same objects and problems as
    // the controller's first scan (checked by the source's tests).
    let (objects, problems) = source::read_manifests(directory, max_file_bytes);
    let mut index = Index::new();
    index.handle(SourceEvent::List(ListScope::Everything, objects));
    // The store goes with this function: the snapshot is the objects' only holder, so
    // what a conversion sheds of it is freed.
    (
        Arc::unwrap_or_clone(index.snapshot()),
        problems.iter().map(ToString::to_string).collect(),
    )
}

/// Renders once into `--out`, managing it exactly as `run` manages its state directory.
pub fn render(args: &RenderArgs) -> anyhow::Result<()> {
    let mut state = StateDir::open(&args.out).context("opening the output directory")?;
    state.lock().context("locking the output directory")?;
    let fallback = default_cert::load_or_generate(state.root())?;
    let started = std::time::Instant::now();
    let (snapshot, problems) = load(&args.manifests, args.config.max_manifest_bytes);
    let loaded = started.elapsed();
    let rss_loaded = resident_mib();
    let options = pipeline::convert_options(&args.config, fallback);
    // One full conversion that records nothing for a next one (a `render` has none):
    // equal to the controller's first reconciliation, as the I2 property test checks.
    // Given the snapshot, it frees the objects only conversion reads before its merge
    // settles, so the merge's memory reuses theirs.
    let mut cache = convert::ConvertCache::one_shot();
    let conversion = cache.convert_given(snapshot, &options);
    // The render needs only the model. The merge's bookkeeping is freed beside it, on a
    // thread of its own, so the render's allocations reuse that memory (the peak at 10k
    // services falls by ~10 MiB) and its 23-31 ms of freeing stay out of the way.
    let freeing = std::thread::Builder::new()
        .name("free-merge".into())
        .spawn(move || drop(cache));
    let mut renderer = render::RenderCache::default();
    let desired = renderer.render(&conversion.model);
    std::mem::forget(renderer);
    let reconciled_at = started.elapsed();
    let rss_reconciled = resident_mib();
    let diagnostics = conversion.diagnostics.iter().map(ToString::to_string);
    for problem in problems.iter().cloned().chain(diagnostics) {
        eprintln!("warning: {problem}");
    }
    let mut applied = state.scan()?;
    let plan = plan::plan(&applied, &desired);
    state.apply(&plan, &mut applied)?;
    tracing::info!(
        ?loaded,
        reconcile = ?(reconciled_at - loaded),
        write = ?(started.elapsed() - reconciled_at),
        rss_loaded_mib = rss_loaded,
        rss_reconciled_mib = rss_reconciled,
        "render timings"
    );
    eprintln!(
        "{}: {} files written, {} deleted, {} unchanged",
        state.root().display(),
        plan.writes.len(),
        plan.deletes.len(),
        desired.files.len() - plan.writes.len()
    );
    // One pass, then the process ends: freeing the objects, model and files one by one
    // would only cost time (a tenth of a `render` at 100k services).
    std::mem::forget((conversion, desired, plan, applied));
    // A thread that could not be started has dropped the bookkeeping at once.
    if let Ok(freeing) = freeing {
        let _ = freeing.join();
    }
    Ok(())
}

/// Prints every problem; the result says whether there was one.
pub fn check(args: &CheckArgs) -> anyhow::Result<bool> {
    // HAProxy needs a default certificate it can load; the conversion alone does not.
    let scratch = match &args.haproxy_bin {
        Some(_) => Some(tempfile::tempdir().context("making a directory to check in")?),
        None => None,
    };
    let fallback = match &scratch {
        Some(scratch) => default_cert::load_or_generate(scratch.path())?,
        None => model::TlsCert::default(),
    };
    let (snapshot, problems) = load(&args.manifests, args.config.max_manifest_bytes);
    let mut options = pipeline::convert_options(&args.config, fallback);
    options.reserved_ports = vec![args.admin_bind.port()];
    let (conversion, refused) = match (&args.haproxy_bin, &scratch) {
        (Some(haproxy_bin), Some(scratch)) => {
            let dir = scratch.path().join("out");
            judged_by_haproxy(haproxy_bin, &dir, &snapshot, options)?
        }
        _ => (convert::convert_given(snapshot, &options), Vec::new()),
    };
    let mut count = 0;
    let listeners = convert::gateway_status::listener_problems(&conversion.gateway_status);
    let admin_clash = args.config.admin_clash(args.admin_bind);
    for problem in admin_clash
        .into_iter()
        .chain(problems.iter().cloned())
        .chain(
            conversion
                .diagnostics
                .iter()
                .chain(&listeners)
                .map(ToString::to_string)
                .chain(refused),
        )
    {
        println!("{problem}");
        count += 1;
    }
    let model = &conversion.model;
    let routes: usize = model.hosts.values().map(|h| h.routes.len()).sum();
    eprintln!(
        "{count} problem(s); {} host(s), {routes} route(s), {} backend(s)",
        model.hosts.len(),
        model.backends.len()
    );
    Ok(count == 0)
}

/// The conversion HAProxy accepts once what it refuses is left out, checked in `dir`,
/// as the controller narrows a refusal: each object and certificate behind a refusal is
/// left out (and reported by the conversion, with HAProxy's words); what no object
/// explains is returned as HAProxy said it.
fn judged_by_haproxy(
    haproxy_bin: &Path,
    dir: &Path,
    snapshot: &Snapshot,
    options: convert::ConvertOptions,
) -> anyhow::Result<(convert::Conversion, Vec<String>)> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let state = StateDir::open(dir).context("opening the directory to check in")?;
    let mut reconciler = pipeline::Reconciler::new(options);
    let mut certificates = std::collections::BTreeMap::new();
    let mut objects = convert::Exclusions::new();
    let mut refused_certificates = Vec::new();
    // A first check, then one for each narrowing.
    for _ in 0..=pipeline::MAX_NARROWING_ROUNDS {
        let reconciled = reconciler.reconcile_excluding(snapshot, &certificates, &objects)?;
        let mut applied = state.scan()?;
        let plan = plan::plan(&applied, &reconciled.rendered);
        state.apply(&plan, &mut applied)?;
        let failure = match runtime.block_on(haproxy::check_config(haproxy_bin, state.root())) {
            Ok(()) => return Ok((reconciled.conversion, refused_certificates)),
            Err(haproxy::CheckError::Rejected(failure)) => failure,
            Err(err) => return Err(err).context("having HAProxy check the configuration"),
        };
        let table = render::OriginTable::new(&reconciled.conversion.model, &reconciled.rendered);
        let mut narrowed = pipeline::narrow(&failure.output, state.root(), &table);
        // The scratch directory is gone once `check` ends: files are named within it.
        let scratch = format!("{}/", state.root().display());
        for message in (narrowed.objects.values_mut())
            .chain(narrowed.certificates.values_mut())
            .chain(narrowed.unexplained.iter_mut())
        {
            *message = message.replace(&scratch, "");
        }
        refused_certificates.extend(narrowed.certificates.iter().map(|(id, message)| {
            format!(
                "Secret {}/{}: HAProxy refuses its certificate, and its hosts are served with the default one: {message}",
                id.namespace, id.name
            )
        }));
        let progress = pipeline::leave_out(
            snapshot,
            &reconciled.conversion,
            &narrowed,
            &mut certificates,
            &mut objects,
        );
        if !progress {
            let unexplained: Vec<String> =
                match pipeline::unexplained_problem(&narrowed, reconciler.options()) {
                    Some(problem) => vec![problem.to_string()],
                    None => narrowed
                        .unexplained
                        .iter()
                        .map(|message| format!("HAProxy refuses the configuration: {message}"))
                        .collect(),
                };
            let said = refused_certificates
                .into_iter()
                .chain(unexplained)
                .collect();
            return Ok((reconciled.conversion, said));
        }
    }
    anyhow::bail!(
        "HAProxy still refuses the configuration after {} rounds of leaving out what it named",
        pipeline::MAX_NARROWING_ROUNDS
    )
}

/// Prints the Gateway API status of the manifests' objects, as YAML.
pub fn status(args: &StatusArgs) -> anyhow::Result<()> {
    let (snapshot, problems) = load(&args.manifests, args.config.max_manifest_bytes);
    for problem in &problems {
        eprintln!("{problem}");
    }
    let options = pipeline::convert_options(&args.config, model::TlsCert::default());
    let conversion = convert::convert_given(snapshot, &options);
    print!("{}", crate::status::status_yaml(&conversion.gateway_status));
    Ok(())
}

/// The process's resident memory in MiB (0 where /proc is not available), for the
/// timing log.
fn resident_mib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|status| {
            let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
            line.split_whitespace().nth(1)?.parse::<u64>().ok()
        })
        .map_or(0, |kib| kib / 1024)
}
