//! Frontends behind a proxy that sends the PROXY protocol: on the bind line for every
//! client, or as a connection rule for the trusted sources only.

use std::fmt::Write;

use model::AcceptProxy;

/// The bind line's option, each preceded by a space.
pub(crate) fn bind_option(accept: &AcceptProxy) -> &'static str {
    match accept {
        AcceptProxy::Everyone => " accept-proxy",
        AcceptProxy::Nobody | AcceptProxy::From(_) => "",
    }
}

/// The frontend's first lines: before anything reads the connection, the trusted
/// sources' header is parsed, so everything after sees the client it names.
pub(crate) fn frontend_lines(accept: &AcceptProxy) -> String {
    let AcceptProxy::From(sources) = accept else {
        return String::new();
    };
    let mut text = String::from("    tcp-request connection expect-proxy layer4 if { src");
    for source in sources {
        // Writing to a String cannot fail.
        let _ = write!(text, " {source}");
    }
    text.push_str(" }\n");
    text
}
