//! Writes a synthetic cluster as a manifest directory:
//! `synth-cluster SERVICES OUT_DIR [SEED]` (files of at most 1000 services each).

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let (Some(services), Some(out)) = (
        args.get(1).and_then(|s| s.parse::<usize>().ok()),
        args.get(2),
    ) else {
        eprintln!("usage: synth-cluster SERVICES OUT_DIR [SEED]");
        std::process::exit(2);
    };
    let seed = args.get(3).and_then(|s| s.parse().ok()).unwrap_or(1);
    let mut cluster = test_support::SyntheticCluster::new(services, seed);
    cluster.certificate = Some(test_support::self_signed(
        "synthetic wildcard",
        &["*.example.test"],
    ));
    let out = std::path::Path::new(out);
    let result = std::fs::create_dir_all(out)
        .and_then(|()| std::fs::write(out.join("namespaces.yaml"), cluster.namespace_manifests()))
        .and_then(|()| {
            for (file, start) in (0..services).step_by(1000).enumerate() {
                let text = cluster.manifests(start..(start + 1000).min(services));
                std::fs::write(out.join(format!("services-{file:04}.yaml")), text)?;
            }
            Ok(())
        });
    if let Err(err) = result {
        eprintln!("synth-cluster: {err}");
        std::process::exit(1);
    }
}
