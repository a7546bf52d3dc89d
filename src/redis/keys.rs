//! [`KeyNames`]: how a limiter key becomes Redis key names.
//!
//! A limiter key `k` is stored under `prefix{k}suffix`. The braces are a
//! Redis Cluster hash tag: every Redis key of one limiter key hashes on `k`
//! alone, so a script that touches several of them stays on one slot. A key
//! whose tag would be empty (an empty key, or one starting with `}`) or that
//! starts with a NUL byte gets a NUL byte in front, which keeps the tag
//! non-empty and the mapping one-to-one.

use std::fmt;

use super::error::ConfigError;

/// Builds the Redis key names for one limiter.
#[derive(Clone, PartialEq, Eq)]
pub(crate) struct KeyNames {
    prefix: Vec<u8>,
}

impl KeyNames {
    /// Names under `prefix`, which may not hold a brace (it would move the hash tag).
    pub(crate) fn new(prefix: &str) -> Result<KeyNames, ConfigError> {
        if prefix.contains(['{', '}']) {
            return Err(ConfigError::BraceInPrefix {
                prefix: prefix.to_owned(),
            });
        }
        Ok(KeyNames {
            prefix: prefix.as_bytes().to_vec(),
        })
    }

    /// The Redis key for `key` and one script `suffix`.
    pub(crate) fn name(&self, key: &str, suffix: &str) -> Vec<u8> {
        let key = key.as_bytes();
        let escape = matches!(key.first(), None | Some(b'}' | b'\0'));
        let mut name = Vec::with_capacity(self.prefix.len() + key.len() + suffix.len() + 3);
        name.extend_from_slice(&self.prefix);
        name.push(b'{');
        if escape {
            name.push(b'\0');
        }
        name.extend_from_slice(key);
        name.push(b'}');
        name.extend_from_slice(suffix.as_bytes());
        name
    }
}

impl fmt::Debug for KeyNames {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("KeyNames")
            .field("prefix", &String::from_utf8_lossy(&self.prefix))
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_carry_a_non_empty_hash_tag() {
        let names = KeyNames::new("p:").unwrap();
        assert_eq!(names.name("alice", ":log"), b"p:{alice}:log");
        assert_eq!(names.name("", ""), b"p:{\0}");
        assert_eq!(names.name("}x", ""), b"p:{\0}x}");
    }

    #[test]
    fn escaping_keeps_names_distinct() {
        let names = KeyNames::new("p:").unwrap();
        assert_ne!(names.name("", ""), names.name("\0", ""));
        assert_ne!(names.name("\0", ""), names.name("\0\0", ""));
    }

    #[test]
    fn a_brace_in_the_prefix_is_an_error() {
        assert!(KeyNames::new("a{b").is_err());
        assert!(KeyNames::new("a}b").is_err());
    }
}
