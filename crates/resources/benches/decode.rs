//! Manifest decoding speed on a synthetic cluster directory, one core: the decoder as
//! used (the fast reader, serde-saphyr for what it declines) against serde-saphyr alone.
//! `synth-cluster 10000 /tmp/synth-10000 && PORTCULLIS_DECODE_DIR=/tmp/synth-10000 \
//! cargo bench -p resources --bench decode`
//! (`PORTCULLIS_DECODE_REFERENCE=0` leaves serde-saphyr alone out)

// Benchmark setup fails loudly.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::time::Instant;

/// The allocator the binary uses (with mimalloc's own purge delay, which the binary
/// shortens), so the figures are close to the binary's.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// The best of five runs (`PORTCULLIS_DECODE_RUNS`) of `decode` over every text, with the
/// objects it decoded.
fn time(label: &str, bytes: usize, decode: impl Fn() -> usize) -> usize {
    let runs = std::env::var("PORTCULLIS_DECODE_RUNS")
        .ok()
        .and_then(|runs| runs.parse().ok())
        .unwrap_or(5);
    let mut best = f64::MAX;
    let mut objects = 0;
    for _ in 0..runs {
        let started = Instant::now();
        objects = decode();
        best = best.min(started.elapsed().as_secs_f64());
    }
    println!(
        "{label:28} {:8.1} ms {:6.1} MB/s, {objects} objects",
        best * 1e3,
        bytes as f64 / best / 1e6
    );
    objects
}

fn main() {
    let Ok(dir) = std::env::var("PORTCULLIS_DECODE_DIR") else {
        eprintln!("set PORTCULLIS_DECODE_DIR to a directory written by synth-cluster");
        return;
    };
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .collect();
    files.sort();
    let texts: Vec<String> = files
        .iter()
        .map(|path| std::fs::read_to_string(path).unwrap())
        .collect();
    let bytes: usize = texts.iter().map(String::len).sum();
    println!("{} files, {bytes} bytes", texts.len());
    let fast = time("decode_manifest", bytes, || {
        texts
            .iter()
            .map(|text| resources::decode_manifest(text, false).objects.len())
            .sum()
    });
    // `PORTCULLIS_DECODE_REFERENCE=0` measures the decoder as used alone (under a profiler).
    if std::env::var("PORTCULLIS_DECODE_REFERENCE").is_ok_and(|v| v == "0") {
        assert!(fast > 0, "{dir} holds no objects");
        return;
    }
    let reference = time("serde-saphyr only", bytes, || {
        texts
            .iter()
            .map(|text| {
                resources::decode_manifest_with_serde_saphyr(text, false)
                    .objects
                    .len()
            })
            .sum()
    });
    assert_eq!(fast, reference, "both decoders read every object");
    assert!(fast > 0, "{dir} holds no objects");
}
