//! Sharded runs for batch schedulers (Slurm arrays, Kubernetes indexed jobs):
//! `ggpnet corpus`, `stats --dir` and `bench` with `--shard I/N` run only their
//! share of the games, and with `--jsonl FILE` write it as JSON lines that
//! `ggpnet merge` turns into the report of the whole run
//! ([`crate::shard_file`] reads and merges those files).
//!
//! The split is deterministic: game `k` (from 0, in the command's order: name
//! order for `corpus` and `stats --dir`, the order given for `bench`) belongs
//! to shard `k mod N + 1`.

use ggpnet::grounder::SettingError;
use serde::{Deserialize, Serialize};

/// The most shards a run may be split into.
pub const MAX_SHARDS: usize = 100_000;

/// One shard of a run split into `count`: the games whose index `k` (from 0)
/// has `k mod count == index - 1`. Written `I/N` (as in `--shard 2/8`).
///
/// ```
/// use ggpnet_tools::shard::Shard;
/// let shard: Shard = "2/3".parse().unwrap();
/// assert_eq!((shard.get_index(), shard.get_count()), (2, 3));
/// assert_eq!(shard.select(&["a", "b", "c", "d", "e"]), ["b", "e"]);
/// assert_eq!("4/3".parse::<Shard>().unwrap_err(), "shard index must be 1 to 3, not 4");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Shard {
    index: usize,
    count: usize,
}

impl Shard {
    /// The whole run as one shard: `1/1`.
    pub fn whole() -> Shard {
        Shard { index: 1, count: 1 }
    }

    /// Shard `index` of `count`: `count` from 1 to [`MAX_SHARDS`], `index` from 1 to `count`.
    pub fn new(index: usize, count: usize) -> Result<Shard, SettingError> {
        let range = |setting, value: usize, max: usize| SettingError::OutOfRange {
            setting,
            value: value as u64,
            min: 1,
            max: max as u64,
        };
        if !(1..=MAX_SHARDS).contains(&count) {
            return Err(range("shard count", count, MAX_SHARDS));
        }
        if !(1..=count).contains(&index) {
            return Err(range("shard index", index, count));
        }
        Ok(Shard { index, count })
    }

    /// The shard's number, from 1.
    pub fn get_index(&self) -> usize {
        self.index
    }

    /// The number of shards of the run.
    pub fn get_count(&self) -> usize {
        self.count
    }

    /// Whether the game at `position` (from 0) of the run is this shard's.
    pub fn owns(&self, position: usize) -> bool {
        position % self.count == self.index - 1
    }

    /// This shard's share of `items`, in their order.
    pub fn select<T: Clone>(&self, items: &[T]) -> Vec<T> {
        let mine = items.iter().enumerate().filter(|(k, _)| self.owns(*k));
        mine.map(|(_, item)| item.clone()).collect()
    }
}

impl std::fmt::Display for Shard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

impl std::str::FromStr for Shard {
    type Err = String;

    /// Parses `I/N`; the error says what was expected, or which number is out of range.
    fn from_str(text: &str) -> Result<Shard, String> {
        let malformed = || format!("'{text}' is not a shard: expected I/N with 1 <= I <= N, as 2/8");
        let (index, count) = text.trim().split_once('/').ok_or_else(malformed)?;
        let number = |part: &str| part.trim().parse::<usize>().map_err(|_| malformed());
        Shard::new(number(index)?, number(count)?).map_err(|e| e.to_string())
    }
}

impl Serialize for Shard {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Shard {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Shard, D::Error> {
        let text = String::deserialize(deserializer)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The shards of a split take every game exactly once, in order.
    #[test]
    fn the_shards_partition_the_games() {
        let games: Vec<usize> = (0..10).collect();
        for count in 1..=12 {
            let mut all: Vec<usize> = (1..=count)
                .flat_map(|i| Shard::new(i, count).unwrap().select(&games))
                .collect();
            all.sort();
            assert_eq!(all, games, "{count} shards");
        }
        assert_eq!(Shard::new(3, 4).unwrap().select(&games), [2, 6]);
    }

    #[test]
    fn shards_parse_print_and_refuse() {
        let shard: Shard = " 7/8 ".parse().unwrap();
        assert_eq!(shard.to_string(), "7/8");
        assert_eq!(serde_json::to_string(&shard).unwrap(), r#""7/8""#);
        assert_eq!(serde_json::from_str::<Shard>(r#""7/8""#).unwrap(), shard);
        assert_eq!(
            Shard::new(1, 0),
            Err(SettingError::OutOfRange {
                setting: "shard count",
                value: 0,
                min: 1,
                max: MAX_SHARDS as u64
            })
        );
        for bad in ["", "1", "1/", "/2", "-1/2", "1/2/3", "1.5/2", "x/y"] {
            let error = bad.parse::<Shard>().unwrap_err();
            assert!(error.contains("is not a shard"), "{bad}: {error}");
        }
        assert!(serde_json::from_str::<Shard>(r#""0/1""#).is_err());
    }
}
