//! Echo backends for the example: `echo-server NAME=PORT ...` serves until killed.

fn main() {
    let mut servers = Vec::new();
    for arg in std::env::args().skip(1) {
        let Some((name, port)) = arg.split_once('=') else {
            eprintln!("usage: echo-server NAME=PORT ...");
            std::process::exit(2);
        };
        match port
            .parse()
            .map_err(std::io::Error::other)
            .and_then(|p| test_support::EchoServer::start_on(name, p))
        {
            Ok(server) => {
                eprintln!("echo backend {name} on 127.0.0.1:{}", server.port);
                servers.push(server);
            }
            Err(err) => {
                eprintln!("echo backend {name}: {err}");
                std::process::exit(1);
            }
        }
    }
    loop {
        std::thread::park();
    }
}
