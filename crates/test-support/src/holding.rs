//! A backend that holds the first request it gets until the test releases it, to keep a
//! connection open through a change.

use std::io::{Read, Write};
use std::net::TcpListener;
use std::sync::mpsc;
use std::time::Duration;

/// Answers its first request with `200 held`, but only once released.
#[derive(Debug)]
pub struct HoldingBackend {
    /// Its port on 127.0.0.1.
    pub port: u16,
    arrived: mpsc::Receiver<()>,
    release: mpsc::Sender<()>,
}

impl HoldingBackend {
    /// Starts listening on a free port of 127.0.0.1; the answer closes the connection.
    pub fn start() -> std::io::Result<Self> {
        Self::start_with(false)
    }

    /// As [`HoldingBackend::start`], but the answer keeps the connection open, idle, as a
    /// keep-alive backend's does, until the other side closes it.
    pub fn start_keeping_alive() -> std::io::Result<Self> {
        Self::start_with(true)
    }

    fn start_with(keep_alive: bool) -> std::io::Result<Self> {
        let listener = TcpListener::bind("127.0.0.1:0")?;
        let port = listener.local_addr()?.port();
        let (arrived_tx, arrived) = mpsc::channel();
        let (release, released) = mpsc::channel::<()>();
        std::thread::spawn(move || {
            let Ok((mut stream, _)) = listener.accept() else {
                return;
            };
            let mut buffer = [0_u8; 4096];
            let _ = stream.read(&mut buffer);
            let _ = arrived_tx.send(());
            let _ = released.recv();
            if keep_alive {
                let _ = stream.write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 4\r\n\r\nheld");
                while stream.read(&mut buffer).is_ok_and(|read| read > 0) {}
            } else {
                let _ = stream.write_all(
                    b"HTTP/1.1 200 OK\r\ncontent-length: 4\r\nconnection: close\r\n\r\nheld",
                );
            }
        });
        Ok(Self {
            port,
            arrived,
            release,
        })
    }

    /// Waits until the request has arrived; false if it did not within `timeout`.
    pub fn wait_for_request(&self, timeout: Duration) -> bool {
        self.arrived.recv_timeout(timeout).is_ok()
    }

    /// Lets the held request be answered.
    pub fn release(&self) {
        let _ = self.release.send(());
    }
}
