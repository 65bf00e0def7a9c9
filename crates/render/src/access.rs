//! Access lines: a path's source address allow and deny lists (frontend rule lines,
//! the lists in pattern files so a changed list goes live), and a backend's per-client
//! rate and connection limits (a stick table of the backend).

use std::collections::BTreeMap;
use std::fmt::Write;

use model::{AddressRule, Cidr, ClientLimits, SourceAccess};

use crate::layout::{address_exceptions_file, address_list_file};

/// The variable holding the client address a rule compares, when it comes from a header.
const CLIENT_VAR: &str = "txn.access_client";

/// The lines refusing a rule's unwanted clients with 403, before anything else the rule
/// does; the files they name go to `files` (path → content).
pub(crate) fn rule_lines(
    access: &SourceAccess,
    chosen: &str,
    out: &mut String,
    files: &mut BTreeMap<String, String>,
) {
    if access.is_open() {
        return;
    }
    if access.refuse_all {
        let _ = writeln!(out, "    http-request deny if {chosen}");
        return;
    }
    // The address compared: the trusted header's last address when the request has one
    // (an address a header cannot give leaves the variable at the connection's).
    let client = match &access.source_header {
        Some(header) => {
            let _ = writeln!(
                out,
                "    http-request set-var({CLIENT_VAR}) src if {chosen}"
            );
            let _ = writeln!(
                out,
                "    http-request set-var({CLIENT_VAR}) req.hdr_ip({header},-1) if {chosen}"
            );
            format!("var({CLIENT_VAR}) -m ip")
        }
        None => "src".to_owned(),
    };
    refusal_lines(access, "http-request deny", chosen, &client, out, files);
}

/// The lines refusing (closing) the TCP connections `access` does not serve, under
/// `selector`: a TLS passthrough name's lists, read against the connection's address.
pub(crate) fn connection_lines(
    access: &SourceAccess,
    selector: &str,
    out: &mut String,
    files: &mut BTreeMap<String, String>,
) {
    if access.refuse_all {
        let _ = writeln!(out, "    tcp-request content reject if {selector}");
        return;
    }
    refusal_lines(
        access,
        "tcp-request content reject",
        selector,
        "src",
        out,
        files,
    );
}

/// `refuse` under `condition` for each client the lists do not serve, `client` being the
/// address compared (with its match method).
fn refusal_lines(
    access: &SourceAccess,
    refuse: &str,
    condition: &str,
    client: &str,
    out: &mut String,
    files: &mut BTreeMap<String, String>,
) {
    if let Some(allow) = &access.allow {
        let (ranges, exceptions) = list_files(allow, files);
        let _ = writeln!(
            out,
            "    {refuse} if {condition} !{{ {client} -f {ranges} }}"
        );
        let _ = writeln!(
            out,
            "    {refuse} if {condition} {{ {client} -f {exceptions} }}"
        );
    }
    if let Some(deny) = &access.deny {
        let (ranges, exceptions) = list_files(deny, files);
        let _ = writeln!(
            out,
            "    {refuse} if {condition} {{ {client} -f {ranges} }} !{{ {client} -f {exceptions} }}"
        );
    }
}

/// A rule's two files (both always written, so that adding the first exception or
/// removing the last is a change of content only).
fn list_files(rule: &AddressRule, files: &mut BTreeMap<String, String>) -> (String, String) {
    let ranges = address_list_file(&rule.name);
    let exceptions = address_exceptions_file(&rule.name);
    files.insert(ranges.clone(), list_text(&rule.ranges));
    files.insert(exceptions.clone(), list_text(&rule.exceptions));
    (ranges, exceptions)
}

/// One block a line.
pub(crate) fn list_text(blocks: &[Cidr]) -> String {
    let mut text = String::with_capacity(blocks.len() * 20);
    for block in blocks {
        let _ = writeln!(text, "{block}");
    }
    text
}

/// Blocks per `acl` line of the exempted addresses (several lines of one name are OR-ed).
const BLOCKS_PER_LINE: usize = 16;

/// A backend's limit lines: its stick table, the tracking of each client address not
/// exempted, and the refusals.
pub(crate) fn backend_lines(limits: &ClientLimits, out: &mut String) {
    if !limits.is_active() {
        return;
    }
    // `ipv6` keys hold IPv4 clients too (mapped), so both families are counted.
    out.push_str(
        "    stick-table type ipv6 size 200k expire 5m store conn_cur,http_req_rate(1s)\n",
    );
    let exempt = if limits.exempt.is_empty() {
        ""
    } else {
        for chunk in limits.exempt.chunks(BLOCKS_PER_LINE) {
            let blocks: Vec<String> = chunk.iter().map(ToString::to_string).collect();
            let _ = writeln!(out, "    acl limit_exempt src {}", blocks.join(" "));
        }
        " if !limit_exempt"
    };
    let _ = writeln!(out, "    http-request track-sc0 src{exempt}");
    if let Some(connections) = limits.connections {
        let _ = writeln!(
            out,
            "    http-request deny deny_status {} if {{ sc0_conn_cur gt {connections} }}",
            limits.connections_status.code()
        );
    }
    if let Some(rps) = limits.rps {
        let _ = writeln!(
            out,
            "    http-request deny deny_status {} if {{ sc0_http_req_rate gt {rps} }}",
            limits.rps_status.code()
        );
    }
}
