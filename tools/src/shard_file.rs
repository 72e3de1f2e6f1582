//! The files of a sharded run: a shard's file holds a
//! [`ShardHeader`] on its first line (the shard,
//! every game of the whole run, the run's settings), then one line per game of
//! its share, each an entry of the report's `games` array. [`merge`] checks
//! that the files are the `N` shards of one run, each once, and that every game
//! is there exactly once.

use crate::report::ShardHeader;
use crate::shard::Shard;
use std::collections::BTreeMap;

/// A shard's file of JSON lines, as read: where it came from and its lines.
pub struct ShardFile {
    /// The file's name, as errors give it.
    pub name: String,
    /// Its text.
    pub text: String,
}

/// The games of a run, put back together from its shards' files.
#[derive(Debug)]
pub struct Merged<T> {
    /// The first file's header (every file's says the same, shard aside).
    pub header: ShardHeader,
    /// Every game's entry, in the run's order.
    pub games: Vec<T>,
}

/// The games of `files`, the shards of one run, in the run's order; `name`
/// gives a game entry's name. Errors name the file (and line) and the reason:
/// a malformed line, files of different runs, a shard given twice or missing,
/// a game twice, in the wrong shard, not of the run, or missing.
pub fn merge<T: serde::de::DeserializeOwned>(
    files: &[ShardFile],
    name: impl Fn(&T) -> &str,
) -> Result<Merged<T>, String> {
    let first = files.first().ok_or("no shard files given")?;
    let header = read_header(first)?;
    let run = Run::new(&header);
    let mut slots: Vec<Option<(T, String)>> = header.games.iter().map(|_| None).collect();
    let mut shards: BTreeMap<usize, &str> = BTreeMap::new();
    for file in files {
        let own = read_header(file)?;
        check_same_run(&header, &own, file)?;
        let index = own.shard.get_index();
        if let Some(other) = shards.insert(index, &file.name) {
            return Err(format!(
                "{}: shard {} again (already in {other})",
                file.name, own.shard
            ));
        }
        for (number, line) in file.text.lines().enumerate().skip(1) {
            let place = format!("{}:{}", file.name, number + 1);
            if line.trim().is_empty() {
                continue;
            }
            let game: T = serde_json::from_str(line)
                .map_err(|e| format!("{place}: not a game result of this run: {e}"))?;
            let position = run.place(name(&game), own.shard, &slots, &place)?;
            slots[position] = Some((game, place));
        }
    }
    check_complete(&header, &shards, &slots)?;
    let games = slots.into_iter().flatten().map(|(game, _)| game).collect();
    Ok(Merged { header, games })
}

/// The header on the first line of `file`; the error names the file.
pub fn read_header(file: &ShardFile) -> Result<ShardHeader, String> {
    let line = file.text.lines().next().unwrap_or("");
    serde_json::from_str(line).map_err(|e| {
        format!(
            "{}:1: not the header of a sharded run (written by --jsonl): {e}",
            file.name
        )
    })
}

/// Refuses `own`, the header of `file`, unless it is of the same run as `first`.
fn check_same_run(first: &ShardHeader, own: &ShardHeader, file: &ShardFile) -> Result<(), String> {
    let differ = |what: &str| {
        format!(
            "{}:1: not a shard of the same run as the first file: {what} differ",
            file.name
        )
    };
    if own.shard.get_count() != first.shard.get_count() {
        return Err(differ("the shard counts"));
    }
    if own.games != first.games {
        return Err(differ("the lists of games"));
    }
    if own.run != first.run {
        return Err(differ("the commands or their settings"));
    }
    Ok(())
}

/// Where each game of a run goes: its positions by name.
struct Run<'a> {
    header: &'a ShardHeader,
    positions: BTreeMap<&'a str, Vec<usize>>,
}

impl<'a> Run<'a> {
    fn new(header: &'a ShardHeader) -> Run<'a> {
        let mut positions: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
        for (k, game) in header.games.iter().enumerate() {
            positions.entry(game.as_str()).or_default().push(k);
        }
        Run { header, positions }
    }

    /// The position of the game `game` read at `place` from `shard`: its
    /// first position that shard owns and no line has filled yet.
    fn place<T>(
        &self,
        game: &str,
        shard: Shard,
        slots: &[Option<(T, String)>],
        place: &str,
    ) -> Result<usize, String> {
        let positions = self
            .positions
            .get(game)
            .ok_or_else(|| format!("{place}: {game} is not a game of this run"))?;
        let owned: Vec<usize> = positions.iter().copied().filter(|&k| shard.owns(k)).collect();
        if owned.is_empty() {
            let count = self.header.shard.get_count();
            return Err(format!(
                "{place}: {game} belongs to shard {}/{count}, not {shard}",
                positions[0] % count + 1
            ));
        }
        match owned.iter().find(|&&k| slots[k].is_none()) {
            Some(&k) => Ok(k),
            None => {
                let earlier = slots[owned[0]].as_ref().map_or("", |(_, p)| p.as_str());
                Err(format!("{place}: {game} again (already at {earlier})"))
            }
        }
    }
}

/// Refuses a merge that lacks a shard or a game.
fn check_complete<T>(
    header: &ShardHeader,
    shards: &BTreeMap<usize, &str>,
    slots: &[Option<(T, String)>],
) -> Result<(), String> {
    let count = header.shard.get_count();
    let missing: Vec<String> = (1..=count)
        .filter(|i| !shards.contains_key(i))
        .map(|i| format!("{i}/{count}"))
        .collect();
    if !missing.is_empty() {
        return Err(format!(
            "incomplete: shard(s) {} missing ({} of {count} given)",
            list(&missing),
            shards.len()
        ));
    }
    let absent = slots.iter().enumerate().filter(|(_, slot)| slot.is_none());
    let absent: Vec<String> = absent
        .map(|(k, _)| {
            let file = shards[&(k % count + 1)];
            format!("{} (shard {}/{count}, {file})", header.games[k], k % count + 1)
        })
        .collect();
    match absent.is_empty() {
        true => Ok(()),
        false => Err(format!("incomplete: no result for {}", list(&absent))),
    }
}

/// The first few of `items`, comma-separated, with how many more there are.
fn list(items: &[String]) -> String {
    const SHOWN: usize = 5;
    let shown = items[..items.len().min(SHOWN)].join(", ");
    match items.len() > SHOWN {
        true => format!("{shown} and {} more", items.len() - SHOWN),
        false => shown,
    }
}
