//! CPU time the hypervisor gave to other guests while this machine's vCPUs
//! wanted to run (Linux's `steal` in `/proc/stat`), so that a run slowed by
//! its neighbours can be told apart from slow code.

/// Cumulative CPU times, all CPUs together, in the kernel's ticks.
#[derive(Clone, Copy, Debug)]
struct CpuTimes {
    steal: u64,
    total: u64,
}

/// The first line of `/proc/stat`: `cpu user nice system idle iowait irq
/// softirq steal ...`; `None` where there is no such file (not Linux) or
/// the line is shorter.
fn read() -> Option<CpuTimes> {
    let stat = std::fs::read_to_string("/proc/stat").ok()?;
    let line = stat.lines().next()?;
    let fields: Vec<u64> = line
        .split_whitespace()
        .skip(1)
        .take(8)
        .map(str::parse)
        .collect::<Result<_, _>>()
        .ok()?;
    // `guest` and `guest_nice` (after `steal`) are already counted in `user`.
    (fields.len() == 8).then(|| CpuTimes {
        steal: fields[7],
        total: fields.iter().sum(),
    })
}

/// A stopwatch for steal: started, then asked what share it saw.
#[derive(Clone, Copy, Debug)]
pub struct Steal {
    start: Option<CpuTimes>,
}

impl Steal {
    /// Starts counting now.
    pub fn start() -> Self {
        Steal { start: read() }
    }

    /// Ticks of steal and of all CPU time since [`start`](Self::start);
    /// `None` where the system does not report them.
    pub fn ticks(&self) -> Option<(u64, u64)> {
        let (start, now) = (self.start?, read()?);
        let steal = now.steal.checked_sub(start.steal)?;
        let total = now.total.checked_sub(start.total)?;
        Some((steal, total))
    }

    /// One line for the report.
    pub fn line(&self) -> String {
        match self.ticks() {
            Some((steal, total)) => format!(
                "steal (CPU time the hypervisor gave elsewhere): {steal} of {total} ticks ({:.1} %)",
                100.0 * steal as f64 / total.max(1) as f64
            ),
            None => "steal: not reported by this system".to_owned(),
        }
    }
}
