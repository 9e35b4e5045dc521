//! A small mutation fuzzer (no new dependency) that runs as an ordinary test on the
//! stable toolchain; for coverage-guided long runs see `fuzz/` and docs/fuzzing.md.
//!
//! Each target starts from a seed corpus (the shipped scenarios and traces, and
//! hand-written values), applies one to four random mutations per case (bit flips,
//! interesting bytes, deletions, duplications, dictionary tokens, token replacement
//! and splicing, as AFL's havoc stage does), and calls the target under
//! `catch_unwind`. A panic (including an arithmetic overflow: the test profile has
//! overflow checks) is minimised by deleting chunks while it still panics, written
//! to `target/fuzz-crashes/TARGET/`, and the test fails with the seed, the case
//! number and the minimised input.
//!
//! Budget, from the environment:
//!
//! * `MOBIFLOW_FUZZ_ITERS`: cases per target (default: each target's own, sized for
//!   a short CI run; a tenth of it in a build without overflow checks);
//! * `MOBIFLOW_FUZZ_SECS`: run each target for this many seconds instead;
//! * `MOBIFLOW_FUZZ_SEED`: the generator's seed (default 1: CI runs are
//!   reproducible; a contributor's long run uses a fresh one, printed).

pub mod targets;

use rand_core::{RngCore, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::PathBuf;
use std::time::{Duration, Instant};

pub type Rng = Xoshiro256PlusPlus;

pub fn below(rng: &mut Rng, n: usize) -> usize {
    if n == 0 {
        0
    } else {
        (rng.next_u64() % n as u64) as usize
    }
}

pub fn pick<'a, T>(rng: &mut Rng, xs: &'a [T]) -> &'a T {
    &xs[below(rng, xs.len())]
}

/// Bytes that often matter to parsers.
const INTERESTING: &[u8] = b"\0\x7f\xff\"'[]{}=.,-+_#\n\r\t 0123456789eEnNiIsbBpkKMG/\\";

fn is_token_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"._-+".contains(&b)
}

/// One havoc-style mutation of `data`.
pub fn mutate(rng: &mut Rng, data: &mut Vec<u8>, dict: &[&str], corpus: &[Vec<u8>]) {
    let len = data.len();
    match below(rng, 9) {
        0 if len > 0 => {
            let i = below(rng, len);
            data[i] ^= 1 << below(rng, 8);
        }
        1 if len > 0 => {
            let i = below(rng, len);
            data[i] = *pick(rng, INTERESTING);
        }
        2 if len > 0 => {
            let i = below(rng, len);
            let n = 1 + below(rng, 16.min(len - i));
            data.drain(i..i + n);
        }
        3 if len > 0 => {
            let i = below(rng, len);
            let n = 1 + below(rng, 32.min(len - i));
            let chunk: Vec<u8> = data[i..i + n].to_vec();
            let at = below(rng, len + 1);
            data.splice(at..at, chunk);
        }
        4 | 5 if !dict.is_empty() => {
            let tok = pick(rng, dict).as_bytes().to_vec();
            let at = below(rng, len + 1);
            data.splice(at..at, tok);
        }
        6 | 7 if !dict.is_empty() && len > 0 => {
            // Replace a token (a run of letters, digits and . _ - +) by a dictionary
            // entry: keeps the TOML structure while changing a value or a key.
            let i = below(rng, len);
            let (mut s, mut e) = (i, i);
            while s > 0 && is_token_byte(data[s - 1]) {
                s -= 1;
            }
            while e < len && is_token_byte(data[e]) {
                e += 1;
            }
            let tok = pick(rng, dict).as_bytes().to_vec();
            data.splice(s..e, tok);
        }
        _ if !corpus.is_empty() => {
            // Splice: a random piece of another input.
            let other = pick(rng, corpus);
            if !other.is_empty() {
                let i = below(rng, other.len());
                let n = 1 + below(rng, 256.min(other.len() - i));
                let at = below(rng, len + 1);
                data.splice(at..at, other[i..i + n].iter().copied());
            }
        }
        _ => data.push(*pick(rng, INTERESTING)),
    }
}

pub struct Budget {
    iters: u64,
    until: Option<Instant>,
    pub seed: u64,
}

impl Budget {
    pub fn from_env(default_iters: u64) -> Budget {
        let var = |k: &str| {
            std::env::var(k)
                .ok()
                .and_then(|v| v.trim().parse::<u64>().ok())
        };
        let until = var("MOBIFLOW_FUZZ_SECS").map(|s| Instant::now() + Duration::from_secs(s));
        Budget {
            iters: var("MOBIFLOW_FUZZ_ITERS").unwrap_or(default_iters),
            until,
            seed: var("MOBIFLOW_FUZZ_SEED").unwrap_or(1),
        }
    }

    fn more(&self, done: u64) -> bool {
        match self.until {
            Some(t) => Instant::now() < t,
            None => done < self.iters,
        }
    }
}

/// Runs `target` on mutants of `seeds` until the budget is spent; fails the test on
/// the first input that panics, after minimising it. Returns the cases run.
pub fn fuzz(
    name: &str,
    default_iters: u64,
    seeds: &[Vec<u8>],
    dict: &[&str],
    target: impl Fn(&[u8]),
) -> u64 {
    // An overflow must be a failure, not a wrapped number: `make test-fuzz` requires
    // overflow checks; without them (a release-mode `cargo test`, which `make test`
    // also runs) a tenth of the cases still checks everything else.
    let quiet = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let checked =
        catch_unwind(|| std::hint::black_box(u64::MAX) + std::hint::black_box(1)).is_err();
    std::panic::set_hook(quiet);
    if std::env::var_os("MOBIFLOW_REQUIRE_OVERFLOW_CHECKS").is_some() {
        assert!(
            checked,
            "this build has no overflow checks (use the test profile)"
        );
    }
    let budget = Budget::from_env(if checked {
        default_iters
    } else {
        default_iters / 10
    });
    let mut rng = Rng::seed_from_u64(budget.seed);
    assert!(!seeds.is_empty(), "{name}: empty seed corpus");
    let started = Instant::now();
    // The seeds themselves first: they must all pass.
    for (i, s) in seeds.iter().enumerate() {
        check(name, budget.seed, i as u64, s, &target);
    }
    let mut done = 0u64;
    while budget.more(done) {
        let mut data = pick(&mut rng, seeds).clone();
        for _ in 0..1 + below(&mut rng, 4) {
            mutate(&mut rng, &mut data, dict, seeds);
        }
        data.truncate(1 << 20);
        check(name, budget.seed, seeds.len() as u64 + done, &data, &target);
        done += 1;
    }
    eprintln!(
        "fuzz {name}: {} seeds + {done} mutants, seed {}, {:.1} s, overflow checks {}",
        seeds.len(),
        budget.seed,
        started.elapsed().as_secs_f64(),
        if checked { "on" } else { "off" }
    );
    done
}

fn panics(target: &impl Fn(&[u8]), data: &[u8]) -> Option<String> {
    catch_unwind(AssertUnwindSafe(|| target(data)))
        .err()
        .map(|e| {
            e.downcast_ref::<String>()
                .cloned()
                .or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_else(|| "non-string panic".into())
        })
}

fn check(name: &str, seed: u64, case: u64, data: &[u8], target: &impl Fn(&[u8])) {
    let Some(msg) = panics(target, data) else {
        return;
    };
    // Minimise: delete chunks, halving their size, while the input still panics.
    let mut best = data.to_vec();
    let mut chunk = best.len() / 2;
    let quiet = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    while chunk > 0 {
        let mut i = 0;
        while i + chunk <= best.len() {
            let mut cand = best.clone();
            cand.drain(i..i + chunk);
            if panics(target, &cand).is_some() {
                best = cand;
            } else {
                i += chunk;
            }
        }
        chunk /= 2;
    }
    std::panic::set_hook(quiet);
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../target/fuzz-crashes")
        .join(name);
    let _ = std::fs::create_dir_all(&dir);
    let file = dir.join(format!("seed{seed}-case{case}"));
    let _ = std::fs::write(&file, &best);
    panic!(
        "fuzz {name}: case {case} of seed {seed} panics: {msg}\nminimised input ({} bytes, \
         saved to {}):\n{:?}",
        best.len(),
        file.display(),
        String::from_utf8_lossy(&best)
    );
}

/// Files under `dir` (recursively) whose name ends with `ext`, sorted.
pub fn files(dir: &std::path::Path, ext: &str) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in rd.flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.to_string_lossy().ends_with(ext) {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

pub fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}
