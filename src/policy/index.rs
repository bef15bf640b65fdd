//! Finding rules by a text (an allow rule's, a deny rule's program) without building a
//! table as they are loaded.
//!
//! A policy is loaded before every command, and most of its rules are never looked up
//! by that command: an imported policy of 500 rules spent most of its load putting each
//! rule in a hash table (issue 25). The rule sets keep their rules in a list instead, in
//! the order they were added, and look through it; a set of more than [`LINEAR_MAX`]
//! rules builds this index the first time it is asked (one pass and a sort, no
//! allocation per rule), and drops it when a rule is added.

use std::hash::BuildHasher;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU32, Ordering};

use super::RuleHashBuilder;

/// The most rules looked through one by one; a larger set builds the index. Comparing a
/// text with a rule costs about as much as hashing one byte of it, so up to here a
/// lookup by looking through is cheaper than building the index once.
pub(crate) const LINEAR_MAX: usize = 64;

/// How often a set that may be looked through in one pass is, before it is indexed
/// instead: gate decides once per process, where one pass costs less than the index,
/// but compound mode looks a set up once per part, and a caller that lives longer as
/// often as it is asked.
const PASSES: u32 = 4;

/// The keys' hashes with their positions, sorted, built at the first lookup.
#[derive(Debug, Default)]
pub(crate) struct TextIndex {
    sorted: OnceLock<Box<[(u64, u32)]>>,
    /// The passes made without the index ([`TextIndex::worth_building`]).
    passes: AtomicU32,
}

impl Clone for TextIndex {
    fn clone(&self) -> Self {
        TextIndex {
            sorted: self.sorted.clone(),
            passes: AtomicU32::new(self.passes.load(Ordering::Relaxed)),
        }
    }
}

impl TextIndex {
    /// Forget the index: the keys changed.
    pub(crate) fn clear(&mut self) {
        self.sorted = OnceLock::new();
    }

    /// Whether a set that could be looked through in one pass should use the index
    /// instead: it is built already, or the set has been looked through [`PASSES`]
    /// times. Counts this pass.
    pub(crate) fn worth_building(&self) -> bool {
        self.sorted.get().is_some() || self.passes.fetch_add(1, Ordering::Relaxed) >= PASSES
    }

    /// The positions, in ascending order, of the keys that may equal `key` (those with
    /// its hash: the caller compares the texts). `keys` gives every key in position
    /// order, and is called only to build the index.
    pub(crate) fn maybe_equal<'s, 'k>(
        &'s self,
        keys: impl FnOnce() -> Box<dyn Iterator<Item = &'k str> + 'k>,
        key: &str,
    ) -> impl Iterator<Item = usize> + 's {
        let sorted = self.sorted.get_or_init(|| {
            let mut sorted: Vec<(u64, u32)> = keys()
                .enumerate()
                .map(|(i, k)| (hash(k), u32::try_from(i).unwrap_or(u32::MAX)))
                .collect();
            // By hash, then by position: equal keys come out in the order they were added.
            sorted.sort_unstable();
            sorted.into_boxed_slice()
        });
        let wanted = hash(key);
        let start = sorted.partition_point(|&(h, _)| h < wanted);
        sorted[start..]
            .iter()
            .take_while(move |&&(h, _)| h == wanted)
            .map(|&(_, i)| i as usize)
    }
}

fn hash(key: &str) -> u64 {
    RuleHashBuilder::default().hash_one(key)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_equal_key_is_found_in_the_order_added_and_a_cleared_index_is_rebuilt() {
        let mut keys = vec!["git".to_owned(), "rm".to_owned(), "git".to_owned()];
        keys.extend((0..200).map(|i| format!("tool{i}")));
        let mut index = TextIndex::default();
        let found = |index: &TextIndex, keys: &[String], key: &str| -> Vec<usize> {
            index
                .maybe_equal(|| Box::new(keys.iter().map(String::as_str)), key)
                .filter(|&i| keys[i] == key)
                .collect()
        };
        assert_eq!(found(&index, &keys, "git"), [0, 2]);
        assert_eq!(found(&index, &keys, "tool7"), [10]);
        assert!(found(&index, &keys, "tool").is_empty());
        keys.push("rm".to_owned());
        index.clear();
        assert_eq!(found(&index, &keys, "rm"), [1, keys.len() - 1]);
    }
}
