//! A server's row of `show stat`: whether what keeps `del server` waiting is only
//! connections idle in its pool, and where the server points.

use std::net::SocketAddr;

/// What `show stat <backend> 4 -1` says of one server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ServerStats {
    /// Streams on it (requests in flight, tunnels).
    pub(crate) streams: u64,
    /// Requests queued for it.
    pub(crate) queued: u64,
    /// Connections idle in its pool.
    pub(crate) idle: u64,
    /// Its address and port.
    pub(crate) address: SocketAddr,
}

impl ServerStats {
    /// Whether only idle connections are left: nothing a client waits on, and something
    /// that closing the idle connections releases.
    pub(crate) fn only_idle(&self) -> bool {
        self.streams == 0 && self.queued == 0 && self.idle > 0
    }
}

/// The row of `server` in the CSV `show stat` answers, if it is there and readable.
pub(crate) fn server_row(csv: &str, server: &str) -> Option<ServerStats> {
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next()?.trim_start_matches("# ").split(',').collect();
    let column = |name: &str| header.iter().position(|field| *field == name);
    let (name, streams, queued, idle, address) = (
        column("svname")?,
        column("scur")?,
        column("qcur")?,
        column("srv_icur")?,
        column("addr")?,
    );
    let row: Vec<&str> = lines
        .map(|line| line.split(',').collect::<Vec<_>>())
        .find(|fields| fields.get(name) == Some(&server))?;
    let number = |index: usize| -> Option<u64> {
        match row.get(index)? {
            &"" => Some(0),
            text => text.parse().ok(),
        }
    };
    Some(ServerStats {
        streams: number(streams)?,
        queued: number(queued)?,
        idle: number(idle)?,
        address: row.get(address)?.parse().ok()?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    // As HAProxy 2.6.12 answered, cut to the columns read and a few others.
    const CSV: &str = "# pxname,svname,qcur,qmax,scur,smax,status,srv_icur,addr,\n\
        app,127.0.0.1_8080,0,0,0,1,MAINT,2,127.0.0.1:8080,\n\
        app,127.0.0.1_8081,0,0,1,1,MAINT,0,127.0.0.1:8081,\n\
        app,fd00__1_80,0,0,0,0,MAINT,,[fd00::1]:80,\n";

    #[test]
    fn a_server_holding_only_idle_connections_is_told_from_one_with_a_request() {
        let idle = server_row(CSV, "127.0.0.1_8080");
        assert_eq!(
            idle,
            Some(ServerStats {
                streams: 0,
                queued: 0,
                idle: 2,
                address: "127.0.0.1:8080".parse().unwrap_or_else(|_| unreachable!()),
            })
        );
        assert!(idle.is_some_and(|s| s.only_idle()));
        assert!(server_row(CSV, "127.0.0.1_8081").is_some_and(|s| !s.only_idle()));
        assert_eq!(
            server_row(CSV, "fd00__1_80").map(|s| (s.idle, s.address.to_string())),
            Some((0, "[fd00::1]:80".to_owned()))
        );
        assert_eq!(server_row(CSV, "missing"), None);
        assert_eq!(server_row("Unknown command\n", "127.0.0.1_8080"), None);
    }
}
