//! The fast reader against serde-saphyr: whatever it reads, it reads as serde-saphyr does.

use proptest::prelude::*;
use serde_json::{Value, json};

use super::parse;

fn general(document: &str) -> Option<Value> {
    serde_saphyr::from_str_with_options::<Value>(document, crate::decode::yaml_options()).ok()
}

/// The fast reader's value, after checking it is serde-saphyr's.
fn read(document: &str) -> Option<Value> {
    let fast = parse(document).map(|node| node.to_value());
    if let Some(fast) = &fast {
        assert_eq!(
            Some(fast),
            general(document).as_ref(),
            "the fast reader disagrees on {document:?}"
        );
    }
    fast
}

#[test]
fn reads_the_shapes_manifests_are_written_in() {
    let documents = [
        "apiVersion: v1\nkind: Service\nmetadata: {name: svc-1, namespace: ns-1}\nspec:\n  ports:\n  - {name: http, port: 80, targetPort: 8080}\n",
        "apiVersion: discovery.k8s.io/v1\nkind: EndpointSlice\nmetadata:\n  name: svc-1-abc\n  namespace: ns-1\n  labels: {kubernetes.io/service-name: svc-1}\naddressType: IPv4\nports:\n- {name: http, port: 8080}\nendpoints:\n- addresses: [10.1.2.3]\n- addresses: [10.200.3.4]\n  conditions: {ready: true}\n",
        "# a comment\napiVersion: networking.k8s.io/v1   # trailing comment\nkind: Ingress\nmetadata:\n  name: site\n  annotations: {portcullis.dev/balance-algorithm: leastconn, portcullis.dev/timeout-server: 30s}\nspec:\n  tls:\n  - hosts: [a.example.test]\n    secretName: wildcard-tls\n\n  rules:\n  - host: \"*.apps.example.test\"\n    http:\n      paths:\n      - path: /\n        pathType: Prefix\n        backend:\n          service:\n            name: web\n            port: {number: 80}\n",
        "a:\n  - 1\n  -\n    b: 2\n  -\n",
        "list:\n- a\n-\n- 'it''s'\n- \"tab\\tand \\u00e9 \\\"quoted\\\"\"\nnext: ~\nempty:\nurl: http://example.test:8080/x#y\n",
        "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"web\"},\"n\":[1,-2,3.5,true,null]}\n",
        "  indented: root\n  second: [a, {b: c}, [], {}]\n",
        "k: a b  c\nq: 'x: y # z'\nd: \"\"\ns: ''\n",
        // As `kubectl get -o yaml` writes an object.
        "metadata:\n  annotations:\n    kubectl.kubernetes.io/last-applied-configuration: |\n      {\"apiVersion\":\"v1\",\"kind\":\"Service\",\"metadata\":{\"name\":\"a\"}}\n  managedFields:\n  - apiVersion: v1\n    fieldsType: FieldsV1\n    fieldsV1:\n      f:spec:\n        f:ports:\n          .: {}\n          k:{\"port\":80,\"protocol\":\"TCP\"}:\n            .: {}\n            f:name: {}\n    manager: kubectl-client-side-apply\n  name: a\n",
    ];
    for document in documents {
        assert!(read(document).is_some(), "declined {document:?}");
    }
    assert_eq!(
        read("a: [1, 0755, 0x1F, 1e3, -0, +5, yes, Off, ~, 1_000, .5]\n"),
        Some(json!({"a": [1, 493, 31, 1000.0, 0, 5, true, false, null, 1000, 0.5]}))
    );
}

const SPELLINGS: &[&str] = &[
    "0",
    "00",
    "07",
    "08",
    "0755",
    "-0755",
    "+0755",
    "0_7",
    "0x1F",
    "0X1F",
    "0xff_ff",
    "0o17",
    "0O17",
    "0b101",
    "0B101",
    "-0x10",
    "1_000",
    "1__0",
    "_1",
    "1_",
    "12",
    "-12",
    "+12",
    "-0",
    "+0",
    "18446744073709551615",
    "18446744073709551616",
    "-9223372036854775808",
    "-9223372036854775809",
    "99999999999999999999999999999999999999999",
    "1.5",
    "-1.5",
    "1.",
    ".5",
    "-.5",
    "1e3",
    "1E3",
    "1e-3",
    "-1e+3",
    "1e999",
    "-1e999",
    ".inf",
    "-.inf",
    "+.inf",
    ".Inf",
    ".INF",
    ".nan",
    ".NaN",
    "-.nan",
    "+.nan",
    "inf",
    "nan",
    "infinity",
    "NaN",
    "1.2.3",
    "10.0.0.1",
    "1e",
    "e3",
    "0x",
    "0b2",
    "0o8",
    "y",
    "Y",
    "yes",
    "Yes",
    "YES",
    "n",
    "N",
    "no",
    "on",
    "On",
    "ON",
    "off",
    "true",
    "True",
    "TRUE",
    "tRuE",
    "false",
    "FALSE",
    "null",
    "Null",
    "NULL",
    "nULL",
    "~",
    "-",
    "-a",
    "a-",
    "a b",
    "30s",
    "1h30m",
    "v1",
    "1/2",
    "a:b",
    "a::b",
    "http://x",
    "a,b",
    "a'b",
    "a\"b",
    "a#b",
    "=",
    "<<",
    "!",
    "&a",
    "*a",
    "%x",
    "@x",
    "`x",
    "?x",
    ":x",
    "|",
    ">",
    "'",
    "\"",
];

#[test]
fn scalars_are_read_as_serde_saphyr_reads_them() {
    for spelling in SPELLINGS {
        for document in [
            format!("k: {spelling}\n"),
            format!("k: {spelling} # comment\n"),
            format!("- {spelling}\n"),
            format!("k: [{spelling}]\n"),
            format!("k: [{spelling}, x]\n"),
            format!("k: {{a: {spelling}}}\n"),
            format!("{spelling}: v\n"),
            format!("{{{spelling}: v}}\n"),
            format!("k: '{spelling}'\n"),
            format!("k: \"{spelling}\"\n"),
        ] {
            read(&document);
        }
    }
}

#[test]
fn literal_block_scalars_are_read_as_serde_saphyr_reads_them() {
    let read_as = [
        ("a: |\n  text\n", json!({"a": "text\n"})),
        ("a: |-\n  text\n", json!({"a": "text"})),
        ("a: |\n  text", json!({"a": "text\n"})),
        (
            "a: |\n  one\n    two  \n\n  # text, not a comment\n\n\n# a comment\nb: 1\n",
            json!({"a": "one\n  two  \n\n# text, not a comment\n", "b": 1}),
        ),
        ("a: |-\n    x\n\n  \n    y\n", json!({"a": "x\n\n\ny"})),
        (
            "l:\n- |\n  x\n- |-\n  y\n- z\n",
            json!({"l": ["x\n", "y", "z"]}),
        ),
        (
            "- k: |\n    {\"a\": [1, 2]}\n  j: 2\n",
            json!([{"k": "{\"a\": [1, 2]}\n", "j": 2}]),
        ),
        (
            "a:\n  b: |\n    x: y\n  c: d\n",
            json!({"a": {"b": "x: y\n", "c": "d"}}),
        ),
    ];
    for (document, value) in read_as {
        assert_eq!(read(document), Some(value), "{document:?}");
    }
}

#[test]
fn declines_what_it_does_not_read() {
    let declined = [
        "a: &x 1\nb: *x\n",
        "a: !!str 1\n",
        "a: |+\n  text\n",
        "a: |2\n  text\n",
        "a: | # comment\n  text\n",
        "a: |\n\n  text\n",
        "a: |\n",
        "a: |\nb: 1\n",
        "a: |\n  text\n     \n",
        "a: |\n    text\n  more\n",
        "a: >\n  text\n",
        "a: multi\n  line\n",
        "a: 'multi\n  line'\n",
        "a: [1,\n  2]\n",
        "a:\tb\n",
        "a: b\r\n",
        "a: caf\u{e9}\n",
        "a: 1\na: 2\n",
        "a: 1\n'a': 2\n",
        "<<: {a: 1}\n",
        "1: a\n",
        "~: a\n",
        "? a\n: b\n",
        "%YAML 1.2\n---\na: 1\n",
        "a: 1\n...\n",
        "a: b: c\n",
        "a: {b: 1,}\n",
        "a: .inf\n",
        "just a scalar\n",
        "a:\n  - 1\n   - 2\n",
    ];
    for document in declined {
        assert_eq!(parse(document), None, "{document:?}");
    }
    let deep = format!("{}1{}\n", "[".repeat(40), "]".repeat(40));
    assert_eq!(parse(&deep), None);
}

/// A small YAML document from a grammar of the constructs the fast reader reads and
/// some it declines.
fn document() -> impl Strategy<Value = String> {
    let scalar = prop_oneof![
        prop::sample::select(SPELLINGS).prop_map(str::to_owned),
        "[a-z0-9 ._/:#-]{0,8}",
        "'[a-z: #\"]{0,5}'",
        "\"[a-z: #'\\\\]{0,5}\"",
    ];
    let flow = prop::collection::vec(scalar.clone(), 0..4).prop_flat_map(|items| {
        let seq = format!("[{}]", items.join(", "));
        let map = format!(
            "{{{}}}",
            items
                .iter()
                .enumerate()
                .map(|(i, v)| format!("k{i}: {v}"))
                .collect::<Vec<_>>()
                .join(", ")
        );
        prop::sample::select(vec![seq, map])
    });
    let value = prop_oneof![scalar.clone(), flow];
    let key = prop_oneof![
        "[a-z]{1,3}",
        prop::sample::select(SPELLINGS).prop_map(str::to_owned),
        "\"[a-z]{1,3}\"",
        // managedFields' keys, and brackets and colons inside plain keys.
        prop::sample::select(vec![
            ".",
            "f:spec",
            "k:{\"port\":80}",
            "a[b]",
            "a]b",
            "x{y}"
        ])
        .prop_map(str::to_owned),
        "[a-z][a-z:{}\\[\\]\",.]{1,4}",
    ];
    let line = (
        0usize..3,
        key,
        prop::option::of(value),
        0usize..7,
        any::<bool>(),
    )
        .prop_map(|(depth, key, value, form, comment)| {
            let indent = "  ".repeat(depth);
            let value = value.unwrap_or_default();
            // The lines after a literal block's header are its text or end it.
            let body = match form {
                0 => format!("{key}: {value}"),
                1 => format!("- {value}"),
                2 => format!("- {key}: {value}"),
                3 => format!("{key}: |"),
                4 => "- |-".to_owned(),
                5 => format!("  {value}"),
                _ => format!("{key}:"),
            };
            let comment = if comment { " # note" } else { "" };
            format!("{indent}{body}{comment}\n")
        });
    prop::collection::vec(line, 1..8).prop_map(|lines| lines.concat())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn whatever_it_reads_serde_saphyr_reads_the_same(document in document()) {
        read(&document);
    }

    #[test]
    fn an_edited_manifest_is_read_as_serde_saphyr_reads_it(
        at in 0usize..400,
        cut in 0usize..3,
        insert in prop::sample::select(vec!["", " ", "  ", "\n", "- ", ": ", "#", "'", "\"", "{", "}", "[", "]", ",", "-", "?", "&a ", "*a", "!", "|", "0"]),
    ) {
        let manifest = "apiVersion: v1\nkind: Service\nmetadata:\n  name: a\n  labels: {app: web, tier: \"front\"}\nspec:\n  ports:\n  - name: http\n    port: 80\n    targetPort: 8080\n  - {name: https, port: 443}\n  selector:\n    app: web\n";
        let at = at.min(manifest.len());
        let end = (at + cut).min(manifest.len());
        let edited = format!("{}{insert}{}", &manifest[..at], &manifest[end..]);
        read(&edited);
    }
}
