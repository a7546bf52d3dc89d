//! Command-line counts for the examples, read with a clear error instead
//! of a panic.

/// The argument at `at` as a count from 1 to `most`, or `default` if absent.
pub fn count_arg(at: usize, default: u64, most: u64) -> Result<u64, String> {
    match std::env::args().nth(at) {
        None => Ok(default),
        Some(text) => match text.parse() {
            Ok(n) if (1..=most).contains(&n) => Ok(n),
            _ => Err(format!("`{text}` is not a count from 1 to {most}")),
        },
    }
}
