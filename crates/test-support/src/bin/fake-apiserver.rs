//! Serves a synthetic cluster from the protocol-level fake Kubernetes API server, for
//! measuring `portcullis run --kubeconfig` at scale without a cluster:
//! `fake-apiserver [FLAGS] SERVICES DIR [SEED]` (the flags of `synth-cluster`) writes `DIR/kubeconfig-bench`, prints the
//! server's URL once every object is stored, and serves until it is killed. A line
//! `relist` on its standard input loses the event history, so every watcher lists again.

use std::io::Write as _;

fn main() {
    let (cluster, dir) = match test_support::SyntheticCluster::from_args("fake-apiserver") {
        Ok(parsed) => parsed,
        Err(usage) => {
            eprintln!("{usage}");
            std::process::exit(2);
        }
    };
    if let Err(err) = serve(&cluster, std::path::Path::new(&dir)) {
        eprintln!("fake-apiserver: {err}");
        std::process::exit(1);
    }
}

fn serve(cluster: &test_support::SyntheticCluster, dir: &std::path::Path) -> Result<(), String> {
    let api = test_support::FakeApiServer::start().map_err(|e| e.to_string())?;
    let mut text = cluster.namespace_manifests();
    text.push_str(&cluster.manifests(0..cluster.services));
    for document in text.split("\n---\n") {
        if document.trim().is_empty() || document.trim() == "---" {
            continue;
        }
        let object: serde_json::Value =
            serde_saphyr::from_str(document).map_err(|e| format!("{e}: {document}"))?;
        api.apply(object);
    }
    std::fs::create_dir_all(dir).map_err(|e| e.to_string())?;
    api.write_kubeconfig(dir, "bench")
        .map_err(|e| e.to_string())?;
    let mut stdout = std::io::stdout();
    writeln!(stdout, "{}", api.url()).map_err(|e| e.to_string())?;
    stdout.flush().map_err(|e| e.to_string())?;
    // Standard input closed (or unreadable): serve on, untouched.
    for line in std::io::stdin().lines().map_while(Result::ok) {
        if line.trim() == "relist" {
            api.lose_history();
        }
    }
    loop {
        std::thread::park();
    }
}
