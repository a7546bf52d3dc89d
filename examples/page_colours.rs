//! Whether a keyed limiter's speed follows how its tables' pages fall on
//! the L2 cache's sets, its "page colours". Linux backs the heap with
//! 4 KiB pages; the L2's set index takes a few bits above the page offset,
//! so each physical page feeds one slice of the sets (one colour), and a
//! colour holds as many pages as the cache has ways. A table whose pages
//! crowd one colour past that cannot stay in the L2 however warm it is.
//!
//! ```text
//! cargo run --release --example page_colours              # 600 limiters, u64 keys
//! cargo run --release --example page_colours -- 600 string
//! ```
//!
//! Each limiter tracks 10,000 keys; the heap blocks of a page or more it
//! holds afterwards (its tables) are recorded by a tracking allocator, and
//! their pages' physical frames read from `/proc/self/pagemap` (which gives
//! frame numbers only to a process with `CAP_SYS_ADMIN`). Each limiter is
//! then timed as its best of five shuffled passes over its keys, taking
//! turns with a reference limiter built first. The report sets the
//! limiters' time ratios beside their fullest colour and the GiB of
//! physical memory their pages sit in, and times the eight slowest again
//! three times: a limiter slow for its life stays slow. The tracking
//! allocator puts a word of its own before each block, so the tables sit a
//! little off where they would without it. In a virtual machine the frames
//! are the guest's: they are the host's colours only where the host backs
//! the guest with pages of 2 MiB or more. Results:
//! `docs/benchmarks/zen4.md`.

use std::collections::BTreeSet;
use std::fs::File;
use std::hash::Hash;
use std::os::unix::fs::FileExt;
use std::process::ExitCode;
use std::sync::Mutex;

use tollgate::{Key, RateLimiter, TokenBucket};
use tracking_allocator::{AllocationGroupId, AllocationRegistry, AllocationTracker, Allocator};

#[path = "../benches/support/mod.rs"]
mod support;

use support::args::count_arg;
use support::contenders::Spec;
use support::keys::{string_keys, u64_keys};
use support::scan::{RETIMED_ROUNDS, Slowest, ratio_to_reference, shuffled_order, timed_pass};

#[global_allocator]
static GLOBAL: Allocator<std::alloc::System> = Allocator::system();

/// Keys every limiter tracks.
const KEYS: usize = 10_000;

/// The page size the heap is backed with.
const PAGE: usize = 4096;

/// Live heap blocks of a page or more, as (address, bytes), while recording.
static BLOCKS: Mutex<Vec<(usize, usize)>> = Mutex::new(Vec::new());

/// Keeps `BLOCKS` current; smaller blocks are keys and bookkeeping.
struct BigBlocks;

impl AllocationTracker for BigBlocks {
    fn allocated(&self, addr: usize, size: usize, _wrapped: usize, _group: AllocationGroupId) {
        if size >= PAGE {
            BLOCKS
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .push((addr, size));
        }
    }

    fn deallocated(
        &self,
        addr: usize,
        size: usize,
        _wrapped: usize,
        _source: AllocationGroupId,
        _current: AllocationGroupId,
    ) {
        if size >= PAGE {
            BLOCKS
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .retain(|&(at, _)| at != addr);
        }
    }
}

/// The L2 cache's geometry, read from sysfs.
struct L2 {
    /// Pages one colour holds: the ways.
    ways: usize,
    /// Colours: sets times line size over the page size.
    colours: usize,
}

impl L2 {
    fn read() -> Result<L2, String> {
        for index in 0..8 {
            let dir = format!("/sys/devices/system/cpu/cpu0/cache/index{index}");
            let field = |name: &str| {
                std::fs::read_to_string(format!("{dir}/{name}"))
                    .map(|text| text.trim().to_owned())
                    .map_err(|e| format!("{dir}/{name}: {e}"))
            };
            if field("level")? != "2" {
                continue;
            }
            let number = |name: &str| -> Result<usize, String> {
                field(name)?
                    .parse()
                    .map_err(|e| format!("{dir}/{name}: {e}"))
            };
            let (ways, sets, line) = (
                number("ways_of_associativity")?,
                number("number_of_sets")?,
                number("coherency_line_size")?,
            );
            return Ok(L2 {
                ways,
                colours: (sets * line / PAGE).max(1),
            });
        }
        Err("no level 2 cache under /sys/devices/system/cpu/cpu0/cache".to_owned())
    }
}

/// How one limiter's table pages fall on the colours.
struct Colouring {
    /// Pages of its blocks.
    pages: usize,
    /// Of them, pages with no frame yet (never written).
    absent: usize,
    /// Pages on its fullest colour.
    fullest: usize,
    /// Pages beyond the ways, summed over the colours.
    overflow: usize,
    /// The GiB of physical memory its median frame lies in.
    gib: u64,
}

/// The colouring of the pages under `blocks`.
fn colouring(pagemap: &File, l2: &L2, blocks: &[(usize, usize)]) -> Result<Colouring, String> {
    let pages: BTreeSet<usize> = blocks
        .iter()
        .flat_map(|&(at, size)| at / PAGE..(at + size).div_ceil(PAGE))
        .collect();
    let mut load = vec![0; l2.colours];
    let mut absent = 0;
    let mut frames = Vec::with_capacity(pages.len());
    for &page in &pages {
        let mut entry = [0u8; 8];
        pagemap
            .read_exact_at(&mut entry, (page * 8) as u64)
            .map_err(|e| format!("/proc/self/pagemap: {e}"))?;
        let entry = u64::from_le_bytes(entry);
        // Bit 63: present; bits 0-54: the frame number.
        if entry >> 63 == 0 {
            absent += 1;
            continue;
        }
        let frame = entry & ((1 << 55) - 1);
        if frame == 0 {
            return Err("pagemap gives no frame numbers: run as root".to_owned());
        }
        load[frame as usize % l2.colours] += 1;
        frames.push(frame);
    }
    frames.sort_unstable();
    Ok(Colouring {
        pages: pages.len(),
        absent,
        fullest: load.iter().copied().max().unwrap_or(0),
        overflow: load
            .iter()
            .map(|&pages| pages.saturating_sub(l2.ways))
            .sum(),
        gib: frames
            .get(frames.len() / 2)
            .map_or(0, |&frame| (frame * PAGE as u64) >> 30),
    })
}

/// One scanned limiter.
struct Scanned {
    /// Its best pass's time over the reference's.
    ratio: f64,
    colouring: Colouring,
    /// Its ratios when timed again, if it was among the slowest.
    again: Vec<f64>,
}

fn scan<K: Key + Hash + Eq + Clone>(keys: &[K], limiters: usize) -> Result<Vec<Scanned>, String> {
    let l2 = L2::read()?;
    let pagemap =
        File::open("/proc/self/pagemap").map_err(|e| format!("/proc/self/pagemap: {e}"))?;
    let order = shuffled_order(keys.len());
    let make = || {
        let limiter: TokenBucket<K> = TokenBucket::new(Spec::DEEP_BUCKET.tollgate());
        for key in keys {
            let _ = limiter.allow(key);
        }
        limiter
    };
    let refused = || "a limiter refused a key it should admit".to_owned();
    let reference = make();
    AllocationRegistry::set_global_tracker(BigBlocks)
        .map_err(|_| "tracker already set".to_owned())?;
    let time = |limiter: &TokenBucket<K>| {
        ratio_to_reference(limiter, &reference, keys, &order).ok_or_else(refused)
    };
    let mut scanned = Vec::with_capacity(limiters);
    let mut slowest = Slowest::new();
    for at in 0..limiters {
        BLOCKS.lock().unwrap_or_else(|e| e.into_inner()).clear();
        AllocationRegistry::enable_tracking();
        let limiter = make();
        AllocationRegistry::disable_tracking();
        let blocks = BLOCKS.lock().unwrap_or_else(|e| e.into_inner()).clone();
        let colouring = colouring(&pagemap, &l2, &blocks)?;
        let ratio = time(&limiter)?;
        scanned.push(Scanned {
            ratio,
            colouring,
            again: Vec::new(),
        });
        slowest.offer(ratio, (at, limiter));
    }
    // Round by round, each after an untimed pass: the scan has left these
    // limiters' tables out of the caches and the reference's in them.
    for _ in 0..RETIMED_ROUNDS {
        for (_, (at, limiter)) in slowest.kept() {
            timed_pass(limiter, keys, &order).ok_or_else(refused)?;
            let ratio = time(limiter)?;
            scanned[*at].again.push(ratio);
        }
    }
    println!("L2: {} colours of {} pages each", l2.colours, l2.ways);
    Ok(scanned)
}

fn main() -> ExitCode {
    let limiters = match count_arg(1, 600, 1 << 20) {
        Ok(count) => count as usize,
        Err(e) => {
            eprintln!("page_colours: {e}");
            return ExitCode::from(2);
        }
    };
    let string = match std::env::args().nth(2).as_deref() {
        None | Some("u64") => false,
        Some("string") => true,
        Some(other) => {
            eprintln!("page_colours: `{other}` is not u64 or string");
            return ExitCode::from(2);
        }
    };
    let scanned = if string {
        scan(&string_keys(KEYS), limiters)
    } else {
        scan(&u64_keys(KEYS), limiters)
    };
    match scanned {
        Ok(scanned) => {
            report(scanned, if string { "String" } else { "u64" });
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("page_colours: {e}");
            ExitCode::FAILURE
        }
    }
}

/// Ranks of `values`, ties sharing their mean rank.
fn ranks(values: &[f64]) -> Vec<f64> {
    let mut order: Vec<usize> = (0..values.len()).collect();
    order.sort_by(|&a, &b| values[a].total_cmp(&values[b]));
    let mut ranks = vec![0.0; values.len()];
    let mut start = 0;
    while start < order.len() {
        let mut end = start;
        while end + 1 < order.len() && values[order[end + 1]] == values[order[start]] {
            end += 1;
        }
        let mean = (start + end) as f64 / 2.0;
        for &i in &order[start..=end] {
            ranks[i] = mean;
        }
        start = end + 1;
    }
    ranks
}

/// Spearman's rank correlation of `a` and `b` (0 where either is constant).
fn rank_correlation(a: &[f64], b: &[f64]) -> f64 {
    let (ra, rb) = (ranks(a), ranks(b));
    let mean = (ra.len() as f64 - 1.0) / 2.0;
    let (mut both, mut only_a, mut only_b) = (0.0, 0.0, 0.0);
    for (x, y) in ra.iter().zip(&rb) {
        both += (x - mean) * (y - mean);
        only_a += (x - mean) * (x - mean);
        only_b += (y - mean) * (y - mean);
    }
    if only_a == 0.0 || only_b == 0.0 {
        0.0
    } else {
        both / (only_a * only_b).sqrt()
    }
}

/// A table of the limiters grouped by `group`: how many, and their median
/// and slowest time over all limiters' median.
fn print_groups(title: &str, scanned: &[Scanned], median: f64, group: impl Fn(&Scanned) -> u64) {
    let mut values: Vec<u64> = scanned.iter().map(&group).collect();
    values.sort_unstable();
    values.dedup();
    println!("| {title} | limiters | median time over all limiters' median | slowest |");
    println!("|---:|---:|---:|---:|");
    for value in values {
        let mut times: Vec<f64> = scanned
            .iter()
            .filter(|s| group(s) == value)
            .map(|s| s.ratio / median)
            .collect();
        times.sort_by(f64::total_cmp);
        println!(
            "| {value} | {} | {:.3}x | {:.3}x |",
            times.len(),
            times[times.len() / 2],
            times[times.len() - 1],
        );
    }
    println!();
}

fn report(mut scanned: Vec<Scanned>, kind: &str) {
    let ratios: Vec<f64> = scanned.iter().map(|s| s.ratio).collect();
    let fullest: Vec<f64> = scanned.iter().map(|s| s.colouring.fullest as f64).collect();
    let overflow: Vec<f64> = scanned
        .iter()
        .map(|s| s.colouring.overflow as f64)
        .collect();
    let mut sorted = ratios.clone();
    sorted.sort_by(f64::total_cmp);
    let median = sorted[sorted.len() / 2];
    let mut pages: Vec<usize> = scanned.iter().map(|s| s.colouring.pages).collect();
    pages.sort_unstable();
    let absent = scanned
        .iter()
        .map(|s| s.colouring.absent)
        .max()
        .unwrap_or(0);
    println!(
        "{} `{kind}` limiters of {KEYS} keys: {}-{} pages of tables each (at most {absent} never written); \
         median {median:.3}x the reference's time, slowest {:.3}x that median",
        scanned.len(),
        pages[0],
        pages[pages.len() - 1],
        sorted[sorted.len() - 1] / median,
    );
    let pages_each: Vec<f64> = scanned.iter().map(|s| s.colouring.pages as f64).collect();
    println!(
        "rank correlation of time with the fullest colour's pages {:.3}, with the pages past the ways {:.3}, \
         with the pages {:.3}",
        rank_correlation(&ratios, &fullest),
        rank_correlation(&ratios, &overflow),
        rank_correlation(&ratios, &pages_each),
    );
    println!();
    print_groups("fullest colour (pages)", &scanned, median, |s| {
        s.colouring.fullest as u64
    });
    print_groups("physical GiB of the median frame", &scanned, median, |s| {
        s.colouring.gib
    });
    scanned.sort_by(|a, b| b.ratio.total_cmp(&a.ratio));
    println!(
        "| slowest (time over the median) | timed again | fullest colour (pages) | pages past the ways | pages | GiB |"
    );
    println!("|---:|---|---:|---:|---:|---:|");
    for s in scanned.iter().filter(|s| !s.again.is_empty()) {
        let again: Vec<String> = s
            .again
            .iter()
            .map(|r| format!("{:.3}x", r / median))
            .collect();
        println!(
            "| {:.3}x | {} | {} | {} | {} | {} |",
            s.ratio / median,
            again.join(" "),
            s.colouring.fullest,
            s.colouring.overflow,
            s.colouring.pages,
            s.colouring.gib,
        );
    }
}
