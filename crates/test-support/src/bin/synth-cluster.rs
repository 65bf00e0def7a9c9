//! Writes a synthetic cluster as a manifest directory:
//! `synth-cluster [--as-saved-by-kubectl] [--refusing-endpoints] [--with-pods] [--gateway-api] SERVICES OUT_DIR [SEED]`
//! (files of at most 1000 services each; the first flag writes every object as `kubectl
//! get -o yaml` saves it, the second puts the endpoints where a connection is refused at
//! once rather than never answered, the third adds a Pod behind each endpoint, the last
//! routes each service with an HTTPRoute instead of an Ingress).

fn main() {
    let (cluster, out) = match test_support::SyntheticCluster::from_args("synth-cluster") {
        Ok(parsed) => parsed,
        Err(usage) => {
            eprintln!("{usage}");
            std::process::exit(2);
        }
    };
    let out = std::path::Path::new(&out);
    let services = cluster.services;
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
