//! Finding the API server: an explicit kubeconfig, else `KUBECONFIG` or `~/.kube/config`,
//! else the in-cluster service account.

use std::path::Path;

use kube::config::{KubeConfigOptions, Kubeconfig};
use kube::{Client, Config};

/// Why no client could be built.
#[derive(Debug, thiserror::Error)]
pub enum ConnectError {
    /// The kubeconfig file could not be read or parsed.
    #[error("reading kubeconfig {path}: {source}")]
    Kubeconfig {
        /// The file.
        path: String,
        /// Why.
        source: kube::config::KubeconfigError,
    },
    /// Neither a kubeconfig nor the in-cluster environment was found.
    #[error("finding the API server: {0}")]
    Infer(#[from] kube::config::InferConfigError),
    /// The configuration was found but a client cannot be built from it.
    #[error("building the API client: {0}")]
    Client(#[from] kube::Error),
}

/// A client for the API server.
pub async fn connect(kubeconfig: Option<&Path>) -> Result<Client, ConnectError> {
    let config = match kubeconfig {
        Some(path) => {
            let kubeconfig_error = |source| ConnectError::Kubeconfig {
                path: path.display().to_string(),
                source,
            };
            let file = Kubeconfig::read_from(path).map_err(kubeconfig_error)?;
            Config::from_custom_kubeconfig(file, &KubeConfigOptions::default())
                .await
                .map_err(kubeconfig_error)?
        }
        None => Config::infer().await?,
    };
    Ok(Client::try_from(config)?)
}
